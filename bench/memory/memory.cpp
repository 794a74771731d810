// bench/memory: the runner's peak RSS when the benchmark forks many
// processes, side by side with `perf record -F 997 -k CLOCK_MONOTONIC
// --call-graph dwarf,8192` on the same workload.
//   memory RUNNER FORKER [COUNT...]        (default counts: 1000 4000)
// For each COUNT: `runner exec --warmup-time 0 --max-rounds 1 -- FORKER
// COUNT` and `perf record ... -- FORKER COUNT`, each measured as the peak
// RSS of the largest process of its tree (wait4's ru_maxrss: the runner or
// perf, the forks are tiny), and the runner/perf ratio. The runner finds
// exec-harness next to itself or through RUNNER_EXEC_HARNESS.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Peak {
  int code = -1;
  double rss_mib = 0;
};

// Runs argv (PATH lookup) with its output discarded; the peak RSS of the
// largest process of its tree, from wait4.
Peak run(const std::vector<std::string>& argv) {
  Peak peak;
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {0, 1, 2})
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  pid_t pid = -1;
  int err =
      ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    std::fprintf(stderr, "memory: %s: %s\n", args[0], std::strerror(err));
    return peak;
  }
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  peak.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  peak.rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return peak;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: memory RUNNER FORKER [COUNT...]\n");
    return 2;
  }
  const std::string runner = argv[1], forker = argv[2];
  std::vector<std::string> counts;
  for (int i = 3; i < argc; ++i) counts.push_back(argv[i]);
  if (counts.empty()) counts = {"1000", "4000"};
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/runner-mem.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string tmp = tmpl;

  std::printf(
      "bench/memory: peak RSS (MiB) of `runner exec` and of `perf "
      "record` on a command that forks+execs COUNT processes\n");
  std::printf("%8s %12s %10s %12s\n", "forks", "runner MiB", "perf MiB",
              "runner/perf");
  for (const std::string& count : counts) {
    Peak r = run({runner, "exec", "--warmup-time", "0", "--max-rounds", "1",
                  "--profile-folder", tmp + "/profile", "--fifo-dir", tmp, "--",
                  forker, count});
    std::filesystem::remove_all(tmp + "/profile");
    Peak p = run({"perf", "record", "-q", "-F", "997", "-k", "CLOCK_MONOTONIC",
                  "--call-graph", "dwarf,8192", "-o", tmp + "/perf.data", "--",
                  forker, count});
    ::unlink((tmp + "/perf.data").c_str());
    std::printf("%8s %12.1f %10.1f %12.2f%s\n", count.c_str(), r.rss_mib,
                p.rss_mib, p.rss_mib > 0 ? r.rss_mib / p.rss_mib : 0.0,
                r.code != 0 || p.code != 0 ? "  (a run failed)" : "");
  }
  std::filesystem::remove_all(tmp);
  return 0;
}
