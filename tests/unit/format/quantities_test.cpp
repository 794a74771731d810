// The one parser of durations, counts, sizes and frequencies.
#include <doctest/doctest.h>

#include "format/format.hpp"

using runner::format::Duration;
using runner::format::format_duration;
using runner::format::parse_count;
using runner::format::parse_duration;
using runner::format::parse_frequency;
using runner::format::parse_size;

namespace {
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
}  // namespace

TEST_CASE("parse_duration: units, bare seconds, blanks") {
  struct Case {
    const char* text;
    int64_t ns;
  };
  for (Case c : {Case{"500ms", 500 * kMs},
                 Case{"1.5s", 1500 * kMs},
                 Case{"2m", 120 * kS},
                 Case{"1h", 3600 * kS},
                 Case{"10us", 10'000},
                 Case{"100ns", 100},
                 Case{"2", 2 * kS},
                 Case{"0.5", 500 * kMs},
                 Case{"0", 0},
                 Case{"-0", 0},
                 Case{"0s", 0},
                 Case{" 1s ", kS},
                 Case{"1m 30s", 90 * kS},
                 Case{"0.1", 100 * kMs},
                 Case{"1.000000001", kS + 1},
                 Case{"3sec", 3 * kS},
                 Case{"1min", 60 * kS},
                 Case{"+2s", 2 * kS},
                 Case{"1\xC2\xB5s", 1000},
                 Case{"9223372036854775807ns", INT64_MAX}}) {
    INFO(c.text);
    auto d = parse_duration(c.text);
    REQUIRE_MESSAGE(d, d.error().message());
    CHECK(d->count() == c.ns);
  }
}

TEST_CASE("parse_duration: bad input says what is allowed") {
  for (const char* bad :
       {"", "  ", "soon", "1x", "-1", "-0.5s", "nan", "inf", "1e3", "s",
        "1.2.3s", "ms500", "99999999999999h", "18446744073709551616ns",
        "9223372036854775808ns", "1s-"}) {
    INFO(bad);
    auto d = parse_duration(bad);
    REQUIRE_FALSE(d);
    CHECK(d.error().message().find("invalid duration '" + std::string(bad) +
                                   "'") == 0);
    CHECK(d.error().message().find("(expected e.g. 500ms, 1.5s") !=
          std::string::npos);
  }
  CHECK(parse_duration("-1").error().message().find("negative") !=
        std::string::npos);
  CHECK(parse_duration("3fortnights")
            .error()
            .message()
            .find("unknown unit 'fortnights'") != std::string::npos);
}

TEST_CASE("format_duration: the largest exact unit, and it round-trips") {
  CHECK(format_duration(Duration(0)) == "0s");
  CHECK(format_duration(Duration(1500 * kMs)) == "1500ms");
  CHECK(format_duration(Duration(2 * kS)) == "2s");
  CHECK(format_duration(Duration(120 * kS)) == "2m");
  CHECK(format_duration(Duration(7200 * kS)) == "2h");
  CHECK(format_duration(Duration(10'000)) == "10us");
  CHECK(format_duration(Duration(kS + 1)) == "1000000001ns");
  for (int64_t ns : {int64_t{1}, 999 * kMs, 61 * kS, 3601 * kS, INT64_MAX}) {
    auto back = parse_duration(format_duration(Duration(ns)));
    REQUIRE(back);
    CHECK(back->count() == ns);
  }
}

TEST_CASE("parse_count: digits only, 0 allowed, overflow refused") {
  CHECK(*parse_count("5") == 5);
  CHECK(*parse_count(" 7 ") == 7);
  CHECK(*parse_count("0") == 0);
  CHECK(*parse_count("18446744073709551615") == UINT64_MAX);
  for (const char* bad :
       {"-5", "5x", "", "+1", "1.5", "0x10", "99999999999999999999999"}) {
    INFO(bad);
    auto n = parse_count(bad, "round count");
    REQUIRE_FALSE(n);
    CHECK(n.error().message().find("invalid round count '" + std::string(bad) +
                                   "'") == 0);
  }
  CHECK(parse_count("99999999999999999999999")
            .error()
            .message()
            .find("too large") != std::string::npos);
}

TEST_CASE("parse_size: bytes and powers of 1024") {
  CHECK(*parse_size("8M") == 8u << 20);
  CHECK(*parse_size("8m") == 8u << 20);
  CHECK(*parse_size("8MiB") == 8u << 20);
  CHECK(*parse_size("512K") == 512u << 10);
  CHECK(*parse_size("1G") == 1ull << 30);
  CHECK(*parse_size("4096") == 4096u);
  CHECK(*parse_size("4096B") == 4096u);
  for (const char* bad : {"12X", "M", "", "-1M", "1.5M", " 8M", "17179869184G",
                          "99999999999999999999"}) {
    INFO(bad);
    auto s = parse_size(bad);
    REQUIRE_FALSE(s);
    CHECK(s.error().message().find("invalid size") == 0);
    CHECK(s.error().message().find("512K, 8M") != std::string::npos);
  }
}

TEST_CASE("parse_frequency: Hz within a range") {
  CHECK(*parse_frequency("997", 1, 100000) == 997u);
  CHECK(*parse_frequency("997Hz", 1, 100000) == 997u);
  CHECK(*parse_frequency("2kHz", 1, 100000) == 2000u);
  CHECK(*parse_frequency("100000", 1, 100000) == 100000u);
  for (const char* bad : {"0", "100001", "fast", "", "-5", "200kHz", "1.5"}) {
    INFO(bad);
    auto f = parse_frequency(bad, 1, 100000);
    REQUIRE_FALSE(f);
    CHECK(f.error().message().find("in 1..100000") != std::string::npos);
  }
}
