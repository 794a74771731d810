// The exec targets JSON (docs/formats.md): written by `runner exec`, read by
// `exec-harness -`.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "format/format.hpp"

using runner::format::Duration;
using runner::format::ExecTarget;
using runner::format::read_exec_targets;
using runner::format::WalltimeOptions;
using runner::format::write_exec_targets;

namespace {

std::string read_error(std::string_view json) {
  auto r = read_exec_targets(json);
  REQUIRE_FALSE(r);
  return r.error().message();
}

}  // namespace

TEST_CASE("exec targets: the document's shape") {
  std::vector<ExecTarget> targets(2);
  targets[0].command = {"sleep", "1"};
  targets[0].name = "optional";
  targets[0].walltime.max_rounds = 5;
  targets[1].command = {"ls", "-l"};
  targets[1].walltime.warmup_time = Duration(0);
  targets[1].walltime.max_time = std::chrono::milliseconds(1500);
  targets[1].working_directory = "/w";
  targets[1].interleave = true;
  const std::string text = write_exec_targets(targets);
  CHECK(
      text.rfind(
          R"([{"command":["sleep","1"],"name":"optional","walltime_args":{"warmup_time":null,"max_time":null,"min_time":null,"max_rounds":5,"min_rounds":null}})",
          0) == 0);
  auto doc = nlohmann::json::parse(text);
  REQUIRE(doc.size() == 2);
  CHECK_FALSE(doc[0].contains("working_directory"));
  CHECK_FALSE(doc[1].contains("name"));
  CHECK(doc[1]["walltime_args"]["warmup_time"] == "0s");
  CHECK(doc[1]["walltime_args"]["max_time"] == "1500ms");
  CHECK(doc[1]["walltime_args"]["max_rounds"].is_null());
  CHECK(doc[1]["working_directory"] == "/w");
  CHECK_FALSE(doc[0].contains("interleave"));
  CHECK(doc[1]["interleave"] == true);
  CHECK(write_exec_targets({}) == "[]");

  auto back = read_exec_targets(text);
  REQUIRE_MESSAGE(back, back.error().message());
  CHECK(*back == targets);
}

TEST_CASE("exec targets: what exec-harness accepts") {
  auto r = read_exec_targets(
      R"([{"command":["true"],"walltime_args":{"warmup_time":"0",)"
      R"("max_time":"1m 30s","min_rounds":4},"unknown":1},)"
      R"({"command":["x"],"name":null,"walltime_args":null}])");
  REQUIRE_MESSAGE(r, r.error().message());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].walltime.warmup_time == Duration(0));
  CHECK((*r)[0].walltime.max_time == std::chrono::seconds(90));
  CHECK((*r)[0].walltime.min_rounds == 4u);
  CHECK_FALSE((*r)[0].walltime.max_rounds);
  CHECK_FALSE((*r)[1].name);
  CHECK((*r)[1].walltime == WalltimeOptions{});
}

TEST_CASE("exec targets: bad documents give clear errors") {
  struct Case {
    const char* json;
    const char* expect;
  };
  for (Case c : {
           Case{"not json", "invalid JSON"},
           Case{"{}", "expected a JSON array"},
           Case{"[]", "no benchmarks"},
           Case{R"([1])", "benchmark #1: expected an object"},
           Case{R"([{"command":[]}])",
                "benchmark #1: 'command' must be a "
                "non-empty array"},
           Case{R"([{"command":"ls"}])", "non-empty array"},
           Case{R"([{"command":["a"]},{"command":[1]}])",
                "benchmark #2: 'command' must hold strings"},
           Case{R"([{"command":["a"],"name":3}])", "'name' must be a string"},
           Case{R"([{"command":["a"],"walltime_args":[]}])",
                "'walltime_args' must be an object"},
           Case{R"([{"command":["a"],"walltime_args":{"max_rounds":-1}}])",
                "walltime_args: 'max_rounds' must be a non-negative integer"},
           Case{R"([{"command":["a"],"walltime_args":{"max_rounds":1.5}}])",
                "non-negative integer"},
           Case{R"([{"command":["a"],"walltime_args":{"max_time":5}}])",
                "'max_time' must be a string"},
           Case{R"([{"command":["a"],"walltime_args":{"min_time":"soon"}}])",
                "walltime_args: 'min_time': invalid duration 'soon'"},
           Case{R"([{"command":["a"],"interleave":"yes"}])",
                "benchmark #1: 'interleave' must be true, false or null"},
           Case{R"([{"command":["tr)", "invalid JSON"},
       }) {
    INFO(c.json);
    const std::string message = read_error(c.json);
    CHECK_MESSAGE(message.find(c.expect) != std::string::npos, message);
  }
}

TEST_CASE("WalltimeOptions::override_with keeps what the other leaves unset") {
  WalltimeOptions defaults;
  defaults.warmup_time = Duration(0);
  defaults.max_rounds = 2;
  WalltimeOptions own;
  own.max_rounds = 10;
  own.min_time = std::chrono::seconds(1);
  defaults.override_with(own);
  CHECK(defaults.warmup_time == Duration(0));
  CHECK(defaults.max_rounds == 10u);
  CHECK(defaults.min_time == std::chrono::seconds(1));
  CHECK_FALSE(defaults.min_rounds);
}
