#include "base/hex.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <doctest/doctest.h>

using runner::base::append_hex;
using runner::base::hex_number;
using runner::base::HexCase;
using runner::base::to_hex;

namespace {

// The oracle: printf's own hex conversion.
std::string printf_hex(const char* format, unsigned long long value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("append_hex writes every byte as printf's %02x and %02X") {
    for (unsigned b = 0; b < 256; ++b) {
      std::string lower = "<", upper = "<";
      append_hex(lower, static_cast<uint8_t>(b));
      append_hex(upper, static_cast<uint8_t>(b), HexCase::kUpper);
      CHECK(lower == "<" + printf_hex("%02llx", b));
      CHECK(upper == "<" + printf_hex("%02llX", b));
    }
  }

  TEST_CASE("to_hex writes bytes in order, two lowercase digits each") {
    const std::vector<uint8_t> bytes = {0x7f, 0x00, 0x01, 0xab, 0xff};
    CHECK(to_hex(bytes) == "7f0001abff");
    CHECK(to_hex({}).empty());
    std::vector<uint8_t> all(256);
    std::string expected;
    for (unsigned b = 0; b < 256; ++b) {
      all[b] = static_cast<uint8_t>(b);
      expected += printf_hex("%02llx", b);
    }
    CHECK(to_hex(all) == expected);
  }

  TEST_CASE("hex_number writes numbers as printf's %llx, zero-padded") {
    const uint64_t values[] = {0,          1,          0xf,
                               0x10,       0xdeadbeef, 0x0123456789abcdefull,
                               UINT64_MAX, 1ull << 63};
    for (const uint64_t v : values) {
      CAPTURE(v);
      CHECK(hex_number(v) == printf_hex("%llx", v));
      CHECK(hex_number(v, 16) == printf_hex("%016llx", v));
      CHECK(hex_number(v, 4, HexCase::kUpper) == printf_hex("%04llX", v));
      CHECK(hex_number(v, 0) == printf_hex("%llx", v));  // at least one digit
    }
    CHECK(hex_number(255) == "ff");
    CHECK(hex_number(255, 4) == "00ff");
    CHECK(hex_number(0x1234, 2) == "1234");  // never cut
  }
}
