'use strict';
// The README's streaming example, served as written and read by real clients (node:http,
// fetch): the CSV report arrives row by row and the client may leave half-way; the tick feed
// resumes after the Last-Event-ID it is sent.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const ferrule = require('ferrule');
const { serving } = require('./support');

/** The first `language` block of the README's streaming section. */
function readmeBlock(language) {
  const text = fs.readFileSync(process.env.FERRULE_README, 'utf8');
  const start = text.indexOf('### Streaming and Server-Sent Events');
  const section = text.slice(start, text.indexOf('\n## ', start));
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(found, `no ${language} block in the README's streaming section`);
  return found[1];
}

/** Resolves with the first `count` lines of `path`, then leaves (destroys the response). */
function firstLines(port, path, count, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
        const lines = text.split('\n');
        if (lines.length > count) {
          res.destroy();
          resolve({ headers: res.headers, lines: lines.slice(0, count) });
        }
      });
    }).on('error', reject);
  });
}

test("the README's streaming example serves a report and a resumable feed", async () => {
  const app = new ferrule.App();
  const requireFerrule = (name) => (name === 'ferrule' ? ferrule : require(name));
  new Function('app', 'require', readmeBlock('js'))(app, requireFerrule);
  await serving(app, async (port) => {
    const report = await firstLines(port, '/report.csv', 3);
    assert.deepStrictEqual(report.lines, ['id,name', '0,user0', '1,user1']);
    const feed = await firstLines(port, '/ticks', 4, { 'last-event-id': '41' });
    assert.strictEqual(feed.headers['content-type'], 'text/event-stream');
    assert.deepStrictEqual(feed.lines, ['event: tick', 'id: 42', 'data: {"n":42}', '']);
  });
});
