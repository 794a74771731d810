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
}

using runner::base::is_printable_text;
using runner::base::printable_text;

TEST_SUITE("base") {
  TEST_CASE("printable_text escapes what a terminal would act on") {
    CHECK(printable_text("plain text, caf\xC3\xA9 \xE2\x9C\x93") ==
          "plain text, caf\xC3\xA9 \xE2\x9C\x93");
    CHECK(printable_text("a\tb\r\nc") == "a b  c");
    // ESC (a colour, a title change, a cursor move), BEL, NUL, DEL.
    CHECK(printable_text("\x1B[31mred\x1B]0;title\x07") ==
          "\\x1B[31mred\\x1B]0;title\\x07");
    CHECK(printable_text(std::string_view("a\0b\x7F", 4)) == "a\\x00b\\x7F");
    // C1 controls (CSI as U+009B), bidi overrides and isolates, separators.
    CHECK(printable_text("\xC2\x9B"
                         "31m") == "\\u{009B}31m");
    CHECK(printable_text("abc\xE2\x80\xAE"
                         "fdp.exe") == "abc\\u{202E}fdp.exe");
    CHECK(printable_text("\xE2\x81\xA6x\xE2\x81\xA9\xD8\x9C") ==
          "\\u{2066}x\\u{2069}\\u{061C}");
    CHECK(printable_text("\xE2\x80\xA8\xE2\x80\xA9") == "\\u{2028}\\u{2029}");
    // Invalid UTF-8: a stray continuation, a truncated sequence, an
    // overlong '/', a surrogate, past U+10FFFF.
    CHECK(printable_text("\x80x\xE2\x82") == "\\x80x\\xE2\\x82");
    CHECK(printable_text("\xC0\xAF") == "\\xC0\\xAF");
    CHECK(printable_text("\xED\xA0\x80") == "\\xED\\xA0\\x80");
    CHECK(printable_text("\xF4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");
  }

  TEST_CASE("printable_text cuts at a character boundary") {
    CHECK(printable_text("abcdef", 4) == "abcd...");
    CHECK(printable_text("abcdef", 6) == "abcdef");
    // "é" is two bytes: cutting at 2 would split it.
    CHECK(printable_text("a\xC3\xA9z", 2) == "a...");
    CHECK(printable_text("", 0).empty());
  }

  TEST_CASE("is_printable_text agrees with printable_text") {
    CHECK(is_printable_text("runs/abc-1.json \xC3\xA9"));
    CHECK_FALSE(is_printable_text("a\tb"));
    CHECK_FALSE(is_printable_text("\x1B[2J"));
    CHECK_FALSE(is_printable_text("\xE2\x80\xAE"));
    CHECK_FALSE(is_printable_text("\xFF"));
  }
}
