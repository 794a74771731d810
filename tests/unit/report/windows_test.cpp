// Benchmark windows at scale: IntervalIndex against a plain scan on random
// intervals, and a profile folder of 150,000 windows, rounds and URIs
// (a ~10 MB ExecutionTimestamps.msgpack): each window gets its URI and each
// sample its window and round with a binary search, not a scan of them all.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "report/attribution.hpp"
#include "report/interval_index.hpp"
#include "report/profile_folder.hpp"
#include "tests/support/temp_dir.hpp"

using runner::report::Attribution;
using runner::report::IntervalIndex;
using runner::report::ProfileFolder;
using runner::testing::TempDir;

namespace {

// The first interval holding `point`, by looking at each.
size_t first_by_scan(const std::vector<std::pair<uint64_t, uint64_t>>& all,
                     uint64_t point) {
  for (size_t i = 0; i < all.size(); ++i)
    if (point >= all[i].first && point <= all[i].second) return i;
  return IntervalIndex::kNone;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("IntervalIndex: the first interval holding a point, as a scan") {
    std::mt19937_64 random(42);
    for (int round = 0; round < 200; ++round) {
      std::vector<std::pair<uint64_t, uint64_t>> intervals;
      const size_t n = random() % 40;
      for (size_t i = 0; i < n; ++i) {
        // Overlapping, nested, inverted, single points, up to the end.
        uint64_t a = random() % 100, b = random() % 100;
        if (random() % 4 != 0 && a > b) std::swap(a, b);
        if (random() % 10 == 0) b = UINT64_MAX;
        intervals.emplace_back(a, b);
      }
      const IntervalIndex index(intervals);
      for (uint64_t p = 0; p < 105; ++p)
        REQUIRE_MESSAGE(index.find(p) == first_by_scan(intervals, p), "round ",
                        round, " point ", p);
      CHECK(index.find(UINT64_MAX) == first_by_scan(intervals, UINT64_MAX));
    }
    CHECK(IntervalIndex().find(0) == IntervalIndex::kNone);
    CHECK(IntervalIndex({{0, UINT64_MAX}}).find(UINT64_MAX) == 0);
  }

  TEST_CASE("150,000 windows: each its URI, each sample its window") {
    constexpr size_t kWindows = 150'000;
    TempDir dir;
    runner::format::ExecutionTimestamps ts;
    // Window i: [1000 i + 1, 1000 i + 500], a round [+100, +200] in it,
    // then its URI at 1000 i + 600.
    for (uint64_t i = 0; i < kWindows; ++i) {
      const uint64_t t = 1000 * i;
      ts.markers.push_back({"SampleStart", t + 1});
      ts.markers.push_back({"RoundStart", t + 100});
      ts.markers.push_back({"RoundEnd", t + 200});
      ts.markers.push_back({"SampleEnd", t + 500});
      ts.uri_by_ts.emplace_back(t + 600, "w.cpp::b" + std::to_string(i));
    }
    REQUIRE(runner::base::write_file_atomic(
        dir.file("ExecutionTimestamps.msgpack"),
        runner::format::write_execution_timestamps(ts)));
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    REQUIRE(folder->windows().size() == kWindows);
    size_t wrong_uri = 0;
    for (size_t i = 0; i < kWindows; ++i)
      wrong_uri += folder->windows()[i].uri != ts.uri_by_ts[i].second;
    CHECK(wrong_uri == 0);

    const Attribution attribution(*folder);
    REQUIRE(attribution.size() == kWindows);
    size_t wrong = 0;
    runner::perfdata::SampleRecord sample;
    for (uint64_t i = 0; i < kWindows; ++i) {
      sample.time = 1000 * i + 150;  // in the round
      const auto in_round = attribution.target(sample);
      sample.time = 1000 * i + 400;  // in the window, after the round
      const auto harness = attribution.target(sample);
      sample.time = 1000 * i + 700;  // between windows
      const auto outside = attribution.target(sample);
      wrong += in_round.verdict != Attribution::Verdict::kBenchmark ||
               in_round.benchmark != i || !in_round.proper ||
               harness.benchmark != i || harness.proper ||
               outside.verdict != Attribution::Verdict::kOutsideWindows;
    }
    CHECK(wrong == 0);
  }
}
