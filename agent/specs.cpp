#include "agent/specs.hpp"

#include <vector>

namespace runner::agent {
namespace {

std::vector<OptionSpec> profile_options() {
  return {
      {"profile-folder", 0, true, "DIR",
       "Where artifacts go (default: ./runner-profile.<timestamp>)"},
      {"freq", 'F', true, "HZ", "Sampling frequency (default 997)"},
      {"call-graph", 0, true, "MODE",
       "dwarf[,SIZE] (default dwarf,8192; SIZE <= 65528, 8-byte aligned) "
       "or fp"},
      {"event", 0, true, "EVENT",
       "auto (cycles, else cpu-clock), cycles, cpu-clock or task-clock"},
      {"mmap-size", 0, true, "SIZE",
       "Ring buffer per CPU, e.g. 8M, 512K (default: ~0.5 s of samples, "
       "4M for 997 Hz and dwarf,8192)"},
      {"no-tracking-event", 0, false, "",
       "No always-on side-band event: mappings of processes that exec "
       "outside benchmark windows then come from /proc snapshots only"},
      {"no-profile", 0, false, "",
       "Run without FIFOs or sampling (integrations see no runner)"},
      {"allow-no-profile", 0, false, "",
       "If perf_event_open is refused, run the benchmark unprofiled instead "
       "of failing; also accept a run whose benchmarks never reached the "
       "runner over the FIFO"},
      {"allow-empty", 0, false, "",
       "Do not fail when the benchmark produced no results"},
      {"report", 0, false, "", "Run 'runner report' on the folder at the end"},
      {"kill-after", 0, true, "SECONDS",
       "When the runner is interrupted it forwards the signal to the "
       "benchmark, then sends SIGKILL if it still runs SECONDS later "
       "(default 5)"},
      {"fifo-dir", 0, true, "DIR",
       "Create the FIFOs and lock in DIR instead of /tmp (integrations "
       "find them through RUNNER_CTL_FIFO/RUNNER_ACK_FIFO)",
       true},
      {"shared-fifos", 0, false, "",
       "Serve /tmp/runner.{ctl,ack}.fifo to the whole machine under the "
       "lock /tmp/runner.fifo.lock (one runner at a time) instead of in the "
       "benchmark's own mount namespace"},
      {"help", 'h', false, "", "Print this help"},
  };
}

const char* kArtifactsText =
    "Artifacts (in the profile folder):\n"
    "  perf.pipedata                 samples and side-band records (perf "
    "pipe format)\n"
    "  <i>__<name>.symbols.map       symbols of each unique ELF file\n"
    "  <i>__<name>.unwind_data       .eh_frame(+hdr) of each unique ELF file "
    "(bincode V4)\n"
    "  perf.metadata                 per-pid load biases and keys, counters\n"
    "  ExecutionTimestamps.msgpack   benchmark URIs and markers\n"
    "  results/<pid>.json            walltime results written by the "
    "benchmark\n"
    "  runner.log                    the runner's own log\n";

}  // namespace

const CommandSpec& run_spec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "run";
    s.usage = "runner run [OPTIONS] [--] COMMAND [ARGS...]";
    s.summary =
        "Runs COMMAND (no shell) with CODSPEED_ENV=runner,\n"
        "CODSPEED_RUNNER_MODE=walltime and CODSPEED_PROFILE_FOLDER set, serves "
        "the\nrunner FIFOs (/tmp/runner.ctl.fifo, /tmp/runner.ack.fifo), "
        "samples the\nprocess tree inside StartBenchmark/StopBenchmark windows "
        "and writes the\nprofile folder. Exits with the benchmark's exit code "
        "(128+N if killed by\nsignal N, or if the runner was interrupted by "
        "signal N). Processes the\nbenchmark leaves running are killed at the "
        "end.";
    s.options = profile_options();
    s.details = kArtifactsText;
    s.command_after_positional = true;
    return s;
  }();
  return spec;
}

const CommandSpec& exec_spec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "exec";
    s.usage = "runner exec [OPTIONS] [--] COMMAND [ARGS...]";
    s.summary =
        "Runs COMMAND as a walltime benchmark through exec-harness (rounds of\n"
        "spawn + wait), profiled like 'runner run' with every pid of the run "
        "kept.\nWithout COMMAND, the benchmarks come from runner.yml or "
        "codspeed.yml in\nthe working directory ('options:' defaults and a "
        "'benchmarks:' list of\n'exec:' commands).";
    s.options = {
        {"name", 0, true, "NAME", "Benchmark name (default: the command)"},
        {"warmup-time", 0, true, "DUR",
         "Warmup duration (default 1s), e.g. 500ms, 1.5s, 2m or seconds"},
        {"max-time", 0, true, "DUR",
         "Stop after this much time (default 3s when nothing else is set)"},
        {"min-time", 0, true, "DUR", "Run at least this long"},
        {"max-rounds", 0, true, "N", "At most N measured rounds"},
        {"min-rounds", 0, true, "N", "At least N measured rounds"},
    };
    for (auto& opt : profile_options()) s.options.push_back(opt);
    s.details = kArtifactsText;
    s.command_after_positional = true;
    return s;
  }();
  return spec;
}

const CommandSpec& report_spec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "report";
    s.usage = "runner report [OPTIONS] [PROFILE_FOLDER]";
    s.summary =
        "Unwinds and symbolizes every sample of a profile folder from the "
        "folder\nalone and writes, per benchmark, folded stacks, an "
        "interactive flamegraph\nSVG and summary.json into "
        "PROFILE_FOLDER/report/. Default folder: the\nnewest "
        "runner-profile.* in the current directory.";
    s.options = {
        {"no-demangle", 0, false, "", "Keep raw (mangled) symbol names"},
        {"inline", 0, false, "",
         "Expand inlined frames when the original ELF files with DWARF are "
         "present"},
        {"format", 0, true, "FMT",
         "summary (default), perf-script (print samples like perf script) "
         "or speedscope (report/profile.speedscope.json)"},
        {"top", 0, true, "N", "Functions per benchmark in the summary (10)"},
        {"help", 'h', false, "", "Print this help"},
    };
    s.max_positionals = 1;
    return s;
  }();
  return spec;
}

const CommandSpec& doctor_spec() {
  static const CommandSpec spec = [] {
    CommandSpec s;
    s.name = "doctor";
    s.usage = "runner doctor";
    s.summary =
        "Prints what this machine allows (perf_event_paranoid, kptr_restrict, "
        "mlock\nlimits, hardware PMU, a perf_event_open test of each sample "
        "type) and\nwhat the runner will do.";
    s.options = {{"help", 'h', false, "", "Print this help"}};
    return s;
  }();
  return spec;
}

}  // namespace runner::agent
