// The differential flamegraph SVG (`runner compare`'s <benchmark>.diff.svg)
// in a real browser (meson test `browser_diff`, suite `browser`). HEAD is a
// .folded file the real `runner report` writes for a golden folder (the
// example's sort, and the JIT folder with tricky names); BASE is derived
// from it (some stacks doubled, some halved or dropped, one BASE-only
// stack). diff_svg (render_diff_flamegraph) draws them; Debian's headless
// Chromium checks what a user sees, with the checks of flamegraph_test.js
// on what the two SVGs share:
//   static labels, no-script fit, zoom, reset, search   as for flamegraphs
//   frames   the tree of both sides (BASE-only frames drawn too), each
//            frame as wide as the mean of its two shares
//   hover    the details line shows the frame's function, its base share,
//            head share, the difference in points and its samples on each
//            side, checked against the frame's path computed here from the
//            two files
//   colours  red for a grown share, blue for a shrunk one, neutral grey
//            below 0.05 points, intensity |delta| / largest |delta|
// Each check then runs on broken copies of an SVG and must fail there.
// Environment: RUNNER_BIN, GOLDEN_DIR, DIFF_SVG (from meson), CHROMIUM.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const fg = require('./flamegraph_test.js');

const kNeutral = [221, 221, 221], kGrew = [235, 50, 50], kShrank = [60, 110, 235];
const kNeutralBelow = 0.0005;  // a share change below 0.05 points

// ---- the inputs ----------------------------------------------------------------

// BASE from HEAD's stacks: every third doubled (+1), every third halved
// (dropped at 0), and one stack only BASE has.
function deriveBase(stacks) {
  const base = [];
  stacks.forEach((s, i) => {
    const count = i % 3 === 0 ? 2 * s.count + 1 : i % 3 === 1 ? Math.floor(s.count / 2) : s.count;
    if (count > 0) base.push({ frames: s.frames, count });
  });
  base.push({ frames: ['base_only_root', 'gone'], count: 5 });
  return base;
}

function writeFolded(file, stacks) {
  fs.writeFileSync(file, stacks.map((s) => s.frames.join(';') + ' ' + s.count + '\n').join(''));
}

// HEAD: the example's sort and the tricky JIT benchmark; per pair the diff
// SVG, HEAD's and BASE's stacks.
function diffSvgs(work) {
  const heads = fg.reportSvgs(work, ['example', 'tricky']).filter((s) =>
    !s.name.includes('.harness.') &&
    (s.name.startsWith('tricky/') || /^example\/.*sort/.test(s.name)));
  return heads.map((h, n) => {
    const base = deriveBase(h.stacks);
    const baseFile = path.join(work, 'base-' + n + '.folded');
    writeFolded(baseFile, base);
    const file = path.join(work, 'diff-' + n + '.svg');
    execFileSync(fg_env('DIFF_SVG'), [file, h.name, baseFile,
      h.file.replace(/\.svg$/, '.folded')], { stdio: 'inherit' });
    return { name: h.name + ' (diff)', file, head: h.stacks, base, stacks: bothSides(base, h.stacks) };
  });
}

function fg_env(name) {
  const v = process.env[name];
  if (!v) throw new Error(name + ' is not set (run through meson)');
  return v;
}

// ---- the expected frames: the tree of both sides, their paths' shares --------

// The stacks of both sides, each weighing its share of its side scaled to
// 2^50 (as render_diff_flamegraph weighs them): a frame's samples in this
// tree are proportional to the sum of its two shares.
function bothSides(base, head) {
  const weighted = (side) => {
    const total = side.reduce((a, s) => a + s.count, 0);
    return side.filter((s) => s.count > 0)
      .map((s) => ({ frames: s.frames, count: Math.round(2 ** 50 * (s.count / total)) }));
  };
  return [...weighted(base), ...weighted(head)];
}

function tree(stacks) {
  const root = { name: 'all', value: 0, children: new Map() };
  for (const s of stacks) {
    root.value += s.count;
    let node = root;
    for (const f of s.frames) {
      if (!node.children.has(f)) node.children.set(f, { name: f, value: 0, children: new Map() });
      node = node.children.get(f);
      node.value += s.count;
    }
  }
  return root;
}

