// Small text helpers: walking separated lists in text ("a,b,c"), the one
// strict UTF-8 decoder of the project, and the sanitiser of text that came
// from outside (benchmark names, file contents, server answers) before it
// reaches a terminal or a document people read.
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

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// One code point decoded from s[at]: its value and the bytes it takes;
// length 0 when the bytes at `at` are not well-formed UTF-8. Strict (the
// rules of RFC 3629 and of Rust's str::from_utf8): no overlong forms, no
// surrogates, nothing above U+10FFFF, no sequence cut by the end of `s`.
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;
};
CodePoint decode_utf8(std::string_view s, size_t at);

// The offset of the first byte of `s` that does not start a well-formed
// sequence, or std::string_view::npos when `s` is valid UTF-8.
size_t first_invalid_utf8(std::string_view s);

// `s` with each byte that is not part of a well-formed sequence replaced by
// U+FFFD (valid text comes back unchanged).
std::string replace_invalid_utf8(std::string_view s);

// C0 controls, DEL and C1 controls.
bool is_control_character(char32_t c);
// The invisible characters that reorder the text around them (U+061C,
// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069): a name holding them can
// show as another name.
bool is_bidi_control(char32_t c);

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
