// Small text helpers: walking separated lists in text ("a,b,c"), and
// making text from outside (a server's answer, a benchmark's name) safe to
// print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runner::base {

// The text of `rest` before the first `separator` (all of it when there is
// none); `rest` keeps what follows that separator.
inline std::string_view take_item(std::string_view& rest, char separator) {
  size_t at = rest.find(separator);
  std::string_view item = rest.substr(0, at);
  rest =
      at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return item;
}

// `text` as one line that is safe to print on a terminal, in a CI log or
// in an error message, whoever wrote it: tab, CR and LF become a space;
// the other C0 controls, DEL and every byte that is not part of
// well-formed UTF-8 are written \xHH; C1 controls (U+0080-U+009F), the
// bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029)
// are written \u{HHHH}. Everything else, backslashes included, is kept.
// At most `max_bytes` of `text` are read, cut at a character boundary,
// and "..." is appended when something was cut.
std::string printable_text(std::string_view text, size_t max_bytes = SIZE_MAX);

// True when printable_text would print `text` unchanged (no control or
// bidirectional character, well-formed UTF-8).
bool is_printable_text(std::string_view text);

}  // namespace runner::base
