// The flamegraph SVG in a real browser (meson test `browser`, suite
// `browser`). The real `runner report` runs on copies of golden profile
// folders (tests/golden/folders, and one whose JIT code gets tricky names:
// XML specials, non-ASCII, long templates); Debian's headless Chromium, driven by
// playwright-core, opens every SVG it writes and checks what a user sees:
//   static labels   every frame wide enough has its label in the SVG text
//                   itself (the name, or a prefix of it and ".."), read from
//                   the file without a browser
//   no-script fit   with JavaScript off (GitHub's image view, Inkscape), every
//                   label's measured length fits inside its frame
//   hover           the details line shows the frame's function, samples and
//                   percentage (checked against the .folded file)
//   search          frames matching the regular expression are highlighted,
//                   the others not, and the matched share is the .folded one
//   zoom            a click makes the frame span the width, rescales its
//                   children, hides unrelated frames; every label still fits
//                   (measured), a cut label is the longest that fits, none
//                   is needlessly empty; reset restores the static view
// Each check then runs on deliberately broken copies of an SVG and must fail
// there, so none of them passes vacuously.
//
// A case this machine cannot run (no Chromium, playwright-core not installed
// by `npm ci`, node too old) prints "SKIP <case>: <why>" and the others run.
// Environment: RUNNER_BIN, GOLDEN_DIR (from meson), CHROMIUM (default
// /usr/bin/chromium).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const kFolders = ['example', 'dwarf', 'multiproc', 'jit'];  // golden folders
const kLabelPad = 3;            // between a frame's edge and its label
const kHighlight = 'rgb(230,0,230)';
const kEps = 0.01;              // px, rounding of SVG geometry
let failures = 0;

function fail(what) { failures++; console.log('FAIL ' + what); }
function skip(what, why) { console.log('SKIP ' + what + ': ' + why); }
function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set (run through meson)');
  return v;
}
function unescapeXml(s) {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

// ---- the outputs of the real `runner report` --------------------------------

// Names that stress the labels: XML specials, accents, symbols and CJK
// characters (two cells in the width model), long template names. They
// reach the report through the perf maps of a copy of the `jit` folder,
// which name its JIT code.
const kTrickyNames = {
  jit_inner: 'ns::\u00dcn\u00efc\u00f6d\u00e9<"quoted" & \'single\'>::wide_\u2713\u2713_\u6f22\u5b57_' +
    'std::vector<std::pair<int, std::basic_string<char> >, std::allocator<x> >::'.repeat(5) + 'end',
  jit_outer: 'ns::outer<A&B, C<D>>::run_\u20ac_' + 'x'.repeat(50),
};

function makeTricky(copy) {
  for (const f of fs.readdirSync(copy).filter((f) => /^perf-\d+\.map$/.test(f))) {
    let text = fs.readFileSync(path.join(copy, f), 'utf8');
    for (const [from, to] of Object.entries(kTrickyNames)) text = text.split(from).join(to);
    fs.writeFileSync(path.join(copy, f), text);
  }
}

// Runs `runner report` on a copy of each golden folder (and of the tricky
// one); every flamegraph SVG written, with the stacks of its .folded file.
function reportSvgs(work, folders = [...kFolders, 'tricky']) {
  const svgs = [];
  for (const folder of folders) {
    const copy = path.join(work, folder);
    fs.cpSync(path.join(env('GOLDEN_DIR'), 'folders', folder === 'tricky' ? 'jit' : folder),
      copy, { recursive: true });
    if (folder === 'tricky') makeTricky(copy);
    execFileSync(env('RUNNER_BIN'), ['report', copy], { stdio: 'ignore' });
    const dir = path.join(copy, 'report');
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.svg')).sort()) {
      svgs.push({
        name: folder + '/' + f,
        file: path.join(dir, f),
        stacks: readFolded(path.join(dir, f.replace(/\.svg$/, '.folded'))),
      });
    }
  }
  return svgs;
}

function readFolded(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '')
    .map((l) => {
      const at = l.lastIndexOf(' ');
      return { frames: l.slice(0, at).split(';'), count: Number(l.slice(at + 1)) };
    });
}

