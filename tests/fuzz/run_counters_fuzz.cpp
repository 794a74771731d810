// runner.counters.json, as `runner compare` reads it from a profile folder
// (a stored run is anyone's input): format's reader. Bad input is an
// error, never a crash; an accepted file writes and reads back to the same
// text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "format/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runner;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto counters = format::read_run_counters(text);
  if (!counters) return 0;
  const std::string written = format::write_run_counters(*counters);
  auto again = format::read_run_counters(written);
  if (!again || format::write_run_counters(*again) != written) std::abort();
  return 0;
}
