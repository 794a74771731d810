// Hostile, dead and concurrent clients of the runner's FIFOs, for
// hostile_client_test.cpp. Usage:
//
//   fifo_clients ACT[,ACT...] [-- PROGRAM ARGS...]
//
// runs each act in order, then (if given) execs PROGRAM. Acts:
//   ff           writes ff ff ff ff (a 4 GiB length) on the ctl FIFO
//   cut-header   a child writes 2 bytes of a frame header and dies
//   cut-payload  a child writes 16 of the 24 bytes of an AddMarker and dies
//   no-read      a child sends PingPerf and dies once its Ack is in the ack
//                FIFO, without reading it
//   flood:N      a child sends N PingPerf without reading any reply and dies
//   results-only writes results/<pid>.json without talking to the runner
//   stress:P:N   P processes, each: handshake, SetIntegration, N-2 markers,
//                CurrentBenchmark, every reply checked (exit 1 on a failure)
//   pids:N       announces N distinct pids that do not exist
//   parallel:P   runs P copies of PROGRAM at once instead of exec'ing it
// Each raw act waits until the runner has read its bytes (FIONREAD of the
// ctl FIFO is 0), so the next client really comes after it.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"
#include "integrations/results/walltime_results.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : fallback;
}

int open_fifo(const char* env, const char* fallback) {
  std::string path = env_or(env, fallback);
  int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    std::perror(("fifo_clients: open " + path).c_str());
    std::exit(3);
  }
  return fd;
}

int open_ctl() { return open_fifo("RUNNER_CTL_FIFO", "/tmp/runner.ctl.fifo"); }
int open_ack() { return open_fifo("RUNNER_ACK_FIFO", "/tmp/runner.ack.fifo"); }