// Samples of the stacks that hold a frame matching `re`, in percent.
function foldedShare(stacks, re) {
  let hit = 0, all = 0;
  for (const s of stacks) {
    all += s.count;
    if (s.frames.some((f) => re.test(f))) hit += s.count;
  }
  return (100 * hit / all).toFixed(2);
}

// ---- static labels, from the file alone -------------------------------------

// Every frame group of the file as written: name, rect width, label text.
function parseFrames(text) {
  const re = /<g class="f" data-n="([^"]*)" data-s="(\d+)"><title>[^<]*<\/title><rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*\/><text x="([\d.]+)" y="[\d.]+">([^<]*)<\/text><\/g>/g;
  const frames = [];
  for (const m of text.matchAll(re)) {
    frames.push({ name: unescapeXml(m[1]), x: +m[3], width: +m[4],
      tx: +m[5], label: unescapeXml(m[6]) });
  }
  return frames;
}

// A label is the name, a prefix of it followed by "..", or empty.
function labelProblem(name, label) {
  if (label === '' || label === name) return null;
  if (label.endsWith('..') && label.length < name.length + 2 &&
      name.startsWith(label.slice(0, -2)) && label.length > 2) return null;
  return 'label "' + label + '" is neither the name nor a cut of it';
}

// Frames wider than this (about 8 glyphs) must show a label.
const kLabelledWidth = 8 * 7.6 + 2 * kLabelPad;

function checkStaticLabels(text) {
  const problems = [];
  const frames = parseFrames(text);
  const groups = (text.match(/<g class="f"/g) || []).length;
  if (frames.length === 0 || frames.length !== groups)
    problems.push(groups + ' frame groups, ' + frames.length + ' with a <text> label');
  let cut = 0;
  for (const f of frames) {
    const p = labelProblem(f.name, f.label);
    if (p) problems.push(f.name + ': ' + p);
    if (f.width >= kLabelledWidth && f.label === '')
      problems.push(f.name + ': no label in a frame ' + f.width + ' px wide');
    if (Math.abs(f.tx - (f.x + kLabelPad)) > kEps)
      problems.push(f.name + ': label at x=' + f.tx + ', frame at x=' + f.x);
    if (f.label.endsWith('..') && f.label !== f.name) cut++;
  }
  return { problems, cut, labelled: frames.filter((f) => f.label !== '').length };
}

// ---- in the browser ----------------------------------------------------------

// Every visible frame whose measured label does not fit inside its rect, or
// whose label is not the name or a cut of it, or is empty in a wide frame.
// `tight` (labels the script fitted by measuring): a cut label must also be
// the longest that fits, i.e. one more character before ".." would not.
async function labelFitProblems(page, tight) {
  const frames = await page.evaluate((pad) => {
    const probe = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    document.documentElement.appendChild(probe);
    const out = [];
    for (const g of document.querySelectorAll('g.f')) {
      if (getComputedStyle(g).display === 'none') continue;
      const r = g.querySelector('rect'), t = g.querySelector('text');
      const name = g.getAttribute('data-n'), label = t.textContent;
      let longer = null;  // the measured length of the next longer cut
      if (label.endsWith('..') && label !== name) {
        probe.textContent = name.slice(0, label.length - 1) + '..';
        longer = probe.getComputedTextLength();
      }
      out.push({ name, label, longer,
        rx: +r.getAttribute('x'), rw: +r.getAttribute('width'),
        tx: +t.getAttribute('x'), len: t.getComputedTextLength() });
    }
    probe.remove();
    return out;
  }, kLabelPad);
  const problems = [];
  for (const f of frames) {
    if (tight && f.longer !== null && f.longer <= f.rw - 2 * kLabelPad)
      problems.push(f.name + ': label "' + f.label + '" cut shorter than its ' +
        f.rw.toFixed(2) + ' px frame allows');
    if (f.tx < f.rx - kEps || f.tx + f.len > f.rx + f.rw + kEps)
      problems.push(f.name + ': label "' + f.label + '" spans ' +
        f.tx.toFixed(2) + '..' + (f.tx + f.len).toFixed(2) + ', frame ' +
        f.rx.toFixed(2) + '..' + (f.rx + f.rw).toFixed(2));
    const p = labelProblem(f.name, f.label);
    if (p) problems.push(f.name + ': ' + p);
    if (f.rw >= kLabelledWidth && f.label === '')
      problems.push(f.name + ': no label in a frame ' + f.rw.toFixed(2) + ' px wide');
  }
  if (frames.length === 0) problems.push('no visible frame');
  return problems;
}

