// Sends garbage frames on the runner's control FIFO (the runner answers
// none of them, like CodSpeed's), then behaves like a normal benchmark
// through the client library.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"
#include "integrations/results/walltime_results.hpp"

namespace {

// Writes one frame and waits (300 ms) for one reply frame; returns its tag,
// or -1 when none came.
int send_raw(int ctl, int ack, const std::vector<uint8_t>& frame) {
  if (write(ctl, frame.data(), frame.size()) !=
      static_cast<ssize_t>(frame.size()))
    return -1;
  std::vector<uint8_t> buf;
  for (int waited = 0; waited < 30 && buf.size() < 8; ++waited) {
    pollfd p{ack, POLLIN, 0};
    poll(&p, 1, 10);
    uint8_t tmp[64];
    ssize_t n = read(ack, tmp, sizeof(tmp));
    if (n > 0) buf.insert(buf.end(), tmp, tmp + n);
  }
  if (buf.size() < 8) return -1;
  return buf[4] | (buf[5] << 8) | (buf[6] << 16) | (buf[7] << 24);
}

}  // namespace

int main() {
  const char* ctl_path = std::getenv("RUNNER_CTL_FIFO");
  const char* ack_path = std::getenv("RUNNER_ACK_FIFO");
  if (ctl_path == nullptr) ctl_path = "/tmp/runner.ctl.fifo";
  if (ack_path == nullptr) ack_path = "/tmp/runner.ack.fifo";
  int ctl = open(ctl_path, O_RDWR | O_NONBLOCK);
  int ack = open(ack_path, O_RDWR | O_NONBLOCK);
  if (ctl < 0 || ack < 0) {
    std::perror("garbage_client: open fifo");
    return 1;
  }
  // Unknown tag 99, then a truncated CurrentBenchmark, then invalid UTF-8.
  int r1 = send_raw(ctl, ack, {4, 0, 0, 0, 99, 0, 0, 0});
  int r2 = send_raw(ctl, ack, {6, 0, 0, 0, 0, 0, 0, 0, 1, 2});
  int r3 = send_raw(ctl, ack, {17, 0, 0, 0, 0, 0, 0, 0, 1, 0,   0,
                               0,  1, 0, 0, 0, 0, 0, 0, 0, 0xff});
  std::printf("garbage replies: %d %d %d\n", r1, r2, r3);
  close(ctl);
  close(ack);
  if (r1 != -1 || r2 != -1 || r3 != -1) return 4;  // no reply to garbage

  runner::client::InstrumentHooks hooks;
  if (!hooks.instrumented()) return 5;
  hooks.set_integration("runner-e2e", "1.0.0");
  hooks.start_benchmark();
  usleep(20000);
  hooks.stop_benchmark();
  int32_t pid = static_cast<int32_t>(getpid());
  hooks.set_executed_benchmark(pid,
                               "tests/e2e/programs/garbage_client.cpp::ok");
  runner::results::BenchmarkResult r;
  r.name = "ok";
  r.uri = "tests/e2e/programs/garbage_client.cpp::ok";
  std::vector<uint64_t> rounds{20000000};
  r.stats = runner::results::compute_stats(rounds);
  std::vector<runner::results::BenchmarkResult> results{r};
  return runner::results::write_results(
             {"runner-e2e", "1.0.0", static_cast<uint32_t>(pid)}, results)
             ? 0
             : 1;
}
