'use strict';
// The docs page of the README's Python example, in headless Chromium (Debian's), driven by
// playwright-core: the page lists every route of the app's OpenAPI document, "Try it out" +
// "Execute" on GET /users/{user_id} shows the server's own answer (and the server's access
// log has that very request), and no request the page makes goes anywhere but the app's
// 127.0.0.1 port. Screenshots go to --out (the test's undeclared outputs).
//
//   node docs_page.js --python VENV_PYTHON --server serve_readme.py --readme README.md --out DIR
//
// Bounded: one deadline for the whole run; the server and the browser are stopped on every exit.
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { chromium } = require('playwright-core');

const DEADLINE_MS = 150_000;
const CHROMIUM = process.env.FERRULE_CHROMIUM || '/usr/bin/chromium';
// Headless, and none of Chromium's own traffic (component updates, sync, field trials,
// QUIC probes): without these it reaches for Google's hosts on start.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-default-apps', '--metrics-recording-only', '--no-pings'];

function options() {
  const args = process.argv.slice(2);
  const named = {};
  for (let i = 0; i < args.length; i += 2) named[args[i].replace(/^--/, '')] = args[i + 1];
  for (const name of ['python', 'server', 'readme', 'out']) assert.ok(named[name], `--${name} is required`);
  return named;
}

/** The README app in a child process; resolves once it listens, with what it has seen so far. */
function startServer({ python, server, readme }) {
  const child = spawn(python, [server, readme], { stdio: ['pipe', 'pipe', 'inherit'] });
  const seen = [];
  const listening = new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`the README app exited (status ${code}) before listening`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line);
      if (message.listening) resolve(message.listening);
      if (message.seen) seen.push(message.seen);
    });
  });
  return { child, seen, listening };
}

async function main() {
  const { python, server, readme, out } = options();
  const app = startServer({ python, server, readme });
  let context;
  const deadline = setTimeout(() => {
    console.error(`docs page test: not done within ${DEADLINE_MS / 1000} s`);
    app.child.kill('SIGKILL');
    process.exit(1);
  }, DEADLINE_MS);
  try {
    const port = await app.listening;
    const origin = `http://127.0.0.1:${port}`;
    console.log(`README app on ${origin}`);
    const document = await (await fetch(`${origin}/openapi.json`)).json();

    const profile = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || require('node:os').tmpdir(), 'chromium-profile-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 1000 },
    });
    // Every request the page makes (documents, scripts, styles, images, fetches, sockets): one
    // to anywhere but the app's port is recorded and never sent.
    const requests = [];
    const elsewhere = [];
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === origin || url.protocol === 'data:') return route.continue();
      elsewhere.push(route.request().url());
      return route.abort('blockedbyclient');
    });
    context.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
    context.on('websocket', (socket) => elsewhere.push(socket.url()));
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(30_000);
    const problems = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} (${request.failure()?.errorText})`));

    const loaded = await page.goto(`${origin}/docs`);
    assert.strictEqual(loaded.status(), 200);
    await page.locator('.swagger-ui .opblock').first().waitFor();
    assert.strictEqual(await page.title(), `${document.info.title} - Swagger UI`);

    // Every operation of the document, and nothing else, is on the page.
    const expected = Object.entries(document.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const listed = (await page.locator('.opblock-summary').evaluateAll((rows) => rows.map((row) =>
      `${row.querySelector('.opblock-summary-method').textContent.trim()} ${row.querySelector('.opblock-summary-path').getAttribute('data-path')}`))).sort();
    assert.deepStrictEqual(listed, expected, 'the routes on the page against the document');
    assert.ok(expected.length >= 4, `the README app has at least 4 routes: ${expected}`);
    await page.screenshot({ path: path.join(out, 'docs-page.png'), fullPage: true });

    // The Authorize button's authorization-code flow ends where the page names: the provider
    // sends the browser to the redirect page, whose script (served from the same assets, under
    // the same policy) hands the code to the page that opened it. Here the page plays Swagger
    // UI's side of that hand-over and opens the redirect as the provider would send it back.
    const redirectUrl = await page.evaluate(() => window.ui.getConfigs().oauth2RedirectUrl);
    assert.strictEqual(redirectUrl, `${origin}/docs/oauth2-redirect`);
    await page.evaluate(() => {
      window.swaggerUIRedirectOauth2 = {
        state: 'st4te',
        redirectUrl: window.ui.getConfigs().oauth2RedirectUrl,
        auth: { name: 'oauth', schema: { get: (key) => (key === 'flow' ? 'authorizationCode' : undefined) } },
        callback: (result) => { window.oauthResult = { code: result.auth.code }; },
        errCb: (error) => { window.oauthError = error.message; },
      };
    });
    const popup = page.waitForEvent('popup');
    await page.evaluate((url) => { window.open(`${url}?code=c0de&state=st4te`); }, redirectUrl);
    const redirected = await popup;
    await page.waitForFunction(() => window.oauthResult || window.oauthError);
    assert.deepStrictEqual(await page.evaluate(() => [window.oauthResult, window.oauthError]), [{ code: 'c0de' }, undefined]);
    for (let i = 0; i < 50 && !redirected.isClosed(); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(redirected.isClosed(), 'the redirect page closes itself once it has handed the code over');

    // "Try it out" on GET /users/{user_id}: a path parameter and a boolean query parameter.
    const operation = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/users/{user_id}"]') });
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('tr[data-param-name="user_id"] input').fill('4242');
    await operation.locator('tr[data-param-name="verbose"] select').selectOption('true');
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/users/4242');
    await operation.locator('button.execute').click();
    const response = await answered;
    assert.strictEqual(new URL(response.url()).search, '?verbose=true');
    assert.strictEqual(response.status(), 200);
    const requestId = response.headers()['x-request-id'];
    assert.ok(requestId, 'the server sent an x-request-id');

    // What the page shows is the server's answer: its status, its body, its request id.
    const live = operation.locator('.live-responses-table');
    await live.locator('tr.response .response-col_status').first().waitFor();
    assert.strictEqual((await live.locator('tr.response .response-col_status').first().textContent()).trim(), '200');
    const shown = await live.locator('.response-col_description .microlight, .response-col_description pre').first().textContent();
    assert.deepStrictEqual(JSON.parse(shown), { id: 4242, verbose: true });
    assert.ok((await live.textContent()).includes(requestId), 'the page shows the response headers, with the request id');
    await page.screenshot({ path: path.join(out, 'docs-try-it-out.png'), fullPage: true });

    // The server saw that very request (its access log, by request id).
    for (let i = 0; i < 50 && !app.seen.some((s) => s.request_id === requestId); i++) await new Promise((r) => setTimeout(r, 100));
    const seen = app.seen.find((s) => s.request_id === requestId);
    assert.deepStrictEqual(seen && [seen.method, seen.path, seen.status], ['GET', '/users/4242', 200], JSON.stringify(app.seen));

    console.log(`${requests.length} requests, all to ${origin}:\n  ${requests.join('\n  ')}`);
    assert.deepStrictEqual(elsewhere, [], 'requests to other hosts');
    assert.ok(requests.every((r) => new URL(r.split(' ')[1]).origin === origin), requests.join('\n'));
    assert.deepStrictEqual(problems, [], 'console errors, page errors or failed requests');
    console.log('docs page test: 1 passed, 0 failed');
  } finally {
    clearTimeout(deadline);
    if (context) await context.close();
    app.child.stdin.end();
    await new Promise((resolve) => (app.child.exitCode === null ? app.child.on('exit', resolve) : resolve()));
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
