// actions/github-script stand-in (see action.yml).
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const input = (name) => process.env[`INPUT_${name.toUpperCase()}`] || '';
const escapeData = (s) => String(s).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

const core = {
  exitCode: 0,
  getInput: (name) => input(name.replace(/ /g, '_')).trim(),
  info: (text) => console.log(text),
  debug: (text) => console.log(`::debug::${escapeData(text)}`),
  notice: (text) => console.log(`::notice::${escapeData(text)}`),
  warning: (text) => console.log(`::warning::${escapeData(text instanceof Error ? text.message : text)}`),
  error: (text) => console.log(`::error::${escapeData(text instanceof Error ? text.message : text)}`),
  setFailed(text) { this.exitCode = 1; this.error(text); },
  setOutput(name, value) {
    const delimiter = `ghadelimiter_${Date.now()}_${Math.random().toString(36).slice(2)}`;
    fs.appendFileSync(process.env.GITHUB_OUTPUT, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
  },
  summary: {
    buffer: '',
    addRaw(text, addEol = false) { this.buffer += text + (addEol ? '\n' : ''); return this; },
    addHeading(text, level = 1) { return this.addRaw(`<h${level}>${text}</h${level}>`, true); },
    async write() {
      fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, this.buffer);
      this.buffer = '';
      return this;
    },
  },
};

function readEvent() {
  try { return JSON.parse(fs.readFileSync(process.env.GITHUB_EVENT_PATH, 'utf8')); } catch { return {}; }
}
const payload = readEvent();
const [owner, repo] = String(process.env.GITHUB_REPOSITORY || '/').split('/');
const context = {
  payload,
  eventName: process.env.GITHUB_EVENT_NAME,
  sha: process.env.GITHUB_SHA,
  ref: process.env.GITHUB_REF,
  workflow: process.env.GITHUB_WORKFLOW,
  action: process.env.GITHUB_ACTION,
  actor: process.env.GITHUB_ACTOR,
  job: process.env.GITHUB_JOB,
  runNumber: Number(process.env.GITHUB_RUN_NUMBER),
  runId: Number(process.env.GITHUB_RUN_ID),
  apiUrl: process.env.GITHUB_API_URL,
  serverUrl: process.env.GITHUB_SERVER_URL,
  graphqlUrl: process.env.GITHUB_GRAPHQL_URL,
  repo: { owner, repo },
  get issue() { return { owner, repo, number: (payload.issue || payload.pull_request || payload).number }; },
};

// METHOD, path template; {names} are taken from the parameters, the rest is the query or body
const ROUTES = {
  'pulls.get': ['GET', '/repos/{owner}/{repo}/pulls/{pull_number}'],
  'pulls.listFiles': ['GET', '/repos/{owner}/{repo}/pulls/{pull_number}/files'],
  'issues.listComments': ['GET', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  'issues.createComment': ['POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  'issues.updateComment': ['PATCH', '/repos/{owner}/{repo}/issues/comments/{comment_id}'],
  'issues.listForRepo': ['GET', '/repos/{owner}/{repo}/issues'],
  'issues.create': ['POST', '/repos/{owner}/{repo}/issues'],
  'issues.update': ['PATCH', '/repos/{owner}/{repo}/issues/{issue_number}'],
  'repos.createCommitComment': ['POST', '/repos/{owner}/{repo}/commits/{commit_sha}/comments'],
};

async function request(method, template, params) {
  const rest = { ...params };
  const route = template.replace(/\{(\w+)\}/g, (_, key) => {
    if (rest[key] === undefined) throw new Error(`github-script stand-in: ${template} needs ${key}`);
    const value = encodeURIComponent(String(rest[key]));
    delete rest[key];
    return value;
  });
  const url = new URL(process.env.GITHUB_API_URL.replace(/\/$/, '') + route);
  const options = {
    method,
    headers: { Accept: 'application/vnd.github+json', Authorization: `token ${input('github-token')}` },
  };
  if (method === 'GET') {
    for (const [key, value] of Object.entries(rest)) url.searchParams.set(key, Array.isArray(value) ? value.join(',') : String(value));
  } else {
    options.headers['Content-Type'] = 'application/json';
    options.body = JSON.stringify(rest);
  }
  const response = await fetch(url, options);
  const text = await response.text();
  if (!response.ok) {
    const error = new Error(`${method} ${route}: HTTP ${response.status} ${text.slice(0, 200)}`);
    error.status = response.status;
    throw error;
  }
  return { status: response.status, data: text ? JSON.parse(text) : null, headers: Object.fromEntries(response.headers) };
}

const rest = new Proxy({}, {
  get: (_, group) => new Proxy({}, {
    get: (__, method) => {
      const route = ROUTES[`${String(group)}.${String(method)}`];
      if (!route) {
        return () => { throw new Error(`github-script stand-in: github.rest.${String(group)}.${String(method)} is not implemented`); };
      }
      const call = (params = {}) => request(route[0], route[1], params);
      call.route = route;
      return call;
    },
  }),
});

async function paginate(method, params = {}) {
  const perPage = params.per_page || 30;
  const items = [];
  for (let page = 1; ; page += 1) {
    const { data } = await method({ ...params, per_page: perPage, page });
    if (!Array.isArray(data)) throw new Error('github-script stand-in: paginate expects a list');
    items.push(...data);
    if (data.length < perPage) return items;
  }
}

const github = { rest, paginate, request: (route, params) => {
  const [method, template] = String(route).split(' ');
  return request(method, template, params);
} };

(async () => {
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
  const workspaceRequire = createRequire(path.join(process.env.GITHUB_WORKSPACE || process.cwd(), 'noop.js'));
  const body = new AsyncFunction('require', 'github', 'context', 'core', input('script'));
  try {
    const result = await body(workspaceRequire, github, context, core);
    if (result !== undefined) core.setOutput('result', typeof result === 'string' ? result : JSON.stringify(result));
  } catch (error) {
    core.setFailed(`Unhandled error: ${error && error.stack ? error.stack : error}`);
  }
  process.exitCode = core.exitCode;
})();
