// The file names of a profile folder, in one place. A ProfileLayout is the
// path of one folder; its members spell the path of each artifact in it:
//
//   perf.pipedata                  samples and side-band records
//   perf.metadata                  per-pid modules, keys, counters
//   ExecutionTimestamps.msgpack    benchmark URIs and markers
//   runner.counters.json           CPU time (task-clock), instructions and
//                                  cycles of each benchmark window
//   <index>__<name>.symbols.map    symbols of each unique ELF file
//   <index>__<name>.unwind_data    .eh_frame(+hdr) of each unique ELF file
//   perf-<pid>.map                 JIT symbols copied from /tmp
//   jit-<pid>.timeline             JIT symbols of a jitdump, with their times
//   results/<pid>.json             walltime results of the integrations
//   report/                        what `runner report` writes
//   compare/                       what `runner compare` writes (HEAD's
//                                  folder, unless --out says otherwise)
//
// Nothing here touches the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runner::format {

class ProfileLayout {
 public:
  static constexpr std::string_view kPipedata = "perf.pipedata";
  static constexpr std::string_view kMetadata = "perf.metadata";
  static constexpr std::string_view kExecutionTimestamps =
      "ExecutionTimestamps.msgpack";
  static constexpr std::string_view kRunCounters = "runner.counters.json";
  static constexpr std::string_view kSymbolsMapSuffix = ".symbols.map";
  static constexpr std::string_view kUnwindDataSuffix = ".unwind_data";
  static constexpr std::string_view kResultsDir = "results";
  static constexpr std::string_view kReportDir = "report";
  static constexpr std::string_view kReportSummary = "summary.json";
  static constexpr std::string_view kReportSpeedscope =
      "profile.speedscope.json";
  // Per benchmark in report/: <stem><ext>, and <stem>.harness<ext> for the
  // harness's own samples.
  static constexpr std::string_view kReportFolded = ".folded";
  static constexpr std::string_view kReportFlamegraph = ".svg";
  // `runner compare`'s folder: compare.json, compare.md and
  // <benchmark>.diff.svg per benchmark profiled on both sides.
  static constexpr std::string_view kCompareDir = "compare";
  static constexpr std::string_view kCompareJson = "compare.json";
  static constexpr std::string_view kCompareMarkdown = "compare.md";
  static constexpr std::string_view kCompareDiffSuffix = ".diff.svg";
  // Default profile folders: runner-profile.<timestamp>[.<n>].
  static constexpr std::string_view kDefaultFolderPrefix = "runner-profile.";

  explicit ProfileLayout(std::string folder) : folder_(std::move(folder)) {}

  const std::string& folder() const { return folder_; }
  std::string pipedata() const { return file(kPipedata); }
  std::string metadata() const { return file(kMetadata); }
  std::string execution_timestamps() const {
    return file(kExecutionTimestamps);
  }
  std::string run_counters() const { return file(kRunCounters); }
  // Artifacts of the module `key` (see module_key).
  std::string symbols_map(std::string_view key) const {
    return file(symbols_map_name(key));
  }
  std::string unwind_data(std::string_view key) const {
    return file(unwind_data_name(key));
  }
  // The folder's copy of a process's JIT symbols.
  std::string perf_map(int64_t pid) const { return file(perf_map_name(pid)); }
  // The folder's JIT symbols with their times (from jitdumps).
  std::string jit_timeline(int64_t pid) const {
    return file("jit-" + std::to_string(pid) + ".timeline");
  }
  std::string results_dir() const { return file(kResultsDir); }
  std::string report_dir() const { return file(kReportDir); }

  // `name` (a benchmark's) made safe as part of a file name in the folder:
  // its first kMaxFileStem bytes, each not in [A-Za-z0-9._-] replaced by
  // '_'. report/'s stems and compare/'s .diff.svg names are made of it.
  static constexpr size_t kMaxFileStem = 100;
  static std::string file_stem(std::string_view name);

  static std::string report_stack_file(std::string_view stem, bool harness,
                                       std::string_view ext) {
    return std::string(stem) + (harness ? ".harness" : "") + std::string(ext);
  }

  // "<index>__<file name>": the key of the index-th unique module, named
  // after the last component of its path.
  static std::string module_key(size_t index, std::string_view path);
  static std::string symbols_map_name(std::string_view key) {
    return std::string(key) + std::string(kSymbolsMapSuffix);
  }
  static std::string unwind_data_name(std::string_view key) {
    return std::string(key) + std::string(kUnwindDataSuffix);
  }
  static std::string perf_map_name(int64_t pid) {
    return "perf-" + std::to_string(pid) + ".map";
  }
  // Where a process writes its JIT symbols (the convention names /tmp
  // whatever TMPDIR says).
  static std::string jit_perf_map(int64_t pid) {
    return "/tmp/" + perf_map_name(pid);
  }
  // results/<pid>.json, relative to the folder.
  static std::string result_file_name(uint64_t pid) {
    return std::to_string(pid) + ".json";
  }
  // What a key's file name says about the module's path (for display when
  // the metadata has no path for it): the part after "<index>__".
  static std::string key_file_name(std::string_view key);

 private:
  std::string file(std::string_view name) const {
    return folder_ + "/" + std::string(name);
  }

  std::string folder_;
};

}  // namespace runner::format
