#include <doctest/doctest.h>

#include "format/format.hpp"

using runner::format::HexPrefix;
using runner::format::parse_dec;
using runner::format::parse_hex;

TEST_CASE("parse_hex reads whole fields only") {
  CHECK(parse_hex("7f00") == 0x7f00u);
  CHECK(parse_hex("FFFFffffFFFFffff") == UINT64_MAX);
  CHECK_FALSE(parse_hex("1ffffffffffffffff"));  // 17 digits: overflow
  CHECK_FALSE(parse_hex(""));
  CHECK_FALSE(parse_hex("-1"));
  CHECK_FALSE(parse_hex("+1"));
  CHECK_FALSE(parse_hex(" 1"));
  CHECK_FALSE(parse_hex("1g"));
  CHECK_FALSE(parse_hex("0x10"));
  CHECK(parse_hex("0x10", HexPrefix::kOptional) == 0x10u);
  CHECK(parse_hex("0X10", HexPrefix::kOptional) == 0x10u);
  CHECK(parse_hex("10", HexPrefix::kOptional) == 0x10u);
  CHECK_FALSE(parse_hex("0x", HexPrefix::kOptional));
}

TEST_CASE("parse_dec reads whole fields only") {
  CHECK(parse_dec("0") == 0u);
  CHECK(parse_dec("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(parse_dec("18446744073709551616"));
  CHECK_FALSE(parse_dec(""));
  CHECK_FALSE(parse_dec("12a"));
  CHECK_FALSE(parse_dec("-3"));
}
