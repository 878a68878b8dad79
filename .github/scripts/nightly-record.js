// The record jobs (reusable-nightly.yml; reusable-publish.yml: gab only) on their measure job's artifact, which ran brand-new
// releases and is therefore untrusted data. Runs through actions/github-script: reads files,
// writes the accepted ones to a separate folder and calls the issues API; nothing else.
//   check: state.json must match the schema benchwatch writes (releases.py) or nothing is
//          recorded; an attribution file is published only when its name is this run's
//          <date>-<sha12>.json and its content parses as a JSON object
//   gab:   each gab-*.json github-action-benchmark reads must be a list of {name, unit, value,
//          range?, extra?}; an entry whose name is not a benchwatch figure name or whose unit is not
//          one of benchwatch's is dropped (said). The publish record job runs it too.
//   issue: the nightly-regression issue, its artifact text neutralised
// tests/test_workflow_attacks.py plants each attack and runs this under node.
const fs = require('fs');
const path = require('path');
const { neutralise, plainTags, quiet } = require('./neutralise.js');
const { tonightSection } = require('./change-points.js');

const MAX_STATE = 100000;
const MAX_ATTRIBUTION = 2000000;
const MAX_MARKDOWN = 200000;
const MAX_BODY = 60000;
const MAX_CHANGES = 5000000; // change-points.js's MAX_JSON
const ATTRIBUTION_NAME = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])-[0-9a-f]{12}\.json$/;
const WATCHED = ['fastapi', 'pydantic', 'starlette', 'uvicorn']; // releases.PACKAGES
// canonical PEP 440 as releases.safe_version accepts it (no epoch or local part)
const VERSION = /^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const DEFAULT_INDEX = 'https://pypi.org'; // releases.DEFAULT_INDEX_URL

// The index the nightly resolved on (reusable-nightly.yml's index-url, default PyPI), as
// releases.resolve_index_url writes it into state.json: an http(s) URL, trailing slashes dropped.
// No credentials, query or fragment (state.json is published). null when it is none of that.
function indexUrl(given) {
  const raw = given || DEFAULT_INDEX;
  let parsed;
  try { parsed = new URL(raw); } catch { return null; }
  if (!['http:', 'https:'].includes(parsed.protocol) || !parsed.host || parsed.username || parsed.password
      || parsed.search || parsed.hash || /[\s#?@]/.test(raw)) return null;
  return raw.replace(/\/+$/, '');
}

function regularFile(p, limit) {
  let st;
  try { st = fs.lstatSync(p); } catch { return null; }
  return st.isFile() && st.size <= limit ? fs.readFileSync(p, 'utf8') : undefined;
}

const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);

// the problem with a state document, or null when it is what benchwatch writes
function stateProblem(state, index = DEFAULT_INDEX) {
  if (!isObject(state)) return 'not a JSON object';
  const extra = Object.keys(state).filter((k) => !['schema', 'index_url', 'pre', 'versions', 'measured'].includes(k));
  if (extra.length) return `unexpected key ${JSON.stringify(extra[0].slice(0, 40))}`;
  if (state.schema !== 1) return 'schema is not 1';
  if (state.index_url !== index) return `index_url is not ${index}`;
  if (typeof state.pre !== 'boolean') return 'pre is not true or false';
  if (!isObject(state.versions)) return 'versions is not an object';
  for (const [name, version] of Object.entries(state.versions)) {
    if (!WATCHED.includes(name)) return `versions names ${JSON.stringify(name.slice(0, 40))}, not a watched package`;
    if (typeof version !== 'string' || !VERSION.test(version)) return `versions.${name} is not a version`;
  }
  if (state.measured !== undefined) {
    if (!isObject(state.measured) || Object.keys(state.measured).length > 1000) return 'measured is not an object of at most 1000 packages';
    for (const [name, version] of Object.entries(state.measured)) {
      if (!NAME.test(name) || typeof version !== 'string' || !VERSION.test(version)) return `measured holds a bad entry ${JSON.stringify(name.slice(0, 40))}`;
    }
    // what the state says was resolved is what the environment held
    for (const [name, version] of Object.entries(state.versions)) {
      if (name in state.measured && state.measured[name] !== version) return `versions.${name} ${version} is not the measured ${state.measured[name]}`;
    }
  }
  return null;
}

// A version the index does not list yet (a future one) would hide that release on the night it
// appears: every recorded version of a watched package must be on the index now. Asked of the
// project's JSON (`/pypi/<name>/json`, its `releases`), which every index serving the JSON API
// has; mirrors and proxies often serve no per-version document.
async function unlisted(state, fetchJson, index) {
  for (const [name, version] of Object.entries(state.versions)) {
    const url = `${index}/pypi/${name}/json`;
    let project = null;
    try { project = await fetchJson(url); } catch { project = null; }
    const releases = isObject(project) && isObject(project.releases) ? Object.keys(project.releases) : [];
    if (!releases.some((listed) => listed.toLowerCase() === version)) return `versions.${name} ${version} is not on ${index}`;
  }
  return null;
}

const indexJson = async (url) => {
  const answer = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(30000) });
  return answer.ok ? answer.json() : null;
};

