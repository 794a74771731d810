// The flamegraph SVG (flamegraph_svg.hpp): layout, labels and script, and
// render_flamegraph's frames (a warm colour per name, samples on hover).
#include "report/flamegraph.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "base/base.hpp"
#include "report/flamegraph_svg.hpp"

namespace runner::report {
namespace {

constexpr double kWidth = kFlameWidth;
constexpr double kFrameHeight = 16.0;
constexpr double kPad = kFlamePad;
constexpr double kTop = kLegendTop;  // title, buttons and details line

// Frame labels. The font is a monospace one whose advance is 0.6 em for
// every ASCII glyph (DejaVu Sans Mono, 0.602; Liberation Mono, Menlo, Courier
// New, 0.600; Consolas, 0.55; the generic monospace of most systems is one of
// them). The static labels are cut for kAsciiEm = 0.6 em plus 5% margin per
// ASCII character; any other character counts as two cells (CJK and other
// wide glyphs, which may come from a fallback font) with the same margin.
// The script re-fits labels with real measurements after a zoom.
constexpr double kFontPx = 12.0;
constexpr double kAsciiEm = 0.6 * 1.05;
constexpr double kWideEm = 2 * kAsciiEm;
constexpr double kLabelPad = 3.0;  // between the frame's edges and its label
constexpr const char* kFont =
    "'DejaVu Sans Mono','Liberation Mono',Menlo,Consolas,'Courier New',"
    "monospace";

size_t depth_of(const FlameNode& node) {
  size_t d = 0;
  for (const auto& [name, child] : node.children)
    d = std::max(d, depth_of(*child));
  return d + 1;
}

// Warm palette, stable per name.
std::string color_for(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  int r = 205 + static_cast<int>(h % 50);
  int g = 80 + static_cast<int>((h >> 8) % 140);
  int b = static_cast<int>((h >> 16) % 55);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "rgb(%d,%d,%d)", r, g, b);
  return buf;
}

// The length of the well-formed UTF-8 sequence at `at` (1 for ASCII), or 0
// when the bytes there are not one (XML would reject them). Noncharacters
// U+FFFE and U+FFFF, which XML 1.0 does not allow either, count as invalid.
size_t utf8_sequence(const std::string& s, size_t at) {
  const base::CodePoint cp = base::decode_utf8(s, at);
  return cp.value == 0xFFFE || cp.value == 0xFFFF ? 0 : cp.length;
}

// The label of a frame whose text may take `room` pixels: the whole name
// when it fits the width model (kAsciiEm, kWideEm), else its longest prefix
// (whole characters) that fits with ".." after it, else nothing.
std::string fit_label(const std::string& name, double room) {
  const double ascii = kAsciiEm * kFontPx, wide = kWideEm * kFontPx;
  double used = 0;
  size_t cut = 0;  // bytes of the longest prefix that fits with ".."
  for (size_t at = 0; at < name.size();) {
    const size_t n = utf8_sequence(name, at);
    used += n > 1 ? wide : ascii;  // an invalid byte is written as '?'
    if (used > room) return cut == 0 ? "" : name.substr(0, cut) + "..";
    at += n == 0 ? 1 : n;
    if (used + 2 * ascii <= room) cut = at;
  }
  return name;
}

// What every frame shares: the canvas and how frames look.
struct Layout {
  double height = 0, scale = 0;
  uint64_t total = 1;
  const FlameSvgOptions& options;
};

void emit(const FlameNode& node, double x, int level, const Layout& layout,
          std::string& out) {
  double w = static_cast<double>(node.value) * layout.scale;
  if (w < kFlameMinWidth) return;
  const FrameStyle style = layout.options.style(node, layout.total);
  double y = layout.height - kPad - (level + 1) * kFrameHeight;
  char geometry[160];
  std::snprintf(geometry, sizeof(geometry),
                "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                "fill=\"%s\" rx=\"2\"/>",
                x, y, w, kFrameHeight - 1, style.fill.c_str());
  char label[64];
  std::snprintf(label, sizeof(label), "<text x=\"%.2f\" y=\"%.1f\">",
                x + kLabelPad, y + kFrameHeight - 5);
  std::string name = xml_escape(node.name);
  out += "<g class=\"f\" data-n=\"" + name + "\" data-s=\"" +
         std::to_string(node.value) + "\"><title>" + xml_escape(style.details) +
         "</title>" + geometry + label +
         xml_escape(fit_label(node.name, w - 2 * kLabelPad)) + "</text></g>\n";
  double child_x = x;
  for (const auto& [child_name, child] : node.children) {
    emit(*child, child_x, level + 1, layout, out);
    child_x += static_cast<double>(child->value) * layout.scale;
  }
}

// Zoom, hover details and search. Frames keep their original geometry and
// static label in data attributes. After a zoom, labels are fitted to the
// new widths with the browser's own text measurements (batched: every write,
// then every read, so layout runs a few times, not once per frame); reset
// restores the static labels.
constexpr const char* kScript = R"JS(
var W = 1200, PAD = 10, LPAD = 3, svg = document.documentElement;
var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
var details = document.getElementById('details');
var matched = document.getElementById('matched');
frames.forEach(function (g) {
  var r = g.querySelector('rect'), t = g.querySelector('text');
  g.dataset.x = r.getAttribute('x'); g.dataset.w = r.getAttribute('width');
  g.dataset.y = r.getAttribute('y'); g.dataset.l = t.textContent;
  g.dataset.tx = t.getAttribute('x');
  g.onmouseover = function () { details.textContent = g.querySelector('title').textContent; };
  g.onmouseout = function () { details.textContent = ' '; };
  g.onclick = function () { zoom(g); };
});
var DOTS = (function () {
  var p = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  p.textContent = '..'; svg.appendChild(p);
  var w = p.getComputedTextLength(); svg.removeChild(p); return w;
})();
// The longest prefix of t's text that fits `room` with '..' after it ('' if
// none), or null when the whole text fits.
function prefix(t, room) {
  var n = t.textContent;
  if (t.getComputedTextLength() <= room) return null;
  var lo = 0, hi = n.length;
  while (lo < hi) {
    var mid = Math.ceil((lo + hi) / 2);
    if (t.getSubStringLength(0, mid) + DOTS <= room) lo = mid; else hi = mid - 1;
  }
  if (lo > 0 && /[\uD800-\uDBFF]/.test(n.charAt(lo - 1))) lo--;
  return lo === 0 ? '' : n.slice(0, lo) + '..';
}
function fit(list) {
  var todo = [];
  list.forEach(function (g) {
    var r = g.querySelector('rect'), t = g.querySelector('text');
    var room = parseFloat(r.getAttribute('width')) - 2 * LPAD;
    var show = g.style.display !== 'none' && room > DOTS;
    t.setAttribute('x', parseFloat(r.getAttribute('x')) + LPAD);
    t.textContent = show ? g.dataset.n : '';
    if (show) todo.push({ t: t, room: room });
  });
  todo.forEach(function (e) { e.cut = prefix(e.t, e.room); });
  todo.forEach(function (e) { if (e.cut !== null) e.t.textContent = e.cut; });
  todo.forEach(function (e) {
    var n = e.t.textContent;
    while (n !== '' && e.t.getComputedTextLength() > e.room) {
      n = n.length > 3 ? n.slice(0, -3) + '..' : '';
      e.t.textContent = n;
    }
  });
}
function zoom(target) {
  var zx = parseFloat(target.dataset.x), zw = parseFloat(target.dataset.w);
  var zy = parseFloat(target.dataset.y), scale = (W - 2 * PAD) / zw;
  frames.forEach(function (g) {
    var x = parseFloat(g.dataset.x), w = parseFloat(g.dataset.w);
    var y = parseFloat(g.dataset.y), r = g.querySelector('rect');
    var inside = x >= zx - 1e-6 && x + w <= zx + zw + 1e-6;
    var below = y > zy && x <= zx + 1e-6 && x + w >= zx + zw - 1e-6;
    if (inside && y <= zy) {
      r.setAttribute('x', PAD + (x - zx) * scale); r.setAttribute('width', w * scale);
      g.style.display = ''; g.style.opacity = '';
    } else if (below) {
      r.setAttribute('x', PAD); r.setAttribute('width', W - 2 * PAD);
      g.style.display = ''; g.style.opacity = '0.5';
    } else {
      g.style.display = 'none';
    }
  });
  fit(frames);
  document.getElementById('unzoom').style.opacity = '1';
}
function unzoom() {
  frames.forEach(function (g) {
    var r = g.querySelector('rect'), t = g.querySelector('text');
    r.setAttribute('x', g.dataset.x); r.setAttribute('width', g.dataset.w);
    t.setAttribute('x', g.dataset.tx); t.textContent = g.dataset.l;
    g.style.display = ''; g.style.opacity = '';
  });
  document.getElementById('unzoom').style.opacity = '0';
}
function search() {
  var term = prompt('Search (regular expression)', '');
  if (term === null) return;
  var re; try { re = new RegExp(term); } catch (e) { alert(e); return; }
  var spans = [], total = 0;
  frames.forEach(function (g) {
    var r = g.querySelector('rect'), hit = term !== '' && re.test(g.dataset.n);
    if (!g.dataset.fill) g.dataset.fill = r.getAttribute('fill');
    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : g.dataset.fill);
    if (hit) spans.push([parseFloat(g.dataset.x), parseFloat(g.dataset.w), parseFloat(g.dataset.s)]);
  });
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var end = -1;
  spans.forEach(function (s) { if (s[0] >= end - 1e-6) { total += s[2]; end = s[0] + s[1]; } });
  var all = parseFloat(svg.dataset.total);
  matched.textContent = term === '' ? ' ' : 'Matched: ' + (100 * total / all).toFixed(2) + '%';
}
)JS";

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t n = utf8_sequence(text, at);
    const char c = text[at];
    if (n > 1) {
      out.append(text, at, n);
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (n == 0 || (static_cast<unsigned char>(c) < 0x20 && c != '\t')) {
      out += '?';  // not UTF-8, or a control character XML 1.0 forbids
    } else {
      out += c;
    }
    at += n == 0 ? 1 : n;
  }
  return out;
}

