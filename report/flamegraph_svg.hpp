// The flamegraph SVG shared by render_flamegraph and render_diff_flamegraph
// (report/ internal): the tree of stacks, the layout (root at the bottom,
// children by name), the static labels fitted to their frames, and the
// script (hover details, search, zoom, label re-fitting). What differs
// between the two is each frame's fill and hover text (FrameStyle) and an
// optional legend row under the details line.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/flamegraph.hpp"

namespace runner::report {

// A node is a path of frames from the root; `value` counts the samples of
// the stacks through it.
struct FlameNode {
  std::string name;
  uint64_t value = 0;
  std::map<std::string, std::unique_ptr<FlameNode>> children;
};

// The tree of `stacks` under a root named "all" (equal stacks summed).
FlameNode build_flame_tree(const std::vector<FoldedStack>& stacks);

// How one frame is drawn: its fill colour and its hover text (plain text,
// escaped when written).
struct FrameStyle {
  std::string fill, details;
};

struct FlameSvgOptions {
  std::string title;
  // Called for every drawn frame with the node and the samples of the root.
  std::function<FrameStyle(const FlameNode& node, uint64_t total)> style;
  // SVG elements of a row between the details line and the frames (its
  // height is kLegendHeight), or "" for no row.
  std::string legend;
};

// Canvas geometry, for legends.
inline constexpr double kFlameWidth = 1200.0;
inline constexpr double kFlamePad = 10.0;
inline constexpr double kLegendTop = 50.0;  // y of the legend row
inline constexpr double kLegendHeight = 22.0;
// Frames narrower than this many pixels are not drawn (nor their children).
inline constexpr double kFlameMinWidth = 0.1;

// Whether `node` is drawn in a flamegraph whose root has `total` samples.
bool flame_node_drawn(const FlameNode& node, uint64_t total);

std::string render_flame_svg(const FlameNode& root,
                             const FlameSvgOptions& options);

}  // namespace runner::report
