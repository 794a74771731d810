// The style, skeleton and script of index.html (see page_assets.hpp).
//
// The script reads the embedded history.json and draws:
//   the header     repository, branch, store, metric, runs, skipped
//                  records, warnings
//   the overview   a row per benchmark: name and URI, a sparkline
//                  (<canvas>), its latest value and latest change point;
//                  changed benchmarks first, columns sortable; a click (or
//                  Enter) opens the benchmark's plot
//   the plot       one benchmark, drawn when opened on one <canvas>: points
//                  over the runs (x: run order, labelled by short commit
//                  and date) with their 95% intervals as whiskers, the
//                  level of each segment between change points, each change
//                  point as a dashed line labelled with its change; hover
//                  shows a point's commit, date, value and interval; drag
//                  or wheel zooms, double click or "Reset zoom" resets; a
//                  click on a point opens its run's flamegraphs, else its
//                  CI run; below, each change point with links to its diff
//                  flamegraph and compare folder
// Everything from the store is inserted as text (textContent), never as
// HTML, and only http(s) or relative links are followed (safeHref).
#include "history/page_assets.hpp"

namespace runner::history {
namespace {

constexpr std::string_view kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>runner history</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #fff; border-bottom: 1px solid #dde1e7; padding: 12px 20px; }
h1 { font-size: 20px; margin: 0 0 6px; }
h1 span { font-weight: normal; color: #4a5568; }
dl#facts { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 0; }
dl#facts div { display: flex; gap: 6px; }
dl#facts dt { color: #6b7385; }
dl#facts dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
#warnings { margin: 6px 0 0; padding-left: 20px; color: #8a5a00; max-height: 8em; overflow: auto; }
main { padding: 14px 20px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #dde1e7; }
th, td { padding: 4px 10px; text-align: left; border-bottom: 1px solid #eef0f3; vertical-align: middle; }
th { background: #eef1f5; font-weight: 600; user-select: none; }
th[data-key] { cursor: pointer; }
th[data-key]:hover { background: #e2e7ee; }
th.sorted::after { content: " \25BE"; }
th.sorted.up::after { content: " \25B4"; }
tbody tr { cursor: pointer; }
tbody tr:hover, tbody tr:focus { background: #f0f5ff; outline: none; }
tbody tr.open { background: #e3ecff; }
td.name { max-width: 480px; }
td.name .n { font-weight: 600; overflow-wrap: anywhere; }
td.name .u, #plot-uri { color: #6b7385; font-size: 12px; overflow-wrap: anywhere; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.spark { width: 160px; }
canvas { display: block; }
.up { color: #c0262d; }
.down { color: #1c7c3a; }
.verdict { font-size: 12px; padding: 0 5px; border-radius: 3px; background: #eef0f3; margin-left: 4px; }
.verdict.regression { background: #fde2e2; color: #a01d22; }
.verdict.improvement { background: #dcf3e3; color: #17683a; }
#plot { background: #fff; border: 1px solid #dde1e7; margin-top: 16px; padding: 10px 14px; }
#plot h2 { font-size: 17px; margin: 0; overflow-wrap: anywhere; }
#plot-bar { display: flex; gap: 12px; align-items: center; margin: 6px 0; color: #6b7385; font-size: 12px; }
#plot-wrap { position: relative; }
#tip { position: absolute; pointer-events: none; background: rgba(29,35,48,0.93); color: #fff; padding: 5px 8px; border-radius: 4px; font-size: 12px; white-space: nowrap; z-index: 2; }
#tip div:first-child { font-weight: 600; }
#changes { margin: 8px 0 0; padding-left: 20px; }
#changes li { margin: 3px 0; overflow-wrap: anywhere; }
#changes a { margin-left: 8px; }
.none { color: #8a8f99; }
</style>
</head>
<body>
<header>
<h1>runner history <span id="repo"></span></h1>
<dl id="facts"></dl>
<ul id="warnings" hidden></ul>
</header>
<main>
<p id="empty" hidden>No benchmark in these runs.</p>
<table id="overview">
<thead><tr><th data-key="name">Benchmark</th><th>Trend</th><th data-key="latest">Latest</th><th data-key="change">Latest change point</th></tr></thead>
<tbody></tbody>
</table>
<section id="plot" hidden>
<h2 id="plot-name"></h2>
<div id="plot-uri"></div>
<div id="plot-bar"><button type="button" id="reset">Reset zoom</button><span>Drag or scroll to zoom, double click to reset; click a point to open its flamegraphs (or its CI run).</span></div>
<div id="plot-wrap"><canvas id="plot-canvas"></canvas><div id="tip" hidden></div></div>
<ul id="changes"></ul>
</section>
</main>
)html";

constexpr std::string_view kScript = R"js('use strict';
(function () {
  var data = JSON.parse(document.getElementById('history-data').textContent);
  var runs = data.runs || [], benches = data.benchmarks || [];
  var isCount = /instr/i.test(String(data.metric));
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // ---- formatting ----
  function fmt(v) {
    if (typeof v !== 'number' || !isFinite(v)) return '\u2013';
    var a = Math.abs(v);
    if (isCount) {
      if (a >= 1e9) return (v / 1e9).toPrecision(4) + ' G';
      if (a >= 1e6) return (v / 1e6).toPrecision(4) + ' M';
      if (a >= 1e3) return (v / 1e3).toPrecision(4) + ' k';
      return v.toPrecision(4);
    }
    if (a >= 1e9) return (v / 1e9).toPrecision(4) + ' s';
    if (a >= 1e6) return (v / 1e6).toPrecision(4) + ' ms';
    if (a >= 1e3) return (v / 1e3).toPrecision(4) + ' \u00b5s';
    return v.toPrecision(4) + ' ns';
  }
  function pct(x) { return (x >= 0 ? '+' : '') + (100 * x).toFixed(1) + '%'; }
  function short(c) { return String(c || '').slice(0, 7); }
  function day(r) { return String((r && r.created_at) || '').replace('T', ' ').slice(0, 16); }
  function interval(lo, hi, f) {
    return (typeof lo === 'number' && typeof hi === 'number') ? '[' + f(lo) + ', ' + f(hi) + ']' : '';
  }

  // Links are followed only when they are absolute http(s) URLs or paths
  // relative to the page that stay below its folder: never javascript:,
  // data:, file:, a path from the root or a host ("//host/x", which a page
  // opened from a file would take for a network share). A path's parts are
  // percent-encoded: a '#', '?' or '%' in a file name stays part of it.
  function httpUrl(u) {
    if (typeof u !== 'string' || !/^https?:\/\//i.test(u)) return null;
    var a;
    try { a = new URL(u); } catch (e) { return null; }
    return (a.protocol === 'http:' || a.protocol === 'https:') && a.host ? a.href : null;
  }
  function relativePath(u) {
    if (typeof u !== 'string' || u === '' || /^[\x00-\x20\/]|\\/.test(u)) return null;
    if (/^[a-z][a-z0-9+.-]*:/i.test(u)) return null;  // a scheme
    var parts = u.split('/');
    if (parts.indexOf('..') >= 0) return null;
    return parts.map(encodeURIComponent).join('/');
  }
  function safeHref(u) { return relativePath(u) || httpUrl(u); }

  // ---- header ----
  function header() {
    var repo = (data.owner ? data.owner + '/' : '') + (data.repository || '');
    $('repo').textContent = repo + (data.branch ? ' \u00b7 ' + data.branch : '');
    document.title = 'runner history: ' + repo + ' ' + (data.branch || '');
    var warnings = data.warnings || [];
    var facts = [['Repository', repo || '\u2013'], ['Branch', data.branch], ['Store', data.store],
      ['Metric', data.metric], ['Runs', runs.length], ['Benchmarks', benches.length],
      ['Skipped records', data.skipped_records], ['Warnings', warnings.length]];
    facts.forEach(function (f) {
      var d = el('div');
      d.appendChild(el('dt', null, f[0]));
      d.appendChild(el('dd', null, f[1] === undefined || f[1] === null ? '\u2013' : f[1]));
      $('facts').appendChild(d);
    });
    var ul = $('warnings');
    warnings.slice(0, 100).forEach(function (w) { ul.appendChild(el('li', null, w)); });
    if (warnings.length > 100) ul.appendChild(el('li', null, (warnings.length - 100) + ' more'));
    ul.hidden = warnings.length === 0;
  }

  // ---- overview ----
  function lastOf(a) { return a && a.length ? a[a.length - 1] : null; }
  var order = benches.map(function (b, i) { return i; });
  var sortKey = 'default', sortUp = false;
  function compare(i, j) {
    var a = benches[i], b = benches[j], ca = lastOf(a.changes), cb = lastOf(b.changes);
    var byName = String(a.name || a.uri).localeCompare(String(b.name || b.uri));
    var d = 0;
    if (sortKey === 'name') d = byName;
    else if (sortKey === 'latest') d = ((lastOf(a.points) || {}).value || 0) - ((lastOf(b.points) || {}).value || 0);
    else if (sortKey === 'change') d = (ca ? ca.change : -Infinity) - (cb ? cb.change : -Infinity);
    else d = (cb ? Math.abs(cb.change) : -1) - (ca ? Math.abs(ca.change) : -1);
    if (sortUp) d = -d;
    return d || byName || i - j;
  }
  function changeCell(td, b) {
    var c = lastOf(b.changes);
    if (!c) { td.appendChild(el('span', 'none', 'none')); return; }
    td.appendChild(el('span', c.change > 0 ? 'up' : 'down', pct(c.change)));
    td.appendChild(el('span', null, ' ' + interval(c.low, c.high, pct) + ' at ' + short(c.commit)));
    if (c.verdict) td.appendChild(el('span', 'verdict ' + c.verdict, c.verdict));
  }
  function drawSpark(cv, b) {
    var dpr = window.devicePixelRatio || 1, w = 160, h = 32, pts = b.points || [];
    cv.width = w * dpr; cv.height = h * dpr;
    cv.style.width = w + 'px'; cv.style.height = h + 'px';
    if (pts.length === 0) return;
    var g = cv.getContext('2d'), lo = Infinity, hi = -Infinity, n = pts.length;
    g.scale(dpr, dpr);
    for (var k = 0; k < n; k++) { lo = Math.min(lo, pts[k].value); hi = Math.max(hi, pts[k].value); }
    if (!(hi > lo)) { hi = lo + 1; lo = lo - 1; }
    function x(k) { return 2 + (n > 1 ? k / (n - 1) : 0.5) * (w - 4); }
    function y(v) { return h - 3 - (v - lo) / (hi - lo) * (h - 6); }
    g.strokeStyle = '#3b64a8'; g.lineWidth = 1; g.beginPath();
    for (k = 0; k < n; k++) g[k ? 'lineTo' : 'moveTo'](x(k), y(pts[k].value));
    if (n === 1) g.lineTo(x(0) + 1, y(pts[0].value));
    g.stroke();
    (b.changes || []).forEach(function (c) {
      g.fillStyle = c.change > 0 ? '#c0262d' : '#1c7c3a';
      g.fillRect(x(c.point) - 1, 0, 2, h);
    });
  }
  function overview() {
    var body = document.querySelector('#overview tbody');
    body.textContent = '';
    order.sort(compare);
    var sparks = [];
    order.forEach(function (i) {
      var b = benches[i], tr = el('tr'), td = el('td', 'name'), last = lastOf(b.points);
      tr.tabIndex = 0; tr.dataset.index = i;
      if (current && current.index === i) tr.className = 'open';
      td.appendChild(el('div', 'n', b.name || b.uri));
      td.appendChild(el('div', 'u', b.uri));
      tr.appendChild(td);
      var cv = el('canvas'), sp = el('td', 'spark');
      sp.appendChild(cv); tr.appendChild(sp); sparks.push([cv, b]);
      tr.appendChild(el('td', 'num', last ? fmt(last.value) : '\u2013'));
      var ch = el('td', 'num'); changeCell(ch, b); tr.appendChild(ch);
      tr.addEventListener('click', function () { openPlot(i, true); });
      tr.addEventListener('keydown', function (e) { if (e.key === 'Enter') openPlot(i, true); });
      body.appendChild(tr);
    });
    sparks.forEach(function (s) { drawSpark(s[0], s[1]); });
    document.querySelectorAll('#overview th').forEach(function (th) {
      th.classList.toggle('sorted', th.dataset.key === sortKey);
      th.classList.toggle('up', th.dataset.key === sortKey && sortUp);
    });
  }
  document.querySelectorAll('#overview th[data-key]').forEach(function (th) {
    th.addEventListener('click', function () {
      if (sortKey === th.dataset.key) sortUp = !sortUp; else { sortKey = th.dataset.key; sortUp = false; }
      overview();
    });
  });

  // ---- the plot of one benchmark ----
  var M = { left: 74, right: 16, top: 26, bottom: 46 }, kHeight = 400;
  var current = null;  // {index, b, x0, x1, hover, drag}
  var cv = $('plot-canvas'), tip = $('tip');

  function fullRange(b) {
    var p = b.points;
    return p.length ? [p[0].run - 0.5, p[p.length - 1].run + 0.5] : [-0.5, 0.5];
  }
  function openPlot(i, scroll) {
    var b = benches[i], r = fullRange(b);
    current = { index: i, b: b, x0: r[0], x1: r[1], hover: -1, drag: null };
    $('plot').hidden = false;
    $('plot-name').textContent = b.name || b.uri;
    $('plot-uri').textContent = b.uri;
    document.querySelectorAll('#overview tbody tr').forEach(function (tr) {
      tr.classList.toggle('open', Number(tr.dataset.index) === i);
    });
    changeList(b);
    tip.hidden = true;
    draw();
    try { history.replaceState(null, '', '#b' + i); } catch (e) { /* file:// quirks */ }
    if (scroll) $('plot').scrollIntoView({ block: 'nearest' });
  }
  function changeList(b) {
    var ul = $('changes');
    ul.textContent = '';
    (b.changes || []).forEach(function (c) {
      var li = el('li'), r = runs[c.run];
      li.appendChild(el('span', c.change > 0 ? 'up' : 'down', pct(c.change)));
      li.appendChild(el('span', null, ' ' + interval(c.low, c.high, pct) + ' at ' + short(c.commit) +
        (r ? ' (' + day(r) + ')' : '') + ': ' + fmt(c.before) + ' \u2192 ' + fmt(c.after)));
      if (c.verdict) li.appendChild(el('span', 'verdict ' + c.verdict, c.verdict));
      link(li, c.diff, 'diff flamegraph', 'diff');
      link(li, c.compare, 'compare', 'compare');
      ul.appendChild(li);
    });
    if (!(b.changes || []).length) ul.appendChild(el('li', 'none', 'No change point.'));
  }
  function link(parent, url, text, cls) {
    var href = safeHref(url);
    if (!href) { parent.appendChild(el('span', 'none ' + cls, ' (no ' + text + ')')); return; }
    var a = el('a', cls, text);
    a.setAttribute('href', href);
    parent.appendChild(a);
  }

  function geometry() {
    var w = Math.max(320, $('plot-wrap').clientWidth);
    return { w: w, h: kHeight, l: M.left, r: w - M.right, t: M.top, b: kHeight - M.bottom };
  }
  function xOf(G, run) { return G.l + (run - current.x0) / (current.x1 - current.x0) * (G.r - G.l); }
  function runAt(G, px) { return current.x0 + (px - G.l) / (G.r - G.l) * (current.x1 - current.x0); }
  // First point index with run >= r.
  function lowerBound(pts, r) {
    var lo = 0, hi = pts.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (pts[m].run < r) lo = m + 1; else hi = m; }
    return lo;
  }
  function visible() {
    var pts = current.b.points;
    return [lowerBound(pts, current.x0), lowerBound(pts, current.x1)];
  }
  function yRange(v) {
    var pts = current.b.points, lo = Infinity, hi = -Infinity;
    for (var k = v[0]; k < v[1]; k++) {
      var p = pts[k];
      lo = Math.min(lo, p.value, typeof p.low === 'number' ? p.low : p.value);
      hi = Math.max(hi, p.value, typeof p.high === 'number' ? p.high : p.value);
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (!(hi > lo)) { var d = Math.abs(lo) * 0.05 || 1; lo -= d; hi += d; }
    var pad = (hi - lo) * 0.08;
    return [lo - pad, hi + pad];
  }
  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return p * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
  }
  function median(a) {
    var s = a.slice().sort(function (x, y) { return x - y; }), n = s.length;
    return n ? (n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0;
  }
  // The segments between change points: [from run, to run, level].
  function segments(b) {
    var pts = b.points, cs = b.changes || [], out = [], from = fullRange(b)[0];
    if (!pts.length) return out;
    if (!cs.length) return [[from, fullRange(b)[1], median(pts.map(function (p) { return p.value; }))]];
    cs.forEach(function (c, k) {
      var at = pts[c.point].run - 0.5;
      out.push([from, at, k === 0 ? c.before : cs[k - 1].after]);
      from = at;
    });
    out.push([from, fullRange(b)[1], cs[cs.length - 1].after]);
    return out;
  }

  function draw() {
    if (!current) return;
    var G = geometry(), dpr = window.devicePixelRatio || 1, b = current.b, pts = b.points;
    cv.width = G.w * dpr; cv.height = G.h * dpr;
    cv.style.width = G.w + 'px'; cv.style.height = G.h + 'px';
    var g = cv.getContext('2d');
    g.scale(dpr, dpr);
    g.fillStyle = '#fff'; g.fillRect(0, 0, G.w, G.h);
    var v = visible(), yr = yRange(v);
    function y(val) { return G.b - (val - yr[0]) / (yr[1] - yr[0]) * (G.b - G.t); }
    axes(g, G, yr, y);
    g.save();
    g.beginPath(); g.rect(G.l, G.t, G.r - G.l, G.b - G.t); g.clip();
    g.strokeStyle = '#e39b2d'; g.lineWidth = 2;
    segments(b).forEach(function (s) {
      g.beginPath(); g.moveTo(xOf(G, s[0]), y(s[2])); g.lineTo(xOf(G, s[1]), y(s[2])); g.stroke();
    });
    g.strokeStyle = '#9aa3b2'; g.lineWidth = 1; g.beginPath();
    for (var k = v[0]; k < v[1]; k++) {
      var p = pts[k];
      if (typeof p.low !== 'number' || typeof p.high !== 'number') continue;
      var px = xOf(G, p.run);
      g.moveTo(px, y(p.low)); g.lineTo(px, y(p.high));
      g.moveTo(px - 2, y(p.low)); g.lineTo(px + 2, y(p.low));
      g.moveTo(px - 2, y(p.high)); g.lineTo(px + 2, y(p.high));
    }
    g.stroke();
    var rad = v[1] - v[0] > 400 ? 1.6 : 2.6;
    g.fillStyle = '#2c56a0'; g.beginPath();
    for (k = v[0]; k < v[1]; k++) {
      px = xOf(G, pts[k].run); var py = y(pts[k].value);
      g.moveTo(px + rad, py); g.arc(px, py, rad, 0, 2 * Math.PI);
    }
    g.fill();
    if (current.hover >= 0) {
      p = pts[current.hover];
      g.strokeStyle = '#111'; g.lineWidth = 2; g.beginPath();
      g.arc(xOf(G, p.run), y(p.value), rad + 3, 0, 2 * Math.PI); g.stroke();
    }
    g.restore();
    changeMarks(g, G, b);
    if (current.drag && Math.abs(current.drag.to - current.drag.from) > 3) {
      g.fillStyle = 'rgba(59,100,168,0.15)';
      var a = Math.min(current.drag.from, current.drag.to);
      g.fillRect(a, G.t, Math.abs(current.drag.to - current.drag.from), G.b - G.t);
    }
    current.y = y;
    cv.dataset.view = JSON.stringify({ x0: current.x0, x1: current.x1, left: G.l, right: G.r,
      top: G.t, bottom: G.b, y0: yr[0], y1: yr[1] });
  }
  function axes(g, G, yr, y) {
    g.strokeStyle = '#eef0f3'; g.fillStyle = '#4a5568'; g.lineWidth = 1;
    g.font = '11px system-ui, sans-serif'; g.textAlign = 'right'; g.textBaseline = 'middle';
    var step = niceStep(yr[1] - yr[0], 6);
    for (var t = Math.ceil(yr[0] / step) * step; t <= yr[1]; t += step) {
      g.beginPath(); g.moveTo(G.l, y(t)); g.lineTo(G.r, y(t)); g.stroke();
      g.fillText(fmt(t), G.l - 6, y(t));
    }
    g.strokeStyle = '#b8bfcc'; g.strokeRect(G.l, G.t, G.r - G.l, G.b - G.t);
    g.textAlign = 'center'; g.textBaseline = 'top';
    var r0 = Math.ceil(current.x0), r1 = Math.floor(current.x1);
    var stride = Math.max(1, Math.ceil((r1 - r0 + 1) / Math.max(1, Math.floor((G.r - G.l) / 90))));
    for (var r = Math.ceil(r0 / stride) * stride; r <= r1; r += stride) {
      if (r < 0 || r >= runs.length) continue;
      var px = xOf(G, r);
      g.fillStyle = '#4a5568'; g.fillText(short(runs[r].commit), px, G.b + 5);
      g.fillStyle = '#8a8f99'; g.fillText(day(runs[r]).slice(0, 10), px, G.b + 19);
      g.fillRect(px, G.b, 1, 4);
    }
  }
  function changeMarks(g, G, b) {
    g.font = '600 11px system-ui, sans-serif'; g.textAlign = 'center'; g.textBaseline = 'bottom';
    (b.changes || []).forEach(function (c) {
      var px = xOf(G, b.points[c.point].run - 0.5);
      if (px < G.l || px > G.r) return;
      var colour = c.change > 0 ? '#c0262d' : '#1c7c3a';
      g.strokeStyle = colour; g.fillStyle = colour; g.lineWidth = 1.5;
      g.setLineDash([5, 4]); g.beginPath(); g.moveTo(px, G.t); g.lineTo(px, G.b); g.stroke();
      g.setLineDash([]);
      g.fillText(pct(c.change), Math.min(Math.max(px, G.l + 20), G.r - 20), G.t - 4);
    });
  }

  // ---- hover, click, zoom ----
  function mouse(e) { var r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
  function nearest(G, mx) {
    var pts = current.b.points;
    if (!pts.length || mx < G.l - 8 || mx > G.r + 8) return -1;
    var k = lowerBound(pts, runAt(G, mx)), best = -1, bestD = Infinity;
    [k - 1, k].forEach(function (j) {
      if (j < 0 || j >= pts.length) return;
      var d = Math.abs(xOf(G, pts[j].run) - mx);
      if (d < bestD) { bestD = d; best = j; }
    });
    return bestD <= 24 ? best : -1;
  }
  function pointHref(p) {
    var r = runs[p.run] || {};
    return safeHref(r.report) || httpUrl(r.ci_run_url);
  }
  function showTip(G, k) {
    if (k < 0) { tip.hidden = true; cv.style.cursor = 'crosshair'; return; }
    var p = current.b.points[k], r = runs[p.run] || {}, href = pointHref(p);
    tip.textContent = '';
    tip.appendChild(el('div', null, fmt(p.value) + (interval(p.low, p.high, fmt) ? ' ' + interval(p.low, p.high, fmt) : '')));
    tip.appendChild(el('div', null, 'commit ' + String(r.commit || '')));
    tip.appendChild(el('div', null, day(r) + ' \u00b7 run ' + String(r.run_id || '')));
    if (href) tip.appendChild(el('div', null, safeHref(r.report) ? 'click: its flamegraphs' : 'click: its CI run'));
    tip.hidden = false;
    var px = xOf(G, p.run), py = current.y(p.value), w = tip.offsetWidth, h = tip.offsetHeight;
    var left = px + 14, top = py + 14;
    if (left + w > G.w) left = px - 14 - w;
    if (top + h > G.h) top = py - 14 - h;
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = Math.max(0, top) + 'px';
    cv.style.cursor = href ? 'pointer' : 'crosshair';
  }
  cv.addEventListener('mousemove', function (e) {
    if (!current) return;
    var G = geometry(), m = mouse(e);
    if (current.drag) { current.drag.to = Math.max(G.l, Math.min(G.r, m[0])); tip.hidden = true; draw(); return; }
    var k = nearest(G, m[0]);
    if (k !== current.hover) { current.hover = k; draw(); }
    showTip(G, k);
  });
  cv.addEventListener('mouseleave', function () {
    if (!current) return;
    tip.hidden = true; current.hover = -1; current.drag = null; draw();
  });
  cv.addEventListener('mousedown', function (e) {
    if (!current || e.button !== 0) return;
    var m = mouse(e);
    current.drag = { from: m[0], to: m[0] };
    e.preventDefault();
  });
  cv.addEventListener('mouseup', function (e) {
    if (!current || !current.drag) return;
    var G = geometry(), d = current.drag, m = mouse(e);
    current.drag = null;
    if (Math.abs(d.to - d.from) > 3) {
      zoomTo(runAt(G, Math.min(d.from, d.to)), runAt(G, Math.max(d.from, d.to)));
      return;
    }
    var k = nearest(G, m[0]), href = k >= 0 ? pointHref(current.b.points[k]) : null;
    if (href) window.location.href = href;
  });
  cv.addEventListener('dblclick', reset);
  cv.addEventListener('wheel', function (e) {
    if (!current) return;
    e.preventDefault();
    var G = geometry(), at = runAt(G, mouse(e)[0]), f = e.deltaY > 0 ? 1.25 : 0.8;
    zoomTo(at - (at - current.x0) * f, at + (current.x1 - at) * f);
  }, { passive: false });
  function zoomTo(a, b) {
    var r = fullRange(current.b);
    a = Math.max(r[0], a); b = Math.min(r[1], b);
    if (b - a < 2) { var c = (a + b) / 2; a = Math.max(r[0], c - 1); b = Math.min(r[1], c + 1); }
    current.x0 = a; current.x1 = b; current.hover = -1; tip.hidden = true;
    draw();
  }
  function reset() {
    if (!current) return;
    var r = fullRange(current.b);
    zoomTo(r[0], r[1]);
  }
  $('reset').addEventListener('click', reset);
  var pending = false;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  });

  header();
  $('empty').hidden = benches.length > 0;
  overview();
  var m = /^#b(\d+)$/.exec(location.hash);
  if (m && Number(m[1]) < benches.length) openPlot(Number(m[1]), false);
  document.body.dataset.ready = '1';
  window.historyReadyMs = performance.now();
})();
)js";

}  // namespace

std::string_view page_head() { return kHead; }
std::string_view page_script() { return kScript; }

}  // namespace runner::history