FlameNode build_flame_tree(const std::vector<FoldedStack>& stacks) {
  FlameNode root;
  root.name = "all";
  for (const auto& stack : stacks) {
    root.value += stack.count;
    FlameNode* node = &root;
    for (const auto& frame : stack.frames) {
      auto& child = node->children[frame];
      if (!child) {
        child = std::make_unique<FlameNode>();
        child->name = frame;
      }
      child->value += stack.count;
      node = child.get();
    }
  }
  return root;
}

bool flame_node_drawn(const FlameNode& node, uint64_t total) {
  const double scale =
      (kWidth - 2 * kPad) / static_cast<double>(std::max<uint64_t>(total, 1));
  return static_cast<double>(node.value) * scale >= kFlameMinWidth;
}

std::string render_flame_svg(const FlameNode& root,
                             const FlameSvgOptions& options) {
  size_t depth = depth_of(root);
  const double top = kTop + (options.legend.empty() ? 0 : kLegendHeight);
  double height = top + static_cast<double>(depth) * kFrameHeight + 2 * kPad;
  uint64_t total = std::max<uint64_t>(root.value, 1);
  std::string out;
  char head[1024];
  std::snprintf(
      head, sizeof(head),
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\" "
      "data-total=\"%llu\">\n"
      "<style>text{font-family:%s;font-size:%.0fpx;fill:#000}"
      "g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
      "#unzoom,#search{cursor:pointer}</style>\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n",
      kWidth, height, kWidth, height, static_cast<unsigned long long>(total),
      kFont, kFontPx);
  out += head;
  out +=
      "<text x=\"600\" y=\"20\" text-anchor=\"middle\" "
      "style=\"font-size:15px\">" +
      xml_escape(options.title) + "</text>\n";
  out +=
      "<text id=\"unzoom\" x=\"10\" y=\"20\" style=\"opacity:0\" "
      "onclick=\"unzoom()\">Reset Zoom</text>\n";
  out +=
      "<text id=\"search\" x=\"1110\" y=\"20\" onclick=\"search()\">"
      "Search</text>\n";
  out += "<text id=\"details\" x=\"10\" y=\"40\"> </text>\n";
  out += "<text id=\"matched\" x=\"1090\" y=\"40\"> </text>\n";
  out += options.legend;
  const Layout layout{height, (kWidth - 2 * kPad) / static_cast<double>(total),
                      total, options};
  emit(root, kPad, 0, layout, out);
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

// A warm colour per name; hover: samples and their share of all.
std::string render_flamegraph(const std::string& title,
                              const std::vector<FoldedStack>& stacks) {
  FlameSvgOptions options;
  options.title = title;
  options.style = [](const FlameNode& node, uint64_t total) {
    char pct[32];
    std::snprintf(
        pct, sizeof(pct), "%.2f",
        100.0 * static_cast<double>(node.value) / static_cast<double>(total));
    return FrameStyle{color_for(node.name), node.name + " (" +
                                                std::to_string(node.value) +
                                                " samples, " + pct + "%)"};
  };
  return render_flame_svg(build_flame_tree(stacks), options);
}

}  // namespace runner::report
