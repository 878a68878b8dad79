// The nightly's record job (nightly.yml) on its measure job's artifact, which ran brand-new
// releases and is therefore untrusted data. Runs through actions/github-script: reads files,
// writes the accepted ones to a separate folder and calls the issues API; nothing else.
//   check: state.json must match the schema benchwatch writes (releases.py) or nothing is
//          recorded; an attribution file is published only when its name is
//          YYYY-MM-DD-<12 hex>.json and its content parses as a JSON object
//   issue: the nightly-regression issue, its artifact text neutralised
// tests/test_workflow_attacks.py plants each attack and runs this under node.
const fs = require('fs');
const path = require('path');
const { neutralise, plainTags } = require('./neutralise.js');

const MAX_STATE = 100000;
const MAX_ATTRIBUTION = 2000000;
const MAX_MARKDOWN = 200000;
const MAX_BODY = 60000;
const ATTRIBUTION_NAME = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])-[0-9a-f]{12}\.json$/;
const WATCHED = ['fastapi', 'pydantic', 'starlette', 'uvicorn']; // releases.PACKAGES
// canonical PEP 440 as releases.safe_version accepts it (no epoch or local part)
const VERSION = /^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const INDEX = 'https://pypi.org'; // releases.DEFAULT_INDEX_URL: the nightly resolves there

function regularFile(p, limit) {
  let st;
  try { st = fs.lstatSync(p); } catch { return null; }
  return st.isFile() && st.size <= limit ? fs.readFileSync(p, 'utf8') : undefined;
}

const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);

// the problem with a state document, or null when it is what benchwatch writes
function stateProblem(state) {
  if (!isObject(state)) return 'not a JSON object';
  const extra = Object.keys(state).filter((k) => !['schema', 'index_url', 'pre', 'versions', 'measured'].includes(k));
  if (extra.length) return `unexpected key ${JSON.stringify(extra[0].slice(0, 40))}`;
  if (state.schema !== 1) return 'schema is not 1';
  if (state.index_url !== INDEX) return `index_url is not ${INDEX}`;
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
// appears: every recorded version of a watched package must be on the index now.
async function unlisted(state, fetchJson) {
  for (const [name, version] of Object.entries(state.versions)) {
    const url = `${INDEX}/pypi/${name}/${version}/json`;
    let found = false;
    try { found = await fetchJson(url); } catch { found = false; }
    if (!found) return `versions.${name} ${version} is not on ${INDEX}`;
  }
  return null;
}

const indexHas = async (url) => (await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(20000) })).ok;

// check({core, dir, out, fetchJson}): accepted files copied under `out`; returns what was
// accepted. A bad state.json fails the step (nothing recorded, the next night tries again).
async function check({ core, dir, out, fetchJson = indexHas }) {
  fs.mkdirSync(path.join(out, 'attribution'), { recursive: true });
  const text = regularFile(path.join(dir, 'state.json'), MAX_STATE);
  let problem = typeof text === 'string' ? null : `not a regular file under ${MAX_STATE} bytes`;
  let state;
  if (!problem) {
    try { state = JSON.parse(text); } catch (e) { problem = `not JSON (${e.message.slice(0, 80)})`; }
  }
  problem = problem || stateProblem(state) || (await unlisted(state, fetchJson));
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

// issue({github, context, core, dir}): open or update the one nightly-regression issue
async function issue({ github, context, core, dir }) {
  const LABEL = 'nightly-regression';
  const runUrl = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs/${context.runId}`;
  const read = (name) => {
    const text = regularFile(path.join(dir, name), MAX_MARKDOWN);
    if (text === undefined) core.warning(`${name}: not a regular file under ${MAX_MARKDOWN} bytes, ignored`);
    return typeof text === 'string' ? neutralise(text.split('<!-- benchwatch-nightly -->').join('')) : '';
  };
  let body = [
    '<!-- benchwatch-nightly -->',
    `A new release changed the numbers; run ${runUrl}. Everything below comes from that run's artifact.`,
    read('releases.md'),
    read('attribution.md'),
    read('comment.md'),
  ].join('\n\n');
  // cut, a folded block could stay open: the tags are checked again on what is left
  if (body.length > MAX_BODY) body = plainTags(body.slice(0, MAX_BODY)) + `\n\n(truncated; see ${runUrl})`;
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

module.exports = { check, issue, stateProblem };
