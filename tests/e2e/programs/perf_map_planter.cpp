// A benchmark that announces itself (integration + its pid, so the runner
// tracks it) and then leaves something at /tmp/perf-<its pid>.map for the
// runner to find when it finalizes, as a JIT or a hostile local user would:
//   perf_map_planter PID_FILE none            nothing
//   perf_map_planter PID_FILE regular         a perf map of its own
//   perf_map_planter PID_FILE fifo            a FIFO
//   perf_map_planter PID_FILE symlink TARGET  a symlink to TARGET
//   perf_map_planter PID_FILE foreign         a perf map owned by nobody
//                                             (65534; needs root)
//   perf_map_planter PID_FILE fill DIR KIB    fills the file system of DIR
//                                             (DIR/filler) until only about
//                                             KIB KiB are left
// It writes its pid to PID_FILE first (the test removes the planted file).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "integrations/client/instrument_hooks.hpp"
#include "tests/e2e/programs/spin.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void planter_hot(int ms) {
  g_sink = g_sink + e2e::spin_for(static_cast<uint64_t>(ms) * 1000000ull, 3);
}

bool write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) ==
            static_cast<ssize_t>(text.size());
  return ::close(fd) == 0 && ok;
}

// Writes DIR/filler until the file system has about keep_kib KiB left.
bool fill(const std::string& dir, uint64_t keep_kib) {
  int fd = ::open((dir + "/filler").c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  static char block[4096];
  while (true) {
    struct statvfs vfs {};
    if (::fstatvfs(fd, &vfs) != 0) break;
    if (static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize <= keep_kib * 1024)
      break;
    if (::write(fd, block, sizeof(block)) != sizeof(block)) break;
  }
  return ::close(fd) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: perf_map_planter PID_FILE MODE [ARG...]\n");
    return 2;
  }
  const std::string mode = argv[2];
  const int32_t pid = static_cast<int32_t>(::getpid());
  if (!write_text(argv[1], std::to_string(pid))) return 3;

  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-e2e", "1.0.0");
  hooks.start_benchmark();
  planter_hot(50);
  hooks.stop_benchmark();
  hooks.set_executed_benchmark(pid, "tests/e2e/programs/perf_map_planter.cpp");

  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  // A file there now was left by an earlier process that had this pid (a
  // Node or Java benchmark's perf map, which nobody removes): not ours to
  // keep, and it would make O_EXCL fail.
  if (mode != "none") ::unlink(map.c_str());
  bool ok = true;
  if (mode == "regular") {
    ok = write_text(map, "1000 10 planted_jit_function\n");
  } else if (mode == "fifo") {
    ok = ::mkfifo(map.c_str(), 0644) == 0;
  } else if (mode == "symlink" && argc > 3) {
    ok = ::symlink(argv[3], map.c_str()) == 0;
  } else if (mode == "foreign") {
    ok = write_text(map, "1000 10 foreign_jit_function\n") &&
         ::chown(map.c_str(), 65534, 65534) == 0;
  } else if (mode == "fill" && argc > 4) {
    ok = fill(argv[3], std::strtoull(argv[4], nullptr, 10));
  } else if (mode != "none") {
    ok = false;
  }
  if (!ok) std::perror(("perf_map_planter " + mode).c_str());
  return ok ? 0 : 4;
}
