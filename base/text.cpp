#include "base/text.hpp"

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

std::string printable_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0; at < s.size();) {
    const CodePoint cp = decode_utf8(s, at);
    if (cp.value == '\t' || cp.value == '\n' || cp.value == '\r')
      out += ' ';
    else if (cp.length == 0 || is_control_character(cp.value) ||
             is_bidi_control(cp.value))
      out += kReplacementCharacter;
    else
      out.append(s.substr(at, cp.length));
    at += cp.length == 0 ? 1 : cp.length;
  }
  return out;
}

}  // namespace runner::base
