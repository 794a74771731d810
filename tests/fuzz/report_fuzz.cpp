// The whole `runner report` pipeline on a byte buffer: the input becomes
// perf.pipedata of a profile folder whose other artifacts (perf.metadata,
// ExecutionTimestamps.msgpack, .symbols.map, .unwind_data) are the fixture
// of tests/fuzz/report_folder/, recorded from a real run; then run_report
// reads, unwinds, symbolizes and attributes the samples and writes every
// output (summary.json, .folded, .svg), and the perf-script format prints
// them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <sstream>

#include "report/report.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/profile";
    std::filesystem::create_directory(dir);
    runner::fuzz::copy_files(RUNNER_FUZZ_SOURCE_DIR "/report_folder", dir);
    return dir;
  }();
  runner::fuzz::write_input(folder + "/perf.pipedata", data, size);
  // Outputs renamed over older ones would be flushed to disk (ext4): start
  // from no report directory.
  std::filesystem::remove_all(folder + "/report");
  runner::report::ReportOptions options;
  options.folder = folder;
  std::ostringstream out, err;
  (void)runner::report::run_report(options, out, err);
  options.format = runner::report::ReportOptions::Format::kPerfScript;
  (void)runner::report::run_report(options, out, err);
  return 0;
}
