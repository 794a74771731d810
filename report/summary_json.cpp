// summary.json: the report's totals and, per benchmark, its counts, its top
// functions and the names of its .folded and .svg files.
#include <nlohmann/json.hpp>

#include "format/format.hpp"
#include "report/output.hpp"

namespace runner::report {
namespace {

using Json = nlohmann::ordered_json;

Json top_list(const std::vector<FunctionCount>& top, uint64_t samples) {
  Json list = Json::array();
  for (const auto& [name, n] : top) {
    list.push_back({{"function", name},
                    {"samples", n},
                    {"percent", std::stod(percent(n, samples))}});
  }
  return list;
}

class SummaryJsonOutput : public Output {
 public:
  explicit SummaryJsonOutput(const ReportDir& dir) : dir_(dir) {}

  void add_benchmark(const BenchmarkProfile& b) override {
    const BenchmarkSummary& s = b.summary;
    Json js = {{"name", b.name},
               {"uri", b.uri},
               {"samples", s.samples},
               {"harness_samples", s.harness_samples},
               {"lost", s.lost},
               {"unwound",
                {{"full", s.unwound_full},
                 {"truncated", s.truncated},
                 {"unknown", s.unknown},
                 {"frame_pointer", s.frame_pointer}}},
               {"top_self", top_list(b.top_self, s.samples)},
               {"top_total", top_list(b.top_total, s.samples)}};
    if (dir_.created) {
      const std::string stem = benchmark_stem(b);
      if (!b.stacks.empty()) {
        js["folded"] = format::ProfileLayout::report_stack_file(
            stem, false, format::ProfileLayout::kReportFolded);
        js["flamegraph"] = format::ProfileLayout::report_stack_file(
            stem, false, format::ProfileLayout::kReportFlamegraph);
      }
      if (!b.harness_stacks.empty()) {
        js["harness_folded"] = format::ProfileLayout::report_stack_file(
            stem, true, format::ProfileLayout::kReportFolded);
        js["harness_flamegraph"] = format::ProfileLayout::report_stack_file(
            stem, true, format::ProfileLayout::kReportFlamegraph);
      }
    }
    benchmarks_.push_back(std::move(js));
  }

  void finish(const ReportTotals& totals,
              std::vector<std::string>& errors) override {
    if (!dir_.created) return;
    const Json summary = {{"folder", totals.folder},
                          {"samples_read", totals.samples_read},
                          {"samples_shown", totals.samples_shown},
                          {"outside_windows", totals.outside_windows},
                          {"filtered_pids", totals.filtered_pids},
                          {"lost_samples", totals.lost},
                          {"benchmarks", std::move(benchmarks_)},
                          {"warnings", totals.warnings}};
    // Names and URIs come from the profile folder and may not be valid
    // UTF-8: invalid bytes are written as U+FFFD (the replacement
    // character) instead of aborting the dump.
    write_output_file(
        dir_.path + "/" + std::string(format::ProfileLayout::kReportSummary),
        summary.dump(2, ' ', false, Json::error_handler_t::replace) + "\n",
        errors);
  }

  std::string files() const override {
    return std::string(format::ProfileLayout::kReportSummary);
  }

 private:
  ReportDir dir_;
  Json benchmarks_ = Json::array();
};

}  // namespace

std::unique_ptr<Output> make_summary_json_output(const ReportDir& dir) {
  return std::make_unique<SummaryJsonOutput>(dir);
}

}  // namespace runner::report
