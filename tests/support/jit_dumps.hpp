// Real jitdumps for the tests: a script run under node --perf-prof (V8
// writes jit-<pid>.dump into its working directory) or CPython 3.13's
// -X perf_jit (writes /tmp/jit-<pid>.dump whatever TMPDIR says; removed
// here once read). When the runtime is missing, `skip` says so and the
// caller skips its case (RUNNER_SKIP_CASE).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::testing {

inline constexpr const char* kPython313 =
    "/root/.pyenv/versions/3.13.0/bin/python3.13";

struct JitDumpRun {
  std::string skip;  // why there is no dump (the runtime is missing)
  pid_t pid = -1;
  std::vector<uint8_t> bytes;
};

namespace detail {

// Runs argv in `cwd` to its end (stdout discarded); the child's pid, after
// checking it exited 0.
inline pid_t run_to_end(const std::vector<std::string>& argv,
                        const std::string& cwd, bool* ok) {
  base::UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  base::SpawnOptions options;
  options.argv = argv;
  options.cwd = cwd;
  options.stdout_fd = null.get();
  auto child = base::ChildProcess::spawn(options);
  REQUIRE_MESSAGE(child.has_value(), child.error().what());
  auto status = child->wait();
  REQUIRE(status.has_value());
  *ok = status->success();
  return child->pid();
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  auto text = base::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), text.error().what());
  return std::vector<uint8_t>(text->begin(), text->end());
}

}  // namespace detail

// `script` run by `node --perf-prof -e`.
inline JitDumpRun node_perf_prof_dump(const std::string& script) {
  JitDumpRun out;
  const char* path = std::getenv("PATH");
  auto node = base::find_executable("node", path != nullptr ? path : "");
  if (!node) {
    out.skip = "node is not installed (" + node.error().what() + ")";
    return out;
  }
  TempDir dir;
  bool ok = false;
  out.pid =
      detail::run_to_end({*node, "--perf-prof", "-e", script}, dir.path(), &ok);
  REQUIRE_MESSAGE(ok, "node --perf-prof failed");
  out.bytes =
      detail::read_bytes(dir.file("jit-" + std::to_string(out.pid) + ".dump"));
  return out;
}

// `script` run by `python3.13 -X perf_jit -c`.
inline JitDumpRun python_perf_jit_dump(const std::string& script) {
  JitDumpRun out;
  if (::access(kPython313, X_OK) != 0) {
    out.skip = std::string(kPython313) + " is not installed";
    return out;
  }
  TempDir dir;
  bool ok = false;
  out.pid = detail::run_to_end({kPython313, "-X", "perf_jit", "-c", script},
                               dir.path(), &ok);
  const std::string dump = "/tmp/jit-" + std::to_string(out.pid) + ".dump";
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{dump};
  REQUIRE_MESSAGE(ok, "python3.13 -X perf_jit failed");
  out.bytes = detail::read_bytes(dump);
  return out;
}

}  // namespace runner::testing
