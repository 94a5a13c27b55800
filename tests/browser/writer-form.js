// The Cockpit's writer runner in a real Chromium, on a throwaway repository: a person fills the
// knowledge.record form, ticks the confirmation and submits; the POST (which the browser sends
// with `Origin: null` under the Cockpit's `Referrer-Policy: no-referrer`) passes the Origin
// guard as a same-origin fetch, answers 200, and the note exists. Without the confirmation the
// browser refuses to submit the form at all (the box is `required`).
'use strict';

const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHECKOUT = path.resolve(__dirname, '..', '..');
const BIN = process.env.MAJORDOMUS_BIN || path.join(CHECKOUT, 'target', 'debug', 'majordomus');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function fail(message) {
  console.error(`writer-form: FAIL: ${message}`);
  process.exitCode = 1;
}

(async () => {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'majordomus-writer-form-'));
  execFileSync('git', ['init', '-q', repo]);
  execFileSync(BIN, ['init', '--repo', repo], { stdio: 'ignore' });
  const server = spawn(BIN, ['serve', '--port', '0', '--repo', repo], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    let text = '';
    server.stderr.on('data', (chunk) => {
      text += chunk;
      const found = text.match(/on http:\/\/127\.0\.0\.1:(\d+)/);
      if (found) resolve(found[1]);
    });
    server.on('exit', () => reject(new Error(`serve exited: ${text}`)));
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/cockpit/capabilities/knowledge.record`);
    if (!(await page.textContent('main')).includes('This writes the repository.')) {
      fail('the page does not say plainly that it writes');
    }
    await page.fill('#in-id', 'from-the-browser');
    await page.fill('#in-title', 'Written from Chromium');
    await page.fill('#in-body', 'The runner posts with an explicit confirmation.');
    await page.click('form.runner button[type=submit]');
    const note = path.join(repo, '.ai/repo/knowledge/curated/from-the-browser.md');
    if (fs.existsSync(note)) fail('the form was submitted without the confirmation');
    await page.check('input[name=confirm]');
    const [response] = await Promise.all([
      page.waitForNavigation(),
      page.click('form.runner button[type=submit]'),
    ]);
    if (response.status() !== 200) fail(`the confirmed POST answered ${response.status()}`);
    if (!fs.existsSync(note)) fail('the confirmed POST wrote no note');
    if (!process.exitCode) console.log('writer-form: ok: a confirmed writer form writes from a real browser');
  } finally {
    await browser.close();
    server.kill();
    fs.rmSync(repo, { recursive: true, force: true });
  }
})().catch((e) => {
  fail(e.stack || String(e));
});