// The one attribution file a night may publish: `<run date>-<sha12>.json`, named by the measure job
// (reusable-nightly.yml) from its date and the commit measured. The record job runs within hours
// of it, so the date is today or yesterday (UTC) by the record job's clock, and the commit is its
// own github.sha: an artifact cannot name an earlier night's file (record_push.sh --add refuses a
// name already published, too).
const tonightsNames = (sha, now) => [0, 1].map((back) => {
  const day = new Date(now.getTime() - back * 86400000).toISOString().slice(0, 10);
  return `${day}-${sha.slice(0, 12)}.json`;
});

// check({core, dir, out, index, sha, now, fetchJson}): accepted files copied under `out`; returns
// what was accepted. A bad state.json fails the step (nothing recorded, the next night tries
// again). `index`: the index-url the nightly resolved on (empty: PyPI); `sha`: the commit this run
// measured (context.sha).
async function check({ core, dir, out, index, sha, now = new Date(), fetchJson = indexJson }) {
  const INDEX = indexUrl(index);
  if (INDEX === null) {
    core.setFailed('index-url: not an http(s) URL without credentials, query or fragment; nothing recorded');
    return null;
  }
  if (!/^[0-9a-f]{40}$/.test(String(sha))) {
    core.setFailed('the run\'s commit is not 40 hex; nothing recorded');
    return null;
  }
  const tonight = tonightsNames(sha, now);
  fs.mkdirSync(path.join(out, 'attribution'), { recursive: true });
  const text = regularFile(path.join(dir, 'state.json'), MAX_STATE);
  let problem = typeof text === 'string' ? null : `not a regular file under ${MAX_STATE} bytes`;
  let state;
  if (!problem) {
    try { state = JSON.parse(text); } catch (e) { problem = `not JSON (${e.message.slice(0, 80)})`; }
  }
  problem = problem || stateProblem(state, INDEX) || (await unlisted(state, fetchJson, INDEX));
  if (problem) {
    core.setFailed(`state.json in the artifact: ${problem}; nothing recorded`);
    return null;
  }
  fs.writeFileSync(path.join(out, 'state.json'), JSON.stringify(state, null, 2) + '\n');
  const accepted = [];
  const folder = path.join(dir, 'attribution');
  let names = [];
  try { if (fs.lstatSync(folder).isDirectory()) names = fs.readdirSync(folder); } catch { names = []; }
  for (const name of names.sort()) {
    const shown = JSON.stringify(name.slice(0, 60));
    if (!ATTRIBUTION_NAME.test(name)) { core.warning(`attribution/${shown}: not YYYY-MM-DD-<12 hex>.json, not published`); continue; }
    if (!tonight.includes(name)) { core.warning(`attribution/${shown}: not this run's ${tonight.join(' or ')}, not published`); continue; }
    const content = regularFile(path.join(folder, name), MAX_ATTRIBUTION);
    if (typeof content !== 'string') { core.warning(`attribution/${shown}: not a regular file under ${MAX_ATTRIBUTION} bytes, not published`); continue; }
    let parsed;
    try { parsed = JSON.parse(content); } catch { parsed = null; }
    if (!isObject(parsed)) { core.warning(`attribution/${shown}: not a JSON object, not published`); continue; }
    fs.writeFileSync(path.join(out, 'attribution', name), JSON.stringify(parsed, null, 2) + '\n');
    accepted.push(name);
  }
  return { state, attribution: accepted };
}

