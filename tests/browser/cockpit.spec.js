// The Cockpit in a real headless Chromium: every page reachable from /cockpit
// answers 200 without a console error; no horizontal overflow at 390 and 1280 px in either theme;
// axe-core finds no WCAG 2.1 AA violation and breaks none of its best practices; the search
// runner's hits fit the page with their terms highlighted; the runner answers, with and without JavaScript; the
// MCP page's tool table is `tools/list`; bad input (markup, 10,000-character lines, right-to-left
// text, control characters) in issue titles, agent names and messages stays text and fits 390
// px; an open page says so when the layer changes; and the security headers are on every page.
// The README's screenshots are taken by screenshots.js (scripts/cockpit-screenshots.sh).
//
// A plain Node script: it starts `majordomus serve --port 0` over this checkout, checks
// everything, prints every failure and exits non-zero when there is one.
//
// Environment:
//   MAJORDOMUS_BIN     the binary (default: target/debug/majordomus of this checkout)
//   MAJORDOMUS_REPO    the repository served (default: this checkout)
//   CHROMIUM           the browser (default: /usr/bin/chromium)

'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const CHECKOUT = path.resolve(__dirname, '..', '..');
const BIN = process.env.MAJORDOMUS_BIN || path.join(CHECKOUT, 'target', 'debug', 'majordomus');
const REPO = process.env.MAJORDOMUS_REPO || CHECKOUT;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The crawl stops after this many pages, and must reach at least the minimum on this checkout. */
const CRAWL_BOUND = 400;
const CRAWL_MINIMUM = Number(process.env.CRAWL_MINIMUM || 40);
/** Pages loaded at once while crawling (the server and the browser share two cores in CI). */
const CRAWL_PARALLEL = 4;
const WIDTHS = [390, 1280];
const SCHEMES = ['light', 'dark'];
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
const STARTUP_DEADLINE_MS = 30_000;
const PAGE_TIMEOUT_MS = 20_000;

const failures = [];
function fail(check, message) {
  failures.push(`${check}: ${message}`);
  console.log(`  FAIL ${check}: ${message}`);
}
function check(name, condition, message) {
  if (!condition) fail(name, message);
  return condition;
}
function section(title) {
  console.log(`\n== ${title}`);
}

