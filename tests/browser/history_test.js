// The page of `runner history --format html` (history/page.cpp) in a real
// browser (meson test `browser_history`, suite `browser`). history_page
// writes a synthetic history (write_page and write_json of the real
// history library, with placeholder report and compare folders and
// hostile strings from the store); Debian's headless Chromium, driven by
// playwright-core, opens it and checks what a user sees:
//   embedding    the embedded data is history.json, and cannot end its
//                <script> element: index.html holds exactly two "</script"
//                and no raw U+2028/U+2029
//   renders      no console error or uncaught exception while loading,
//                opening a plot and hovering; the header shows the runs
//   no network   no request but the page itself
//   overview     one row per benchmark, changed benchmarks first, every
//                sparkline canvas drawn (non-blank pixels)
//   hover        over a known point of a plot: its commit, its value and
//                its interval (formatted as the page does, ns/µs/ms/s)
//   change links each change point's diff flamegraph and compare folder
//                links resolve to the files history_page wrote (URL
//                specials in their names)
//   click        a click on a point opens its run's report folder, or its
//                CI run when it has no report
//   zoom         drag-select narrows the view to the selection (and hover
//                still finds the right point), the wheel zooms, reset
//                restores the whole series
//   hostile      "</script>", <img onerror> in the store, repository, a
//                warning, a URI and a commit appear as text: no dialog, no
//                injected element
//   unsafe links a javascript: or //host CI URL, diff or compare link, or a
//                report path leaving the page's folder never becomes a link
//                or a navigation: every link is http(s) or below the folder
//   scale        1,000 runs x 50 benchmarks: the page loads, a plot opens,
//                zooms to 40 runs and hover works there (functional only,
//                no timing: see bench/history/page_open.js)
// Each check then runs on a deliberately broken copy of the page and must
// fail there, so none of them passes vacuously.
//
// A case this machine cannot run (no Chromium, playwright-core not
// installed by `npm ci`, node too old) prints "SKIP <case>: <why>" and the
// others run. Environment: HISTORY_PAGE (from meson), CHROMIUM.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const { execFileSync } = require('node:child_process');
const { pathToFileURL, fileURLToPath } = require('node:url');
const fg = require('./flamegraph_test.js');

const kRuns = 40, kBenchmarks = 6;  // the small history
const kCi = 'https://ci.example/';

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set (run through meson)');
  return v;
}

