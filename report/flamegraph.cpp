#include "report/flamegraph.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

namespace runner::report {
namespace {

constexpr double kWidth = 1200.0;
constexpr double kFrameHeight = 16.0;
constexpr double kPad = 10.0;
constexpr double kTop = 50.0;      // title, buttons and details line
constexpr double kMinWidth = 0.1;  // narrower frames are not drawn

struct Node {
  std::string name;
  uint64_t value = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

size_t depth_of(const Node& node) {
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

void emit(const Node& node, double x, int level, double height, double scale,
          uint64_t total, std::string& out) {
  double w = static_cast<double>(node.value) * scale;
  if (w < kMinWidth) return;
  double y = height - kPad - (level + 1) * kFrameHeight;
  char geometry[160];
  std::snprintf(geometry, sizeof(geometry),
                "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                "fill=\"%s\" rx=\"2\"/>",
                x, y, w, kFrameHeight - 1, color_for(node.name).c_str());
  char pct[32];
  std::snprintf(
      pct, sizeof(pct), "%.2f",
      100.0 * static_cast<double>(node.value) / static_cast<double>(total));
  std::string name = xml_escape(node.name);
  out += "<g class=\"f\" data-n=\"" + name + "\" data-s=\"" +
         std::to_string(node.value) + "\"><title>" + name + " (" +
         std::to_string(node.value) + " samples, " + pct + "%)</title>" +
         geometry + "<text x=\"" + std::to_string(x + 3) + "\" y=\"" +
         std::to_string(y + kFrameHeight - 5) + "\"></text></g>\n";
  double child_x = x;
  for (const auto& [child_name, child] : node.children) {
    emit(*child, child_x, level + 1, height, scale, total, out);
    child_x += static_cast<double>(child->value) * scale;
  }
}

// Zoom, hover details and search. Frames keep their original geometry in
// data attributes; labels are fitted to the frame width on every redraw.
constexpr const char* kScript = R"JS(
var W = 1200, PAD = 10, svg = document.documentElement;
var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
var details = document.getElementById('details');
var matched = document.getElementById('matched');
frames.forEach(function (g) {
  var r = g.querySelector('rect');
  g.dataset.x = r.getAttribute('x'); g.dataset.w = r.getAttribute('width');
  g.dataset.y = r.getAttribute('y');
  g.onmouseover = function () { details.textContent = g.querySelector('title').textContent; };
  g.onmouseout = function () { details.textContent = ' '; };
  g.onclick = function () { zoom(g); };
});
function label(g) {
  var r = g.querySelector('rect'), t = g.querySelector('text');
  var w = parseFloat(r.getAttribute('width')), n = g.dataset.n;
  t.setAttribute('x', parseFloat(r.getAttribute('x')) + 3);
  var fit = Math.floor((w - 6) / 7);
  t.textContent = fit < 3 ? '' : (n.length <= fit ? n : n.slice(0, fit - 2) + '..');
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
    label(g);
  });
  document.getElementById('unzoom').style.opacity = '1';
}
function unzoom() {
  frames.forEach(function (g) {
    var r = g.querySelector('rect');
    r.setAttribute('x', g.dataset.x); r.setAttribute('width', g.dataset.w);
    g.style.display = ''; g.style.opacity = ''; label(g);
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
frames.forEach(label);
)JS";

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

std::string render_flamegraph(const std::string& title,
                              const std::vector<FoldedStack>& stacks) {
  Node root;
  root.name = "all";
  for (const auto& stack : stacks) {
    root.value += stack.count;
    Node* node = &root;
    for (const auto& frame : stack.frames) {
      auto& child = node->children[frame];
      if (!child) {
        child = std::make_unique<Node>();
        child->name = frame;
      }
      child->value += stack.count;
      node = child.get();
    }
  }
  size_t depth = depth_of(root);
  double height = kTop + static_cast<double>(depth) * kFrameHeight + 2 * kPad;
  uint64_t total = std::max<uint64_t>(root.value, 1);
  std::string out;
  char head[1024];
  std::snprintf(
      head, sizeof(head),
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\" "
      "data-total=\"%llu\">\n"
      "<style>text{font-family:monospace;font-size:12px;fill:#000}"
      "g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
      "#unzoom,#search{cursor:pointer}</style>\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n",
      kWidth, height, kWidth, height, static_cast<unsigned long long>(total));
  out += head;
  out +=
      "<text x=\"600\" y=\"20\" text-anchor=\"middle\" "
      "style=\"font-size:15px\">" +
      xml_escape(title) + "</text>\n";
  out +=
      "<text id=\"unzoom\" x=\"10\" y=\"20\" style=\"opacity:0\" "
      "onclick=\"unzoom()\">Reset Zoom</text>\n";
  out +=
      "<text id=\"search\" x=\"1110\" y=\"20\" onclick=\"search()\">"
      "Search</text>\n";
  out += "<text id=\"details\" x=\"10\" y=\"40\"> </text>\n";
  out += "<text id=\"matched\" x=\"1090\" y=\"40\"> </text>\n";
  double scale = (kWidth - 2 * kPad) / static_cast<double>(total);
  emit(root, kPad, 0, height, scale, total, out);
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

}  // namespace runner::report
