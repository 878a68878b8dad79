// github-action-benchmark stand-in (see action.yml): its data.js format and git steps.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const input = (name) => (process.env[`INPUT_${name.toUpperCase()}`] || '').trim();
const flag = (name) => input(name) === 'true';
const fail = (text) => { console.log(`::error::github-action-benchmark stand-in: ${text}`); process.exit(1); };
const workspace = process.env.GITHUB_WORKSPACE;
const git = (...args) => execFileSync('git', args, { cwd: workspace, encoding: 'utf8' }).trim();
const PREFIX = 'window.BENCHMARK_DATA = ';
const TOOLS = { customSmallerIsBetter: false, customBiggerIsBetter: true }; // bigger is better?

const name = input('name') || 'Benchmark';
const tool = input('tool');
if (!(tool in TOOLS)) fail(`tool ${tool} is not implemented (only ${Object.keys(TOOLS).join(', ')})`);
if (flag('auto-push')) fail('auto-push: true is not implemented (benchwatch pushes with record_push.sh)');
const percent = (text) => {
  const m = /^([0-9]+(?:\.[0-9]+)?)%$/.exec(text);
  if (!m) fail(`a threshold must be a percentage, got '${text}'`);
  return Number(m[1]) / 100;
};
const alertThreshold = percent(input('alert-threshold') || '200%');
const failThreshold = input('fail-threshold') ? percent(input('fail-threshold')) : alertThreshold;

const benches = JSON.parse(fs.readFileSync(path.resolve(workspace, input('output-file-path')), 'utf8'));
if (!Array.isArray(benches)) fail('output-file-path must hold a JSON array');
for (const b of benches) {
  if (typeof b.name !== 'string' || typeof b.value !== 'number' || typeof b.unit !== 'string') {
    fail(`bad bench ${JSON.stringify(b).slice(0, 200)}`);
  }
}

const payload = JSON.parse(fs.readFileSync(process.env.GITHUB_EVENT_PATH, 'utf8'));
function currentCommit() {
  if (payload.head_commit) return payload.head_commit;
  const pr = payload.pull_request;
  if (pr) {
    return {
      author: { username: pr.user && pr.user.login }, committer: { username: pr.user && pr.user.login },
      id: pr.head.sha, message: pr.title, timestamp: pr.head.repo && pr.head.repo.updated_at,
      url: `${pr.html_url}/commits/${pr.head.sha}`,
    };
  }
  const sha = process.env.GITHUB_SHA;
  const [author, email, message, timestamp] = git('log', '-1', '--format=%an%n%ae%n%s%n%cI', sha).split('\n');
  return {
    author: { name: author, email }, committer: { name: author, email }, id: sha, message, timestamp,
    url: `${process.env.GITHUB_SERVER_URL}/${process.env.GITHUB_REPOSITORY}/commit/${sha}`,
  };
}
const commit = currentCommit();
const entry = { commit, date: Date.now(), tool, benches };
const repoUrl = (payload.repository && payload.repository.html_url) || `${process.env.GITHUB_SERVER_URL}/${process.env.GITHUB_REPOSITORY}`;

function addEntry(data) {
  data.lastUpdate = Date.now();
  data.repoUrl = repoUrl;
  data.entries = data.entries || {};
  const suite = data.entries[name] || (data.entries[name] = []);
  const previous = suite.length ? suite[suite.length - 1] : null;
  suite.push(entry);
  const max = Number(input('max-items-in-chart'));
  if (max > 0 && suite.length > max) suite.splice(0, suite.length - max);
  return previous;
}

function alerts(previous) {
  if (!previous) return [];
  const bigger = TOOLS[tool];
  return benches.flatMap((bench) => {
    const before = previous.benches.find((b) => b.name === bench.name);
    if (!before || before.value === 0 || bench.value === 0) return [];
    const ratio = bigger ? before.value / bench.value : bench.value / before.value;
    return ratio > alertThreshold ? [{ bench, before, ratio }] : [];
  });
}

