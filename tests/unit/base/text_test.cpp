#include "base/text.hpp"

#include <string_view>

#include <doctest/doctest.h>

using runner::base::take_item;

TEST_SUITE("base") {
  TEST_CASE("take_item walks a comma-separated list") {
    std::string_view rest = "fifo:debug,,profiler";
    CHECK(take_item(rest, ',') == "fifo:debug");
    CHECK(rest == ",profiler");
    CHECK(take_item(rest, ',').empty());  // an empty item between commas
    CHECK(take_item(rest, ',') == "profiler");
    CHECK(rest.empty());
  }

  TEST_CASE("take_item on a trailing separator leaves nothing") {
    std::string_view rest = "a,";
    CHECK(take_item(rest, ',') == "a");
    CHECK(rest.empty());
    CHECK(take_item(rest, ',').empty());
  }
}

TEST_SUITE("base") {
  using runner::base::decode_utf8;
  using runner::base::first_invalid_utf8;
  using runner::base::printable_text;
  using runner::base::replace_invalid_utf8;
  constexpr auto npos = std::string_view::npos;

  TEST_CASE("decode_utf8: code points of every length, strictly") {
    CHECK(decode_utf8("A", 0).value == U'A');
    CHECK(decode_utf8("A", 0).length == 1);
    CHECK(decode_utf8("\xC3\xBC", 0).value == U'\u00FC');
    CHECK(decode_utf8("\xE6\x97\xA5", 0).value == U'\u65E5');
    CHECK(decode_utf8("\xF0\x9F\x98\x80", 0).value == U'\U0001F600');
    CHECK(decode_utf8("\xF0\x9F\x98\x80", 0).length == 4);
    // Not well-formed: length 0.
    for (std::string_view bad :
         {"\x80", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80",
          "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF",
          "\xC3", "\xE6\x97", "\xC3\x28"})
      CHECK_MESSAGE(decode_utf8(bad, 0).length == 0, bad);
    CHECK(decode_utf8("", 0).length == 0);
    CHECK(decode_utf8("ab", 2).length == 0);  // past the end
  }

  TEST_CASE("first_invalid_utf8 and replace_invalid_utf8") {
    CHECK(first_invalid_utf8("plain \xC3\xBC\xE6\x97\xA5") == npos);
    CHECK(first_invalid_utf8("ab\xFF"
                             "c") == 2);
    CHECK(first_invalid_utf8("\xE6\x97") == 0);  // cut by the end
    CHECK(replace_invalid_utf8("fib\xFF") == "fib\xEF\xBF\xBD");
    // Each bad byte is one U+FFFD; good sequences around them are kept.
    CHECK(replace_invalid_utf8("\xC3\xBC\x80\x80\xE6\x97") ==
          "\xC3\xBC\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(replace_invalid_utf8("ok") == "ok");
  }

  TEST_CASE("printable_text: controls, bidi controls and bad bytes shown") {
    CHECK(printable_text("a\tb\nc\rd") == "a b c d");
    CHECK(printable_text("\x1b[31mred") == "\xEF\xBF\xBD[31mred");
    CHECK(printable_text("\x7f\xC2\x85") == "\xEF\xBF\xBD\xEF\xBF\xBD");
    // U+202E (right-to-left override), U+2066 (isolate), U+200F (RLM).
    CHECK(printable_text("ab\xE2\x80\xAE"
                         "cd\xE2\x81\xA6"
                         "e\xE2\x80\x8F") ==
          "ab\xEF\xBF\xBD"
          "cd\xEF\xBF\xBD"
          "e\xEF\xBF\xBD");
    CHECK(printable_text("x\xFFy") == "x\xEF\xBF\xBDy");
    // Other characters pass: accents, CJK, emoji, zero-width joiner.
    const std::string_view kept =
        "\xC3\xBC \xE6\x97\xA5 \xF0\x9F\x98\x80 \xE2\x80\x8D";
    CHECK(printable_text(kept) == kept);
  }
}
