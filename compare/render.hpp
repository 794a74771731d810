// The human outputs of a comparison: the terminal text and compare.md (for
// a pull request comment or $GITHUB_STEP_SUMMARY). compare.json is
// format::write_compare_report.
#pragma once

#include <string>

#include "format/format.hpp"

namespace runner::compare {

// Aligned columns: benchmark, base, head, change [CI], p, verdict;
// regressions first; the overall verdict with the counts ("verdict regression:
// 1 regression, ..."); then added/removed, noise, and per benchmark the top
// functions.
std::string render_text(const format::CompareReport& report);
// The overall verdict and the counts ("**runner compare: regression**: 1
// regression, ..."), one line per benchmark (what changed, by how much, how
// sure, where the time went), regressions first; the table (benchmark,
// base, head, change with CI, verdict) and the details (tests, p-values,
// top functions, noise) collapsed.
std::string render_markdown(const format::CompareReport& report);

// One benchmark's verdict and change in one line, for the top of its
// differential flamegraph: "regression, +12.3% [+8.0%, +16.5%], p = 0.0012"
// (the reason instead of the change when there is none).
std::string render_headline(const format::BenchmarkComparison& b);

}  // namespace runner::compare
