// `runner compare`'s view of where the time went: the differential
// flamegraph (the stacks of both sides, each frame coloured by the change
// of its share, or of its time per iteration, against BASE) and the
// functions whose self-time share changed most.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "report/flamegraph.hpp"
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

// A stack's weight in the tree of both sides: its share of its side,
// scaled to 2^50, so that each side weighs the same and a frame's width is
// proportional to the sum (the mean) of its shares in BASE and HEAD; the
// weights of a path add up exactly as its stacks' counts do.
constexpr double kSideWeight = 1125899906842624.0;  // 2^50

void add_weighted(const std::vector<FoldedStack>& side, uint64_t total,
                  std::vector<FoldedStack>& out) {
  for (const FoldedStack& s : side) {
    if (s.count == 0) continue;
    out.push_back({s.frames, static_cast<uint64_t>(std::llround(
                                 kSideWeight * share(s.count, total)))});
  }
}

// Per frame of the tree of both sides: its samples in BASE and in HEAD,
// its shares, and the change that colours it: HEAD's share times
// `time_ratio` (HEAD's time per iteration / BASE's, 1 when unknown) minus
// BASE's share, in BASE's terms.
class SideShares {
 public:
  SideShares(const FlameNode& both, const FlameNode& base,
             const FlameNode& head, double time_ratio)
      : both_total_(both.value),
        base_total_(base.value),
        head_total_(head.value),
        time_ratio_(time_ratio) {
    match(both, &base, &head);
  }
  uint64_t base_samples(const FlameNode& node) const { return at(node).first; }
  uint64_t head_samples(const FlameNode& node) const { return at(node).second; }
  double base_share(const FlameNode& node) const {
    return share(base_samples(node), base_total_);
  }
  double head_share(const FlameNode& node) const {
    return share(head_samples(node), head_total_);
  }
  double delta(const FlameNode& node) const {
    return head_share(node) * time_ratio_ - base_share(node);
  }
  double max_abs_delta() const { return max_abs_; }

 private:
  std::pair<uint64_t, uint64_t> at(const FlameNode& node) const {
    auto it = samples_.find(&node);
    return it == samples_.end() ? std::pair<uint64_t, uint64_t>{0, 0}
                                : it->second;
  }
  static const FlameNode* child_of(const FlameNode* node,
                                   const std::string& name) {
    if (node == nullptr) return nullptr;
    auto it = node->children.find(name);
    return it == node->children.end() ? nullptr : it->second.get();
  }
  void match(const FlameNode& both, const FlameNode* base,
             const FlameNode* head) {
    if (!flame_node_drawn(both, both_total_)) return;
    samples_[&both] = {base != nullptr ? base->value : 0,
                       head != nullptr ? head->value : 0};
    max_abs_ = std::max(max_abs_, std::fabs(delta(both)));
    for (const auto& [name, child] : both.children)
      match(*child, child_of(base, name), child_of(head, name));
  }

  uint64_t both_total_, base_total_, head_total_;
  double time_ratio_;
  std::unordered_map<const FlameNode*, std::pair<uint64_t, uint64_t>> samples_;
  double max_abs_ = 0;
};

// "1.100": HEAD's time per iteration / BASE's.
std::string ratio_text(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", ratio);
  return buf;
}

// What the colours and widths mean (at most ~90 characters, the room
// left of the swatches).
std::string legend_caption(const std::optional<double>& time_ratio) {
  if (!time_ratio)
    return "Colour: share in HEAD - share in BASE (red grew, blue shrank). "
           "Width: mean share";
  return "Colour: time/iteration HEAD - BASE in pp of BASE's (HEAD/BASE " +
         ratio_text(*time_ratio) + "); width: mean share";
}

// The row under the details line: what the colours mean, and the scale
// from -max to +max in seven swatches.
std::string legend(double max_abs, const std::optional<double>& time_ratio) {
  std::string out = "<text x=\"10\" y=\"66\">" +
                    xml_escape(legend_caption(time_ratio)) + "</text>\n";
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

// A frame's hover text: its shares, the change that colours it, and its
// samples on each side.
std::string frame_details(const FlameNode& node, const SideShares& shares,
                          const std::optional<double>& time_ratio) {
  const double b = shares.base_share(node), h = shares.head_share(node);
  const std::string samples =
      "samples: base " + std::to_string(shares.base_samples(node)) + ", head " +
      std::to_string(shares.head_samples(node)) + ")";
  if (!time_ratio)
    return node.name + " (base " + pct(b) + "%, head " + pct(h) +
           "%, difference " + points(h - b) + " pp; " + samples;
  return node.name + " (time per iteration in % of BASE's: base " + pct(b) +
         "%, head " + pct(h * *time_ratio) + "%, difference " +
         points(shares.delta(node)) + " pp; shares " + pct(b) + "% and " +
         pct(h) + "%; " + samples;
}

}  // namespace

std::string render_diff_flamegraph(const std::string& title,
                                   const std::vector<FoldedStack>& base,
                                   const std::vector<FoldedStack>& head,
                                   const DiffContext& context) {
  std::optional<double> ratio = context.time_ratio;
  if (ratio && !(std::isfinite(*ratio) && *ratio > 0)) ratio.reset();
  const FlameNode base_root = build_flame_tree(base);
  const FlameNode head_root = build_flame_tree(head);
  std::vector<FoldedStack> both;
  both.reserve(base.size() + head.size());
  add_weighted(base, base_root.value, both);
  add_weighted(head, head_root.value, both);
  const FlameNode both_root = build_flame_tree(both);
  const SideShares shares(both_root, base_root, head_root, ratio.value_or(1));
  const double max_abs = shares.max_abs_delta();
  FlameSvgOptions options;
  options.title = title + " (HEAD against BASE)";
  if (!context.headline.empty()) options.title += ": " + context.headline;
  options.style = [&shares, &ratio, max_abs](const FlameNode& node, uint64_t) {
    return FrameStyle{delta_color(shares.delta(node), max_abs),
                      frame_details(node, shares, ratio)};
  };
  options.legend = legend(max_abs, ratio);
  return render_flame_svg(both_root, options);
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