/** Starts `majordomus serve --port 0` over `repo` and resolves with its base URL, read from its first line. */
function startServer(repo = REPO) {
  const child = spawn(BIN, ['serve', '--port', '0', '--repo', repo], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, MAJORDOMUS_LOG: process.env.MAJORDOMUS_LOG || 'warn' },
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the server printed no address within ${STARTUP_DEADLINE_MS} ms; stderr: ${stderr}`));
    }, STARTUP_DEADLINE_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${BIN}: ${e.message}`));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code} before serving; stderr: ${stderr}`));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const first = stderr.split('\n')[0];
      const m = /^majordomus serving .* on (http:\/\/127\.0\.0\.1:\d+)$/.exec(first);
      if (m && stderr.includes('\n')) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, base: m[1] });
      }
    });
  });
}

/** A browser context; every page opened in it reports console errors and uncaught exceptions. */
async function newContext(browser, options = {}) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    colorScheme: 'light',
    bypassCSP: false,
    ...options,
  });
  context.setDefaultTimeout(PAGE_TIMEOUT_MS);
  return context;
}

function watchErrors(page) {
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** Same-origin Cockpit links of the page in document order, without fragments. */
async function cockpitLinks(page, base) {
  // An SVG link's `href` is an animated value, not a string: read the attribute and resolve it.
  const hrefs = await page.$$eval('a[href]', (as) =>
    as.map((a) => new URL(a.getAttribute('href'), document.baseURI).href),
  );
  const origin = new URL(base).origin;
  const out = [];
  for (const href of hrefs) {
    const url = new URL(href);
    if (url.origin !== origin) continue;
    if (url.pathname !== '/cockpit' && !url.pathname.startsWith('/cockpit/')) continue;
    if (url.pathname.startsWith('/cockpit/assets/')) continue;
    url.hash = '';
    out.push(url.toString());
  }
  return out;
}

/** Breadth-first over every Cockpit link from /cockpit: each page 200, no console error. */
async function crawl(browser, base) {
  section('crawl');
  const context = await newContext(browser);
  const start = new URL('/cockpit', base).toString();
  const seen = new Set([start]);
  const queue = [start];
  const visited = [];
  let next = 0;
  async function worker() {
    const page = await context.newPage();
    const errors = watchErrors(page);
    while (next < queue.length && visited.length < CRAWL_BOUND) {
      const url = queue[next++];
      visited.push(url);
      errors.length = 0;
      let response;
      try {
        response = await page.goto(url, { waitUntil: 'load' });
      } catch (e) {
        fail('crawl', `${url}: ${e.message}`);
        continue;
      }
      const status = response ? response.status() : 0;
      check('crawl', status === 200, `${url} answered ${status}`);
      check('console', errors.length === 0, `${url}: ${errors.join(' | ')}`);
      const shape = await page.evaluate(() => ({
        h1: document.querySelectorAll('h1').length,
        main: document.querySelectorAll('main#main').length,
        skip: Boolean(document.querySelector('body > a.skip-link[href="#main"]')),
      }));
      check('structure', shape.h1 === 1 && shape.main === 1 && shape.skip,
        `${url}: one h1 (${shape.h1}), one main#main (${shape.main}), a skip link first (${shape.skip})`);
      for (const link of await cockpitLinks(page, base)) {
        if (!seen.has(link)) {
          seen.add(link);
          queue.push(link);
        }
      }
    }
    await page.close();
  }
  await Promise.all(Array.from({ length: CRAWL_PARALLEL }, worker));
  await context.close();
  const kinds = {
    object: visited.filter((u) => u.includes('/cockpit/object?')).length,
    capability: visited.filter((u) => /\/cockpit\/capabilities\/[^/?]+$/.test(u)).length,
    run: visited.filter((u) => /\/cockpit\/capabilities\/[^/?]+\/run\?/.test(u)).length,
  };
  console.log(`  crawled ${visited.length} pages (${seen.size} links found): ${kinds.object} object pages, ${kinds.capability} capability pages, ${kinds.run} runner examples`);
  check('crawl', visited.length >= CRAWL_MINIMUM, `only ${visited.length} pages reachable, expected at least ${CRAWL_MINIMUM}`);
  check('crawl', kinds.object > 0 && kinds.capability > 0 && kinds.run > 0, `every page type is reached: ${JSON.stringify(kinds)}`);
  return visited;
}

/** The main page of each type, named; the object is the first rule the objects page lists. */
async function mainPages(browser, base, agent) {
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(new URL('/cockpit/objects?kind=rule', base).toString());
  const objectHref = await page.$eval('a[href^="/cockpit/object?uri="]', (a) => a.getAttribute('href'))
    .catch(() => null);
  await context.close();
  check('setup', objectHref !== null, 'the objects page lists a rule to open');
  const pages = [
    ['overview', '/cockpit'],
    ['capabilities', '/cockpit/capabilities'],
    ['capability with an answer', '/cockpit/capabilities/objects.search/run?query=rule#answer'],
    ['the plan as an answer', '/cockpit/capabilities/plan.issues/run#answer'],
    ['the capabilities as an answer', '/cockpit/capabilities/capabilities.list/run#answer'],
    ['decisions, newest first', '/cockpit/objects?kind=adr&sort=date&descending=true'],
    ['issues', '/cockpit/objects?kind=issue'],
    ['resource majordomus://mcp', '/cockpit/object?uri=majordomus%3A%2F%2Fmcp'],
    ['objects', '/cockpit/objects'],
    ['object', objectHref || '/cockpit/objects'],
    ['search with results', '/cockpit/search?q=rule'],
    ['MCP', '/cockpit/mcp'],
    ['peers', '/cockpit/peers'],
    ['executions', '/cockpit/executions'],
    ['executions of one outcome', '/cockpit/executions?outcome=ok&limit=20'],
    ['plan', '/cockpit/plan'],
    ['progress', '/cockpit/progress'],
    ['an issue', '/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fcockpit'],
    ['messages', '/cockpit/messages'],
    ['an agent', `/cockpit/agent?handle=${encodeURIComponent(agent || 'none')}`],
    ['executions with the Cockpit\'s own', '/cockpit/executions?all=true&limit=50'],
    ['doctor', '/cockpit/doctor'],
    ['API', '/cockpit/api'],
    ['not found', '/cockpit/no-such-page', 404],
  ];
  return pages.map(([name, href, status]) => ({ name, url: new URL(href, base).toString(), status: status || 200 }));
}