// The drawn frames in document order (children by the bytes of their
// names, as std::map orders them; frames under 0.1 px left out), each
// with its share in HEAD and in BASE and the largest |delta| drawn.
function expectedFrames(svg) {
  const both = tree(svg.stacks), head = tree(svg.head), base = tree(svg.base);
  const scale = 1180 / Math.max(both.value, 1);
  const out = [];
  const child = (node, n) => (node ? node.children.get(n) : undefined);
  (function walk(node, inBase, inHead) {
    if (node.value * scale < 0.1) return;
    const bs = inBase ? inBase.value : 0, hs = inHead ? inHead.value : 0;
    const h = hs / head.value, b = bs / base.value;
    out.push({ name: node.name, width: node.value * scale, base: bs, head: hs, h, b, delta: h - b });
    const names = [...node.children.keys()].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    for (const n of names) walk(node.children.get(n), child(inBase, n), child(inHead, n));
  })(both, base, head);
  const max = Math.max(...out.map((f) => Math.abs(f.delta)));
  return { frames: out, max };
}

function mix(end, t) { return kNeutral.map((c, i) => c + t * (end[i] - c)); }

// Frames of each colour seen by colourProblems (every one must be).
const exercised = { red: 0, blue: 0, grey: 0 };

function colourProblems(boxes, want) {
  const problems = [];
  if (boxes.length !== want.frames.length) {
    return [boxes.length + ' frames drawn, want ' + want.frames.length];
  }
  let red = 0, blue = 0, grey = 0;
  boxes.forEach((b, i) => {
    const f = want.frames[i];
    if (b.name !== f.name) { problems.push('frame ' + i + ' is ' + b.name + ', want ' + f.name); return; }
    if (Math.abs(b.w - f.width) > 0.05) problems.push(b.name + ': width ' + b.w + ', want ' + f.width);
    const m = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(b.fill);
    if (!m) { problems.push(b.name + ': fill ' + b.fill); return; }
    const got = [+m[1], +m[2], +m[3]];
    const neutral = Math.abs(f.delta) < kNeutralBelow;
    if (Math.abs(Math.abs(f.delta) - kNeutralBelow) < 1e-9) return;  // on the edge
    const rgb = neutral ? kNeutral : mix(f.delta > 0 ? kGrew : kShrank, Math.abs(f.delta) / want.max);
    if (got.some((c, k) => Math.abs(c - rgb[k]) > 1))
      problems.push(b.name + ': fill ' + b.fill + ' for ' + (100 * f.delta).toFixed(3) +
        ' points (largest ' + (100 * want.max).toFixed(3) + '), want rgb(' + rgb.map(Math.round) + ')');
    if (neutral) grey++; else if (f.delta > 0) red++; else blue++;
  });
  exercised.red += red; exercised.blue += blue; exercised.grey += grey;
  return problems;
}

// ---- hover ---------------------------------------------------------------------

function hoverTextProblems(shown, f) {
  const m = /\(base ([\d.]+)%, head ([\d.]+)%, difference ([+-][\d.]+) pp; samples: base (\d+), head (\d+)\)$/.exec(shown);
  if (!shown.startsWith(f.name + ' (') || !m)
    return ['hovering ' + f.name + ' shows "' + shown + '"'];
  const problems = [];
  const near = (got, want) => Math.abs(got - want) <= 0.0051 + 1e-9;
  if (!near(+m[1], 100 * f.b)) problems.push(f.name + ': base ' + m[1] + '%, want ' + (100 * f.b).toFixed(4));
  if (!near(+m[2], 100 * f.h)) problems.push(f.name + ': head ' + m[2] + '%, want ' + (100 * f.h).toFixed(4));
  if (!near(+m[3], 100 * f.delta))
    problems.push(f.name + ': difference ' + m[3] + ' pp, want ' + (100 * f.delta).toFixed(4));
  if (+m[4] !== f.base || +m[5] !== f.head)
    problems.push(f.name + ': samples base ' + m[4] + ', head ' + m[5] + ', want ' + f.base + ', ' + f.head);
  return problems;
}

// Hovers the root, the frame flamegraph_test.js picks, the largest grown
// and shrunk frames, a frame absent from BASE and one absent from HEAD.
async function checkHover(page, svg) {
  const boxes = await fg.frameBoxes(page);
  const want = expectedFrames(svg);
  if (boxes.length !== want.frames.length) return [boxes.length + ' frames, want ' + want.frames.length];
  const byDelta = [...want.frames.keys()].sort((a, b) => want.frames[a].delta - want.frames[b].delta);
  const picks = new Set([0, (fg.pickFrame(boxes) || boxes[0]).i, byDelta[0], byDelta[byDelta.length - 1]]);
  const absent = want.frames.findIndex((f) => f.b === 0);
  if (absent >= 0) picks.add(absent);
  const gone = want.frames.findIndex((f) => f.h === 0);
  if (gone < 0) return ['no frame of BASE only is drawn'];
  picks.add(gone);
  const problems = [];
  for (const i of picks) {
    if (boxes[i].w < 1) continue;  // too narrow to hit
    const at = await fg.centerOf(page, 'g.f rect', i);
    await page.mouse.move(at.x, at.y);
    problems.push(...hoverTextProblems(await page.textContent('#details'), want.frames[i]));
    await page.mouse.move(1, 1);
  }
  return problems;
}

