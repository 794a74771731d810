#include "format/numbers.hpp"

#include <charconv>

namespace runner::format {
namespace {

std::optional<uint64_t> parse_base(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return std::nullopt;
  return value;
}

}  // namespace

std::optional<uint64_t> parse_hex(std::string_view text, HexPrefix prefix) {
  if (prefix == HexPrefix::kOptional &&
      (text.starts_with("0x") || text.starts_with("0X")))
    text.remove_prefix(2);
  // from_chars accepts neither a sign nor a prefix for base 16, so what is
  // left must be digits only.
  return parse_base(text, 16);
}

std::optional<uint64_t> parse_dec(std::string_view text) {
  return parse_base(text, 10);
}

}  // namespace runner::format
