// The strict UTF-8 decoder and printable_text (see text.hpp): escaping what
// could move the cursor, change colours, reorder a line or hide bytes.
#include "base/text.hpp"

#include <algorithm>

#include "base/hex.hpp"

namespace runner::base {

CodePoint decode_utf8(std::string_view s, size_t at) {
  if (at >= s.size()) return {};
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return {lead, 1};
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  if (length == 0 || s.size() - at < length) return {};
  char32_t value = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return {};
    value = (value << 6) | (byte(at + i) & 0x3F);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF))
    return {};
  return {value, length};
}

size_t first_invalid_utf8(std::string_view s) {
  for (size_t at = 0; at < s.size();) {
    if (static_cast<unsigned char>(s[at]) < 0x80) {
      ++at;
      continue;
    }
    const size_t length = decode_utf8(s, at).length;
    if (length == 0) return at;
    at += length;
  }
  return std::string_view::npos;
}

std::string replace_invalid_utf8(std::string_view s) {
  size_t bad = first_invalid_utf8(s);
  if (bad == std::string_view::npos) return std::string(s);
  std::string out(s.substr(0, bad));
  for (size_t at = bad; at < s.size();) {
    const size_t length = decode_utf8(s, at).length;
    if (length == 0) {
      out += kReplacementCharacter;
      ++at;
    } else {
      out.append(s.substr(at, length));
      at += length;
    }
  }
  return out;
}

bool is_control_character(char32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0);
}

bool is_bidi_control(char32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

namespace {

bool escaped_code_point(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x61C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x2028 || c == 0x2029;
}

// Appends the printable form of the character at text[at]; returns its
// length in bytes.
size_t append_printable(std::string_view text, size_t at, std::string& out) {
  const CodePoint cp = decode_utf8(text, at);
  if (cp.length == 0 ||
      (cp.length == 1 && (cp.value < 0x20 || cp.value == 0x7F))) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c == '\t' || c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += "\\x";
      append_hex(out, c, HexCase::kUpper);
    }
    return 1;
  }
  if (escaped_code_point(cp.value)) {
    out += "\\u{" + hex_number(cp.value, 4, HexCase::kUpper) + "}";
  } else {
    out.append(text.substr(at, cp.length));
  }
  return cp.length;
}

}  // namespace

std::string printable_text(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  size_t at = 0;
  while (at < text.size()) {
    const CodePoint cp = decode_utf8(text, at);
    const size_t length = cp.length == 0 ? 1 : cp.length;
    if (at + length > max_bytes) break;
    at += append_printable(text, at, out);
  }
  if (at < text.size()) out += "...";
  return out;
}

bool is_printable_text(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const CodePoint cp = decode_utf8(text, at);
    if (cp.length == 0 || cp.value < 0x20 || cp.value == 0x7F ||
        escaped_code_point(cp.value))
      return false;
    at += cp.length;
  }
  return true;
}

}  // namespace runner::base
