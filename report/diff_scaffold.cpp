// SCAFFOLD: moves to the files of the helper that owns the differential
// profiles (report/diff_flamegraph.cpp, ...); this file is deleted.
#include "report/report.hpp"

namespace runner::report {

base::Result<std::vector<BenchmarkStacks>> load_benchmark_stacks(
    const std::string&, std::vector<std::string>&) {
  return base::Error("not implemented yet");
}
std::string render_diff_flamegraph(const std::string&,
                                   const std::vector<FoldedStack>&,
                                   const std::vector<FoldedStack>&) {
  return "";
}
std::vector<format::FunctionShareChange> self_share_changes(
    const std::vector<FoldedStack>&, const std::vector<FoldedStack>&,
    size_t) {
  return {};
}

}  // namespace runner::report
