// `runner compare`'s view of where the time went: the differential
// flamegraph (HEAD's stacks, each frame coloured by the change of its share
// against BASE) and the functions whose self-time share changed most.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "report/flamegraph_svg.hpp"
#include "report/report.hpp"

namespace runner::report {
namespace {

// The colour scale: the neutral grey for |delta| below kNeutralBelow (or
// when nothing changed), else the straight mix of neutral and the end
// colour (red grew, blue shrank) in proportion t = |delta| / largest
// |delta| among the drawn frames, channels rounded to integers.
struct Rgb {
  double r, g, b;
};
constexpr Rgb kNeutral{221, 221, 221};
constexpr Rgb kGrew{235, 50, 50};
constexpr Rgb kShrank{60, 110, 235};
constexpr double kNeutralBelow = 0.0005;  // 0.05 percentage points

std::string rgb(const Rgb& c) {
  char buf[32];
  std::snprintf(
      buf, sizeof(buf), "rgb(%d,%d,%d)", static_cast<int>(std::lround(c.r)),
      static_cast<int>(std::lround(c.g)), static_cast<int>(std::lround(c.b)));
  return buf;
}

std::string delta_color(double delta, double max_abs) {
  if (std::fabs(delta) < kNeutralBelow || max_abs <= 0) return rgb(kNeutral);
  const double t = std::min(1.0, std::fabs(delta) / max_abs);
  const Rgb& end = delta > 0 ? kGrew : kShrank;
  return rgb(Rgb{kNeutral.r + t * (end.r - kNeutral.r),
                 kNeutral.g + t * (end.g - kNeutral.g),
                 kNeutral.b + t * (end.b - kNeutral.b)});
}

// "12.34": a share (a fraction) in percent; "+1.23": a change in points.
std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", 100 * share);
  return buf;
}
std::string points(double delta) {
  double pp = 100 * delta;
  if (std::fabs(pp) < 0.005) pp = 0;  // no "-0.00"
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.2f", pp);
  return buf;
}

double share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0
                    : static_cast<double>(part) / static_cast<double>(whole);
}

// Each HEAD node's samples of the same path in BASE (0 when absent), and
// the largest |delta| of the frames drawn.
class BaseShares {
 public:
  BaseShares(const FlameNode& head, const FlameNode& base)
      : head_total_(head.value), base_total_(base.value) {
    match(head, &base);
  }
  double head_share(const FlameNode& node) const {
    return share(node.value, head_total_);
  }
  double base_share(const FlameNode& node) const {
    auto it = base_.find(&node);
    return share(it == base_.end() ? 0 : it->second, base_total_);
  }
  double delta(const FlameNode& node) const {
    return head_share(node) - base_share(node);
  }
  double max_abs_delta() const { return max_abs_; }

 private:
  void match(const FlameNode& head, const FlameNode* base) {
    if (!flame_node_drawn(head, head_total_)) return;
    if (base != nullptr) base_[&head] = base->value;
    max_abs_ = std::max(max_abs_, std::fabs(delta(head)));
    for (const auto& [name, child] : head.children) {
      const FlameNode* other = nullptr;
      if (base != nullptr) {
        auto it = base->children.find(name);
        if (it != base->children.end()) other = it->second.get();
      }
      match(*child, other);
    }
  }

  uint64_t head_total_, base_total_;
  std::unordered_map<const FlameNode*, uint64_t> base_;
  double max_abs_ = 0;
};

// The row under the details line: what the colours mean, and the scale
// from -max to +max in seven swatches.
std::string legend(double max_abs) {
  std::string out =
      "<text x=\"10\" y=\"66\">Frames: HEAD's stacks. Colour: share in HEAD "
      "- share in BASE (red grew, blue shrank)</text>\n";
  constexpr int kSteps = 3;
  constexpr double kSwatch = 70, kLeft = 1190 - (2 * kSteps + 1) * kSwatch;
  for (int i = -kSteps; i <= kSteps; ++i) {
    const double delta = max_abs * i / kSteps;
    const double x = kLeft + (i + kSteps) * kSwatch;
    const std::string text = i == 0 ? "0" : points(delta) + " pp";
    char rect[200];
    std::snprintf(rect, sizeof(rect),
                  "<rect x=\"%.0f\" y=\"54\" width=\"%.0f\" height=\"15\" "
                  "fill=\"%s\"/><text x=\"%.0f\" y=\"66\" "
                  "text-anchor=\"middle\">",
                  x, kSwatch, delta_color(delta, max_abs).c_str(),
                  x + kSwatch / 2);
    out += std::string(rect) + text + "</text>\n";
  }
  return out;
}

}  // namespace

std::string render_diff_flamegraph(const std::string& title,
                                   const std::vector<FoldedStack>& base,
                                   const std::vector<FoldedStack>& head) {
  const FlameNode head_root = build_flame_tree(head);
  const FlameNode base_root = build_flame_tree(base);
  const BaseShares shares(head_root, base_root);
  const double max_abs = shares.max_abs_delta();
  FlameSvgOptions options;
  options.title = title + " (HEAD against BASE)";
  options.style = [&shares, max_abs](const FlameNode& node, uint64_t) {
    const double b = shares.base_share(node), h = shares.head_share(node);
    return FrameStyle{delta_color(h - b, max_abs),
                      node.name + " (base " + pct(b) + "%, head " + pct(h) +
                          "%, difference " + points(h - b) + " pp; " +
                          std::to_string(node.value) + " samples)"};
  };
  options.legend = legend(max_abs);
  return render_flame_svg(head_root, options);
}

std::vector<format::FunctionShareChange> self_share_changes(
    const std::vector<FoldedStack>& base, const std::vector<FoldedStack>& head,
    size_t top) {
  // Per function: leaf samples in BASE and HEAD.
  std::map<std::string, std::pair<uint64_t, uint64_t>> leaf;
  uint64_t totals[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    for (const FoldedStack& s : side == 0 ? base : head) {
      totals[side] += s.count;
      if (s.frames.empty()) continue;
      auto& counts = leaf[s.frames.back()];
      (side == 0 ? counts.first : counts.second) += s.count;
    }
  }
  std::vector<format::FunctionShareChange> out;
  out.reserve(leaf.size());
  for (const auto& [function, counts] : leaf)
    out.push_back({function, share(counts.first, totals[0]),
                   share(counts.second, totals[1])});
  // Stable over the map's name order: ties stay by name.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.head_share - a.base_share) >
           std::fabs(b.head_share - b.base_share);
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace runner::report
