// Where the runner's FIFOs and lock live, and how the benchmark learns about
// non-default paths (environment variables read by the C client library).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace runner::fifo {

inline constexpr const char* kDefaultCtlPath = "/tmp/runner.ctl.fifo";
inline constexpr const char* kDefaultAckPath = "/tmp/runner.ack.fifo";
inline constexpr const char* kDefaultLockPath = "/tmp/runner.fifo.lock";

inline constexpr const char* kCtlFifoEnv = "RUNNER_CTL_FIFO";
inline constexpr const char* kAckFifoEnv = "RUNNER_ACK_FIFO";
inline constexpr const char* kFifoLockEnv = "RUNNER_FIFO_LOCK";

struct ServerOptions {
  std::string ctl_path = kDefaultCtlPath;  // client -> runner
  std::string ack_path = kDefaultAckPath;  // runner -> client
  std::string lock_path = kDefaultLockPath;
};

// Defaults, overridden by RUNNER_CTL_FIFO / RUNNER_ACK_FIFO /
// RUNNER_FIFO_LOCK when set and non-empty.
ServerOptions server_options_from_env();

// NAME/VALUE pairs to export to the benchmark: only the paths that differ
// from the defaults (CodSpeed clients only know the default paths).
std::vector<std::pair<std::string, std::string>> client_environment(
    const ServerOptions& options);

}  // namespace runner::fifo
