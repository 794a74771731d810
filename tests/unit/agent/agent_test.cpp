#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "agent/args.hpp"
#include "agent/finalize.hpp"
#include "agent/results_check.hpp"
#include "agent/session.hpp"
#include "agent/specs.hpp"
#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::agent;

TEST_SUITE("agent") {
  TEST_CASE("parse_args: values, flags, -- and errors") {
    auto parsed =
        parse_args(run_spec(), {"--freq", "499", "--no-profile",
                                "--profile-folder=out", "--", "./b", "--x"});
    REQUIRE(parsed);
    CHECK(parsed->get("freq") == "499");
    CHECK(parsed->has("no-profile"));
    CHECK(parsed->get("profile-folder") == "out");
    CHECK(parsed->command == std::vector<std::string>{"./b", "--x"});

    auto positional = parse_args(run_spec(), {"-F", "10", "./bench", "--y"});
    REQUIRE(positional);
    CHECK(positional->get("freq") == "10");
    CHECK(positional->command == std::vector<std::string>{"./bench", "--y"});

    auto unknown = parse_args(run_spec(), {"--nope"});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message() ==
          "runner run: unknown option '--nope' (see 'runner run --help')");
    auto missing = parse_args(run_spec(), {"--freq"});
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message().find("needs a value") != std::string::npos);
    auto flag_value = parse_args(run_spec(), {"--no-profile=1"});
    CHECK_FALSE(flag_value);
    auto extra = parse_args(report_spec(), {"a", "b"});
    CHECK_FALSE(extra);
  }

  TEST_CASE("help lists every option that exists") {
    for (const CommandSpec* spec :
         {&run_spec(), &exec_spec(), &report_spec(), &doctor_spec()}) {
      std::string help = format_help(*spec);
      for (const auto& opt : spec->options) {
        if (opt.hidden) continue;
        CHECK_MESSAGE(help.find("--" + opt.name) != std::string::npos,
                      spec->name, " --", opt.name);
      }
    }
  }

  TEST_CASE("parse_size and profile options") {
    CHECK(*parse_size("8M") == 8u << 20);
    CHECK(*parse_size("512K") == 512u << 10);
    CHECK(*parse_size("4096") == 4096u);
    CHECK_FALSE(parse_size("12X"));
    CHECK_FALSE(parse_size("M"));

    RunOptions options;
    auto parsed = parse_args(
        run_spec(), {"--call-graph", "dwarf,16384", "--freq", "99", "--", "x"});
    REQUIRE(parsed);
    REQUIRE(parse_profile_options(*parsed, options, "run"));
    CHECK(options.sampler.stack_size == 16384);
    CHECK(options.sampler.frequency == 99);
    CHECK(options.sampler.call_graph ==
          runner::profiler::CallGraphMode::kDwarf);

    for (std::vector<std::string> bad :
         {std::vector<std::string>{"--call-graph", "lbr"},
          {"--call-graph", "dwarf,"},
          {"--call-graph", "dwarf,65536"},
          {"--freq", "0"},
          {"--freq", "fast"},
          {"--mmap-size", "lots"}}) {
      RunOptions o;
      auto p = parse_args(run_spec(), bad);
      REQUIRE(p);
      CHECK_FALSE_MESSAGE(parse_profile_options(*p, o, "run"), bad[0], " ",
                          bad[1]);
    }
  }

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

  TEST_CASE("results validation (spec 2.5)") {
    runner::testing::TempDir dir;
    auto none = load_results(dir.path(), false);
    REQUIRE_FALSE(none);
    CHECK(none.error().message().find("did not produce any CodSpeed result") !=
          std::string::npos);
    CHECK(load_results(dir.path(), true));
    REQUIRE(runner::base::make_directories(dir.file("results")));
    CHECK_FALSE(load_results(dir.path(), false));  // empty dir
    REQUIRE(runner::base::write_file_atomic(dir.file("results/notes.txt"),
                                            std::string_view("ignored")));
    CHECK_FALSE(load_results(dir.path(), false));
    const std::string valid = R"({"creator":{"name":"x","version":"1","pid":1},
      "instrument":{"type":"walltime"},
      "benchmarks":[{"name":"b","uri":"f::b","config":{},
        "stats":{"min_ns":1.0,"max_ns":2.0,"mean_ns":1.5,"stdev_ns":0.1,
          "q1_ns":1.2,"median_ns":1.5,"q3_ns":1.8,"rounds":5,"total_time":0.1,
          "iqr_outlier_rounds":0,"stdev_outlier_rounds":0,"iter_per_round":1,
          "warmup_iters":0}}]})";
    REQUIRE(runner::base::write_file_atomic(dir.file("results/1.json"), valid));
    auto rows = load_results(dir.path(), false);
    REQUIRE(rows);
    REQUIRE(rows->size() == 1);
    CHECK((*rows)[0].rounds == 5);
    REQUIRE(runner::base::write_file_atomic(
        dir.file("results/2.json"),
        std::string_view(R"({"creator":{},"instrument":{},"benchmarks":[]})")));
    CHECK_FALSE(load_results(dir.path(), false));
    CHECK(load_results(dir.path(), true));
    REQUIRE(runner::base::write_file_atomic(dir.file("results/2.json"),
                                            std::string_view("{not json")));
    auto invalid = load_results(dir.path(), true);
    REQUIRE_FALSE(invalid);
    CHECK(invalid.error().message().find("not JSON") != std::string::npos);
    CHECK(format_duration_ns(1500) == "1.50 us");
    CHECK(format_duration_ns(2.5e9) == "2.500 s");
  }

  TEST_CASE("results read once, judged leniently and strictly") {
    runner::testing::TempDir dir;
    REQUIRE(runner::base::make_directories(dir.file("results")));
    const std::string one = R"({"creator":{},"instrument":{},
      "benchmarks":[{"name":"b","uri":"f::b","config":{},
        "stats":{"min_ns":1.0,"max_ns":2.0,"mean_ns":1.5,"stdev_ns":0.1,
          "q1_ns":1.2,"median_ns":1.5,"q3_ns":1.8,"rounds":5,"total_time":0.1,
          "iqr_outlier_rounds":0,"stdev_outlier_rounds":0,"iter_per_round":1,
          "warmup_iters":0}}]})";
    // 1.json has no benchmark, 2.json has one: the lenient view (which
    // benchmarks reached the runner) sees 2.json's, the strict one fails on
    // 1.json, from the same read.
    REQUIRE(runner::base::write_file_atomic(
        dir.file("results/1.json"),
        std::string_view(R"({"creator":{},"instrument":{},"benchmarks":[]})")));
    REQUIRE(runner::base::write_file_atomic(dir.file("results/2.json"), one));
    ResultsFiles files = read_results(dir.path());
    CHECK(files.dir_exists);
    CHECK(files.files.size() == 2);
    CHECK_FALSE(files.error);
    auto lenient = select_results(files, true);
    REQUIRE(lenient);
    REQUIRE(lenient->size() == 1);
    CHECK((*lenient)[0].uri == "f::b");
    auto strict = select_results(files, false);
    REQUIRE_FALSE(strict);
    CHECK(strict.error().message().find("1.json has no benchmark") !=
          std::string::npos);
    // An invalid 3.json stops the reading; the empty 1.json still comes
    // first in the strict view, as when each view read the files itself.
    REQUIRE(runner::base::write_file_atomic(dir.file("results/3.json"),
                                            std::string_view("{not json")));
    files = read_results(dir.path());
    CHECK(files.files.size() == 2);
    REQUIRE(files.error);
    auto lenient_invalid = select_results(files, true);
    REQUIRE_FALSE(lenient_invalid);
    CHECK(lenient_invalid.error().message().find("3.json: not JSON") !=
          std::string::npos);
    auto strict_invalid = select_results(files, false);
    REQUIRE_FALSE(strict_invalid);
    CHECK(strict_invalid.error().message().find("1.json has no benchmark") !=
          std::string::npos);
    // The table prints the rows or the error, and says which by its code.
    std::ostringstream table, error;
    CHECK(check_results(lenient, table) == 0);
    CHECK(table.str().find("f::b") == std::string::npos);
    CHECK(table.str().find("1.5 ns") != std::string::npos);
    CHECK(check_results(strict_invalid, error) == 1);
    CHECK(error.str().rfind("runner: error: ", 0) == 0);
  }
}
