// runner.yml / codspeed.yml: the config reader of `runner exec` (yaml-cpp
// and the schema) on any document, then the JSON handed to exec-harness for
// what it accepted, read back as exec-harness would.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/exec_config.hpp"
#include "format/exec_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config =
      runner::agent::parse_exec_config(text, "runner.yml", "/project");
  if (config) {
    auto json = runner::format::write_exec_targets(config->targets);
    auto back = runner::format::read_exec_targets(json);
    // Every target has a non-empty command, so the JSON reads back unless
    // there were none, which the reader refuses.
    if (!config->targets.empty() && !(back && *back == config->targets))
      __builtin_trap();
  }
  (void)runner::agent::split_shell_words(text);
  return 0;
}