// A page showing the whole SVG (1200 px wide, as tall as it is), so every
// frame can be hovered and clicked.
async function openSvg(browser, file, javaScriptEnabled) {
  const head = fs.readFileSync(file, 'utf8').slice(0, 400);
  const height = Number((/ height="(\d+)"/.exec(head) || [0, 800])[1]);
  const ctx = await browser.newContext({ javaScriptEnabled,
    viewport: { width: 1200, height: Math.max(height, 100) } });
  const page = await ctx.newPage();
  await page.goto('file://' + file);
  const root = await page.evaluate(() => document.documentElement.localName +
    (document.getElementsByTagName('parsererror').length ? ' (XML error)' : ''));
  if (root !== 'svg') throw new Error(file + ' did not open as SVG: ' + root);
  return { page, close: () => ctx.close() };
}

// Geometry of the frames in document order.
function frameBoxes(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('g.f'), (g, i) => {
    const r = g.querySelector('rect');
    return { i, name: g.getAttribute('data-n'), samples: +g.getAttribute('data-s'),
      x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width'),
      shown: getComputedStyle(g).display !== 'none', fill: r.getAttribute('fill'),
      label: g.querySelector('text').textContent };
  }));
}

async function centerOf(page, selector, index) {
  const box = await page.evaluate(([sel, i]) => {
    const b = document.querySelectorAll(sel)[i].getBoundingClientRect();
    return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  }, [selector, index]);
  return box;
}

// The frame to hover, search and zoom: the widest one that is not the full
// width, wide enough to hit, preferring longer names; in a flamegraph of one
// chain (every frame the full width), the middle one of the chain (zooming
// there still re-fits every label).
function pickFrame(boxes) {
  const full = Math.max(...boxes.map((b) => b.w));
  const cands = boxes.filter((b) => b.w < full - 1 && b.w >= 4);
  if (cands.length === 0) return boxes.length > 1 ? boxes[boxes.length >> 1] : null;
  cands.sort((a, b) => b.w - a.w || b.name.length - a.name.length);
  return cands[0];
}

async function checkHover(page, svg) {
  const boxes = await frameBoxes(page);
  const total = svg.stacks.reduce((a, s) => a + s.count, 0);
  const problems = [];
  for (const b of [boxes[0], pickFrame(boxes)].filter(Boolean)) {
    const at = await centerOf(page, 'g.f rect', b.i);
    await page.mouse.move(at.x, at.y);
    const shown = await page.textContent('#details');
    const pct = (100 * b.samples / total).toFixed(2) + '%';
    if (!shown.includes(b.name) || !shown.includes(pct) ||
        !shown.includes(b.samples + ' samples'))
      problems.push('hovering ' + b.name + ' shows "' + shown + '", want its name, ' +
        b.samples + ' samples and ' + pct);
    await page.mouse.move(1, 1);
  }
  return problems;
}

function escapeRegExp(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

async function checkSearch(page, svg) {
  const target = pickFrame(await frameBoxes(page)) || (await frameBoxes(page))[0];
  const term = escapeRegExp(target.name);
  const re = new RegExp(term);
  page.once('dialog', (d) => d.accept(term));
  const at = await centerOf(page, '#search', 0);
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => document.getElementById('matched').textContent.trim() !== '',
    null, { timeout: 2000 }).catch(() => {});
  const problems = [];
  const boxes = await frameBoxes(page);
  for (const b of boxes) {
    const lit = b.fill === kHighlight;
    if (lit !== re.test(b.name))
      problems.push(b.name + (lit ? ' highlighted, does not match ' : ' not highlighted, matches ') + term);
  }
  const matched = await page.textContent('#matched');
  const want = 'Matched: ' + foldedShare(svg.stacks, re) + '%';
  if (matched.trim() !== want) problems.push('search shows "' + matched + '", want "' + want + '"');
  if (!boxes.some((b) => b.fill === kHighlight)) problems.push('search highlighted nothing');
  return problems;
}

