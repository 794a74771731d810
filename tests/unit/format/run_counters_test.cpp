// format/run_counters: runner.counters.json written and read back; broken
// files give errors that say what is wrong.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "format/format.hpp"

using namespace runner::format;

namespace {

RunCounters sample() {
  RunCounters c;
  c.counters = {{"task-clock", true, false, ""},
                {"instructions", true, true, ""},
                {"cycles", false, false, "no hardware PMU here (ENOENT)"}};
  CounterWindow w;
  w.start_ns = 1000;
  w.stop_ns = 5000;
  w.task_clock = CounterDelta{3900, 3900, 3900};
  w.instructions = CounterDelta{123456789, 4000, 2000};  // multiplexed
  c.windows.push_back(w);
  CounterWindow bare;
  bare.start_ns = bare.stop_ns = 6000;
  c.windows.push_back(bare);
  c.lost_windows = 2;
  c.lost_reason = "reading the counters at a window's stop: EBADF";
  return c;
}

std::string error_of(const std::string& text) {
  auto r = read_run_counters(text);
  REQUIRE_FALSE(r);
  return r.error().what();
}

// The sample's JSON with `edit` applied.
std::string edited(void (*edit)(nlohmann::json&)) {
  auto j = nlohmann::json::parse(write_run_counters(sample()));
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("runner.counters.json round-trips") {
  const RunCounters c = sample();
  const std::string text = write_run_counters(c);
  auto back = read_run_counters(text);
  REQUIRE_MESSAGE(back, back.error().what());
  CHECK(*back == c);
  CHECK(write_run_counters(*back) == text);
  // The file says which counters were multiplexed.
  auto j = nlohmann::json::parse(text);
  CHECK(j["windows"][0]["instructions"]["multiplexed"] == true);
  CHECK(j["windows"][0]["task-clock"]["multiplexed"] == false);
  CHECK_FALSE(j["windows"][1].contains("task-clock"));
  CHECK(j["clock"] == "CLOCK_MONOTONIC");
}

TEST_CASE("runner.counters.json: truncated, corrupt, oversized files") {
  const std::string text = write_run_counters(sample());
  for (size_t cut : {size_t{0}, size_t{1}, text.size() / 2, text.size() - 3}) {
    CAPTURE(cut);
    const std::string e = error_of(text.substr(0, cut));
    CHECK(e.rfind("runner.counters.json: ", 0) == 0);
    CHECK(e.find("not JSON") != std::string::npos);
  }
  CHECK(error_of("\x01\x02garbage").find("not JSON") != std::string::npos);
  CHECK(error_of(std::string(kMaxRunCountersBytes + 1, ' '))
            .find("over the 64 MiB limit") != std::string::npos);
  CHECK(error_of(std::string(200, '[')).find("nested deeper") !=
        std::string::npos);
  CHECK(error_of("[1, 2]").find("not a JSON object") != std::string::npos);
}

TEST_CASE("runner.counters.json: wrong types and values are named") {
  struct Case {
    void (*edit)(nlohmann::json&);
    const char* error;
  };
  const Case cases[] = {
      {[](nlohmann::json& j) { j.erase("version"); }, "missing 'version'"},
      {[](nlohmann::json& j) { j["version"] = 2; },
       "version 2 is not supported (this runner reads 1)"},
      {[](nlohmann::json& j) { j["version"] = "1"; },
       "version is not an integer >= 0"},
      {[](nlohmann::json& j) { j["clock"] = "CLOCK_REALTIME"; },
       "clock 'CLOCK_REALTIME' is not CLOCK_MONOTONIC"},
      {[](nlohmann::json& j) { j.erase("windows"); }, "missing 'windows'"},
      {[](nlohmann::json& j) { j["windows"] = 3; }, "windows is not an array"},
      {[](nlohmann::json& j) { j["windows"][1] = "x"; },
       "windows[1] is not an object"},
      {[](nlohmann::json& j) { j["windows"][0]["start_ns"] = -5; },
       "windows[0].start_ns is not an integer >= 0"},
      {[](nlohmann::json& j) { j["windows"][0]["stop_ns"] = 1.5; },
       "windows[0].stop_ns is not an integer >= 0"},
      {[](nlohmann::json& j) { j["windows"][0]["stop_ns"] = 10; },
       "windows[0]: stop_ns before start_ns"},
      {[](nlohmann::json& j) { j["windows"][0]["task-clock"] = 7; },
       "windows[0].task-clock is not an object"},
      {[](nlohmann::json& j) { j["windows"][0]["task-clock"].erase("value"); },
       "missing 'windows[0].task-clock.value'"},
      {[](nlohmann::json& j) {
         j["windows"][0]["instructions"]["running_ns"] = 99999;
       },
       "windows[0].instructions: running_ns above enabled_ns"},
      {[](nlohmann::json& j) { j["counters"][0]["counted"] = "yes"; },
       "counters[0].counted is not true or false"},
      {[](nlohmann::json& j) { j["counters"][2].erase("absent_reason"); },
       "missing 'counters[2].absent_reason'"},
      {[](nlohmann::json& j) { j["lost_windows"] = nullptr; },
       "lost_windows is not an integer >= 0"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(edited(c.edit));
    CAPTURE(e);
    CHECK(e == std::string("runner.counters.json: ") + c.error);
  }
}

TEST_CASE("runner.counters.json: unknown members are ignored") {
  auto text = edited([](nlohmann::json& j) {
    j["future"] = {1, 2};
    j["windows"][0]["future"] = "x";
  });
  auto back = read_run_counters(text);
  REQUIRE_MESSAGE(back, back.error().what());
  CHECK(*back == sample());
}
