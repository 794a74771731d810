// runner.yml / codspeed.yml reading for `runner exec`, and the JSON handed to
// `exec-harness -`.
#include "agent/exec_config.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::agent;
using runner::testing::TempDir;

namespace {

std::vector<ExecTarget> parse_ok(std::string_view text) {
  auto r = parse_exec_config(text, "runner.yml", "/base");
  REQUIRE_MESSAGE(r, r.error().what());
  return *r;
}

std::string parse_error(std::string_view text) {
  auto r = parse_exec_config(text, "runner.yml", "/base");
  REQUIRE_FALSE(r);
  return r.error().message();
}

}  // namespace

TEST_SUITE("results") {
  TEST_CASE("split_shell_words") {
    auto w =
        split_shell_words(R"(  ls -al  '/a b' "c \"d\" \$e" f\ g h'i'"j" )");
    REQUIRE(w);
    CHECK(*w == std::vector<std::string>{"ls", "-al", "/a b", "c \"d\" $e",
                                         "f g", "hij"});
    CHECK(split_shell_words("")->empty());
    CHECK(*split_shell_words("''") == std::vector<std::string>{""});
    CHECK(*split_shell_words("echo $HOME *") ==
          std::vector<std::string>{"echo", "$HOME", "*"});  // no expansion
    CHECK_FALSE(split_shell_words("echo 'oops"));
    CHECK_FALSE(split_shell_words("echo \"oops"));
    CHECK_FALSE(split_shell_words("echo oops\\"));
  }

  TEST_CASE("a runner.yml with options and two benchmarks") {
    auto targets = parse_ok(
        "# project benchmarks\n"
        "options:\n"
        "  warmup-time: 0s   # no warmup\n"
        "  max-time: '5s'\n"
        "  max-rounds: 2\n"
        "  working-directory: sub/dir\n"
        "benchmarks:\n"
        "  - name: short-sleep\n"
        "    id: s1\n"
        "    exec: sleep 0.01\n"
        "\n"
        "  - exec: [\"sh\", -c, 'echo \"a b\" # not a comment']\n"
        "    options: { max-rounds: 10, min-time: \"1s\" }\n"
        "  - exec:\n"
        "      - printf\n"
        "      - \"%s\\n\"\n"
        "    options:\n"
        "      working-directory: /abs\n");
    REQUIRE(targets.size() == 3);
    CHECK(targets[0].name == "short-sleep");
    CHECK(targets[0].command == std::vector<std::string>{"sleep", "0.01"});
    CHECK(targets[0].args.warmup_time == "0s");
    CHECK(targets[0].args.max_time == "5s");
    CHECK(targets[0].args.max_rounds == 2u);
    CHECK_FALSE(targets[0].args.min_rounds);
    CHECK(targets[0].working_directory == "/base/sub/dir");

    CHECK_FALSE(targets[1].name);
    CHECK(targets[1].command ==
          std::vector<std::string>{"sh", "-c", "echo \"a b\" # not a comment"});
    CHECK(targets[1].args.max_rounds == 10u);  // per-benchmark override
    CHECK(targets[1].args.min_time == "1s");
    CHECK(targets[1].args.warmup_time == "0s");  // default kept

    CHECK(targets[2].command == std::vector<std::string>{"printf", "%s\n"});
    CHECK(targets[2].working_directory == "/abs");
  }

  TEST_CASE("lists at the key's indentation, codspeed.yml style") {
    auto targets = parse_ok(
        "---\n"
        "benchmarks:\n"
        "- exec: \"true\"\n"
        "- name: \"quoted: name\"\n"
        "  exec: ls -l\n");
    REQUIRE(targets.size() == 2);
    CHECK(targets[0].command == std::vector<std::string>{"true"});
    CHECK(targets[1].name == "quoted: name");
    CHECK_FALSE(targets[1].working_directory);
  }

  TEST_CASE("bad files give clear errors with file:line") {
    struct Case {
      const char* text;
      const char* expect;
    };
    for (Case c : {
             Case{"benchmarks:\n  - entrypoint: pytest --codspeed\n",
                  "runner.yml:2: 'entrypoint' targets are not supported by "
                  "runner exec"},
             Case{"benchmarks:\n  - name: x\n",
                  "runner.yml:2: benchmark without 'exec:'"},
             Case{"options:\n  max-rounds: 2\n", "no 'benchmarks:' list"},
             Case{"benchmarks: []\n",
                  "runner.yml:1: 'benchmarks' must be a non-empty list"},
             Case{"benchmarks:\n  - exec: ls\n    options:\n      max_rounds: "
                  "3\n",
                  "runner.yml:4: unknown option 'max_rounds'"},
             Case{"options:\n  max-rounds: lots\nbenchmarks:\n  - exec: ls\n",
                  "runner.yml:2: 'max-rounds' must be a positive integer"},
             Case{"options:\n  min-rounds: 0\nbenchmarks:\n  - exec: ls\n",
                  "must be a positive integer"},
             Case{"benchmarks:\n  - exec: \"ls\n",
                  "runner.yml:2: unterminated quoted string"},
             Case{"benchmarks:\n  - exec: echo 'oops\n",
                  "runner.yml:2: exec: unterminated single quote"},
             Case{"benchmarks:\n  - exec: [a, b\n",
                  "runner.yml:2: unterminated '['"},
             Case{"benchmarks:\n\t- exec: ls\n",
                  "runner.yml:2: tabs are not allowed"},
             Case{"benchmarks:\n  - exec: ls\n      oops: 1\n",
                  "runner.yml:3: unexpected indentation"},
             Case{"benchmarks:\n  - exec: &a ls\n",
                  "runner.yml:2: unsupported YAML syntax '&'"},
             Case{"benchmarks:\n  - exec: |\n      ls\n",
                  "unsupported YAML syntax '|'"},
             Case{"benchmarks:\n  - exec: ls\n    exec: pwd\n",
                  "runner.yml:3: duplicate key 'exec'"},
             Case{"bench:\n  - exec: ls\n",
                  "runner.yml:1: unknown key 'bench'"},
             Case{"benchmarks:\n  - exec: ''\n",
                  "'exec' must be a non-empty command"},
             Case{"benchmarks:\n  - ls\n", "each benchmark must be a mapping"},
             Case{"just a string\n", "expected a mapping"},
             Case{"benchmarks:\n  - exec: [ls, [nested]]\n",
                  "'exec' list items must be strings"},
             Case{"benchmarks:\n  - exec: ls\n---\n",
                  "multiple YAML documents"},
         }) {
      INFO(std::string(c.text));
      std::string message = parse_error(c.text);
      CHECK_MESSAGE(message.find(c.expect) != std::string::npos, message);
    }
    // Empty file: an error, not a crash.
    CHECK_FALSE(parse_exec_config("", "runner.yml", "/"));
    CHECK_FALSE(parse_exec_config("# only a comment\n", "runner.yml", "/"));
  }

  TEST_CASE("load_exec_config: discovery order, absent file, bad file") {
    TempDir dir;
    auto none = load_exec_config(dir.path());
    REQUIRE(none);
    CHECK_FALSE(none->has_value());

    REQUIRE(runner::base::write_file_atomic(
        dir.file(".codspeed.yaml"),
        std::string_view("benchmarks:\n  - exec: hidden\n")));
    REQUIRE(runner::base::write_file_atomic(
        dir.file("codspeed.yml"),
        std::string_view("benchmarks:\n  - exec: codspeed\n")));
    auto found = load_exec_config(dir.path());
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK((**found)[0].command[0] == "codspeed");

    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        std::string_view("options:\n  working-directory: w\nbenchmarks:\n  - "
                         "exec: mine\n")));
    found = load_exec_config(dir.path());
    REQUIRE(found);
    CHECK((**found)[0].command[0] == "mine");
    CHECK((**found)[0].working_directory == dir.file("w"));

    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        std::string_view("benchmarks:\n  - entrypoint: x\n")));
    auto bad = load_exec_config(dir.path());
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message().find(dir.file("runner.yml") + ":2:") !=
          std::string::npos);
  }

  TEST_CASE("exec_targets_json: spec 6.1 shape") {
    std::vector<ExecTarget> targets(2);
    targets[0].command = {"sleep", "1"};
    targets[0].name = "optional";
    targets[0].args.max_rounds = 5;
    targets[1].command = {"ls", "-l"};
    targets[1].args.warmup_time = "0s";
    targets[1].working_directory = "/w";
    std::string text = exec_targets_json(targets);
    CHECK(
        text.rfind(
            R"([{"command":["sleep","1"],"name":"optional","walltime_args":{"warmup_time":null,"max_time":null,"min_time":null,"max_rounds":5,"min_rounds":null}})",
            0) == 0);
    auto doc = nlohmann::json::parse(text);
    REQUIRE(doc.size() == 2);
    CHECK_FALSE(doc[0].contains("working_directory"));
    CHECK_FALSE(doc[1].contains("name"));
    CHECK(doc[1]["walltime_args"]["warmup_time"] == "0s");
    CHECK(doc[1]["walltime_args"]["max_rounds"].is_null());
    CHECK(doc[1]["working_directory"] == "/w");
    CHECK(exec_targets_json({}) == "[]");
  }
}
