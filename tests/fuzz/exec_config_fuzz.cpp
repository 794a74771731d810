// runner.yml / codspeed.yml: the config reader of `runner exec` on any
// document, then the JSON handed to exec-harness for what it accepted.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/exec_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto targets =
      runner::agent::parse_exec_config(text, "runner.yml", "/project");
  if (targets) (void)runner::agent::exec_targets_json(*targets);
  (void)runner::agent::split_shell_words(text);
  return 0;
}
