// .symbols.map lines that broke the format -> parse round trip (found by
// fuzz_symbols_map): a name ending in '\r' lost it when read back, and a
// name holding '\n' was written as two lines (the second could forge a
// symbol).
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

using runner::format::format_symbols_map;
using runner::format::parse_symbols_map;
using runner::format::Symbol;

TEST_SUITE("format") {
  TEST_CASE("a symbol name with a line break stays on one line") {
    const std::vector<Symbol> symbols = {
        {0x1000, 0x10, "evil\n2000 10 forged", 0},
        {0x2000, 0x8, "cr\r", 0},
    };
    const std::string text = format_symbols_map(symbols);
    CHECK(text == "1000 10 evil?2000 10 forged\n2000 8 cr?\n");
    auto parsed = parse_symbols_map(text);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 2);
    CHECK((*parsed)[0].addr == 0x1000);
    CHECK((*parsed)[1].name == "cr?");
  }

  TEST_CASE("what the tolerant parser accepts formats and parses back") {
    // The fuzzer's input: the name is "\r" once the line's CR is dropped.
    auto parsed = parse_symbols_map("0 8 \r\r");
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 1);
    const std::string text = format_symbols_map(*parsed);
    auto again = parse_symbols_map(text);
    REQUIRE(again);
    REQUIRE(again->size() == 1);
    CHECK((*again)[0].size == 8);
    CHECK(format_symbols_map(*again) == text);
  }
}