async function checkZoom(page) {
  const before = await frameBoxes(page);
  const target = pickFrame(before);
  if (!target) return { problems: ['no frame to click'], zoomed: false };
  const at = await centerOf(page, 'g.f rect', target.i);
  await page.mouse.click(at.x, at.y);
  const after = await frameBoxes(page);
  const problems = [];
  const t = after[target.i], scale = 1180 / target.w;
  if (Math.abs(t.x - 10) > kEps || Math.abs(t.w - 1180) > kEps)
    problems.push('clicked ' + target.name + ': spans x=' + t.x + ' w=' + t.w + ', want 10 and 1180');
  let rescaled = 0, hidden = 0;
  for (const b of before) {
    const a = after[b.i];
    const inside = b.x >= target.x - 1e-3 && b.x + b.w <= target.x + target.w + 1e-3;
    if (inside && b.y < target.y) {  // above: the clicked frame's callees
      if (!a.shown || Math.abs(a.w - b.w * scale) > 0.05)
        problems.push(b.name + ': width ' + a.w + ' after zoom, want ' + b.w * scale);
      else rescaled++;
    } else if (!inside && b.y <= target.y) {
      if (a.shown) problems.push(b.name + ': outside the zoomed frame but shown');
      else hidden++;
    }
  }
  if (hidden === 0 && before.some((b) => b.y <= target.y && b.i !== target.i &&
      !(b.x >= target.x - 1e-3 && b.x + b.w <= target.x + target.w + 1e-3)))
    problems.push('nothing hidden by the zoom');
  problems.push(...(await labelFitProblems(page, true)).map((p) => 'after zoom: ' + p));
  return { problems, zoomed: true, rescaled };
}

async function checkUnzoom(page, staticLabels) {
  const at = await centerOf(page, '#unzoom', 0);
  await page.mouse.click(at.x, at.y);
  const boxes = await frameBoxes(page);
  const problems = [];
  const frames = staticLabels;
  boxes.forEach((b, i) => {
    if (!b.shown) problems.push(b.name + ': hidden after reset');
    if (Math.abs(b.w - frames[i].width) > kEps || b.label !== frames[i].label)
      problems.push(b.name + ': not restored by reset');
  });
  problems.push(...(await labelFitProblems(page, false)).map((p) => 'after reset: ' + p));
  return problems;
}

// Every interactive check on one SVG; problems per check.
async function interactiveChecks(browser, svg) {
  const text = fs.readFileSync(svg.file, 'utf8');
  const result = {};
  let o = await openSvg(browser, svg.file, false);
  result['no-script fit'] = await labelFitProblems(o.page, false);
  await o.close();
  o = await openSvg(browser, svg.file, true);
  result['hover'] = await checkHover(o.page, svg);
  const zoom = await checkZoom(o.page);
  result['zoom'] = zoom.problems;
  if (zoom.zoomed) result['reset'] = await checkUnzoom(o.page, parseFrames(text));
  await o.close();
  o = await openSvg(browser, svg.file, true);
  result['search'] = await checkSearch(o.page, svg);
  await o.close();
  return result;
}

// ---- broken copies: every check must fail on one -----------------------------

function mutate(text, from, to) {
  if (!text.includes(from)) throw new Error('mutation does not apply: ' + from);
  return text.split(from).join(to);
}

// Breakages of the embedded script: [check that must fail, what is broken,
// script text, its replacement].
const kScriptMutants = [
  ['hover', 'no details on hover',
    'details.textContent = g.querySelector', 'void g.querySelector'],
  ['search', 'search highlights nothing', "hit ? 'rgb(230,0,230)'", "false ? 'rgb(230,0,230)'"],
  ['zoom', 'click does not zoom', 'g.onclick = function () { zoom(g); };', ''],
  ['zoom', 'labels not re-fitted after zoom (whole names)', 'if (show) todo.push', 'if (false) todo.push'],
  ['zoom', 'labels cut one character shorter than they fit',
    "n.slice(0, lo) + '..'", "n.slice(0, lo - 1) + '..'"],
  ['reset', 'reset does not restore labels', 't.textContent = g.dataset.l;', ''],
];

