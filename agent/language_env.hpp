#pragma once

// The environment the runner adds so that JIT and interpreted languages name
// their own frames and keep them walkable (complete stacks):
//   Node    NODE_OPTIONS      --perf-basic-prof (perf-<pid>.map)
//                             --interpreted-frames-native-stack
//   CPython PYTHONPERFSUPPORT=1 (>= 3.12: perf trampolines, perf-<pid>.map)
//           PYTHON_PERF_JIT_SUPPORT=1 (>= 3.13: the same trampolines with
//             their unwind info, as a jitdump the runner reads)
//   Java    JAVA_TOOL_OPTIONS -XX:+PreserveFramePointer
//             -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
// A variable the user set is extended (list-like ones) or kept (switches),
// never replaced.
#include <string>
#include <vector>

namespace runner::agent {

struct LanguageSupport {
  std::vector<std::string> env;      // the environment, with the additions
  std::vector<std::string> changes;  // "NODE_OPTIONS+=--perf-basic-prof ..."
};

// `env` is a list of KEY=VALUE entries.
LanguageSupport add_language_support(std::vector<std::string> env);

// One line for the run summary: what was set, and how to turn it off.
std::string language_support_line(const std::vector<std::string>& changes);

}  // namespace runner::agent
