#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "format/format.hpp"

using namespace runner::format;

namespace {

PerfMetadata sample_metadata() {
  PerfMetadata m;
  m.integration_name = "codspeed-cpp";
  m.integration_version = "2.0.0";
  m.ignored_modules_by_pid[12] = {{"/usr/bin/python3", 0x1000, 0x2000}};
  ModuleDebugInfo& info = m.debug_info["0__a.out"];
  info.object_path = "/bin/a.out";
  info.addr_min = 0x10;
  info.addr_max = 0x90;
  info.entries = {{0x10, 0x20, "main", "a.cpp", 7},
                  {0x30, 0x60, "f", "b.cpp", std::nullopt}};
  m.mapped_process_debug_info_by_pid[12] = {{"0__a.out", 0x5000}};
  m.mapped_process_unwind_data_by_pid[12] = {
      {"0__a.out", 99, 0x5000, 0x6000, 0x5000},
      {"1__libc.so.6", std::nullopt, 0x7000, 0x9000, 0xfffffffffffff000ull}};
  m.mapped_process_unwind_data_by_pid[3] = {{"1__libc.so.6", 1, 1, 2, 3}};
  m.mapped_process_module_symbols[12] = {{"0__a.out", 0x5000},
                                         {"1__libc.so.6", 0x7000}};
  // Key index order, not string order.
  m.path_key_to_path = {{"2__b", "/b"}, {"10__a", "/a"}};
  m.timestamps.uri_by_ts = {{5, "a::b"}};
  m.timestamps.markers = {{"SampleStart", 1}, {"SampleEnd", 9}};
  RunnerSection& r = m.runner;
  r.version = "0.1.0";
  r.profiled = true;
  SamplerSection s;
  s.event = "cycles";
  s.frequency = 997;
  s.call_graph = "dwarf";
  s.stack_size = 8192;
  s.tracking_event = true;
  s.samples = 123;
  s.write_error = "No space left on device";
  s.ring_buffers_bytes = 1 << 20;
  r.sampler = s;
  r.max_rss_kib = 4096;
  r.pid_filter = "tracked";
  r.announced_pids = {12};
  r.tracked_pids = std::vector<int32_t>{3, 12};
  r.skipped_mappings = {{"anon", 4}, {"memfd", 1}};
  r.backfilled_mappings = 2;
  r.module_errors = {{"no_symbols", 1}};
  r.fifo.commands = 17;
  r.fifo.stale_reply_bytes = 3;
  return m;
}

std::vector<std::string> warnings_of(std::string_view text) {
  auto read = read_perf_metadata(text, {.debug_info = false});
  REQUIRE(read);
  return read->warnings;
}

}  // namespace

TEST_CASE("perf.metadata: members in the documented order") {
  PerfMetadata m;
  m.integration_name = "exec-harness";
  m.integration_version = "1";
  m.mapped_process_module_symbols[7] = {{"0__x", 16}};
  m.mapped_process_unwind_data_by_pid[7] = {{"0__x", std::nullopt, 1, 2, 3}};
  m.mapped_process_debug_info_by_pid[8] = {};  // empty lists are left out
  m.path_key_to_path = {{"0__x", "/x"}};
  m.timestamps.markers = {{"SampleStart", 4}};
  m.runner.version = "0.1.0";
  m.runner.pid_filter = "all";
  m.runner.tracked_pids = std::vector<int32_t>{7};
  CHECK(
      write_perf_metadata(m) ==
      R"({"version":1,"integration":["exec-harness","1"],)"
      R"("mapped_process_unwind_data_by_pid":{"7":[{"unwind_data_key":"0__x",)"
      R"("timestamp":null,"avma_range":{"start":1,"end":2},"base_avma":3}]},)"
      R"("mapped_process_module_symbols":{"7":[{"perf_map_key":"0__x",)"
      R"("load_bias":16}]},"path_key_to_path":{"0__x":"/x"},"uri_by_ts":[],)"
      R"("ignored_modules":[],"markers":[{"SampleStart":4}],)"
      R"("runner":{"version":"0.1.0","profiled":false,"pid_filter":"all",)"
      R"("announced_pids":[],"tracked_pids":[7],"skipped_mappings":{},)"
      R"("backfilled_mappings":0,"unsampled_pids_forgotten":0,)"
      R"("module_errors":{},"artifacts_not_written":0,"fifo":{"commands":0,)"
      R"("malformed_frames":0,"oversized_frames":0,"unexpected_commands":0,)"
      R"("rejected_versions":0,"duplicate_starts":0,"unmatched_stops":0,)"
      R"("dropped_replies":0,"write_errors":0,"resyncs":0,)"
      R"("discarded_bytes":0,"truncated_frames":0,"stale_reply_bytes":0}}})");
}

