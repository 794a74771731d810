// runner.yml / codspeed.yml: the config reader of `runner exec` (yaml-cpp
// and the schema) on any document, then the JSON handed to exec-harness for
// what it accepted, read back as exec-harness would.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/exec_config.hpp"
#include "format/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config =
      runner::agent::parse_exec_config(text, "runner.yml", "/project");
  if (config) {
    auto json = runner::format::write_exec_targets(config->targets);
    auto back = runner::format::read_exec_targets(json);
    // What exec-harness reads back writes the same JSON again (invalid
    // UTF-8 was replaced once, on the first write).
    if (!config->targets.empty() &&
        !(back && runner::format::write_exec_targets(*back) == json))
      __builtin_trap();
  }
  (void)runner::agent::split_shell_words(text);
  return 0;
}