async function report(previous) {
  const found = alerts(previous);
  const row = (a) => `| \`${a.bench.name}\` | ${a.bench.value} ${a.bench.unit} | ${a.before.value} ${a.before.unit} | ${a.ratio.toFixed(2)} |`;
  if (flag('summary-always')) {
    const rows = benches.map((bench) => {
      const before = previous && previous.benches.find((b) => b.name === bench.name);
      return `| \`${bench.name}\` | ${bench.value} ${bench.unit} | ${before ? `${before.value} ${before.unit}` : ''} |`;
    });
    fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY,
      `# ${name}\n\n| Benchmark | Current | Previous |\n|-|-|-|\n${rows.join('\n')}\n\n`);
  }
  if (!found.length) { console.log(`github-action-benchmark stand-in: ${name}: no alert`); return; }
  const text = [
    '# :warning: **Performance Alert** :warning:',
    '',
    `Possible performance regression was detected for benchmark **'${name}'**.`,
    `Benchmark result of this commit is worse than the previous benchmark result exceeding threshold \`${input('alert-threshold')}\`.`,
    '',
    '| Benchmark suite | Current | Previous | Ratio |',
    '|-|-|-|-|',
    ...found.map(row),
  ].join('\n');
  console.log(text);
  if (flag('comment-on-alert')) {
    const token = input('github-token');
    if (!token) fail("'comment-on-alert' needs 'github-token'");
    const [owner, repo] = process.env.GITHUB_REPOSITORY.split('/');
    const url = `${process.env.GITHUB_API_URL}/repos/${owner}/${repo}/commits/${process.env.GITHUB_SHA}/comments`;
    const response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json', Accept: 'application/vnd.github+json' },
      body: JSON.stringify({ body: text }),
    });
    if (!response.ok) fail(`commit comment: HTTP ${response.status}`);
  }
  if (flag('fail-on-alert') && found.some((a) => a.ratio > failThreshold)) fail(`performance alert on ${name}`);
}

function readData(file, prefixed) {
  if (!fs.existsSync(file)) return { lastUpdate: 0, repoUrl: '', entries: {} };
  let text = fs.readFileSync(file, 'utf8');
  if (prefixed) {
    if (!text.startsWith(PREFIX)) fail(`${file} does not start with '${PREFIX}'`);
    text = text.slice(PREFIX.length);
  }
  return JSON.parse(text.replace(/;\s*$/, ''));
}

(async () => {
  const external = input('external-data-json-path');
  if (external) {
    const file = path.resolve(workspace, external);
    const data = readData(file, false);
    const previous = addEntry(data);
    if (input('save-data-file') !== 'false') fs.writeFileSync(file, JSON.stringify(data, null, 2));
    await report(previous);
    return;
  }
  const branch = input('gh-pages-branch') || 'gh-pages';
  if (!flag('skip-fetch-gh-pages')) {
    const server = new URL(process.env.GITHUB_SERVER_URL);
    const token = input('github-token');
    const remote = token
      ? `${server.protocol}//x-access-token:${token}@${server.host}/${process.env.GITHUB_REPOSITORY}.git`
      : `${server.protocol}//${server.host}/${process.env.GITHUB_REPOSITORY}.git`;
    git('fetch', remote, `${branch}:${branch}`);
  }
  git('switch', branch);
  const dir = input('benchmark-data-dir-path') || 'dev/bench';
  const file = path.join(workspace, dir, 'data.js');
  const data = readData(file, true);
  const previous = addEntry(data);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, PREFIX + JSON.stringify(data, null, 2));
  git('add', path.join(dir, 'data.js'));
  git('-c', 'user.name=github-action-benchmark', '-c', 'user.email=github@users.noreply.github.com',
    'commit', '-m', `add ${name} (${tool}) benchmark result for ${process.env.GITHUB_SHA}`);
  await report(previous);
  git('checkout', '-');
  console.log(`github-action-benchmark stand-in: ${name}: ${benches.length} benches committed to ${branch}:${dir}/data.js`);
})().catch((error) => fail(error && error.stack ? error.stack : String(error)));
