#include "agent/cli.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "agent/commands.hpp"
#include "agent/specs.hpp"
#include "base/log.hpp"
#include "config.h"

namespace runner::agent {
namespace {

std::string top_help() {
  return "Usage: runner <COMMAND> [OPTIONS]\n"
         "\n"
         "A walltime profiling agent for benchmarks: runs a benchmark, speaks "
         "the\nCodSpeed runner FIFO protocol with it, samples its process tree "
         "with\nperf_event_open inside benchmark windows and writes an "
         "upload-ready\nprofile folder.\n"
         "\n"
         "Commands:\n"
         "  run      Run a benchmark command under the runner\n"
         "  exec     Run any command as a benchmark (through exec-harness)\n"
         "  report   Flamegraphs and summaries from a profile folder\n"
         "  doctor   What this machine allows and what the runner will do\n"
         "\n"
         "Options:\n"
         "  -h, --help      Print this help\n"
         "  -V, --version   Print the version\n"
         "\n"
         "Run 'runner <COMMAND> --help' for a command's options.\n"
         "Environment: RUNNER_LOG=debug or "
         "RUNNER_LOG=fifo:debug,profiler:info\n";
}

}  // namespace

int run_main(int argc, char** argv) {
  base::configure_logging_from_env();
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) {
      std::fputs(top_help().c_str(), stderr);
      return 2;
    }
    const std::string& cmd = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::fputs(top_help().c_str(), stdout);
      return 0;
    }
    if (cmd == "-V" || cmd == "--version") {
      std::printf("runner %s\n", RUNNER_VERSION);
      return 0;
    }
    if (cmd == "run") return run_command(rest);
    if (cmd == "exec") return exec_command(rest);
    if (cmd == "report") return report_command(rest);
    if (cmd == "doctor") return doctor_command(rest);
    std::fprintf(stderr, "runner: unknown command '%s' (see 'runner --help')\n",
                 cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runner: fatal: %s\n", e.what());
    return 1;
  }
}

}  // namespace runner::agent
