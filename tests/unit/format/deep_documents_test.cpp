// Hostile documents of a profile folder (a stored run is anyone's): every
// JSON and msgpack reader refuses nesting deeper than 128 levels while it
// parses, before building it (no stack overflow in nlohmann's msgpack
// reader, no gigabytes for a file of '['), and reads bytes that are not
// UTF-8 in a stored run's names as U+FFFD instead of refusing the file.
#include <sys/resource.h>

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"
#include "tests/support/compare_sample.hpp"

using namespace runner::format;

namespace {

// `depth` arrays of one element around `inner`, as msgpack (fixarray 1).
std::string nested_msgpack(size_t depth, std::string_view inner = "\xc0") {
  return std::string(depth, '\x91') + std::string(inner);
}

// `depth` JSON arrays around `inner`.
std::string nested_json(size_t depth, std::string_view inner = "0") {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

bool says_too_deep(const std::string& message) {
  return message.find("nested deeper than 128 levels") != std::string::npos;
}

// A results document holding `name` as the name of its one benchmark.
std::string results_named(std::string_view name) {
  BenchmarkResult b;
  b.name = "NAME";
  b.uri = "bench.cpp::NAME";
  b.stats.rounds = 3;
  std::string text = write_walltime_results({"t", "1", 1}, {&b, 1});
  for (size_t at; (at = text.find("NAME")) != std::string::npos;)
    text.replace(at, 4, name);
  return text;
}

long max_rss_kib() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("ExecutionTimestamps.msgpack nested 100,000 deep: an error") {
  std::vector<std::string> warnings;
  auto read = read_execution_timestamps(nested_msgpack(100'000), warnings);
  REQUIRE_FALSE(read);
  CHECK(read.error().message() ==
        "ExecutionTimestamps.msgpack is corrupt: nested deeper than 128 "
        "levels");
  // Inside the map too, and with maps.
  std::string in_map = "\x81\xa7markers";
  for (int i = 0; i < 100'000; ++i) in_map += "\x81\xa1k";
  in_map += '\xc0';
  auto deep_maps = read_execution_timestamps(in_map, warnings);
  REQUIRE_FALSE(deep_maps);
  CHECK(says_too_deep(deep_maps.error().message()));
  // 128 levels are read (not a map: nothing in it).
  auto deepest = read_execution_timestamps(nested_msgpack(128), warnings);
  REQUIRE(deepest);
  CHECK_FALSE(deepest->has_value());
  CHECK(says_too_deep(read_execution_timestamps(nested_msgpack(129), warnings)
                          .error()
                          .message()));
}

TEST_CASE("every JSON reader refuses a document nested 100,000 deep") {
  const std::string deep = nested_json(100'000);
  auto results = read_walltime_results(deep);
  REQUIRE_FALSE(results);
  CHECK(results.error().message() == "nested deeper than 128 levels");
  auto metadata = read_perf_metadata(deep, {.debug_info = false});
  REQUIRE_FALSE(metadata);
  CHECK(metadata.error().message() ==
        "perf.metadata is not valid JSON: nested deeper than 128 levels");
  auto with_debug_info = read_perf_metadata(deep, {.debug_info = true});
  REQUIRE_FALSE(with_debug_info);
  CHECK(says_too_deep(with_debug_info.error().message()));
  auto compare = read_compare_report(deep);
  REQUIRE_FALSE(compare);
  CHECK(compare.error().message() ==
        "compare.json: nested deeper than 128 levels");
  auto targets = read_exec_targets(deep);
  REQUIRE_FALSE(targets);
  CHECK(says_too_deep(targets.error().message()));
  // Deep under a member the reader looks at, or one it skips.
  const std::string in_member =
      "{\"runner\":{\"tracked_pids\":" + nested_json(1000) + "}}";
  auto member = read_perf_metadata(in_member);
  REQUIRE_FALSE(member);
  CHECK(says_too_deep(member.error().message()));
  // The debug info is cut out unread when not asked for.
  const std::string in_debug_info =
      "{\"debug_info\":" + nested_json(1000) + "}";
  CHECK(read_perf_metadata(in_debug_info, {.debug_info = false}));
  CHECK_FALSE(read_perf_metadata(in_debug_info, {.debug_info = true}));
  // 128 levels parse (and are then not the schema).
  auto deepest = read_walltime_results(nested_json(128));
  REQUIRE_FALSE(deepest);
  CHECK(deepest.error().message() == "missing creator/instrument/benchmarks");
}

TEST_CASE("a 62 MB results file of nested '[' is refused without the DOM") {
  const std::string deep = nested_json(31'000'000);
  const long before = max_rss_kib();
  auto read = read_walltime_results(deep);
  const long grown_kib = max_rss_kib() - before;
  REQUIRE_FALSE(read);
  CHECK(read.error().message() == "nested deeper than 128 levels");
  // Building it took ~2.3 GB; refusing it takes nothing.
  CHECK(grown_kib < 256 * 1024);
}

TEST_CASE("a name that is not UTF-8 reads as U+FFFD in results, compare") {
  auto read = read_walltime_results(results_named("fib\xff"));
  REQUIRE(read);
  REQUIRE(read->benchmarks.size() == 1);
  CHECK(read->benchmarks[0].name == "fib\xEF\xBF\xBD");
  CHECK(read->benchmarks[0].uri == "bench.cpp::fib\xEF\xBF\xBD");
  // Outside a string it is still not JSON.
  auto broken = read_walltime_results("{\xff}");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message().starts_with("not JSON (at byte "));

  std::string compare =
      write_compare_report(runner::testing::sample_compare_report());
  const std::string name = "\"name\": \"fib_20\"";
  const size_t at = compare.find(name);
  REQUIRE(at != std::string::npos);
  compare.replace(at, name.size(), "\"name\": \"fib\x80\xC3\"");
  auto report = read_compare_report(compare);
  REQUIRE_MESSAGE(report, report.error().message());
  bool replaced = false;
  for (const auto& b : report->benchmarks)
    replaced |= b.name == "fib\xEF\xBF\xBD\xEF\xBF\xBD";
  CHECK(replaced);
}
