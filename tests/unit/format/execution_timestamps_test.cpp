#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

using runner::format::ExecutionTimestamps;
using runner::format::read_execution_timestamps;
using runner::format::write_execution_timestamps;

namespace {

std::string bytes(std::initializer_list<unsigned char> list) {
  return std::string(list.begin(), list.end());
}

}  // namespace

TEST_CASE("ExecutionTimestamps.msgpack: the CodSpeed layout, byte for byte") {
  ExecutionTimestamps t;
  t.uri_by_ts.push_back({5, "a"});
  t.markers.push_back({"SampleStart", 1});
  t.markers.push_back({"SampleEnd", 300});
  // map(2) "uri_by_ts" [[5,"a"]] "markers" [{"SampleStart":1},
  // {"SampleEnd":300}] with the smallest integer forms.
  const std::string expected =
      bytes({0x82, 0xa9, 'u',  'r',  'i',  '_',  'b',  'y',  '_', 't', 's',
             0x91, 0x92, 0x05, 0xa1, 'a',  0xa7, 'm',  'a',  'r', 'k', 'e',
             'r',  's',  0x92, 0x81, 0xab, 'S',  'a',  'm',  'p', 'l', 'e',
             'S',  't',  'a',  'r',  't',  0x01, 0x81, 0xa9, 'S', 'a', 'm',
             'p',  'l',  'e',  'E',  'n',  'd',  0xcd, 0x01, 0x2c});
  CHECK(write_execution_timestamps(t) == expected);
  CHECK(write_execution_timestamps({}) ==
        bytes({0x82, 0xa9, 'u', 'r', 'i', '_', 'b', 'y', '_', 't', 's',
               0x90, 0xa7, 'm', 'a', 'r', 'k', 'e', 'r', 's', 0x90}));
}

TEST_CASE("ExecutionTimestamps.msgpack round trip") {
  ExecutionTimestamps t;
  t.uri_by_ts = {{0xfffffffffffffff1ull, "x::y"}, {0, ""}, {1ull << 40, "z"}};
  t.markers = {{"SampleStart", 10},  {"RoundStart", 11}, {"RoundEnd", 12},
               {"BenchmarkEnd", 13}, {"SampleEnd", 14},  {"Future", 15}};
  std::vector<std::string> warnings;
  auto read =
      read_execution_timestamps(write_execution_timestamps(t), warnings);
  REQUIRE(read);
  REQUIRE(*read);
  CHECK(**read == t);
  CHECK(warnings.empty());
}

TEST_CASE("ExecutionTimestamps.msgpack: malformed input") {
  std::vector<std::string> warnings;
  SUBCASE("not msgpack") {
    auto read = read_execution_timestamps(bytes({0xc1}), warnings);
    REQUIRE_FALSE(read);
    CHECK(read.error().message() ==
          "ExecutionTimestamps.msgpack is corrupt: not msgpack (at byte 1)");
    CHECK_FALSE(read_execution_timestamps("", warnings));
    // Truncated: a map announcing 2 members with one.
    std::string whole = write_execution_timestamps({});
    CHECK_FALSE(read_execution_timestamps(whole.substr(0, 12), warnings));
  }
  SUBCASE("msgpack, but not a map: nothing to read, no warning") {
    auto read = read_execution_timestamps(bytes({0x05}), warnings);
    REQUIRE(read);
    CHECK_FALSE(*read);
  }
  SUBCASE("bad entries are skipped, one warning per list") {
    // {"uri_by_ts": [[1], [2, "ok"], "x"], "markers": [{"A": 1, "B": 2},
    //  {"Ok": 3}, {"C": "s"}]}
    std::string doc = bytes(
        {0x82, 0xa9, 'u',  'r',  'i',  '_',  'b',  'y',  '_', 't',  's',  0x93,
         0x91, 0x01, 0x92, 0x02, 0xa2, 'o',  'k',  0xa1, 'x', 0xa7, 'm',  'a',
         'r',  'k',  'e',  'r',  's',  0x93, 0x82, 0xa1, 'A', 0x01, 0xa1, 'B',
         0x02, 0x81, 0xa2, 'O',  'k',  0x03, 0x81, 0xa1, 'C', 0xa1, 's'});
    auto read = read_execution_timestamps(doc, warnings);
    REQUIRE(read);
    REQUIRE(*read);
    CHECK((*read)->uri_by_ts ==
          std::vector<std::pair<uint64_t, std::string>>{{2, "ok"}});
    REQUIRE((*read)->markers.size() == 1);
    CHECK((*read)->markers[0].kind == "Ok");
    CHECK(warnings == std::vector<std::string>{
                          "ExecutionTimestamps.msgpack: markers[0]: expected "
                          "{\"<marker>\": timestamp} (and 1 more in markers): "
                          "ignored",
                          "ExecutionTimestamps.msgpack: uri_by_ts[0]: "
                          "expected [timestamp, uri] (and 1 more in "
                          "uri_by_ts): ignored"});
  }
  SUBCASE("lists of the wrong type") {
    // {"uri_by_ts": 1, "markers": {}}
    std::string doc =
        bytes({0x82, 0xa9, 'u', 'r', 'i', '_', 'b', 'y', '_', 't', 's',
               0x01, 0xa7, 'm', 'a', 'r', 'k', 'e', 'r', 's', 0x80});
    auto read = read_execution_timestamps(doc, warnings);
    REQUIRE(read);
    REQUIRE(*read);
    CHECK((*read)->markers.empty());
    CHECK(warnings ==
          std::vector<std::string>{
              "ExecutionTimestamps.msgpack: markers: expected array, got "
              "object: ignored",
              "ExecutionTimestamps.msgpack: uri_by_ts: expected array, got "
              "number: ignored"});
  }
}
