// actions/upload-artifact stand-in (see action.yml): a copy into a local folder per run.
const fs = require('fs');
const os = require('os');
const path = require('path');

const input = (name) => (process.env[`INPUT_${name.toUpperCase()}`] || '').trim();
const expand = (p) => path.resolve(process.env.GITHUB_WORKSPACE, p.replace(/^~(?=\/|$)/, os.homedir()));
const store = process.env.BENCHWATCH_RUNNER_ARTIFACTS;
if (!store) { console.log('::error::upload-artifact stand-in: BENCHWATCH_RUNNER_ARTIFACTS is not set'); process.exit(1); }

const name = input('name') || 'artifact';
const wanted = input('path').split('\n').map((p) => p.trim()).filter(Boolean).map(expand);
const found = wanted.filter((p) => fs.existsSync(p));
if (found.length === 0) {
  const mode = input('if-no-files-found') || 'warn';
  const text = `upload-artifact stand-in: no files found for ${name} (${wanted.join(', ')})`;
  if (mode === 'error') { console.log(`::error::${text}`); process.exit(1); }
  if (mode === 'warn') console.log(`::warning::${text}`);
  process.exit(0);
}
// the real action stores files relative to the least common ancestor of the paths given
const isDir = (p) => fs.statSync(p).isDirectory();
const parts = found.map((p) => (isDir(p) ? p : path.dirname(p)).split(path.sep));
let common = parts[0];
for (const other of parts.slice(1)) {
  let i = 0;
  while (i < common.length && i < other.length && common[i] === other[i]) i += 1;
  common = common.slice(0, i);
}
const root = common.join(path.sep) || path.sep;
const target = path.join(store, process.env.GITHUB_RUN_ID, name);
fs.rmSync(target, { recursive: true, force: true });
for (const p of found) {
  const dest = path.join(target, path.relative(root, p));
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.cpSync(p, dest, { recursive: true });
  console.log(`upload-artifact stand-in: ${p} -> ${dest}`);
}
