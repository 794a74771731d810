// compare.json: the bytes read by format::read_compare_report; what it
// accepts must write and read back equal, and render as text and markdown.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compare/render.hpp"
#include "format/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto read = runner::format::read_compare_report(text);
  if (!read) {
    if (read.error().message().rfind("compare.json: ", 0) != 0) std::abort();
    return 0;
  }
  // The parser takes valid UTF-8 and finite numbers only: nothing is
  // replaced or nulled on the way back.
  auto again = runner::format::read_compare_report(
      runner::format::write_compare_report(*read));
  if (!again || !(*again == *read)) std::abort();
  (void)runner::compare::render_text(*read);
  (void)runner::compare::render_markdown(*read);
  return 0;
}
