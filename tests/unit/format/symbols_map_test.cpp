// symbols.map text format.
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::format {
namespace {

TEST_SUITE("format") {
  TEST_CASE("symbols map: format is '<addr hex> <size hex> <name>'") {
    std::vector<Symbol> symbols = {
        {0x1000, 0x2a, "_ZN4demo5outerEi"},
        {0xffffffffffffff00ULL, 0x100, "last"},
    };
    CHECK(format_symbols_map(symbols) ==
          "1000 2a _ZN4demo5outerEi\nffffffffffffff00 100 last\n");
    CHECK(format_symbols_map({}).empty());
  }

  TEST_CASE("symbols map: parse round trip, tolerant of bad lines") {
    std::size_t bad = 99;
    auto parsed = parse_symbols_map(
        "1000 2a main\n"
        "zz 10 bad_addr\n"
        "2000 10 name with spaces\r\n"
        "\n"
        "3000 10\n"
        "4000 1 x\n",
        &bad);
    REQUIRE(parsed);
    CHECK(bad == 2);
    REQUIRE(parsed->size() == 3);
    CHECK((*parsed)[0].addr == 0x1000);
    CHECK((*parsed)[0].size == 0x2a);
    CHECK((*parsed)[0].name == "main");
    CHECK((*parsed)[1].name == "name with spaces");
    CHECK((*parsed)[2].addr == 0x4000);
    CHECK(parse_symbols_map("")->empty());
    CHECK_FALSE(parse_symbols_map("garbage\nmore garbage\n"));
    // Overflowing numbers are bad lines, not wrapped values.
    CHECK_FALSE(parse_symbols_map("10000000000000000 1 x\n"));
  }
}

}  // namespace
}  // namespace runner::format