TEST_CASE("perf.metadata: debug_info written directly is nlohmann's dump") {
  PerfMetadata m = sample_metadata();
  ModuleDebugInfo& odd = m.debug_info["1__odd \"key\""];
  odd.object_path = "/lib/with\\backslash\tand tab";
  odd.addr_max = UINT64_MAX;
  odd.entries = {{UINT64_MAX, 0, "ctl\x01\x1f\x7f", "caf\xc3\xa9.c", 0},
                 {1, 2, "bad utf8 \xff\xc3(", "\"quoted\"", UINT32_MAX},
                 {3, 4, "", "", std::nullopt}};
  const std::string text = write_perf_metadata(m);
  using Json = nlohmann::ordered_json;
  const Json parsed = Json::parse(text);
  // The same bytes as the DOM's own dump, member order included.
  CHECK(parsed.dump(-1, ' ', false, Json::error_handler_t::replace) == text);
  const Json& entries = parsed["debug_info"]["1__odd \"key\""]["debug_infos"];
  REQUIRE(entries.size() == 3);
  CHECK(entries[0]["addr"] == UINT64_MAX);
  CHECK(entries[0]["name"] == "ctl\x01\x1f\x7f");
  CHECK(entries[0]["file"] == "caf\xc3\xa9.c");
  CHECK(entries[1]["name"] == "bad utf8 \xef\xbf\xbd\xef\xbf\xbd(");
  CHECK(entries[1]["line"] == UINT32_MAX);
  CHECK(entries[2]["line"].is_null());
  std::vector<std::string> keys;
  for (const auto& [key, value] : parsed.items()) keys.push_back(key);
  REQUIRE(keys.size() > 4);
  CHECK(keys[2] == "ignored_modules_by_pid");
  CHECK(keys[3] == "debug_info");
  CHECK(keys[4] == "mapped_process_debug_info_by_pid");
}

TEST_CASE("perf.metadata round trip") {
  const PerfMetadata m = sample_metadata();
  const std::string text = write_perf_metadata(m);
  auto read = read_perf_metadata(text);
  REQUIRE(read);
  CHECK(read->warnings.empty());
  CHECK(read->timestamps_warnings.empty());
  CHECK(read->metadata == m);
  // Written again, the same bytes.
  CHECK(write_perf_metadata(read->metadata) == text);

  SUBCASE("without the debug info") {
    auto lean = read_perf_metadata(text, {.debug_info = false});
    REQUIRE(lean);
    PerfMetadata expected = m;
    expected.debug_info.clear();
    expected.mapped_process_debug_info_by_pid.clear();
    CHECK(lean->metadata == expected);
  }
  SUBCASE("pretty-printed and with the debug info first") {
    // The cut before parsing must not depend on spacing or position.
    std::string spaced =
        " {\n \"debug_info\" : {\"k\": [1, \"}\\\"]\"]},\n" + text.substr(1);
    auto lean = read_perf_metadata(spaced, {.debug_info = false});
    REQUIRE(lean);
    CHECK(lean->metadata.mapped_process_module_symbols ==
          m.mapped_process_module_symbols);
    CHECK(lean->metadata.debug_info.empty());
  }
}

TEST_CASE("perf.metadata: what is not a JSON object is an error") {
  for (std::string_view text : {"", "{", "{\"version\":1", "\xff\xfe"}) {
    auto read = read_perf_metadata(text, {.debug_info = false});
    REQUIRE_FALSE_MESSAGE(read, text);
    CHECK(read.error().message().starts_with(
        "perf.metadata is not valid JSON: not JSON (at byte "));
  }
  for (std::string_view text : {"[]", "42"}) {
    auto read = read_perf_metadata(text, {.debug_info = false});
    REQUIRE_FALSE_MESSAGE(read, text);
    CHECK(read.error().message() == "perf.metadata is not a JSON object");
  }
  CHECK(read_perf_metadata("{}"));
}

