// The README's pictures of the Cockpit: one screenshot of every kind of page, taken in a real
// headless Chromium (playwright-core) over a demonstration repository made here — a small layer,
// a plan with dependencies, done and open work, and agents that claimed, were refused, sent a
// message, and one that died holding an issue — so every page shows what it is for.
//
// A plain Node script run by scripts/cockpit-screenshots.sh. It writes docs/screenshots/, or
// SCREENSHOTS when set; it prints each file and exits non-zero when a page is not as expected.
//
// Environment:
//   MAJORDOMUS_BIN  the binary (default: target/debug/majordomus of this checkout)
//   CHROMIUM        the browser (default: /usr/bin/chromium)
//   SCREENSHOTS     where the pictures go (default: docs/screenshots/ of this checkout)

'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const CHECKOUT = path.resolve(__dirname, '..', '..');
const BIN = process.env.MAJORDOMUS_BIN || path.join(CHECKOUT, 'target', 'debug', 'majordomus');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const OUT = process.env.SCREENSHOTS || path.join(CHECKOUT, 'docs', 'screenshots');
const WIDTH = 1280;
/** The tallest picture: a long page is shown from its top. */
const MAX_HEIGHT = 1400;
const STARTUP_DEADLINE_MS = 30_000;

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'demo', GIT_AUTHOR_EMAIL: 'demo@example.invalid',
  GIT_COMMITTER_NAME: 'demo', GIT_COMMITTER_EMAIL: 'demo@example.invalid',
  MAJORDOMUS_LOG: 'warn',
};

const DAY = 86_400_000;
const stamp = (daysAgo, hour) => new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 11) + `${String(hour).padStart(2, '0')}:00:00Z`;

/** The demonstration plan: id, title, dependencies, stamps (days ago), paths, priority. */
const ISSUES = [
  ['schema', 'Declare the order schema', [], { created: 12, started: 11, verified: 10, completed: 9 }, 'src/schema/**', 0],
  ['storage', 'Store orders in the database', ['schema'], { created: 11, started: 8, verified: 6, completed: 5 }, 'src/storage/**', 1],
  ['api', 'Serve orders over the API', ['storage'], { created: 10, started: 4 }, 'src/api/**', 1],
  ['billing', 'Bill an order once it ships', ['api'], { created: 9 }, 'src/billing/**', 2],
  ['docs', 'Document the order API', ['api'], { created: 8 }, 'docs/api/**', 3],
  ['metrics', 'Count orders per hour', ['storage'], { created: 7, started: 2, verified: 1 }, 'src/metrics/**', 2],
  ['search', 'Search orders by customer', [], { created: 5 }, 'src/search/**', 2],
  ['exports', 'Export orders as CSV', [], { created: 3 }, 'src/exports/**', 3],
  ['audit', 'Keep an audit trail of changes', ['schema'], { created: 6, started: 3 }, 'src/audit/**', 1],
];

function issueYaml([id, title, deps, s, glob, priority]) {
  const lines = [`id: ${id}`, `title: ${title}`, `priority: ${priority}`, `paths: ["${glob}"]`];
  if (deps.length) lines.push(`depends_on: [${deps.join(', ')}]`);
  lines.push(`created_at: "${stamp(s.created, 9)}"`);
  if (s.started !== undefined) lines.push(`started_at: "${stamp(s.started, 10)}"`);
  if (s.verified !== undefined) lines.push(`verified_at: "${stamp(s.verified, 15)}"`);
  if (s.completed !== undefined) lines.push(`completed_at: "${stamp(s.completed, 17)}"`);
  return lines.join('\n') + '\n';
}

/** A repository with a layer of its own and the demonstration plan, committed. */
function demoRepository() {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'majordomus-demo-'));
  execFileSync('git', ['init', '-q'], { cwd: repo, env: ENV });
  execFileSync(BIN, ['init'], { cwd: repo, env: ENV, stdio: 'ignore' });
  const issues = path.join(repo, '.ai', 'repo', 'project', 'issues');
  fs.mkdirSync(issues, { recursive: true });
  for (const issue of ISSUES) fs.writeFileSync(path.join(issues, `${issue[0]}.yaml`), issueYaml(issue));
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'README.md'), 'The order service.\n');
  execFileSync('git', ['add', '-A'], { cwd: repo, env: ENV });
  execFileSync('git', ['commit', '-qm', 'a layer and a plan'], { cwd: repo, env: ENV });
  return repo;
}

/** Starts `majordomus serve --port 0` over `repo`; resolves with the child and its base URL. */
function startServer(repo) {
  const child = spawn(BIN, ['serve', '--port', '0', '--repo', repo], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'], env: ENV });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`no address within ${STARTUP_DEADLINE_MS} ms: ${stderr}`)); }, STARTUP_DEADLINE_MS);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the server exited with ${code}: ${stderr}`)); });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /^majordomus serving .* on (http:\/\/127\.0\.0\.1:\d+)$/.exec(stderr.split('\n')[0]);
      if (m && stderr.includes('\n')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, base: m[1] });
      }
    });
  });
}