const kMutants = [
  { check: 'static labels', why: 'labels drawn by script only',
    apply: (t) => t.replace(/(<text x="[\d.]+" y="[\d.]+">)[^<]*(<\/text><\/g>)/g, '$1$2') },
  { check: 'no-script fit', why: 'static labels never cut (the old bug)',
    apply: (t) => t.replace(/data-n="([^"]*)"([^\n]*<text x="[\d.]+" y="[\d.]+">)[^<]*</g, 'data-n="$1"$2$1<') },
  ...kScriptMutants.map(([check, why, from, to]) =>
    ({ check, why, apply: (t) => mutate(t, from, to) })),
];

async function mutantChecks(browser, svg, work) {
  const text = fs.readFileSync(svg.file, 'utf8');
  for (const [n, m] of kMutants.entries()) {
    const file = path.join(work, 'mutant-' + n + '.svg');
    fs.writeFileSync(file, m.apply(text));
    let problems;
    if (m.check === 'static labels') {
      problems = checkStaticLabels(fs.readFileSync(file, 'utf8')).problems;
    } else {
      problems = (await interactiveChecks(browser, { ...svg, file }))[m.check];
    }
    if (!problems || problems.length === 0)
      fail('check "' + m.check + '" passes on a broken SVG (' + m.why + ')');
    else
      console.log('ok   check "' + m.check + '" fails on a broken SVG (' + m.why +
        '): ' + problems[0]);
  }
}

// ---- main ----------------------------------------------------------------------

function browserUnavailable() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 18) return 'node ' + process.versions.node + ' is older than 18';
  const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
  try { fs.accessSync(chromium, fs.constants.X_OK); } catch {
    return chromium + ' not found (Debian package chromium)';
  }
  try { require.resolve('playwright-core'); } catch {
    return 'playwright-core not installed (`npm ci` in tests/browser; `make test` does it)';
  }
  return null;
}

// Playwright gives every launch a fresh temporary --user-data-dir (it
// refuses one in `args`) and deletes it on close.
function launch() {
  const { chromium } = require('playwright-core');
  // Network closed: nothing in the background may phone home or wait on it.
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic',
      '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

function report(svgName, checkName, problems) {
  if (problems.length === 0) { console.log('ok   ' + checkName + ': ' + svgName); return; }
  fail(checkName + ': ' + svgName);
  for (const p of problems.slice(0, 10)) console.log('       ' + p);
  if (problems.length > 10) console.log('       ... ' + (problems.length - 10) + ' more');
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-browser-'));
  try {
    const svgs = reportSvgs(work);
    if (svgs.length === 0) fail('runner report wrote no SVG');
    let cut = 0;
    for (const svg of svgs) {
      const r = checkStaticLabels(fs.readFileSync(svg.file, 'utf8'));
      cut += r.cut;
      report(svg.name, 'static labels (' + r.labelled + ' labelled, ' + r.cut + ' cut)',
        r.problems);
    }
    if (cut === 0) fail('no SVG has a cut label: the truncation is not exercised');
    const why = browserUnavailable();
    if (why) {
      skip('browser checks', why);
      return;
    }
    await browserChecks(svgs, work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function browserChecks(svgs, work) {
  const browser = await launch();
  try {
    for (const svg of svgs) {
      const result = await interactiveChecks(browser, svg);
      for (const [name, problems] of Object.entries(result)) report(svg.name, name, problems);
    }
    const longest = svgs.find((s) => s.name.startsWith('example/') && s.name.includes('sort'));
    if (!longest) fail('no example sort flamegraph for the broken copies');
    else await mutantChecks(browser, longest, work);
  } finally {
    await browser.close();
  }
}

// The differential flamegraph's test (diff_flamegraph_test.js) runs the
// same checks on the SVG they share.
module.exports = {
  fail, skip, report, failures: () => failures, reportSvgs, readFolded,
  checkStaticLabels, labelFitProblems, openSvg, frameBoxes, centerOf,
  pickFrame, checkSearch, checkZoom, checkUnzoom, parseFrames, mutate,
  kScriptMutants, browserUnavailable, launch,
};

if (require.main === module) {
  main().then(() => {
    console.log(failures === 0 ? 'all checks passed' : failures + ' check(s) failed');
    process.exit(failures === 0 ? 0 : 1);
  }, (e) => {
    console.log('FAIL ' + (e && e.stack || e));
    process.exit(1);
  });
}