const MAX_GAB = 5000000;
const GAB_FILES = ['gab-smaller.json', 'gab-bigger.json', 'gab-counts.json', 'gab-relative.json'];
const GAB_KEYS = ['name', 'unit', 'value', 'range', 'extra'];

// benchwatch's own figure names, nothing else. The one definition is src/benchwatch/figure_key.py
// (with metrics.py); tests/test_workflow_attacks.py checks these lists against it and every name
// it encodes against this check. github-action-benchmark prints a name in backticks in a table
// row (a `|` would split the row, a backtick end the code) and the unit as it is.
const UNITS = ['us', 'req/s', 'ms', 'MB', 'instructions', 'calls', 'blocks', 'buffers', 'statements', 'x']; // metrics.METRICS' units, trend/relative.UNIT
const PER_ENDPOINT = ['cost/req', 'instr/req', 'syscalls/req', 'retained/req', 'db buffers/req', 'statements/req', 'cpu/req', 'user/req', 'sys/req', 'rps', 'p50', 'p99'];
const PER_VARIANT = ['rss idle', 'rss warm', 'rss peak'];
const MARKS = [' (side by side)', ' (vs parent)']; // figure_key.SIDE_BY_SIDE, PARENT_MARK
const words = (list) => list.map((w) => w.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
const VARIANT = '[a-z0-9][a-z0-9_-]*@[a-z0-9][a-z0-9._+-]*'; // declarations' scenario and stack names
const SETTING = '(?:c=[0-9]+|rate=[0-9]+(?:\\.[0-9]+)?%|seq)'; // metrics.Closed, Open, Counted tags
const ENDPOINT = '[A-Z]+ /[^\\u0000-\\u001f\\u007f|`\\\\]*'; // a method and its path (query values as declared)
const MICRO_WORD = '[A-Za-z0-9_.,=+:-]+';
const FIGURE_NAME = new RegExp(`^(?:${VARIANT} ${ENDPOINT} ${SETTING} (?:${words(PER_ENDPOINT)})`
  + `|${VARIANT} (?:${words(PER_VARIANT)})`
  + `|micro ${MICRO_WORD}(?: ${MICRO_WORD})*@[a-z0-9][a-z0-9._+-]*)(?:${words(MARKS)})?$`);
const figureName = (x) => typeof x === 'string' && x.length <= 300 && FIGURE_NAME.test(x);

// the problem with one entry of a gab file, or null when it is what benchwatch writes (results.gab_entries)
function gabEntryProblem(entry) {
  if (!isObject(entry)) return 'not an object';
  const extra = Object.keys(entry).filter((k) => !GAB_KEYS.includes(k));
  if (extra.length) return `unexpected key ${JSON.stringify(extra[0].slice(0, 40))}`;
  if (!figureName(entry.name)) return 'name is not a benchwatch figure name';
  if (!UNITS.includes(entry.unit)) return `unit is not one of benchwatch's (${UNITS.join(', ')})`;
  if (typeof entry.value !== 'number' || !Number.isFinite(entry.value)) return 'value is not a finite number';
  for (const key of ['range', 'extra']) {
    if (entry[key] !== undefined && !(typeof entry[key] === 'string' && entry[key].length <= 2000)) return `${key} is not text of at most 2000 characters`;
  }
  return null;
}

// range and extra (a note, the samples) are shown as they are: tags, links, code spans and table
// cells flattened
const flatten = (text) => quiet(text.replace(/[\u0000-\u001f\u007f<>[\]`|\\]/g, ' '));

// gab({core, dir, out}): every gab-*.json of the artifact, checked, written under `out` (only the
// entries that pass; a file that is not a list fails the step: nothing recorded)
async function gab({ core, dir, out }) {
  fs.mkdirSync(out, { recursive: true });
  for (const name of GAB_FILES) {
    const text = regularFile(path.join(dir, name), MAX_GAB);
    if (text === null) continue; // not written tonight (no counts)
    let entries;
    try { entries = typeof text === 'string' ? JSON.parse(text) : undefined; } catch { entries = undefined; }
    if (!Array.isArray(entries)) {
      core.setFailed(`${name} in the artifact: not a JSON list in a regular file under ${MAX_GAB} bytes; nothing recorded`);
      return false;
    }
    const kept = [];
    entries.forEach((entry, i) => {
      const problem = gabEntryProblem(entry);
      if (problem) core.warning(`${name}[${i}]: ${problem}; not recorded`);
      else kept.push(Object.fromEntries(GAB_KEYS.filter((k) => entry[k] !== undefined)
        .map((k) => [k, ['range', 'extra'].includes(k) ? flatten(entry[k]) : entry[k]])));
    });
    fs.writeFileSync(path.join(out, name), JSON.stringify(kept, null, 2) + '\n');
  }
  return true;
}

// issue({github, context, core, dir}): open or update the one nightly-regression issue
async function issue({ github, context, core, dir }) {
  const LABEL = 'nightly-regression';
  const MARKER = '<!-- benchwatch-nightly -->';
  const runUrl = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs/${context.runId}`;
  const read = (name) => {
    const text = regularFile(path.join(dir, name), MAX_MARKDOWN);
    if (text === undefined) core.warning(`${name}: not a regular file under ${MAX_MARKDOWN} bytes, ignored`);
    return typeof text === 'string' ? neutralise(text.split(MARKER).join('')) : '';
  };
  // tonight's change points on the nightly trend: in this issue, not issues of their own
  const changes = regularFile(path.join(dir, 'changes.json'), MAX_CHANGES);
  let changed = null;
  try { changed = typeof changes === 'string' ? JSON.parse(changes) : null; } catch { changed = null; }
  let body = [
    MARKER,
    `A new release changed the numbers; run ${runUrl}. Everything below comes from that run's artifact.`,
    read('releases.md'),
    read('mechanism.md'), // benchwatch mechanism: what moved per request, by system call and function
    read('attribution.md'),
    tonightSection(changed),
    read('comment.md'),
  ].filter((part) => part !== '').join('\n\n');
  // cut, a folded block could stay open or a code span lose its end (what it held would then be
  // text): what is left is neutralised again
  if (body.length > MAX_BODY) body = MARKER + neutralise(body.slice(MARKER.length, MAX_BODY)) + `\n\n(truncated; see ${runUrl})`;
  // the issues API also lists pull requests: keep real issues only
  const open = (await github.paginate(github.rest.issues.listForRepo, {
    ...context.repo, labels: LABEL, state: 'open', per_page: 100,
  })).filter((found) => !found.pull_request);
  if (open.length > 0) {
    await github.rest.issues.update({ ...context.repo, issue_number: open[0].number, body });
    await github.rest.issues.createComment({
      ...context.repo, issue_number: open[0].number, body: `New nightly regression, see ${runUrl}`,
    });
  } else {
    await github.rest.issues.create({
      ...context.repo, title: 'Nightly: a new release changed the numbers', labels: [LABEL], body,
    });
  }
}

module.exports = { check, gab, issue, stateProblem, figureName, UNITS, PER_ENDPOINT, PER_VARIANT, MARKS };
