#include "fifo/server_options.hpp"

#include <cstdlib>

namespace runner::fifo {

ServerOptions server_options_from_env() {
  ServerOptions options;
  auto pick = [](const char* name, std::string& out) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') out = value;
  };
  pick(kCtlFifoEnv, options.ctl_path);
  pick(kAckFifoEnv, options.ack_path);
  pick(kFifoLockEnv, options.lock_path);
  return options;
}

std::vector<std::pair<std::string, std::string>> client_environment(
    const ServerOptions& options) {
  std::vector<std::pair<std::string, std::string>> env;
  if (options.ctl_path != kDefaultCtlPath)
    env.emplace_back(kCtlFifoEnv, options.ctl_path);
  if (options.ack_path != kDefaultAckPath)
    env.emplace_back(kAckFifoEnv, options.ack_path);
  if (options.lock_path != kDefaultLockPath)
    env.emplace_back(kFifoLockEnv, options.lock_path);
  return env;
}

}  // namespace runner::fifo
