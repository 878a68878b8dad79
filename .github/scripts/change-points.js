// Change points from `benchwatch changes` (changes.json / changes.md in the measure job's
// artifact) into the job summary and ONE open issue per alerting series. Runs in a record job
// through actions/github-script (publish.yml, nightly.yml): it only reads the artifact's files
// (regular files under a size limit: data from a measure job) and calls the issues API.
// tests/test_workflows.py runs it under node with a stubbed GitHub API.
const fs = require('fs');
const path = require('path');
const { neutralise, plainLine, count } = require('./neutralise.js');

const LABEL = 'change-point';
const MAX_NEW_ISSUES = 5; // one run opens at most this many issues; the summary lists every series
const MAX_JSON = 5000000;
const MAX_MD = 200000;
const MAX_BODY = 60000;

function readArtifact(core, dir, name, limit) {
  const p = path.join(dir, name);
  let st;
  try { st = fs.lstatSync(p); } catch { return null; }
  if (!st.isFile() || st.size > limit) {
    core.warning(`${name}: not a regular file under ${limit} bytes, ignored`);
    return null;
  }
  return fs.readFileSync(p, 'utf8');
}

// series names come from figure names, but the artifact is data: neutralised, no table breaks
const clean = (text) => neutralise(String(text).replace(/[|\r\n`<>]/g, ' ')).slice(0, 300);
const num = (x) => (typeof x === 'number' && isFinite(x) ? x.toFixed(3) : 'n/a');

// one title per series, whichever workflow finds it (publish reads the nightly trend too); a title
// is plain text (no markdown, no references decoded), its mentions broken all the same
const plain = (text) => plainLine(String(text).replace(/[|`<>]/g, ' ')).slice(0, 300);
function title(series) {
  return `Change point: ${plain(series.name)} [${plain(series.suite)}]`.slice(0, 250);
}

// a point links only to a commit of this repository, on this server: the artifact says the url
const commitLink = (commits, p) => {
  const url = String(p.url || '');
  const sha = url.startsWith(commits) ? url.slice(commits.length) : '';
  const shown = `\`${clean(p.commit).slice(0, 8)}\``;
  return /^[0-9a-f]{7,40}$/.test(sha) ? `[${shown}](${commits}${sha})` : shown;
};

function body(series, source, runUrl, commits) {
  const alerted = series.changes.filter((c) => c.kind === 'regression' && !c.acknowledged);
  const key = alerted.map((c) => String(c.after.commit).replace(/[^0-9a-f]/gi, '').slice(0, 40)).join(',');
  const rows = alerted.map((c) => {
    const link = (p) => commitLink(commits, p);
    // statements, retained memory: a difference in the series' own unit (a ratio on 0 means nothing)
    const size = typeof c.difference === 'number' && isFinite(c.difference)
      ? `${c.difference > 0 ? '+' : ''}${c.difference.toFixed(2)} ${clean(series.unit)}/req` : num(c.ratio);
    return `| ${link(c.before)} → ${link(c.after)} | ${size} | [${num(c.low)}, ${num(c.high)}] | ${num(c.p_value) === 'n/a' ? 'n/a' : Number(c.p_value).toExponential(1)} | ${count(c.n_before)} / ${count(c.n_after)} |`;
  });
  const text = [
    `<!-- benchwatch-change-point key=${key} -->`,
    `**${clean(series.name)}** (${clean(series.suite)}, found by the ${clean(source)} run): ${alerted.length} unacknowledged regression(s) found by \`benchwatch changes\` (${clean(series.mode)} mode, ${count(series.points)} points).`,
    '',
    '| between | after / before | 95% interval | p | points before / after |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'If the change is accepted, add it to `benchwatch-acks.toml` (figure pattern, commit, reason): it is then annotated on the charts and not alerted again.',
    '',
    `Run: ${runUrl}`,
  ].join('\n');
  return { key, text: text.length > MAX_BODY ? text.slice(0, MAX_BODY) + `\n\n(truncated; see ${runUrl})` : text };
}