// ---- the checks, and broken copies -----------------------------------------------

async function interactiveChecks(browser, svg) {
  const text = fs.readFileSync(svg.file, 'utf8');
  const result = {};
  let o = await fg.openSvg(browser, svg.file, false);
  result['no-script fit'] = await fg.labelFitProblems(o.page, false);
  result['colours'] = colourProblems(await fg.frameBoxes(o.page), expectedFrames(svg));
  await o.close();
  o = await fg.openSvg(browser, svg.file, true);
  result['hover'] = await checkHover(o.page, svg);
  const zoom = await fg.checkZoom(o.page);
  result['zoom'] = zoom.problems;
  if (zoom.zoomed) result['reset'] = await fg.checkUnzoom(o.page, fg.parseFrames(text));
  await o.close();
  o = await fg.openSvg(browser, svg.file, true);
  result['search'] = await fg.checkSearch(o.page, svg);
  await o.close();
  return result;
}

const kMutants = [
  { check: 'colours', why: 'red and blue swapped',
    apply: (t) => t.replace(/(<g class="f"[^\n]*fill=")rgb\((\d+),(\d+),(\d+)\)/g, '$1rgb($4,$3,$2)') },
  { check: 'colours', why: 'every frame neutral',
    apply: (t) => t.replace(/(<g class="f"[^\n]*fill=")rgb\(\d+,\d+,\d+\)/g, '$1rgb(221,221,221)') },
  { check: 'colours', why: 'the frames of BASE only left out',
    apply: (t) => t.replace(/<g class="f" data-n="(base_only_root|gone)"[^\n]*\n/g, '') },
  { check: 'colours', why: 'a frame half as wide',
    apply: (t) => t.replace(/(<g class="f" data-n="base_only_root"[^\n]*width=")([\d.]+)/,
      (m, head, w) => head + (w / 2).toFixed(2)) },
  { check: 'hover', why: 'base and head shares swapped',
    apply: (t) => t.replace(/\(base ([\d.]+)%, head ([\d.]+)%/g, '(base $2%, head $1%') },
  ...fg.kScriptMutants.map(([check, why, from, to]) =>
    ({ check, why, apply: (t) => fg.mutate(t, from, to) })),
];

async function mutantChecks(browser, svg, work) {
  const text = fs.readFileSync(svg.file, 'utf8');
  for (const [n, m] of kMutants.entries()) {
    const file = path.join(work, 'diff-mutant-' + n + '.svg');
    fs.writeFileSync(file, m.apply(text));
    const problems = (await interactiveChecks(browser, { ...svg, file }))[m.check];
    if (!problems || problems.length === 0)
      fg.fail('check "' + m.check + '" passes on a broken diff SVG (' + m.why + ')');
    else
      console.log('ok   check "' + m.check + '" fails on a broken diff SVG (' + m.why + '): ' + problems[0]);
  }
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-browser-diff-'));
  try {
    const svgs = diffSvgs(work);
    if (svgs.length !== 2) fg.fail(svgs.length + ' diff SVGs, want 2 (example sort, tricky)');
    for (const svg of svgs) {
      const r = fg.checkStaticLabels(fs.readFileSync(svg.file, 'utf8'));
      fg.report(svg.name, 'static labels (' + r.labelled + ' labelled, ' + r.cut + ' cut)', r.problems);
    }
    const why = fg.browserUnavailable();
    if (why) { fg.skip('browser checks', why); return; }
    const browser = await fg.launch();
    try {
      for (const svg of svgs) {
        const result = await interactiveChecks(browser, svg);
        for (const [name, problems] of Object.entries(result)) fg.report(svg.name, name, problems);
      }
      if (Object.values(exercised).includes(0))
        fg.fail('colours not all exercised: ' + JSON.stringify(exercised));
      if (svgs.length > 0) await mutantChecks(browser, svgs[0], work);
    } finally {
      await browser.close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => {
  const failures = fg.failures();
  console.log(failures === 0 ? 'all checks passed' : failures + ' check(s) failed');
  process.exit(failures === 0 ? 0 : 1);
}, (e) => {
  console.log('FAIL ' + (e && e.stack || e));
  process.exit(1);
});
