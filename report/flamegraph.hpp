// Self-contained interactive flamegraph SVG (inline CSS + JS, no network):
// hover shows function, samples and percentage; click zooms; Search
// highlights matching frames and shows their share; root at the bottom.
// render_diff_flamegraph (report.hpp) draws the same SVG with other colours
// and hover texts (the shared layout and script: flamegraph_svg.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace runner::report {

struct FoldedStack {
  std::vector<std::string> frames;  // root first
  uint64_t count = 0;
};

std::string render_flamegraph(const std::string& title,
                              const std::vector<FoldedStack>& stacks);

// XML text escaping (also used for titles).
std::string xml_escape(const std::string& text);

}  // namespace runner::report