/** No horizontal overflow, and no axe-core violation, on every main page at both widths, in both themes. */
async function layoutAndAccessibility(browser, pages) {
  section('overflow and axe-core');
  for (const colorScheme of SCHEMES) {
    for (const width of WIDTHS) {
      const context = await newContext(browser, {
        viewport: { width, height: 900 },
        colorScheme,
        bypassCSP: true,
      });
      const page = await context.newPage();
      const errors = watchErrors(page);
      for (const { name, url, status } of pages) {
        errors.length = 0;
        const where = `${name} at ${width} px, ${colorScheme}`;
        const response = await page.goto(url);
        check('status', response.status() === status, `${where}: ${url} answered ${response.status()}, expected ${status}`);

        const { scrollWidth, innerWidth, culprits } = await page.evaluate(() => {
          const innerWidth = window.innerWidth;
          const culprits = [];
          for (const el of document.querySelectorAll('body *')) {
            const r = el.getBoundingClientRect();
            if (r.right > innerWidth + 0.5 && culprits.length < 5) {
              culprits.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''} (right ${Math.round(r.right)})`);
            }
          }
          return { scrollWidth: document.documentElement.scrollWidth, innerWidth, culprits };
        });
        check('overflow', scrollWidth <= innerWidth, `${where}: scrollWidth ${scrollWidth} > ${innerWidth}; wide: ${culprits.join(', ')}`);
        const h1s = await page.$$eval('h1', (hs) => hs.length);
        check('structure', h1s === 1, `${where}: ${h1s} h1 elements`);
        await axeClean(page, where);
        // Chromium reports a document's own error status on the console; that one is expected.
        const own = `Failed to load resource: the server responded with a status of ${status}`;
        const unexpected = errors.filter((e) => status === 200 || !e.includes(own));
        check('console', unexpected.length === 0, `${where}: ${unexpected.join(' | ')}`);
      }
      await context.close();
      console.log(`  checked ${pages.length} pages at ${width} px, ${colorScheme}`);
    }
  }
}

/**
 * The search runner's hits fit the page at both widths: no answer table scrolls sideways (the
 * snippet column is on screen), and each snippet shows its terms highlighted, not as `**term**`.
 */
async function searchRunnerFits(browser, base) {
  section('the search runner fits');
  for (const width of WIDTHS) {
    const context = await newContext(browser, { viewport: { width, height: 900 } });
    const page = await context.newPage();
    await page.goto(new URL('/cockpit/capabilities/objects.search/run?query=rule', base).toString());
    const wraps = await page.$$eval('.answer .table-wrap', (ws) => ws.map((w) => ({ scroll: w.scrollWidth, client: w.clientWidth })));
    check('search runner', wraps.length > 0, `at ${width} px: the hits read as a table`);
    for (const { scroll, client } of wraps) {
      check('search runner', scroll <= client + 1, `at ${width} px: the hits table is ${scroll} px wide in ${client} px`);
    }
    const snippets = await page.$$eval('.answer-table td .snippet', (ss) => ss.map((s) => {
      const r = s.getBoundingClientRect();
      return { text: s.textContent, marks: [...s.querySelectorAll('mark')].map((m) => m.textContent), right: r.right, width: r.width };
    }));
    check('search runner', snippets.length > 0, `at ${width} px: the hits have snippets`);
    for (const sn of snippets) {
      // A `**` the text itself holds (a glob) stays; a term between two is a mark not rendered.
      const literal = sn.marks.find((m) => sn.text.includes(`**${m}**`));
      check('search runner', sn.marks.length > 0 && literal === undefined, `at ${width} px: a snippet marks its terms as highlights, not as **${literal}**: ${sn.text}`);
      check('search runner', sn.right <= width && sn.width >= 150, `at ${width} px: a snippet is on screen and readable (right ${Math.round(sn.right)}, width ${Math.round(sn.width)})`);
    }
    await context.close();
    console.log(`  ${width} px: ${snippets.length} snippets, tables ${wraps.map((w) => `${w.scroll}/${w.client}`).join(' ')}`);
  }
}

/** Runs axe-core on the loaded page and records every violation under `where`. */
async function axeClean(page, where) {
  await page.addScriptTag({ content: AXE_SOURCE });
  const result = await page.evaluate(async (tags) => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 8).map((n) => `${n.target.join(' ')}${n.failureSummary ? ' — ' + n.failureSummary.replace(/\s+/g, ' ') : ''}`),
      count: v.nodes.length,
    }));
  }, AXE_TAGS);
  for (const v of result) {
    fail('axe', `${where}: ${v.id} (${v.impact}, ${v.count} nodes): ${v.help}\n      ${v.targets.join('\n      ')}`);
  }
}

/** The theme button overrides the system's choice, is remembered, and the forced theme is as accessible. */
async function themeButton(browser, base) {
  section('theme button');
  const context = await newContext(browser, { colorScheme: 'light', bypassCSP: true });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.goto(new URL('/cockpit/capabilities/objects.search/run?query=rule', base).toString());
  const light = await background();
  const button = page.locator('#theme-toggle');
  check('theme', await button.isVisible(), 'the theme button shows when JavaScript runs');
  check('theme', (await button.textContent()) === 'Dark theme', `the button offers the other theme: ${await button.textContent()}`);
  await button.click();
  const dark = await background();
  check('theme', dark !== light, `the button switches the page to dark: ${light} -> ${dark}`);
  await page.reload();
  check('theme', (await page.getAttribute('html', 'data-theme')) === 'dark', 'the choice is remembered across pages');
  check('theme', (await background()) === dark, 'a reloaded page keeps the dark background');
  await axeClean(page, 'capability with an answer, dark by the button over a light system');
  check('console', errors.length === 0, `theme button: ${errors.join(' | ')}`);
  await context.close();
  console.log(`  light ${light} -> dark ${dark}, remembered`);
}

/** The `objects.search` runner answers through its form; so does the search page, also without JavaScript. */
async function runner(browser, base) {
  section('runner');
  for (const javaScriptEnabled of [true, false]) {
    const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';
    const context = await newContext(browser, { javaScriptEnabled });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(new URL('/cockpit/capabilities/objects.search', base).toString());
    await page.getByLabel(/^query/).fill('rule');
    await Promise.all([
      page.waitForURL(/\/cockpit\/capabilities\/objects\.search\/run\?/),
      page.click('form.runner button[type="submit"]'),
    ]);
    const url = new URL(page.url());
    check('runner', url.searchParams.get('query') === 'rule', `${mode}: the form submits with GET: ${page.url()}`);
    const answerHeading = await page.$('h2#answer');
    if (check('runner', answerHeading !== null, `${mode}: the page shows an Answer section`)) {
      // Read from its schema: the hits are a table; the JSON is one click away.
      const rows = await page.$$eval('.answer table.answer-table > tbody > tr', (trs) => trs.length).catch(() => 0);
      check('runner', rows > 0, `${mode}: the hits read as a table`);
      const text = await page.$eval('details.answer-json pre code', (c) => c.textContent).catch(() => '');
      let answer = null;
      try {
        answer = JSON.parse(text);
      } catch (e) {
        fail('runner', `${mode}: the answer is not JSON: ${text.slice(0, 200)}`);
      }
      if (answer) {
        check('runner', Array.isArray(answer.hits) && answer.hits.length > 0, `${mode}: the answer holds hits: ${text.slice(0, 200)}`);
      }
    }
    await page.goto(new URL('/cockpit/search', base).toString());
    await page.fill('#q', 'rule');
    await Promise.all([page.waitForURL(/\/cockpit\/search\?/), page.click('main form button[type="submit"]')]);
    const hits = await page.$$eval('main ol li a[href^="/cockpit/object?uri="]', (as) => as.length);
    check('search', hits > 0, `${mode}: the search page lists hits for "rule"`);
    check('console', errors.length === 0, `runner ${mode}: ${errors.join(' | ')}`);
    await context.close();
    console.log(`  runner and search answer ${mode}`);
  }
}

/** A JSON-RPC request over /mcp; resolves with the parsed body and the response headers. */
async function mcpCall(base, session, message) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) headers['mcp-session-id'] = session;
  const response = await fetch(new URL('/mcp', base), { method: 'POST', headers, body: JSON.stringify(message) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/**
 * Puts something on the board for the peers page to draw: an MCP session holding a shared claim,
 * the server's own overlapping shared claim (an overlap to mark), and a message to everyone (an
 * unread count). Returns the session, kept open while the pages are checked.
 */
async function fillBoard(base) {
  section('the board the peers page draws');
  const init = await mcpCall(base, null, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'axe-peer', version: '1.0.0' } },
  });
  const session = init.headers.get('mcp-session-id');
  if (!check('board', init.status === 200 && session, `initialize answers with a session (status ${init.status})`)) return null;
  await mcpCall(base, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const claimed = await mcpCall(base, session, {
    jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'majordomus_claim', arguments: { globs: ['src/**'], mode: 'shared', reason: 'axe looks at the claims table' } },
  });
  check('board', claimed.body && claimed.body.result && claimed.body.result.structuredContent.granted === true,
    `the session's claim is granted: ${JSON.stringify(claimed.body).slice(0, 200)}`);
  const post = (route, body, agent) => fetch(new URL(route, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(agent ? { 'majordomus-agent': agent } : {}) },
    body: JSON.stringify(body),
  }).then((r) => r.json());
  // A program on the HTTP API is an agent by the handle its announce answers.
  const program = await post('/api/v1/peers/announce', { intent: 'axe draws the board' });
  const agent = program.handle;
  const overlapping = await post('/api/v1/peers/claim', { globs: ['src/api/**'], mode: 'shared', issue: 'axe-1' }, agent);
  check('board', overlapping.granted === true, `the program's shared claim is granted: ${JSON.stringify(overlapping).slice(0, 200)}`);
  const sent = await post('/api/v1/peers/send', { subject: 'axe', body: 'an unread count to draw', all: true }, agent);
  check('board', sent.recipients && sent.recipients.length >= 1, `the message reaches the session: ${JSON.stringify(sent).slice(0, 200)}`);
  // The session's handle names the agent whose page is checked: it stays while the session does.
  const listed = await fetch(new URL('/api/v1/peers', base)).then((r) => r.json());
  const peer = (listed.peers || []).find((p) => p.client_supplied.client === 'axe-peer');
  check('board', Boolean(peer), `the session is on the board: ${JSON.stringify(listed).slice(0, 200)}`);
  return { session, agent: peer && peer.handle };
}

/** Rows of the MCP page's tool table: name and effect badge text. */
async function toolRows(page) {
  return page.$$eval('tr[data-tool]', (rows) => rows.map((r) => ({
    name: r.getAttribute('data-tool'),
    effect: (r.querySelector('.badge') || { textContent: '' }).textContent.trim(),
  })));
}

/** The MCP page's tool table equals `tools/list` over /mcp, and its effect filter shows exactly those tools. */
async function mcpPage(browser, base) {
  section('MCP page');
  const init = await mcpCall(base, null, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cockpit-browser-test', version: '1.0.0' } },
  });
  const session = init.headers.get('mcp-session-id');
  if (!check('mcp', init.status === 200 && session, `initialize answers with a session (status ${init.status})`)) return;
  await mcpCall(base, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const listed = await mcpCall(base, session, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  const tools = (listed.body && listed.body.result && listed.body.result.tools) || [];
  check('mcp', tools.length > 0, `tools/list returns tools: ${JSON.stringify(listed.body).slice(0, 200)}`);
  const expected = tools.map((t) => ({ name: t.name, effect: t._meta.majordomus.effect }));
  await fetch(new URL('/mcp', base), { method: 'DELETE', headers: { 'mcp-session-id': session } });

  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(new URL('/cockpit/mcp', base).toString());
  const shown = await toolRows(page);
  check('mcp', JSON.stringify(shown.map((r) => r.name)) === JSON.stringify(expected.map((t) => t.name)),
    `the tool table lists the tools of tools/list\n      page:      ${shown.map((r) => r.name).join(' ')}\n      tools/list: ${expected.map((t) => t.name).join(' ')}`);
  for (const tool of expected) {
    const row = shown.find((r) => r.name === tool.name);
    if (row) check('mcp', row.effect === tool.effect, `${tool.name}: badge "${row.effect}", _meta.majordomus.effect "${tool.effect}"`);
  }
  const effects = await page.$$eval('#f-effect option', (os) => os.map((o) => o.value).filter((v) => v));
  for (const effect of new Set(expected.map((t) => t.effect))) {
    check('mcp', effects.includes(effect), `the effect filter offers ${effect}: ${effects.join(', ')}`);
  }
  for (const effect of effects) {
    await page.goto(new URL(`/cockpit/mcp?effect=${encodeURIComponent(effect)}`, base).toString());
    const names = (await toolRows(page)).map((r) => r.name);
    const want = expected.filter((t) => t.effect === effect).map((t) => t.name);
    check('mcp', JSON.stringify(names) === JSON.stringify(want), `effect=${effect} shows ${names.join(' ')}; tools/list has ${want.join(' ')}`);
  }
  await context.close();
  console.log(`  ${expected.length} tools, filter checked for ${effects.join(', ')}`);
}

/** The security and cache headers of a page and of the hashed stylesheet. */
async function headers(browser, base) {
  section('headers');
  const context = await newContext(browser);
  const page = await context.newPage();
  const response = await page.goto(new URL('/cockpit', base).toString());
  const h = response.headers();
  const csp = h['content-security-policy'] || '';
  check('headers', csp.includes("default-src 'none'"), `CSP has default-src 'none': ${csp}`);
  check('headers', csp.includes("frame-ancestors 'none'"), `CSP has frame-ancestors 'none': ${csp}`);
  check('headers', h['x-content-type-options'] === 'nosniff', `x-content-type-options: ${h['x-content-type-options']}`);
  check('headers', h['referrer-policy'] === 'no-referrer', `referrer-policy: ${h['referrer-policy']}`);
  check('headers', h['cache-control'] === 'no-cache', `cache-control: ${h['cache-control']}`);
  const css = await page.$eval('link[rel="stylesheet"]', (l) => l.href);
  check('headers', /\.[0-9a-f]{8,}\.css$/.test(css), `the stylesheet's name carries a content hash: ${css}`);
  const asset = await context.request.get(css);
  const cache = asset.headers()['cache-control'] || '';
  check('headers', asset.status() === 200 && cache.includes('immutable'), `${css}: ${asset.status()}, cache-control: ${cache}`);
  await context.close();
  console.log(`  CSP: ${csp}`);
}

/**
 * An open page hears that the layer changed: over a fresh repository of its own (so
 * this checkout is never edited), a rule is edited while the objects page is open, and the page
 * shows the banner with a link that reloads it, still free of axe violations.
 */
async function layerChangedBanner(browser) {
  section('the layer changed: the banner');
  const { execFileSync } = require('node:child_process');
  const os = require('node:os');
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'majordomus-banner-'));
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'cockpit', GIT_AUTHOR_EMAIL: 'cockpit@example.invalid',
    GIT_COMMITTER_NAME: 'cockpit', GIT_COMMITTER_EMAIL: 'cockpit@example.invalid',
  };
  execFileSync('git', ['init', '-q'], { cwd: repo, env });
  execFileSync(BIN, ['init'], { cwd: repo, env, stdio: 'ignore' });
  execFileSync('git', ['add', '-A'], { cwd: repo, env });
  execFileSync('git', ['commit', '-qm', 'layer'], { cwd: repo, env });
  const rules = path.join(repo, '.ai', 'repo', 'rules');
  const rule = fs.readdirSync(rules).find((name) => name.endsWith('.md'));
  const { child, base } = await startServer(repo);
  try {
    // axe is injected as an inline script, which the page's policy would refuse.
    const context = await newContext(browser, { bypassCSP: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    const url = `${base}/cockpit/objects`;
    await page.goto(url, { waitUntil: 'load' });
    // The stream is open once the page has run its script; give it a moment to connect.
    await page.waitForTimeout(500);
    check('banner', (await page.$('#layer-changed')) === null, 'no banner before anything changed');
    fs.appendFileSync(path.join(rules, rule), '\nName the issue a change closes.\n');
    const banner = await page.waitForSelector('#layer-changed', { timeout: 10_000 }).catch(() => null);
    if (check('banner', banner !== null, `editing ${rule} shows the banner within 10 s`)) {
      check('banner', (await banner.getAttribute('role')) === 'status', 'the banner is a status message');
      const href = await banner.$eval('a', (a) => a.href);
      check('banner', href === url, `its link reloads the page: ${href}`);
      await axeClean(page, 'objects page with the banner');
    }
    check('console', errors.length === 0, `banner: ${errors.join(' | ')}`);
    await context.close();
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(repo, { recursive: true, force: true });
  }
}

/**
 * Bad input a lead's pages must show as text: over a fresh repository of its own, an issue whose
 * title is markup, a 10,000-character line, right-to-left text and control characters; an agent
 * so named; and a message so written. Every page that shows them keeps them as text (no element
 * made of them, the marker readable) and fits 390 px without sideways scrolling.
 */
async function hostileInput(browser) {
  section('bad input is text, and the layout holds at 390 px');
  const { execFileSync } = require('node:child_process');
  const os = require('node:os');
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'majordomus-hostile-'));
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'cockpit', GIT_AUTHOR_EMAIL: 'cockpit@example.invalid',
    GIT_COMMITTER_NAME: 'cockpit', GIT_COMMITTER_EMAIL: 'cockpit@example.invalid',
  };
  const long = 'W'.repeat(10_000);
  const markup = '<img src=x onerror=alert(1)><b>HOSTILE-MARK</b>';
  const rtl = '\u202Eעברית العربية';
  execFileSync('git', ['init', '-q'], { cwd: repo, env });
  execFileSync(BIN, ['init'], { cwd: repo, env, stdio: 'ignore' });
  const issues = path.join(repo, '.ai', 'repo', 'project', 'issues');
  fs.mkdirSync(issues, { recursive: true });
  const title = `${markup} ${rtl} \\x07\\x1b[31m ${long}`;
  fs.writeFileSync(path.join(issues, 'hostile.yaml'), `id: hostile\ntitle: "${title}"\npaths: ["src/**"]\n`);
  fs.writeFileSync(path.join(issues, 'after.yaml'), `id: after\ntitle: "${markup} waits"\ndepends_on: [hostile]\n`);
  execFileSync('git', ['add', '-A'], { cwd: repo, env });
  execFileSync('git', ['commit', '-qm', 'layer'], { cwd: repo, env });
  const { child, base } = await startServer(repo);
  try {
    const init = await mcpCall(base, null, {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `${markup} ${rtl}\u0007`, version: '1' } },
    });
    const session = init.headers.get('mcp-session-id');
    await mcpCall(base, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const claimed = await mcpCall(base, session, {
      jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'majordomus_plan_claim', arguments: { issue: 'hostile' } },
    });
    check('hostile', claimed.body && claimed.body.result && claimed.body.result.structuredContent
      && claimed.body.result.structuredContent.granted === true, `the hostile agent claims the issue: ${JSON.stringify(claimed.body).slice(0, 300)}`);
    const post = (route, body, agent) => fetch(new URL(route, base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(agent ? { 'majordomus-agent': agent } : {}) },
      body: JSON.stringify(body),
    }).then((r) => r.json());
    const program = await post('/api/v1/peers/announce', { intent: `${markup} ${rtl}` });
    const sent = await post('/api/v1/peers/send', {
      subject: `${markup} ${rtl}`, body: `${markup}\n${rtl}\n\u0007\u001b[31m\n${long}`, all: true,
    }, program.handle);
    check('hostile', sent.recipients && sent.recipients.length >= 1, `the message is sent: ${JSON.stringify(sent).slice(0, 300)}`);
    const listed = await fetch(new URL('/api/v1/peers', base)).then((r) => r.json()).catch(() => ({}));
    const hostileAgent = ((listed.peers || []).find((p) => (p.client_supplied.client || '').includes('HOSTILE-MARK')) || {}).handle;
    check('hostile', Boolean(hostileAgent), `the hostile agent is on the board: ${JSON.stringify(listed).slice(0, 300)}`);
    const pages = [
      '/cockpit', '/cockpit/plan', '/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fhostile', '/cockpit/messages',
      '/cockpit/peers', '/cockpit/executions', '/cockpit/objects?kind=issue',
      `/cockpit/agent?handle=${encodeURIComponent(hostileAgent || 'none')}`,
    ];
    const context = await newContext(browser, { viewport: { width: 390, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    for (const href of pages) {
      errors.length = 0;
      const response = await page.goto(new URL(href, base).toString());
      check('hostile', response.status() === 200, `${href} answered ${response.status()}`);
      const seen = await page.evaluate(() => ({
        injected: document.querySelectorAll('main img, main b, script:not([src])').length,
        marked: document.body.innerText.includes('<b>HOSTILE-MARK</b>'),
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
      }));
      check('hostile', seen.injected === 0, `${href}: markup from input became ${seen.injected} elements`);
      check('hostile', seen.marked, `${href}: the hostile text reads as text`);
      check('hostile', seen.scrollWidth <= seen.innerWidth, `${href}: ${seen.scrollWidth} px wide at 390`);
      check('console', errors.length === 0, `${href}: ${errors.join(' | ')}`);
      await axeClean(page, `${href} with bad input at 390 px`);
    }
    await context.close();
    console.log(`  ${pages.length} pages keep bad input as text and fit 390 px`);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(repo, { recursive: true, force: true });
  }
}

async function main() {
  const started = Date.now();
  const { child, base } = await startServer();
  console.log(`serving ${REPO} at ${base}`);
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    await crawl(browser, base);
    const board = await fillBoard(base);
    await layoutAndAccessibility(browser, await mainPages(browser, base, board && board.agent));
    await hostileInput(browser);
    await searchRunnerFits(browser, base);
    await themeButton(browser, base);
    await runner(browser, base);
    await mcpPage(browser, base);
    await layerChangedBanner(browser);
    await headers(browser, base);
  } catch (e) {
    fail('run', e.stack || String(e));
  } finally {
    if (browser) await browser.close();
    child.kill('SIGTERM');
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (failures.length > 0) {
    console.log(`\n${failures.length} failures (${seconds} s):`);
    for (const f of failures) console.log(`- ${f}`);
    process.exit(1);
  }
  console.log(`\ncockpit-browser: ok (${seconds} s)`);
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