// history_page's site in `dir`: its index.html and the data it embeds.
function generate(dir, runs, benchmarks) {
  execFileSync(env('HISTORY_PAGE'), [dir, String(runs), String(benchmarks)], { stdio: 'inherit' });
  return { dir, file: path.join(dir, 'index.html'),
    data: JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8')) };
}

// The page's value format (time in ns).
function fmt(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toPrecision(4) + ' s';
  if (a >= 1e6) return (v / 1e6).toPrecision(4) + ' ms';
  if (a >= 1e3) return (v / 1e3).toPrecision(4) + ' \u00b5s';
  return v.toPrecision(4) + ' ns';
}

// ---- driving the page ----------------------------------------------------------

// The page opened in a fresh context, with what it logged: errors
// (console errors, exceptions), requests other than the page, dialogs.
async function openPage(browser, file, timeout = 10000) {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await ctx.newPage();
  const log = { errors: [], requests: [], dialogs: [] };
  const self = pathToFileURL(file).href;
  page.on('console', (m) => { if (m.type() === 'error') log.errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => log.errors.push('exception: ' + e.message));
  page.on('dialog', (d) => { log.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { if (r.url() !== self) log.requests.push(r.url()); });
  await page.goto(self);
  const ready = await page.waitForFunction(() => document.body.dataset.ready === '1', null,
    { timeout }).then(() => true, () => false);
  if (!ready) log.errors.push('the page never became ready');
  return { page, log, ready, close: () => ctx.close() };
}

// Opens the plot of benchmark `index` by clicking its overview row.
async function openPlot(page, index) {
  const row = page.locator('#overview tbody tr[data-index="' + index + '"]');
  if (await row.count() !== 1) return false;
  await row.click();
  return page.evaluate(() => !document.getElementById('plot').hidden &&
    !!document.getElementById('plot-canvas').dataset.view);
}

function plotView(page) {
  return page.evaluate(() => {
    const c = document.getElementById('plot-canvas'), r = c.getBoundingClientRect();
    return Object.assign(JSON.parse(c.dataset.view || 'null') || {}, { cx: r.left, cy: r.top });
  });
}

// The viewport position of run `run` in the plot as it is drawn.
async function runAt(page, run) {
  const v = await plotView(page);
  return { x: v.cx + v.left + (run - v.x0) / (v.x1 - v.x0) * (v.right - v.left),
    y: v.cy + (v.top + v.bottom) / 2 };
}

async function hoverRun(page, run) {
  const at = await runAt(page, run);
  await page.mouse.move(at.x - 3, at.y);
  await page.mouse.move(at.x, at.y);
  return page.evaluate(() => {
    const t = document.getElementById('tip');
    return t.hidden ? '' : t.textContent;
  });
}

// Problems of the tip shown over run `run` of benchmark `b`.
function tipProblems(site, b, run, tip) {
  const p = site.data.benchmarks[b].points.find((q) => q.run === run);
  const want = [site.data.runs[run].commit, fmt(p.value)];
  if (p.low !== null) want.push('[' + fmt(p.low) + ', ' + fmt(p.high) + ']');
  return want.filter((w) => !tip.includes(w))
    .map((w) => 'hovering run ' + run + ' of benchmark ' + b + ' shows "' + tip + '", without "' + w + '"');
}

// ---- the checks: each (browser, site, file) -> problems ------------------------

function checkEmbedding(browser, site, file) {
  const text = fs.readFileSync(file, 'utf8');
  const problems = [];
  const closes = text.split(/<\/script/i).length - 1;
  if (closes !== 2) problems.push(closes + ' "</script" in index.html, want 2 (data and script)');
  if (/[\u2028\u2029]/.test(text)) problems.push('raw U+2028/U+2029 in index.html');
  const open = '<script type="application/json" id="history-data">';
  const at = text.indexOf(open), end = text.indexOf('</script>', at);
  let embedded = null;
  try { embedded = JSON.parse(text.slice(at + open.length, end)); } catch (e) {
    problems.push('the embedded data does not parse: ' + e.message);
  }
  if (at < 0 || (embedded && !util.isDeepStrictEqual(embedded, site.data)))
    problems.push('the embedded data is not history.json');
  return problems;
}

async function checkRenders(browser, site, file) {
  const o = await openPage(browser, file);
  const problems = [];
  if (o.ready) {
    const facts = await o.page.textContent('#facts');
    if (!facts.includes('Runs' + site.data.runs.length))
      problems.push('header "' + facts + '" does not show ' + site.data.runs.length + ' runs');
    if (!await openPlot(o.page, 0)) problems.push('the plot of benchmark 0 did not open');
    else await hoverRun(o.page, 8);
  }
  problems.push(...o.log.errors);
  await o.close();
  return problems;
}

async function checkNetwork(browser, site, file) {
  const o = await openPage(browser, file);
  if (o.ready && await openPlot(o.page, 0)) await hoverRun(o.page, 8);
  await o.page.waitForTimeout(200);
  const problems = o.log.requests.map((u) => 'request to ' + u);
  await o.close();
  return problems;
}

async function checkOverview(browser, site, file) {
  const o = await openPage(browser, file);
  const rows = await o.page.evaluate(() => Array.from(
    document.querySelectorAll('#overview tbody tr'), (tr) => {
      const c = tr.querySelector('canvas');
      let inked = 0;
      if (c && c.width > 0 && c.height > 0) {
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
      }
      return { index: Number(tr.dataset.index), name: tr.querySelector('.n').textContent,
        uri: tr.querySelector('.u').textContent, inked };
    }));
  await o.close();
  const b = site.data.benchmarks, problems = [];
  if (rows.length !== b.length) problems.push(rows.length + ' rows, want ' + b.length);
  const seen = new Set();
  rows.forEach((r, k) => {
    const want = b[r.index];
    if (!want || want.name !== r.name || want.uri !== r.uri)
      problems.push('row ' + k + ' shows "' + r.name + '" / "' + r.uri + '"');
    seen.add(r.index);
    if (r.inked < 20) problems.push('the sparkline of "' + r.name + '" is blank (' + r.inked + ' pixels)');
    const changed = want && want.changes.length > 0;
    if (changed && rows.slice(0, k).some((q) => b[q.index].changes.length === 0))
      problems.push('changed benchmark "' + r.name + '" listed after an unchanged one');
  });
  if (seen.size !== b.length) problems.push(seen.size + ' distinct benchmarks shown, want ' + b.length);
  return problems;
}

async function checkHover(browser, site, file) {
  const o = await openPage(browser, file);
  const problems = [];
  if (!o.ready || !await openPlot(o.page, 0)) problems.push('the plot of benchmark 0 did not open');
  else for (const run of [7, 8, site.data.runs.length - 1])
    problems.push(...tipProblems(site, 0, run, await hoverRun(o.page, run)));
  await o.close();
  return problems;
}

async function checkChangeLinks(browser, site, file, index = 4) {
  const o = await openPage(browser, file);
  const problems = [];
  if (!o.ready || !await openPlot(o.page, index)) problems.push('the plot of benchmark ' + index + ' did not open');
  const links = await o.page.evaluate(() => Array.from(document.querySelectorAll('#changes a'),
    (a) => ({ cls: a.className, href: a.href })));
  await o.close();
  const changes = site.data.benchmarks[index].changes;
  for (const cls of ['diff', 'compare']) {
    const got = links.filter((l) => l.cls === cls);
    if (got.length !== changes.length)
      problems.push(got.length + ' ' + cls + ' links, want ' + changes.length);
    got.forEach((l, k) => {
      const want = path.join(site.dir, changes[k] ? changes[k][cls] : '?');
      let file = null;
      try { file = fileURLToPath(l.href); } catch { /* not a file: URL */ }
      if (!file || path.resolve(file) !== path.resolve(want) || !fs.existsSync(file))
        problems.push(cls + ' link ' + l.href + ' is not ' + want + ' (or it does not exist)');
    });
  }
  return problems;
}

// Clicks run `run` of benchmark 0; the URL the page then shows.
async function clickRun(browser, file, run) {
  const o = await openPage(browser, file);
  await o.page.route(kCi + '**', (r) => r.fulfill({ contentType: 'text/html', body: 'ci' }));
  if (!o.ready || !await openPlot(o.page, 0)) { await o.close(); return { url: null, log: o.log }; }
  const at = await runAt(o.page, run);
  const before = o.page.url();
  await o.page.mouse.move(at.x, at.y);
  await o.page.mouse.click(at.x, at.y);
  await o.page.waitForURL((u) => u.href !== before, { timeout: 2000 }).catch(() => {});
  await o.page.waitForTimeout(200);
  const url = o.page.url();
  await o.close();
  return { url, log: o.log };
}

async function checkClick(browser, site, file) {
  const problems = [];
  const report = pathToFileURL(path.join(site.dir, site.data.runs[4].report)).href;
  let got = await clickRun(browser, file, 4);
  if (got.url !== report) problems.push('a click on run 4 leads to ' + got.url + ', want ' + report);
  const ci = site.data.runs[3].ci_run_url;
  got = await clickRun(browser, file, 3);
  if (got.url !== ci) problems.push('a click on run 3 leads to ' + got.url + ', want ' + ci);
  return problems;
}

async function checkZoom(browser, site, file) {
  const o = await openPage(browser, file);
  const problems = [];
  if (!o.ready || !await openPlot(o.page, 0)) {
    await o.close();
    return ['the plot of benchmark 0 did not open'];
  }
  const p = o.page, full = await plotView(p), w = full.right - full.left;
  const y = full.cy + (full.top + full.bottom) / 2;
  await p.mouse.move(full.cx + full.left + 0.3 * w, y);
  await p.mouse.down();
  await p.mouse.move(full.cx + full.left + 0.6 * w, y, { steps: 5 });
  await p.mouse.up();
  const span = full.x1 - full.x0, zoomed = await plotView(p);
  const want = [full.x0 + 0.3 * span, full.x0 + 0.6 * span];
  if (Math.abs(zoomed.x0 - want[0]) > 0.05 * span || Math.abs(zoomed.x1 - want[1]) > 0.05 * span)
    problems.push('drag over 30-60% shows runs ' + zoomed.x0 + '..' + zoomed.x1 + ', want ' + want);
  const mid = Math.round((zoomed.x0 + zoomed.x1) / 2);
  problems.push(...tipProblems(site, 0, mid, await hoverRun(p, mid)).map((q) => 'zoomed: ' + q));
  await p.mouse.wheel(0, -200);
  await p.waitForTimeout(100);
  const wheeled = await plotView(p);
  if (!(wheeled.x1 - wheeled.x0 < zoomed.x1 - zoomed.x0 - 0.01))
    problems.push('the wheel did not zoom in: ' + wheeled.x0 + '..' + wheeled.x1);
  await p.click('#reset');
  const reset = await plotView(p);
  if (reset.x0 !== full.x0 || reset.x1 !== full.x1)
    problems.push('reset shows ' + reset.x0 + '..' + reset.x1 + ', want ' + full.x0 + '..' + full.x1);
  await o.close();
  return problems;
}

async function checkHostile(browser, site, file) {
  const o = await openPage(browser, file);
  const p = o.page, d = site.data, problems = [];
  const shown = await p.evaluate(() => document.body.innerText);
  for (const s of [d.repository, d.store, d.warnings[0], d.benchmarks[1].uri])
    if (!shown.includes(s)) problems.push('"' + s + '" is not shown as text');
  if (o.ready && await openPlot(p, 1)) {
    if (await p.textContent('#plot-name') !== d.benchmarks[1].name)
      problems.push('the plot title is not "' + d.benchmarks[1].name + '"');
    const tip = await hoverRun(p, 1);
    if (!tip.includes(d.runs[1].commit)) problems.push('hovering run 1 shows "' + tip + '"');
  } else problems.push('the plot of benchmark 1 did not open');
  await p.waitForTimeout(300);
  const dom = await p.evaluate(() => ({ img: document.querySelectorAll('img').length,
    script: document.querySelectorAll('script').length }));
  if (dom.img !== 0) problems.push(dom.img + ' <img> elements injected');
  if (dom.script !== 2) problems.push(dom.script + ' <script> elements, want 2');
  problems.push(...o.log.dialogs.map((m) => 'a dialog opened: ' + m));
  await o.close();
  return problems;
}

// No link but http(s) or a file below the page's folder, and none of the
// hostile ones history_page planted followed by a click.
async function checkUnsafeLinks(browser, site, file) {
  const o = await openPage(browser, file);
  const problems = [];
  if (!o.ready || !await openPlot(o.page, 1)) problems.push('the plot of benchmark 1 did not open');
  const links = await o.page.evaluate(() => ({
    all: Array.from(document.querySelectorAll('a[href]'), (a) => a.href),
    diff: document.querySelectorAll('#changes a.diff').length,
    compare: document.querySelectorAll('#changes a.compare').length }));
  await o.close();
  const folder = pathToFileURL(site.dir).href + '/';
  for (const href of links.all)
    if (!/^https?:\/\/[^/]/.test(href) && !href.startsWith(folder)) problems.push('a link to ' + href);
  // Benchmark 1: a javascript: diff link, a //host compare link.
  const changes = site.data.benchmarks[1].changes.length;
  if (links.diff !== changes - 1) problems.push(links.diff + ' diff links on benchmark 1, want ' + (changes - 1));
  if (links.compare !== changes - 1)
    problems.push(links.compare + ' compare links on benchmark 1, want ' + (changes - 1));
  // Runs 5 and 9: a javascript: and a //host CI URL, no report; 12: a
  // report outside the folder, an https CI URL.
  for (const [run, want] of [[5, null], [9, null], [12, site.data.runs[12].ci_run_url]]) {
    const got = await clickRun(browser, file, run);
    if (want ? got.url !== want : !got.url || !got.url.startsWith(pathToFileURL(file).href))
      problems.push('a click on run ' + run + ' leads to ' + got.url + (want ? ', want ' + want : ''));
    problems.push(...got.log.dialogs.map((m) => 'a dialog opened: ' + m));
  }
  return problems;
}

async function checkScale(browser, site, file) {
  const o = await openPage(browser, file, 60000);
  const problems = [...o.log.errors];
  const n = site.data.benchmarks.length, last = n - 1, run = site.data.runs.length >> 1;
  const rows = await o.page.locator('#overview tbody tr').count();
  if (rows !== n) problems.push(rows + ' rows, want ' + n);
  if (!o.ready || !await openPlot(o.page, last)) {
    problems.push('the plot of benchmark ' + last + ' did not open');
  } else {
    // About a pixel per run: zoom to 40 runs around the one to hover.
    const from = await runAt(o.page, run - 20), to = await runAt(o.page, run + 20);
    await o.page.mouse.move(from.x, from.y);
    await o.page.mouse.down();
    await o.page.mouse.move(to.x, to.y, { steps: 5 });
    await o.page.mouse.up();
    problems.push(...tipProblems(site, last, run, await hoverRun(o.page, run)));
  }
  await o.close();
  return problems;
}

const kChecks = {
  'embedding': checkEmbedding, 'renders': checkRenders, 'no network': checkNetwork,
  'overview': checkOverview, 'hover': checkHover, 'change links': checkChangeLinks,
  'click': checkClick, 'zoom': checkZoom, 'hostile': checkHostile, 'unsafe links': checkUnsafeLinks,
};

// ---- broken copies: every check must fail on one -------------------------------

const m = (from, to) => (t) => fg.mutate(t, from, to);
const kMutants = [
  ['embedding', 'data not escaped', (t) => fg.mutate(t, '\\u003c', '<')],
  ['embedding', 'U+2028 not escaped', (t) => fg.mutate(t, '\\u2028', '\u2028')],
  ['embedding', 'data changed', (t) => fg.mutate(t, '"skipped_records":2', '"skipped_records":3')],
  ['renders', 'an exception while loading',
    m("document.body.dataset.ready = '1';", "null.x; document.body.dataset.ready = '1';")],
  ['no network', 'no Content-Security-Policy, an external image',
    (t) => fg.mutate(fg.mutate(t, 'http-equiv="Content-Security-Policy"', 'name="x"'),
      '<main>', '<main><img src="https://example.invalid/x.png" alt="">')],
  ['overview', 'a row missing', m('order.forEach(function (i) {', 'order.slice(1).forEach(function (i) {')],
  ['overview', 'sparklines not drawn', m('sparks.forEach(function (s) { drawSpark(s[0], s[1]); });', '')],
  ['overview', 'changed benchmarks not first',
    m('else d = (cb ? Math.abs(cb.change) : -1) - (ca ? Math.abs(ca.change) : -1);', 'else d = 0;')],
  ['hover', 'hover picks the next point', m('[k - 1, k].forEach', '[k + 1].forEach')],
  ['hover', 'hover shows no interval', m("(interval(p.low, p.high, fmt) ? ' '", "(false ? ' '")],
  ['change links', 'diff link to a missing file', m("link(li, c.diff,", "link(li, c.diff + 'x',")],
  ['change links', 'paths not percent-encoded', m("return parts.map(encodeURIComponent).join('/');", 'return u;')],
  ['click', 'a click opens nothing', m('if (href) window.location.href = href;', '')],
  ['click', 'a click opens the CI run even with a report',
    m('return safeHref(r.report) || httpUrl(r.ci_run_url);', 'return httpUrl(r.ci_run_url);')],
  ['zoom', 'drag does not zoom',
    m('zoomTo(runAt(G, Math.min(d.from, d.to)), runAt(G, Math.max(d.from, d.to)));', 'draw();')],
  ['zoom', 'reset does nothing', m("$('reset').addEventListener('click', reset);", '')],
  ['hostile', 'text inserted as HTML',
    m('e.textContent = String(text);', 'e.innerHTML = String(text);')],
  ['hostile', 'data not escaped', (t) => fg.mutate(t, '\\u003c', '<')],
  ['unsafe links', 'every scheme followed',
    (t) => fg.mutate(fg.mutate(t, "|| !/^https?:\\/\\//i.test(u)) return null;", ") return null;"),
      "return (a.protocol === 'http:' || a.protocol === 'https:') && a.host ? a.href : null;", 'return u;')],
  ['unsafe links', '//host and paths leaving the folder followed',
    (t) => fg.mutate(fg.mutate(t, "if (parts.indexOf('..') >= 0) return null;", ''),
      '/^[\\x00-\\x20\\/]|', '/^[\\x00-\\x20]|')],
];

async function mutantChecks(browser, site) {
  const text = fs.readFileSync(site.file, 'utf8');
  for (const [n, [check, why, apply]] of kMutants.entries()) {
    const file = path.join(site.dir, 'mutant-' + n + '.html');  // beside: same links
    fs.writeFileSync(file, apply(text));
    const problems = await kChecks[check](browser, site, file);
    if (problems.length === 0) fg.fail('check "' + check + '" passes on a broken page (' + why + ')');
    else console.log('ok   check "' + check + '" fails on a broken page (' + why + '): ' + problems[0]);
  }
}

// The scale check on the large page, then on a broken copy of it.
async function scaleChecks(browser, work) {
  const site = generate(path.join(work, 'large'), 1000, 50);
  fg.report('1000 runs x 50 benchmarks', 'scale', await checkScale(browser, site, site.file));
  const file = path.join(site.dir, 'mutant.html');
  fs.writeFileSync(file, fg.mutate(fs.readFileSync(site.file, 'utf8'), '[k - 1, k].forEach', '[k + 1].forEach'));
  const problems = await checkScale(browser, site, file);
  if (problems.length === 0) fg.fail('check "scale" passes on a broken page (hover picks the next point)');
  else console.log('ok   check "scale" fails on a broken page (hover picks the next point): ' + problems[0]);
}

// A site `runner history` wrote (node history_test.js --site DIR, from
// tests/e2e/history_test.cpp): the checks that hold for any history, with
// the change links of every benchmark that has change points, and a click
// on the newest run, whose flamegraphs the site has.
async function checkSite(dir) {
  const site = { dir, file: path.join(dir, 'index.html'),
    data: JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8')) };
  const name = 'runner history site';
  fg.report(name, 'embedding', checkEmbedding(null, site, site.file));
  const why = fg.browserUnavailable();
  if (why) {
    fg.skip(name + ' in Chromium', why);
    return;
  }
  const browser = await fg.launch();
  try {
    for (const check of ['renders', 'no network', 'overview', 'hover'])
      fg.report(name, check, await kChecks[check](browser, site, site.file));
    const changed = site.data.benchmarks.map((b, i) => i).filter((i) => site.data.benchmarks[i].changes.length > 0);
    if (changed.length === 0) fg.fail(name + ': no benchmark has a change point');
    for (const i of changed)
      fg.report(name, 'change links of benchmark ' + i, await checkChangeLinks(browser, site, site.file, i));
    const newest = site.data.runs.length - 1, report = site.data.runs[newest].report;
    const got = await clickRun(browser, site.file, newest);
    const want = report ? pathToFileURL(path.join(site.dir, report)).href : null;
    fg.report(name, 'click', got.url === want ? [] : ['a click on the newest run leads to ' + got.url + ', want ' + want]);
  } finally {
    await browser.close();
  }
}

async function main() {
  const at = process.argv.indexOf('--site');
  if (at > 0) return checkSite(process.argv[at + 1]);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-history-page-'));
  try {
    const site = generate(path.join(work, 'small'), kRuns, kBenchmarks);
    const name = kRuns + ' runs x ' + kBenchmarks + ' benchmarks';
    fg.report(name, 'embedding', checkEmbedding(null, site, site.file));
    const why = fg.browserUnavailable();
    if (why) {
      fg.skip('history page in Chromium', why);
      return;
    }
    const browser = await fg.launch();
    try {
      for (const [check, run] of Object.entries(kChecks))
        if (check !== 'embedding') fg.report(name, check, await run(browser, site, site.file));
      await mutantChecks(browser, site);
      await scaleChecks(browser, work);
    } finally {
      await browser.close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

module.exports = { generate, openPage, openPlot, hoverRun, runAt, plotView };

if (require.main === module) {
  main().then(() => {
    const failures = fg.failures();
    console.log(failures === 0 ? 'all checks passed' : failures + ' check(s) failed');
    process.exit(failures === 0 ? 0 : 1);
  }, (e) => {
    console.log('FAIL ' + (e && e.stack || e));
    process.exit(1);
  });
}
