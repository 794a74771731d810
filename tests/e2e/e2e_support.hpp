// Helpers for end-to-end tests: run the real binaries (paths come from the
// environment set by meson), capture their output, decode artifacts with
// independent decoders (nlohmann json / from_msgpack).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/perf_events.hpp"

namespace runner::testing {

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv (no shell) with extra "K=V" environment entries (replacing
// inherited ones of the same name), captures stdout/stderr, kills it after
// timeout_s.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {},
                          const std::string& cwd = "", int timeout_s = 180);

// argv of `runner SUBCOMMAND --profile-folder FOLDER --fifo-dir FIFO_DIR
// EXTRA... -- COMMAND...` (no `--` when COMMAND is empty).
std::vector<std::string> runner_argv(const std::string& subcommand,
                                     const std::string& folder,
                                     const std::string& fifo_dir,
                                     const std::vector<std::string>& extra,
                                     const std::vector<std::string>& command);

// Path of a built binary from the environment variable `var` (fails the
// test when unset).
std::string binary(const char* var);

// The runner ($RUNNER_BIN) with `args` and extra "K=V" environment entries,
// as run_process runs it.
ProcessResult run_runner(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {},
                         int timeout_s = 180);

nlohmann::json read_json_file(const std::string& path);
nlohmann::json read_msgpack_file(const std::string& path);
bool file_exists(const std::string& path);
std::vector<std::string> list_dir(const std::string& dir);

}  // namespace runner::testing

namespace runner::testing {

struct PerfFrame {
  uint64_t ip = 0;
  std::string sym;  // "[unknown]" when perf could not resolve it
  std::string dso;
};

struct PerfSample {
  std::string comm;
  int pid = 0, tid = 0;
  uint64_t time_ns = 0;
  std::vector<PerfFrame> frames;  // leaf first
};

// Parses `perf script --ns -F comm,pid,tid,time,ip,sym,dso` output (also our
// `runner report --format perf-script`): a header line per sample, then one
// indented line per frame, blank line between samples.
std::vector<PerfSample> parse_perf_script(const std::string& text);

// Runs `perf script` on a pipedata file; fails the test on a non-zero exit.
ProcessResult perf_script(const std::string& pipedata,
                          const std::vector<std::string>& extra = {});

}  // namespace runner::testing
