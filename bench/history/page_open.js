// How fast the page of `runner history --format html` opens in headless
// Chromium (Debian's, driven by playwright-core from tests/browser; the
// browser test's launch flags). history_page (built with the tests) writes
// a synthetic history of RUNS runs x BENCHMARKS benchmarks; then, per
// load, a fresh browser context opens index.html and the bench reads the
// page's own clock (performance.now(), from navigation start):
//   overview   until the overview is drawn (every sparkline) and painted
//              (two animation frames after the page's script finished)
//   plot       from a click on a benchmark's row until its plot is drawn
//              and painted (one plot per load, a different benchmark each)
//   hover      one mousemove over the plot: find the point, redraw, tip
//              (mean of 100, in the page)
// and prints the median and range of each. The goal: the page opens in
// under 2 s with 50 benchmarks x 1,000 runs.
//
//   ninja -C build tests/browser/history_page
//   node bench/history/page_open.js build/tests/browser/history_page [RUNS [BENCHMARKS [LOADS]]]
//
// Defaults: 1000 runs, 50 benchmarks, 7 loads. Environment: CHROMIUM.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const fg = require('../../tests/browser/flamegraph_test.js');

function median(a) {
  const s = [...a].sort((x, y) => x - y), n = s.length;
  return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function line(what, ms) {
  console.log(what.padEnd(44) + 'median ' + median(ms).toFixed(1).padStart(7) + ' ms   range ' +
    Math.min(...ms).toFixed(1) + '..' + Math.max(...ms).toFixed(1) + ' ms   (' + ms.length + ')');
}

const afterPaint = () => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))));

// One load: ms until the overview is painted, until a plot is, and per hover.
async function load(browser, url, bench) {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
  const overview = await page.evaluate(afterPaint);
  const plot = await page.evaluate(async ([index, paint]) => {
    const t0 = performance.now();
    document.querySelector('#overview tbody tr[data-index="' + index + '"]').click();
    return (await eval('(' + paint + ')')()) - t0;
  }, [bench, afterPaint.toString()]);
  const hover = await page.evaluate(() => {
    const c = document.getElementById('plot-canvas'), r = c.getBoundingClientRect();
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      c.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
        clientX: r.left + 80 + (i * 9.7) % (r.width - 100), clientY: r.top + 200 }));
    }
    return (performance.now() - t0) / 100;
  });
  await ctx.close();
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  return { overview, plot, hover };
}

async function main() {
  const [gen, runs = '1000', benchmarks = '50', loads = '7'] = process.argv.slice(2);
  if (!gen) throw new Error('usage: page_open.js HISTORY_PAGE [RUNS [BENCHMARKS [LOADS]]]');
  const why = fg.browserUnavailable();
  if (why) throw new Error(why);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-page-bench-'));
  try {
    execFileSync(gen, [dir, runs, benchmarks], { stdio: 'inherit' });
    const file = path.join(dir, 'index.html');
    console.log(runs + ' runs x ' + benchmarks + ' benchmarks: index.html ' +
      (fs.statSync(file).size / 1e6).toFixed(2) + ' MB, ' + os.cpus().length + ' CPUs');
    const browser = await fg.launch();
    const r = { overview: [], plot: [], hover: [] };
    try {
      await load(browser, pathToFileURL(file).href, 0);  // warm-up, not counted
      for (let i = 0; i < Number(loads); i++) {
        const one = await load(browser, pathToFileURL(file).href, i % Number(benchmarks));
        for (const k of Object.keys(r)) r[k].push(one[k]);
      }
    } finally {
      await browser.close();
    }
    line('open until the overview is painted', r.overview);
    line('click to plot painted (' + runs + ' points)', r.plot);
    line('one hover (find, redraw, tip)', r.hover);
    console.log('goal: open in under 2000 ms: ' + (median(r.overview) < 2000 ? 'met' : 'NOT met'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error('page_open: ' + (e && e.stack || e)); process.exit(1); });
