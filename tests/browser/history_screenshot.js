// Regenerates docs/history.png, the README's screenshot of the page of
// `runner history --format html`: a synthetic history (history_page
// --demo: 60 runs x 5 benchmarks, steps of +10%, -5% and +8%) in Debian's
// headless Chromium with playwright-core, one plot open and a point
// hovered, the whole page (1200 x 952 px).
//
//   ninja -C build tests/browser/history_page
//   node tests/browser/history_screenshot.js build/tests/browser/history_page docs/history.png
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const fg = require('./flamegraph_test.js');
const { openPlot, hoverRun } = require('./history_test.js');

async function main() {
  const [gen, out] = process.argv.slice(2);
  if (!gen || !out) throw new Error('usage: history_screenshot.js HISTORY_PAGE OUT.png');
  const why = fg.browserUnavailable();
  if (why) throw new Error(why);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-history-shot-'));
  const browser = await fg.launch();
  try {
    execFileSync(gen, [dir, '60', '5', '--demo'], { stdio: 'inherit' });
    const page = await browser.newPage({ viewport: { width: 1200, height: 952 } });
    await page.goto(pathToFileURL(path.join(dir, 'index.html')).href);
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    if (!await openPlot(page, 4)) throw new Error('the plot did not open');
    await page.evaluate(() => window.scrollTo(0, 0));
    await hoverRun(page, 47);
    await page.screenshot({ path: out });
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error('history_screenshot: ' + (e && e.stack || e)); process.exit(1); });