int unread(int fd) {
  int n = 0;
  return ::ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

// Waits (10 s at most) until `done()`; exits 4 when it never is.
template <typename F>
void wait_until(const char* what, F done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::fprintf(stderr, "fifo_clients: timed out waiting for %s\n", what);
  std::exit(4);
}

void write_raw(int fd, const Bytes& bytes) {
  if (::write(fd, bytes.data(), bytes.size()) !=
      static_cast<ssize_t>(bytes.size())) {
    std::perror("fifo_clients: write");
    std::exit(3);
  }
}

// One write on the ctl FIFO, then wait until the runner has read it.
void raw_act(const Bytes& bytes) {
  int ctl = open_ctl();
  write_raw(ctl, bytes);
  wait_until("the runner to read the ctl FIFO",
             [ctl] { return unread(ctl) == 0; });
  ::close(ctl);
}

// A child process that writes `bytes` (a part of a frame) and dies.
void dying_writer(const Bytes& bytes) {
  int ctl = open_ctl();
  pid_t pid = ::fork();
  if (pid == 0) {
    write_raw(ctl, bytes);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  wait_until("the runner to read the cut frame",
             [ctl] { return unread(ctl) == 0; });
  ::close(ctl);
}

void no_read() {
  int ctl = open_ctl();
  int ack = open_ack();
  pid_t pid = ::fork();
  if (pid == 0) {
    write_raw(ctl, {4, 0, 0, 0, 4, 0, 0, 0});  // PingPerf
    wait_until("the Ack", [ack] { return unread(ack) >= 8; });
    ::_exit(0);  // dies without reading it
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(ctl);
  ::close(ack);
}

// A child sends `count` PingPerf requests without ever reading a reply and
// dies: its Acks fill the ack FIFO and the runner's reply queue.
void flood(int count) {
  int ctl = open_ctl();
  pid_t pid = ::fork();
  if (pid == 0) {
    Bytes chunk;
    for (int i = 0; i < 512; ++i)
      chunk.insert(chunk.end(), {4, 0, 0, 0, 4, 0, 0, 0});  // PingPerf
    for (int sent = 0; sent < count; sent += 512) {
      size_t at = 0;
      while (at < chunk.size()) {
        ssize_t n = ::write(ctl, chunk.data() + at, chunk.size() - at);
        if (n > 0) {
          at += static_cast<size_t>(n);
        } else if (n < 0 && errno == EAGAIN) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        } else {
          ::_exit(3);
        }
      }
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(3);
  wait_until("the runner to read the flood",
             [ctl] { return unread(ctl) == 0; });
  ::close(ctl);
}

bool write_one_result(const std::string& uri) {
  runner::results::BenchmarkResult r;
  r.name = "only";
  r.uri = uri;
  std::vector<uint64_t> rounds{1000000};
  r.stats = runner::results::compute_stats(rounds);
  std::vector<runner::results::BenchmarkResult> results{r};
  auto pid = static_cast<uint32_t>(::getpid());
  return runner::results::write_results({"runner-e2e", "1.0.0", pid}, results)
      .has_value();
}

// One client process of the stress act; returns its exit code.
int stress_client(int index, int commands) {
  runner::client::InstrumentHooks hooks;
  if (!hooks.instrumented()) {
    std::fprintf(stderr, "stress client %d: not instrumented\n", index);
    return 10;
  }
  int failed = 0;
  auto pid = static_cast<int32_t>(::getpid());
  failed += !hooks.set_integration("runner-e2e", "1.0.0");
  for (int i = 0; i < commands - 2; ++i) {
    uint8_t type =
        i % 2 == 0 ? MARKER_TYPE_BENCHMARK_START : MARKER_TYPE_BENCHMARK_END;
    failed += !hooks.add_marker(pid, type, static_cast<uint64_t>(i));
  }
  std::string uri = "stress::client" + std::to_string(index);
  failed += !hooks.set_executed_benchmark(pid, uri);
  if (failed != 0)
    std::fprintf(stderr, "stress client %d: %d failed commands\n", index,
                 failed);
  return failed != 0 ? 11 : 0;
}

// Runs `body(i)` in P child processes at once; 0 when all exit 0.
template <typename F>
int in_processes(int processes, F body) {
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(body(i));
    children.push_back(pid);
  }
  int bad = 0;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    bad += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::printf("%d of %d processes failed\n", bad, processes);
  return bad == 0 ? 0 : 1;
}

int announce_pids(int count) {
  runner::client::InstrumentHooks hooks;
  if (!hooks.instrumented()) return 10;
  if (!hooks.set_integration("runner-e2e", "1.0.0")) return 11;
  for (int i = 0; i < count; ++i) {
    // Above the kernel's pid limit (2^22): no such process.
    if (!hooks.set_executed_benchmark((1 << 30) + i, "pids::announce"))
      return 12;
  }
  return 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fifo_clients ACT[,ACT...] [-- PROGRAM...]\n");
    return 2;
  }
  std::vector<char*> program;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      program.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  program.push_back(nullptr);
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  int parallel = 0;
  for (const std::string& act : split(argv[1], ',')) {
    std::vector<std::string> parts = split(act, ':');
    if (act == "ff") {
      raw_act({0xff, 0xff, 0xff, 0xff});
    } else if (act == "cut-header") {
      dying_writer({0x14, 0x00});
    } else if (act == "cut-payload") {
      // AddMarker{pid 12345, RoundStart, ts}: header, tag, pid, type only.
      dying_writer({0x14, 0, 0, 0, 7, 0, 0, 0, 0x39, 0x30, 0, 0, 2, 0, 0, 0});
    } else if (act == "no-read") {
      no_read();
    } else if (parts[0] == "flood" && parts.size() == 2) {
      flood(std::atoi(parts[1].c_str()));
    } else if (act == "results-only") {
      if (!write_one_result("fifo_clients.cpp::results_only")) return 5;
    } else if (parts[0] == "stress" && parts.size() == 3) {
      int commands = std::atoi(parts[2].c_str());
      int rc = in_processes(std::atoi(parts[1].c_str()), [commands](int i) {
        return stress_client(i, commands);
      });
      if (rc != 0) return rc;
    } else if (parts[0] == "pids" && parts.size() == 2) {
      int rc = announce_pids(std::atoi(parts[1].c_str()));
      if (rc != 0) return rc;
    } else if (parts[0] == "parallel" && parts.size() == 2) {
      parallel = std::atoi(parts[1].c_str());
    } else {
      std::fprintf(stderr, "fifo_clients: unknown act '%s'\n", act.c_str());
      return 2;
    }
  }
  if (program[0] == nullptr) return 0;
  if (parallel > 0) {
    return in_processes(parallel, [&program](int) {
      ::execv(program[0], program.data());
      return 127;
    });
  }
  ::execv(program[0], program.data());
  std::perror("fifo_clients: exec");
  return 127;
}
