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
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "tests/support/runtimes.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::testing {

// Bytes written as hex digits ("4883ec08...").
inline std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(
        std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// The UNWINDING_INFO data of a real CPython 3.13.0 x86-64 dump (-X
// perf_jit): 48 bytes of .eh_frame (CIE "zR", FDE), then the 20-byte
// .eh_frame_hdr; the trampoline it describes is 11 bytes long.
inline std::vector<uint8_t> cpython_unwind_info() {
  return from_hex(
      "1400000000000000017a5200017810011b0c070890010000140000001c000000d0ffffff"
      "0b00000000440e10460e0800011b033bccffffff01000000c0ffffffe8ffffff");
}

// The same from node 20 (V8) for a 176-byte TurboFan body (its FDE covers
// 173): 68 bytes of .eh_frame (CIE v3 "zLR", FDE, zero terminator), then
// the hdr.
inline std::vector<uint8_t> v8_unwind_info() {
  return from_hex(
      "1800000000000000037a4c520001781002ff1b0c07089001000000002000000020000000"
      "2cffffffad000000004f0e108602430d06024c0d07410e08520c06100000000001"
      "1b033bb8ffffff010000000cffffffd8ffffff");
}

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
  const std::string python = find_runtime("python3.13");
  if (python.empty()) {
    out.skip = "python3.13 is not installed (PATH, pyenv)";
    return out;
  }
  TempDir dir;
  bool ok = false;
  out.pid = detail::run_to_end({python, "-X", "perf_jit", "-c", script},
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