TEST_CASE("perf.metadata: malformed values name file and key") {
  CHECK(
      warnings_of(R"({"mapped_process_module_symbols":[]})") ==
      std::vector<std::string>{"perf.metadata: mapped_process_module_symbols: "
                               "expected object, got array: ignored"});
  CHECK(warnings_of(R"({"mapped_process_module_symbols":{"x":[],"-1":[],
      "5":{},"6":[1,{"load_bias":2},{"perf_map_key":3},
      {"perf_map_key":"k","load_bias":"big"}]}})") ==
        std::vector<std::string>{
            "perf.metadata: mapped_process_module_symbols.-1: not a pid (and 6 "
            "more in mapped_process_module_symbols): ignored"});
  CHECK(warnings_of(R"({"mapped_process_unwind_data_by_pid":{"1":[
      {"unwind_data_key":"k","avma_range":{"start":1}}]}})") ==
        std::vector<std::string>{
            "perf.metadata: mapped_process_unwind_data_by_pid.1[0].avma_range."
            "end: missing: ignored"});
  CHECK(warnings_of(R"({"mapped_process_unwind_data_by_pid":{"1":[
      {"unwind_data_key":"k","avma_range":[]}]}})") ==
        std::vector<std::string>{
            "perf.metadata: mapped_process_unwind_data_by_pid.1[0].avma_range: "
            "expected object, got array: ignored"});
  CHECK(warnings_of(R"({"path_key_to_path":{"a":1},"runner":{
      "pid_filter":"tracked","tracked_pids":[1,-2,"3",4294967296]}})") ==
        std::vector<std::string>{
            "perf.metadata: path_key_to_path.a: expected string, got number: "
            "ignored",
            "perf.metadata: runner.tracked_pids[1]: expected a pid, got -2 "
            "(and 2 more in runner): ignored"});
  CHECK(warnings_of(R"({"runner":{"pid_filter":1,"tracked_pids":{}}})") ==
        std::vector<std::string>{
            "perf.metadata: runner.pid_filter: expected string, got number "
            "(and 1 more in runner): ignored"});
  // A huge key is cut in the warning.
  const std::string key(500, 'k');
  auto long_key =
      warnings_of(R"({"path_key_to_path":{")" + key + R"(":null}})");
  REQUIRE(long_key.size() == 1);
  CHECK(long_key[0].size() < 300);
  CHECK(long_key[0].find("...: expected string, got null") !=
        std::string::npos);
}

TEST_CASE("perf.metadata: what is read of malformed values") {
  auto read = read_perf_metadata(R"({"mapped_process_module_symbols":{
      "6":[{"perf_map_key":"a"},{"perf_map_key":"b","load_bias":-4096},
           {"perf_map_key":"c","load_bias":1.5}]},
      "runner":{"pid_filter":"all","tracked_pids":[1,-2]},
      "markers":[{"SampleStart":1},{"x":"y"}],"uri_by_ts":{}})",
                                 {.debug_info = false});
  REQUIRE(read);
  const auto& symbols = read->metadata.mapped_process_module_symbols;
  REQUIRE(symbols.count(6) == 1);
  CHECK(symbols.at(6) ==
        std::vector<SymbolsRef>{{"a", 0}, {"b", 0xfffffffffffff000ull}});
  // Without the filter, tracked pids are read without complaint.
  CHECK(read->metadata.runner.tracked_pids == std::vector<int32_t>{1});
  CHECK(read->metadata.timestamps.markers ==
        std::vector<Marker>{{"SampleStart", 1}});
  CHECK(read->timestamps_warnings ==
        std::vector<std::string>{
            "perf.metadata: markers[1]: expected {\"<marker>\": timestamp}: "
            "ignored",
            "perf.metadata: uri_by_ts: expected array, got object: ignored"});
  // Unchecked members of other types read as their defaults.
  auto odd = read_perf_metadata(
      R"({"version":"one","integration":7,"ignored_modules_by_pid":[],)"
      R"("debug_info":{"k":1,"j":{"debug_infos":[1,{"line":"x"}]}},)"
      R"("runner":{"fifo":[],"skipped_mappings":{"a":"b"}}})");
  REQUIRE(odd);
  CHECK(odd->warnings.empty());
  CHECK(odd->metadata.version == 0);
  CHECK(odd->metadata.integration_name.empty());
  CHECK(odd->metadata.debug_info.size() == 1);
  CHECK(odd->metadata.debug_info.at("j").entries.size() == 1);
  CHECK(odd->metadata.runner.skipped_mappings.empty());
}
