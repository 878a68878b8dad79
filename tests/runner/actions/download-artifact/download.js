// actions/download-artifact stand-in (see action.yml): a copy from a local folder per run.
const fs = require('fs');
const os = require('os');
const path = require('path');

const input = (name) => (process.env[`INPUT_${name.toUpperCase()}`] || '').trim();
const store = process.env.BENCHWATCH_RUNNER_ARTIFACTS;
if (!store) { console.log('::error::download-artifact stand-in: BENCHWATCH_RUNNER_ARTIFACTS is not set'); process.exit(1); }
const name = input('name');
const pattern = input('pattern');
if (!name && !pattern) { console.log('::error::download-artifact stand-in: give a name or a pattern (downloading every artifact is not implemented)'); process.exit(1); }
const runId = input('run-id') || process.env.GITHUB_RUN_ID;
if (input('run-id') && !input('github-token')) {
  console.log('::error::download-artifact stand-in: run-id needs github-token, as in the real action');
  process.exit(1);
}
const dest = path.resolve(process.env.GITHUB_WORKSPACE, (input('path') || '.').replace(/^~(?=\/|$)/, os.homedir()));
if (name) {
  const source = path.join(store, runId, name);
  if (!fs.existsSync(source)) { console.log(`::error::download-artifact stand-in: no artifact ${name} in run ${runId}`); process.exit(1); }
  fs.mkdirSync(dest, { recursive: true });
  fs.cpSync(source, dest, { recursive: true });
  console.log(`download-artifact stand-in: ${source} -> ${dest}`);
} else {
  // a pattern (only `*` is a wildcard here): each matching artifact into path/<its name>/, as the
  // real action does without merge-multiple
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  const matches = new RegExp(`^${escaped.join('.*')}$`);
  const run = path.join(store, runId);
  const names = fs.existsSync(run) ? fs.readdirSync(run).filter((one) => matches.test(one)).sort() : [];
  fs.mkdirSync(dest, { recursive: true });
  for (const one of names) {
    fs.cpSync(path.join(run, one), path.join(dest, one), { recursive: true });
    console.log(`download-artifact stand-in: ${path.join(run, one)} -> ${path.join(dest, one)}`);
  }
  if (!names.length) console.log(`download-artifact stand-in: no artifact matches ${pattern} in run ${runId}`);
}
