// The shared pieces of the file outputs, and the two outputs of the folded
// stacks: .folded text and the flamegraph SVG (rendered by flamegraph.cpp).
#include "report/output.hpp"

#include <cstdio>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::report {

std::string benchmark_stem(const BenchmarkProfile& benchmark) {
  return std::to_string(benchmark.index) + "_" +
         format::ProfileLayout::file_stem(benchmark.name);
}

void write_output_file(const std::string& path, const std::string& data,
                       std::vector<std::string>& errors) {
  if (auto st = base::write_file_atomic(path, data); !st)
    errors.push_back(base::write_error(path, st.error()));
}

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f",
                whole == 0 ? 0.0
                           : 100.0 * static_cast<double>(part) /
                                 static_cast<double>(whole));
  return buf;
}

std::string folded_text(const std::vector<FoldedStack>& stacks) {
  std::string text;
  for (const auto& s : stacks) {
    for (size_t i = 0; i < s.frames.size(); ++i) {
      if (i) text += ';';
      // ';' separates frames: keep it out of names.
      for (char c : s.frames[i]) text += c == ';' ? ':' : c;
    }
    text += ' ' + std::to_string(s.count) + '\n';
  }
  return text;
}

namespace {

// Writes <stem><ext> and <stem>.harness<ext> (when it has stacks) of every
// benchmark, as `render` makes them; errors are kept until finish.
class StackFilesOutput : public Output {
 public:
  using Render = std::string (*)(const BenchmarkProfile&, bool proper);
  StackFilesOutput(const ReportDir& dir, std::string_view ext, Render render)
      : dir_(dir), ext_(ext), render_(render) {}

  void add_benchmark(const BenchmarkProfile& benchmark) override {
    if (!dir_.created) return;
    for (bool proper : {true, false}) {
      if ((proper ? benchmark.stacks : benchmark.harness_stacks).empty())
        continue;
      const std::string path = dir_.path + "/" +
                               format::ProfileLayout::report_stack_file(
                                   benchmark_stem(benchmark), !proper, ext_);
      write_output_file(path, render_(benchmark, proper), errors_);
    }
  }
  void finish(const ReportTotals& /*totals*/,
              std::vector<std::string>& errors) override {
    errors.insert(errors.end(), errors_.begin(), errors_.end());
  }
  std::string files() const override { return "*" + ext_; }

 private:
  ReportDir dir_;
  std::string ext_;
  Render render_;
  std::vector<std::string> errors_;
};

}  // namespace

std::unique_ptr<Output> make_folded_output(const ReportDir& dir) {
  return std::make_unique<StackFilesOutput>(
      dir, format::ProfileLayout::kReportFolded,
      [](const BenchmarkProfile& b, bool proper) {
        return folded_text(proper ? b.stacks : b.harness_stacks);
      });
}

std::unique_ptr<Output> make_flamegraph_output(const ReportDir& dir) {
  return std::make_unique<StackFilesOutput>(
      dir, format::ProfileLayout::kReportFlamegraph,
      [](const BenchmarkProfile& b, bool proper) {
        return render_flamegraph(b.name + (proper ? "" : " (harness)"),
                                 proper ? b.stacks : b.harness_stacks);
      });
}

}  // namespace runner::report
