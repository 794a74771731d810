// End-to-end tests of the capacity check (profiler/capacity.hpp) in the
// real runner: the warning before a run whose rate the machine cannot hold,
// none for the default request, and `runner doctor` saying the same.
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "profiler/profiler.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::ProcessResult;
using runner::testing::run_process;
using runner::testing::run_runner;
using runner::testing::runner_argv;
using runner::testing::TempDir;

namespace {

namespace profiler = runner::profiler;

// A run of `true` with `extra` options; what it prints before the run is
// what counts here, not whether sampling was allowed.
ProcessResult run_true(const std::vector<std::string>& extra) {
  TempDir dir;
  return run_process(
      runner_argv("run", dir.file("profile"), dir.path(), extra, {"true"}));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kDrainWarning = "runner: warning: sampling ";
constexpr const char* kBufferWarning = "the locked-memory limit (";

// Why the default request does not fit this machine ("" when it does): a
// machine with very many CPUs or a tiny locked-memory limit is warned about
// rightly, and the "no warning" cases skip there.
std::string default_does_not_fit() {
  const profiler::SamplerOptions options;
  const profiler::MachineLimits limits = profiler::machine_limits();
  auto warnings = profiler::capacity_warnings(
      profiler::estimate_capacity(options, limits), options, limits);
  return warnings.empty() ? "" : warnings.front();
}

}  // namespace

TEST_CASE("a rate the machine cannot hold is warned about before the run") {
  // 100 kHz x 64 KiB stacks is over 6 GB/s per busy CPU: no machine's
  // drain holds that in half a core. (Small buffers: the default for this
  // rate is 64 MiB per CPU, locked.)
  ProcessResult r = run_true(
      {"-F", "100000", "--call-graph", "dwarf,65528", "--mmap-size", "256K"});
  INFO(r.err);
  CHECK(contains(r.err, kDrainWarning));
  CHECK(contains(r.err, "lower --freq (at most about "));
  // Before the run: ahead of anything the benchmark's run prints.
  const size_t warning = r.err.find(kDrainWarning);
  const size_t summary = r.err.find("runner: sampled with");
  if (summary != std::string::npos) CHECK(warning < summary);
}

TEST_CASE("exec warns the same way") {
  TempDir dir;
  ProcessResult r = run_process(
      runner_argv("exec", dir.file("profile"), dir.path(),
                  {"-F", "100000", "--call-graph", "dwarf,65528", "--mmap-size",
                   "256K", "--warmup-time", "0", "--max-rounds", "1"},
                  {"true"}),
      {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
  INFO(r.err);
  CHECK(contains(r.err, kDrainWarning));
}

TEST_CASE("the default request is not warned about") {
  if (std::string why = default_does_not_fit(); !why.empty())
    RUNNER_SKIP_CASE("the default request does not fit here: " + why);
  ProcessResult r = run_true({});
  INFO(r.err);
  CHECK_FALSE(contains(r.err, kDrainWarning));
  CHECK_FALSE(contains(r.err, kBufferWarning));
  // Nor 997 Hz with frame pointers.
  ProcessResult fp = run_true({"--call-graph", "fp"});
  INFO(fp.err);
  CHECK_FALSE(contains(fp.err, kDrainWarning));
}

TEST_CASE("doctor says whether -F and --call-graph fit") {
  ProcessResult over =
      run_runner({"doctor", "-F", "100000", "--call-graph", "dwarf,65528"});
  INFO(over.out, over.err);
  CHECK(over.exit_code == 0);
  CHECK(contains(over.out, "Capacity at 100000 Hz with dwarf,65528 on "));
  CHECK(contains(over.out, "Warning: sampling "));
  CHECK_FALSE(contains(over.out, "This request fits this machine."));
  // A bad size is a usage error, as in run.
  ProcessResult bad = run_runner({"doctor", "--call-graph", "dwarf,7"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "runner doctor: "));

  if (std::string why = default_does_not_fit(); !why.empty())
    RUNNER_SKIP_CASE("the default request does not fit here: " + why);
  ProcessResult plain = run_runner({"doctor"});
  INFO(plain.out);
  CHECK(contains(plain.out, "Capacity at 997 Hz with dwarf,8192 on "));
  CHECK(contains(plain.out, "This request fits this machine."));
  CHECK_FALSE(contains(plain.out, "Warning: "));
}

TEST_CASE("a small locked-memory limit is warned about, with what to raise") {
  if (::geteuid() == 0)
    RUNNER_SKIP_CASE("root has no locked-memory limit for perf buffers");
  // ulimit -l 0: only perf_event_mlock_kb per CPU is left, less than
  // 997 Hz x dwarf,65528 wants unless the machine raised it.
  profiler::SamplerOptions options;
  options.stack_size = 65528;
  profiler::MachineLimits limits = profiler::machine_limits();
  limits.memlock_bytes = 0;
  if (!profiler::estimate_capacity(options, limits).buffers_limited)
    RUNNER_SKIP_CASE("kernel.perf_event_mlock_kb holds these buffers here");
  ProcessResult r =
      run_process({"prlimit", "--memlock=0:0", binary("RUNNER_BIN"), "doctor",
                   "--call-graph", "dwarf,65528"});
  INFO(r.out, r.err);
  if (r.exit_code == -1 || r.exit_code == 127 || contains(r.err, "prlimit"))
    RUNNER_SKIP_CASE("no prlimit (util-linux) to lower ulimit -l");
  CHECK(contains(r.out, std::string("Warning: ") + kBufferWarning));
  CHECK(contains(r.out, "kernel.perf_event_mlock_kb="));
}