/** A stdio agent: `majordomus mcp` over `repo`, spoken to line by line. */
class StdioAgent {
  constructor(repo, name) {
    this.child = spawn(BIN, ['mcp', '--repo', repo], { cwd: repo, stdio: ['pipe', 'pipe', 'ignore'], env: ENV });
    this.name = name;
    this.next = 1;
    this.buffer = '';
    this.waiting = new Map();
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      let at;
      while ((at = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 1);
        const message = JSON.parse(line);
        const resolve = this.waiting.get(message.id);
        if (resolve) {
          this.waiting.delete(message.id);
          resolve(message);
        }
      }
    });
  }

  request(method, params) {
    const id = this.next++;
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no answer to ${method}`)), 20_000);
      this.waiting.set(id, (m) => { clearTimeout(timer); resolve(m); });
    });
  }

  async start() {
    await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: this.name, version: '1.0.0' } });
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    return this;
  }

  async call(name, args) {
    const answer = await this.request('tools/call', { name, arguments: args });
    if (!answer.result || answer.result.isError) throw new Error(`${this.name} ${name}: ${JSON.stringify(answer).slice(0, 300)}`);
    return answer.result.structuredContent;
  }

  stop() {
    this.child.kill('SIGKILL');
  }
}

/** What the agents do before the pictures are taken; answers the handles met. */
async function work(repo) {
  const gone = await new StdioAgent(repo, 'claude-code').start();
  await gone.call('majordomus_plan_claim', { issue: 'audit' });
  gone.stop();
  const builder = await new StdioAgent(repo, 'codex').start();
  await builder.call('majordomus_plan_claim', { issue: 'api' });
  await builder.call('majordomus_get', { uri: 'majordomus://issue/api' }).catch(() => null);
  const reviewer = await new StdioAgent(repo, 'gemini-cli').start();
  await reviewer.call('majordomus_plan_claim', { issue: 'metrics' });
  await reviewer.call('majordomus_claim', { globs: ['src/api/**'], mode: 'exclusive', reason: 'review the handlers' }).catch(() => null);
  await builder.call('majordomus_send', { subject: 'The order API is in review', body: 'Handlers are done; please read src/api/orders.rs first.\nThe schema did not change.', all: true });
  await reviewer.call('majordomus_send', { subject: 'Two questions on pagination', body: 'Is the cursor opaque to clients?\nDo we cap the page at 100?', all: true });
  return { agents: [builder, reviewer] };
}

async function main() {
  const repo = demoRepository();
  const { child, base } = await startServer(repo);
  let browser;
  let agents = [];
  let failed = 0;
  try {
    ({ agents } = await work(repo));
    const peers = await fetch(new URL('/api/v1/peers', base)).then((r) => r.json());
    const codex = (peers.peers || []).find((p) => p.client_supplied.client === 'codex');
    const rule = await fetch(new URL('/api/v1/objects?kind=rule&limit=1', base)).then((r) => r.json());
    const ruleUri = rule.objects && rule.objects[0] ? rule.objects[0].uri : 'majordomus://repository';
    const shots = [
      ['cockpit-overview.png', '/cockpit', 'light'],
      ['cockpit-plan.png', '/cockpit/plan', 'light'],
      ['cockpit-progress.png', '/cockpit/progress', 'light'],
      ['cockpit-issue.png', '/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fapi', 'light'],
      ['cockpit-agent.png', `/cockpit/agent?handle=${encodeURIComponent(codex ? codex.handle : 'none')}`, 'dark'],
      ['cockpit-messages.png', '/cockpit/messages', 'light'],
      ['cockpit-peers.png', '/cockpit/peers', 'dark'],
      ['cockpit-executions.png', '/cockpit/executions', 'light'],
      ['cockpit-objects.png', '/cockpit/objects', 'light'],
      ['cockpit-object.png', `/cockpit/object?uri=${encodeURIComponent(ruleUri)}`, 'light'],
      ['cockpit-search.png', '/cockpit/search?q=rule', 'light'],
      ['cockpit-capabilities.png', '/cockpit/capabilities', 'light'],
      ['cockpit-answer.png', '/cockpit/capabilities/plan.ready/run#answer', 'dark'],
      ['cockpit-mcp.png', '/cockpit/mcp', 'dark'],
      ['cockpit-doctor.png', '/cockpit/doctor', 'light'],
      ['cockpit-api.png', '/cockpit/api', 'light'],
      ['cockpit-not-found.png', '/cockpit/no-such-page', 'light'],
    ];
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    fs.mkdirSync(OUT, { recursive: true });
    for (const [file, href, colorScheme] of shots) {
      const context = await browser.newContext({ viewport: { width: WIDTH, height: 900 }, colorScheme });
      const page = await context.newPage();
      const response = await page.goto(new URL(href, base).toString());
      const expected = href.includes('no-such-page') ? 404 : 200;
      if (response.status() !== expected) {
        failed += 1;
        console.log(`FAIL ${href} answered ${response.status()}, expected ${expected}`);
      }
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      const out = path.join(OUT, file);
      await page.screenshot({ path: out, fullPage: true, clip: { x: 0, y: 0, width: WIDTH, height: Math.min(height, MAX_HEIGHT) } });
      await context.close();
      console.log(`  ${path.relative(CHECKOUT, out)}  ${href}`);
    }
  } finally {
    if (browser) await browser.close();
    for (const a of agents) a.stop();
    child.kill('SIGTERM');
    fs.rmSync(repo, { recursive: true, force: true });
  }
  if (failed > 0) process.exit(1);
  console.log('cockpit-screenshots: ok');
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
