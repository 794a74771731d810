#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "agent/man_page.hpp"
#include "agent/options.hpp"
#include "agent/results_check.hpp"
#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::agent;
using runner::profiler::CallGraphMode;
using runner::profiler::SamplingEvent;

namespace {

// parse_command_line on "runner" + args: the exit code when it is done.
std::optional<int> parse(std::vector<std::string> args, CommandLine& out) {
  args.insert(args.begin(), "runner");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), out);
}

}  // namespace

TEST_SUITE("agent") {
  TEST_CASE("command line: typed values, flags, -- and the command") {
    CommandLine line;
    REQUIRE_FALSE(
        parse({"run", "--freq", "499", "--no-profile", "--profile-folder=out",
               "--call-graph", "dwarf,16K", "--event", "task-clock",
               "--mmap-size", "8M", "--kill-after", "1.5", "--", "./b", "--x"},
              line));
    CHECK(line.command == Command::kRun);
    CHECK(line.run.sampler.frequency == 499);
    CHECK_FALSE(line.run.profile);
    CHECK(line.run.profile_folder == "out");
    CHECK(line.run.sampler.call_graph == CallGraphMode::kDwarf);
    CHECK(line.run.sampler.stack_size == 16384);
    CHECK(line.run.sampler.event == SamplingEvent::kTaskClock);
    CHECK(line.run.sampler.mmap_size == 8u << 20);
    CHECK(line.run.kill_after == std::chrono::milliseconds(1500));
    CHECK(line.run.command == std::vector<std::string>{"./b", "--x"});

    // The first argument that is not an option starts the command, even
    // one named like a runner command; the last of a repeated option wins.
    CommandLine positional;
    REQUIRE_FALSE(parse(
        {"run", "-F", "10", "-F", "20", "--call-graph", "fp", "doctor", "--y"},
        positional));
    CHECK(positional.run.sampler.frequency == 20);
    CHECK(positional.run.sampler.call_graph == CallGraphMode::kFramePointer);
    CHECK(positional.run.command == std::vector<std::string>{"doctor", "--y"});

    CommandLine exec;
    REQUIRE_FALSE(parse({"exec", "--name", "n", "--warmup-time", "0",
                         "--max-time", "2m", "--max-rounds", "3", "true"},
                        exec));
    CHECK(exec.command == Command::kExec);
    CHECK(exec.exec.name == "n");
    CHECK(exec.exec.walltime.warmup_time == runner::format::Duration(0));
    CHECK(exec.exec.walltime.max_time == std::chrono::minutes(2));
    CHECK(exec.exec.walltime.max_rounds == 3u);
    CHECK(exec.exec.command == std::vector<std::string>{"true"});

    CommandLine report;
    REQUIRE_FALSE(parse({"report", "dir", "--format", "perf-script", "--top",
                         "3", "--no-demangle", "--inline"},
                        report));
    CHECK(report.command == Command::kReport);
    CHECK(report.report.folder == "dir");
    CHECK(report.report.format ==
          runner::report::ReportOptions::Format::kPerfScript);
    CHECK(report.report.top == 3);
    CHECK_FALSE(report.report.demangle);
    CHECK(report.report.inline_frames);
  }

  TEST_CASE("command line: usage errors exit 2, help and version 0") {
    for (std::vector<std::string> bad :
         {std::vector<std::string>{"run", "--nope"},
          {"run", "--freq"},
          {"run", "--call-graph", "lbr", "x"},
          {"run", "--call-graph", "dwarf,", "x"},
          {"run", "--freq", "0", "x"},
          {"run", "--freq", "fast", "x"},
          {"run", "--mmap-size", "lots", "x"},
          {"run", "--event", "instructions", "x"},
          {"run", "--kill-after", "soon", "x"},
          {"exec", "--max-rounds", "-1", "x"},
          {"exec", "--min-time", "1y", "x"},
          {"report", "a", "b"},
          {"report", "--format", "svg"},
          {"report", "--top", "0"},
          {"doctor", "extra"},
          {"frobnicate"},
          {}}) {
      CommandLine line;
      const std::string label = bad.empty() ? "" : bad.back();
      CHECK_MESSAGE(parse(bad, line) == 2, label);
    }
    for (std::vector<std::string> done : {std::vector<std::string>{"--help"},
                                          {"help"},
                                          {"-V"},
                                          {"run", "--help"},
                                          {"exec", "-h"},
                                          {"report", "--help"},
                                          {"doctor", "--help"}}) {
      CommandLine line;
      CHECK(parse(done, line) == 0);
    }
  }

  TEST_CASE("help lists every visible option of every command") {
    CommandLine line;
    auto app = make_app(line);
    for (const CLI::App* sub : app->get_subcommands({})) {
      const std::string help = sub->help("runner");
      CHECK(help.find("Usage: runner " + sub->get_name()) != std::string::npos);
      for (const CLI::Option* opt : sub->get_options()) {
        if (opt->get_group().empty()) continue;  // hidden
        for (const std::string& name : opt->get_lnames())
          CHECK_MESSAGE(help.find("--" + name) != std::string::npos,
                        sub->get_name(), " --", name);
      }
    }
  }

  TEST_CASE("the man page documents every option of every command") {
    CommandLine line;
    auto app = make_app(line);
    const std::string man = man_page(*app);
    size_t options = 0;
    for (const CLI::App* sub : app->get_subcommands({})) {
      const std::string section = ".SS runner " + sub->get_name() + "\n";
      const size_t start = man.find(section);
      REQUIRE_MESSAGE(start != std::string::npos, sub->get_name());
      const size_t end = man.find(".SS ", start + 1);
      const std::string text = man.substr(start, end - start);
      for (const CLI::Option* opt : sub->get_options()) {
        for (std::string name : opt->get_lnames()) {
          if (name == "help") continue;
          std::string roff = "\\-\\-";
          for (char c : name)
            roff += c == '-' ? std::string("\\-") : std::string(1, c);
          const bool found = text.find("\\fB" + roff) != std::string::npos ||
                             text.find(", " + roff) != std::string::npos;
          CHECK_MESSAGE(found, sub->get_name(), " --", name);
          ++options;
        }
        if (opt->get_positional())
          CHECK(text.find(".I " + opt->get_name()) != std::string::npos);
      }
    }
    CHECK(options >= 30);
  }

  TEST_CASE("packaging/runner.1 is the generated man page, byte for byte") {
    CommandLine line;
    auto app = make_app(line);
    auto committed = runner::base::read_file(std::string(RUNNER_SOURCE_ROOT) +
                                             "/packaging/runner.1");
    REQUIRE_MESSAGE(committed, committed.error().what());
    CHECK_MESSAGE(*committed == man_page(*app),
                  "regenerate it: build/agent/runner --man > "
                  "packaging/runner.1");
  }

  TEST_CASE("results validation") {
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
