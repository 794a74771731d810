#include "finalize/finalize.hpp"

#include <algorithm>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using runner::finalize::execution_timestamps_msgpack;

TEST_SUITE("finalize") {
  TEST_CASE("ExecutionTimestamps.msgpack bytes") {
    runner::fifo::RunData run;
    run.uri_by_ts.push_back({5, "a"});
    run.markers.push_back({runner::fifo::MarkerType::kSampleStart, 1});
    run.markers.push_back({runner::fifo::MarkerType::kSampleEnd, 300});
    std::string bytes = execution_timestamps_msgpack(run);
    // map(2) "uri_by_ts" [[5,"a"]] "markers" [{"SampleStart":1},
    // {"SampleEnd":300}] with the smallest integer forms.
    const unsigned char expected[] = {
        0x82, 0xa9, 'u',  'r',  'i',  '_',  'b',  'y',  '_', 't', 's',
        0x91, 0x92, 0x05, 0xa1, 'a',  0xa7, 'm',  'a',  'r', 'k', 'e',
        'r',  's',  0x92, 0x81, 0xab, 'S',  'a',  'm',  'p', 'l', 'e',
        'S',  't',  'a',  'r',  't',  0x01, 0x81, 0xa9, 'S', 'a', 'm',
        'p',  'l',  'e',  'E',  'n',  'd',  0xcd, 0x01, 0x2c};
    REQUIRE(bytes.size() == sizeof(expected));
    CHECK(std::equal(bytes.begin(), bytes.end(),
                     reinterpret_cast<const char*>(expected)));
    auto decoded = nlohmann::json::from_msgpack(bytes);
    CHECK(decoded["markers"][1]["SampleEnd"] == 300);
    // u64 values beyond 2^53 stay exact.
    runner::fifo::RunData big;
    big.uri_by_ts.push_back({0xfffffffffffffff1ull, "x"});
    auto d = nlohmann::json::from_msgpack(execution_timestamps_msgpack(big));
    CHECK(d["uri_by_ts"][0][0].get<uint64_t>() == 0xfffffffffffffff1ull);
  }
}
