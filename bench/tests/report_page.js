'use strict';
// report.html as a person first sees it, in headless Chromium (Debian's) driven by
// playwright-core: the summary charts are in the first screen, each language's section has a
// chart, the full table is folded away in a closed <details>, the charts' text is set by the
// browser (plotters writes no glyphs), and the page asks nothing of the network and logs no
// error. Screenshots of the first screen and the whole page go to --out.
//
//   node report_page.js --page report.html --languages python,node,ruby,rust --out DIR
//
// Bounded: one deadline for the whole run; the browser is closed on every exit.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { chromium } = require('playwright-core');

const DEADLINE_MS = 90_000;
const CHROMIUM = process.env.FERRULE_CHROMIUM || '/usr/bin/chromium';
// Headless, and none of Chromium's own traffic (component updates, sync, field trials, QUIC
// probes), which would otherwise be counted as the page's.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-default-apps', '--metrics-recording-only', '--no-pings'];
// A laptop's screen: what "at a glance" means.
const VIEWPORT = { width: 1280, height: 900 };

function options() {
  const args = process.argv.slice(2);
  const named = {};
  for (let i = 0; i < args.length; i += 2) named[args[i].replace(/^--/, '')] = args[i + 1];
  for (const name of ['page', 'languages', 'out']) assert.ok(named[name], `--${name} is required`);
  return named;
}

/** Every <svg> under `selector`, with its box on the page (document coordinates). */
async function charts(page, selector) {
  return page.locator(`${selector} svg`).evaluateAll((svgs) => svgs.map((svg) => {
    const box = svg.getBoundingClientRect();
    return { top: box.top + window.scrollY, width: box.width, height: box.height, label: svg.getAttribute('aria-label') };
  }));
}

async function main() {
  const { page: file, languages, out } = options();
  const url = pathToFileURL(path.resolve(file)).href;
  let context;
  const deadline = setTimeout(() => {
    console.error(`report page test: not done within ${DEADLINE_MS / 1000} s`);
    process.exit(1);
  }, DEADLINE_MS);
  try {
    const profile = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || require('node:os').tmpdir(), 'chromium-profile-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: VIEWPORT });
    // The page is one file: any request but the one for it is recorded and never sent.
    const requests = [];
    const elsewhere = [];
    await context.route('**/*', (route) => {
      if (route.request().url() === url) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort('blockedbyclient');
    });
    context.on('request', (request) => requests.push(request.url()));
    context.on('websocket', (socket) => elsewhere.push(socket.url()));
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(20_000);
    const problems = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} (${request.failure()?.errorText})`));

    await page.goto(url, { waitUntil: 'load' });
    assert.strictEqual(await page.title(), 'Ferrule benchmark report');
    await page.screenshot({ path: path.join(out, 'report-first-screen.png') });
    await page.screenshot({ path: path.join(out, 'report-full-page.png'), fullPage: true });

    // The summary starts in the first screen, and so does its first chart, drawn at a size.
    const summary = await page.locator('#summary').boundingBox();
    assert.ok(summary && summary.y < VIEWPORT.height, `the summary starts at ${summary?.y}px, below the first ${VIEWPORT.height}px`);
    const summaryCharts = await charts(page, '#summary');
    assert.ok(summaryCharts.length >= 1, 'no chart in the summary');
    for (const chart of summaryCharts) assert.ok(chart.width > 100 && chart.height > 40, `a summary chart drawn at ${chart.width}×${chart.height}: ${chart.label}`);
    assert.ok(summaryCharts[0].top < VIEWPORT.height, `the first summary chart starts at ${summaryCharts[0].top}px, below the first screen`);
    // Nothing else comes before the summary: no table, no language section.
    const before = await page.evaluate(() => {
      const summaryTop = document.querySelector('#summary').getBoundingClientRect().top;
      return [...document.querySelectorAll('table, section.language, details')].filter((e) => e.getBoundingClientRect().height > 0 && e.getBoundingClientRect().top < summaryTop).map((e) => e.tagName);
    });
    assert.deepStrictEqual(before, [], 'elements above the summary');

    // One summary card and one section per language, in the order asked for, each with a
    // chart; the summary's cards come before every language's section.
    const expected = languages.split(',');
    const cards = await page.locator('#summary article.card').evaluateAll((all) => all.map((a) => a.dataset.language));
    assert.deepStrictEqual(cards, expected, 'summary cards');
    for (const language of expected) {
      const card = await charts(page, `#summary article.card[data-language="${language}"]`);
      assert.strictEqual(card.length, 1, `${language}: one chart in its summary card`);
    }
    const sections = await page.locator('section.language').evaluateAll((all) => all.map((s) => s.dataset.language));
    assert.deepStrictEqual(sections, expected, 'language sections');
    const summaryBottom = summary.y + summary.height;
    for (const language of expected) {
      const drawn = await charts(page, `section.language[data-language="${language}"]`);
      assert.ok(drawn.length >= 1, `${language}: no chart in its section`);
      for (const chart of drawn) {
        assert.ok(chart.width > 100 && chart.height > 40, `${language}: a chart drawn at ${chart.width}×${chart.height}: ${chart.label}`);
        assert.ok(chart.top >= summaryBottom, `${language}: a chart above the summary's end`);
      }
    }

    // The charts' words are set by the browser: the first summary chart's labels have a width.
    const labels = await page.locator('#summary svg').first().locator('text').evaluateAll((texts) => texts.map((t) => ({ text: t.textContent.trim(), width: t.getBBox().width })));
    assert.ok(labels.length >= 4, `the first summary chart has ${labels.length} labels`);
    for (const label of labels) assert.ok(label.width > 0, `label "${label.text}" was not rendered`);

    // The budgets are in the summary, each with its verdict.
    const verdicts = await page.locator('#summary ul.budgets li .verdict').allTextContents();
    assert.ok(verdicts.length >= 1, 'no budget in the summary');
    for (const verdict of verdicts) assert.ok(['holds', 'MISSED', 'within noise', 'not judged'].includes(verdict), `verdict "${verdict}"`);

    // The full table is there, inside a closed <details>, and not shown until opened.
    const folded = page.locator('details#all-results');
    assert.strictEqual(await folded.count(), 1, 'no details#all-results');
    assert.strictEqual(await folded.evaluate((d) => d.open), false, 'the full table is unfolded');
    const table = folded.locator('table');
    assert.strictEqual(await table.count(), 1, 'no table inside details#all-results');
    assert.ok((await table.locator('tr').count()) > 10, 'the full table has few rows');
    assert.strictEqual(await table.isVisible(), false, 'the full table shows while folded');
    await folded.locator('summary').click();
    assert.strictEqual(await table.isVisible(), true, 'the full table does not show when opened');

    console.log(`${requests.length} request(s): ${requests.join(', ')}`);
    assert.deepStrictEqual(elsewhere, [], 'requests beyond the page itself');
    assert.deepStrictEqual(requests, [url], 'requests the page made');
    assert.deepStrictEqual(problems, [], 'console errors, page errors or failed requests');
    console.log(`report page test: ${summaryCharts.length} summary charts, ${sections.length} language sections`);
    console.log('report page test: 1 passed, 0 failed');
  } finally {
    clearTimeout(deadline);
    if (context) await context.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