// A change point at tonight's point: the last of its series (tonight's entry was appended last).
// Every nightly point of a series has the same commit and date when main did not move, so its
// place is what tells the nights apart.
const atTonight = (series, change) => Number.isInteger(change.index) && change.index === series.points - 1;
const unacknowledged = (change) => change && change.kind === 'regression' && !change.acknowledged;

// changes.json's alerting series, split: the change points at tonight's point (`folded`: [series,
// change] pairs) and each series with its other alerting change points (`rest`, none left: out)
function splitTonight(document) {
  const alerting = (Array.isArray(document && document.series) ? document.series : [])
    .filter((s) => s && s.alert === true && Array.isArray(s.changes));
  const folded = [];
  const rest = [];
  for (const series of alerting) {
    const alerted = series.changes.filter(unacknowledged);
    alerted.filter((c) => atTonight(series, c)).forEach((c) => folded.push([series, c]));
    const earlier = alerted.filter((c) => !atTonight(series, c));
    if (earlier.length) rest.push({ ...series, changes: earlier });
  }
  return { folded, rest };
}

// The nightly-regression issue's lines for tonight's change points on the nightly trend (the
// night's release moved them): one table, instead of an issue per series. '' when there are none.
function tonightSection(document) {
  const { folded } = splitTonight(document);
  if (!folded.length) return '';
  return [
    `### Change points tonight on the nightly trend (${folded.length}; here, not issues of their own)`,
    '',
    '| series | tonight / last night | 95% interval |',
    '|---|---|---|',
    ...folded.map(([s, c]) => `| ${clean(s.name)} | ${num(c.ratio)} | [${num(c.low)}, ${num(c.high)}] |`),
  ].join('\n');
}

// changePoints({..., folded}): `folded` true when this run opened or updated the nightly-regression
// issue (reusable-issues.yml): tonight's change points are in it, said in the job summary
async function changePoints({ github, context, core, dir, source, folded = false }) {
  const runUrl = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs/${context.runId}`;
  const commits = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/commit/`;
  const markdown = readArtifact(core, dir, 'changes.md', MAX_MD);
  if (markdown !== null) await core.summary.addRaw(neutralise(markdown)).write();
  const raw = readArtifact(core, dir, 'changes.json', MAX_JSON);
  if (raw === null) { core.warning('no changes.json in the artifact: change points not checked'); return; }
  let document;
  try { document = JSON.parse(raw); } catch (e) { core.warning(`changes.json: ${e.message}`); return; }
  let alerting = (Array.isArray(document.series) ? document.series : []).filter((s) => s && s.alert === true && Array.isArray(s.changes));
  if (folded) {
    const split = splitTonight(document);
    if (split.folded.length) {
      const names = split.folded.map(([s]) => clean(s.name)).join('; ');
      await core.summary.addRaw(`\n\n${split.folded.length} change point(s) at tonight's point are in the nightly-regression issue, not issues of their own: ${names}\n`).write();
    }
    alerting = split.rest;
  }
  if (!alerting.length) return;
  // the issues API also lists pull requests: keep real issues only
  const issues = (await github.paginate(github.rest.issues.listForRepo, {
    ...context.repo, labels: LABEL, state: 'open', per_page: 100,
  })).filter((issue) => !issue.pull_request);
  let opened = 0;
  for (const series of alerting) {
    const name = title(series);
    const { key, text } = body(series, source, runUrl, commits);
    const open = issues.find((issue) => issue.title === name);
    if (!open && opened >= MAX_NEW_ISSUES) {
      core.warning(`${name}: not opened, this run already opened ${MAX_NEW_ISSUES} issues (the job summary lists every series)`);
    } else if (!open) {
      opened += 1;
      await github.rest.issues.create({ ...context.repo, title: name, labels: [LABEL], body: text });
    } else if (!String(open.body || '').includes(`key=${key} -->`)) {
      await github.rest.issues.update({ ...context.repo, issue_number: open.number, body: text });
      await github.rest.issues.createComment({
        ...context.repo, issue_number: open.number, body: `New change point in this series, see ${runUrl}`,
      });
    } // the same change points as last time: the issue already says it, nothing new to say
  }
}

module.exports = changePoints;
module.exports.splitTonight = splitTonight;
module.exports.tonightSection = tonightSection;
