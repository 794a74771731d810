// runner.yml / codspeed.yml reading for `runner exec` (through yaml-cpp).
#include "agent/exec_config.hpp"

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::agent;
using runner::format::Duration;
using runner::format::ExecTarget;
using runner::testing::TempDir;
using namespace std::chrono_literals;

namespace {

ExecConfig parse_ok(std::string_view text) {
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

TEST_SUITE("agent") {
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

  TEST_CASE("a runner.yml with options and three benchmarks") {
    auto config = parse_ok(
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
    const auto& targets = config.targets;
    CHECK(config.warnings.empty());
    REQUIRE(targets.size() == 3);
    CHECK(targets[0].name == "short-sleep");
    CHECK(targets[0].command == std::vector<std::string>{"sleep", "0.01"});
    CHECK(targets[0].walltime.warmup_time == Duration(0));
    CHECK(targets[0].walltime.max_time == 5s);
    CHECK(targets[0].walltime.max_rounds == 2u);
    CHECK_FALSE(targets[0].walltime.min_rounds);
    CHECK(targets[0].working_directory == "/base/sub/dir");

    CHECK_FALSE(targets[1].name);
    CHECK(targets[1].command ==
          std::vector<std::string>{"sh", "-c", "echo \"a b\" # not a comment"});
    CHECK(targets[1].walltime.max_rounds == 10u);  // per-benchmark override
    CHECK(targets[1].walltime.min_time == 1s);
    CHECK(targets[1].walltime.warmup_time == Duration(0));  // default kept

    CHECK(targets[2].command == std::vector<std::string>{"printf", "%s\n"});
    CHECK(targets[2].working_directory == "/abs");
  }

  TEST_CASE("lists at the key's indentation, codspeed.yml style") {
    auto targets = parse_ok(
                       "---\n"
                       "benchmarks:\n"
                       "- exec: \"true\"\n"
                       "- name: \"quoted: name\"\n"
                       "  exec: ls -l\n")
                       .targets;
    REQUIRE(targets.size() == 2);
    CHECK(targets[0].command == std::vector<std::string>{"true"});
    CHECK(targets[1].name == "quoted: name");
    CHECK_FALSE(targets[1].working_directory);
  }

  TEST_CASE("block scalars, anchors, aliases, merge keys and flow maps") {
    auto config = parse_ok(
        "defaults: &defaults\n"
        "  warmup-time: 0s\n"
        "  max-rounds: 3\n"
        "options: *defaults\n"
        "benchmarks:\n"
        "  - name: folded\n"
        "    exec: >\n"
        "      sh -c\n"
        "      'echo one'\n"
        "  - name: literal\n"
        "    exec: |\n"
        "      sh -c \"echo two\"\n"
        "    options: {<<: *defaults, max-rounds: 5}\n"
        "  - {name: flow, exec: [echo, \"three\"], options: {min-time: 1m}}\n"
        "  - &reused\n"
        "    name: reused\n"
        "    exec: !!str true\n"
        "  - *reused\n");
    const auto& t = config.targets;
    REQUIRE(t.size() == 5);
    CHECK(t[0].command == std::vector<std::string>{"sh", "-c", "echo one"});
    CHECK(t[0].walltime.max_rounds == 3u);
    CHECK(t[1].command == std::vector<std::string>{"sh", "-c", "echo two"});
    CHECK(t[1].walltime.max_rounds == 5u);  // the mapping's own key wins
    CHECK(t[1].walltime.warmup_time == Duration(0));
    CHECK(t[2].name == "flow");
    CHECK(t[2].command == std::vector<std::string>{"echo", "three"});
    CHECK(t[2].walltime.min_time == 1min);
    CHECK(t[3].command == std::vector<std::string>{"true"});
    CHECK(t[4] == t[3]);
    // `defaults:` is not a key of the schema: a warning with its position.
    REQUIRE(config.warnings.size() == 1);
    CHECK(config.warnings[0] ==
          "runner.yml:1:1: unknown key 'defaults' (expected options or "
          "benchmarks), ignored");
  }

  TEST_CASE("unknown keys are warnings with file:line:column") {
    auto config = parse_ok(
        "benchmarks:\n"
        "  - exec: ls\n"
        "    timeout: 3\n"
        "    options:\n"
        "      max_rounds: 3\n");
    REQUIRE(config.targets.size() == 1);
    REQUIRE(config.warnings.size() == 2);
    CHECK(config.warnings[0] ==
          "runner.yml:3:5: unknown key 'timeout' (expected name, id, exec or "
          "options), ignored");
    CHECK(config.warnings[1].find("runner.yml:5:7: unknown key 'max_rounds' "
                                  "(expected warmup-time,") == 0);
  }

  TEST_CASE("bad files give clear errors with file:line:column") {
    struct Case {
      const char* text;
      const char* expect;
    };
    for (Case c : {
             Case{"benchmarks:\n  - entrypoint: pytest --codspeed\n",
                  "runner.yml:2:5: 'entrypoint' targets are not supported by "
                  "runner exec"},
             Case{"benchmarks:\n  - name: x\n",
                  "runner.yml:2:5: benchmark without 'exec:'"},
             Case{"options:\n  max-rounds: 2\n", "no 'benchmarks:' list"},
             Case{"bench:\n  - exec: ls\n", "no 'benchmarks:' list"},
             Case{"benchmarks: []\n",
                  "runner.yml:1:13: 'benchmarks' must be a non-empty list"},
             Case{"options:\n  max-rounds: lots\nbenchmarks:\n  - exec: ls\n",
                  "runner.yml:2:15: 'max-rounds': invalid round count 'lots'"},
             Case{"options:\n  warmup-time: soon\nbenchmarks:\n  - exec: ls\n",
                  "runner.yml:2:16: 'warmup-time': invalid duration 'soon'"},
             Case{"options:\n  max-time: [1s]\nbenchmarks:\n  - exec: ls\n",
                  "'max-time' must be a string, not a list"},
             Case{"benchmarks:\n  - exec: echo 'oops\n",
                  "runner.yml:2:11: exec: unterminated single quote"},
             Case{"benchmarks:\n  - exec: [a, b\n",
                  "runner.yml:3:1: end of sequence flow not found"},
             Case{"benchmarks:\n\t- exec: ls\n", "runner.yml:2:"},
             Case{"benchmarks:\n  - exec: ls\n    exec: pwd\n",
                  "runner.yml:3:5: duplicate key 'exec'"},
             Case{"benchmarks:\n  - exec: ''\n",
                  "'exec' must be a non-empty command"},
             Case{"benchmarks:\n  - exec:\n", "'exec' must be a non-empty"},
             Case{"benchmarks:\n  - ls\n",
                  "runner.yml:2:5: each benchmark must be a mapping"},
             Case{"just a string\n", "expected a mapping"},
             Case{"benchmarks:\n  - exec: [ls, [nested]]\n",
                  "runner.yml:2:16: 'exec' list items must be strings"},
             Case{"benchmarks:\n  - exec: ls\n---\n",
                  "multiple YAML documents"},
             Case{"benchmarks:\n  - {? [a] : b, exec: ls}\n",
                  "a key must be a string, not a list"},
             Case{"benchmarks:\n  - exec: ls\n    <<: 3\n",
                  "'<<' must merge a mapping"},
             Case{"benchmarks:\n  - exec: *nowhere\n", "runner.yml:2:"},
         }) {
      INFO(std::string(c.text));
      std::string message = parse_error(c.text);
      CHECK_MESSAGE(message.find(c.expect) != std::string::npos, message);
    }
    // Empty file: an error, not a crash.
    CHECK_FALSE(parse_exec_config("", "runner.yml", "/"));
    CHECK_FALSE(parse_exec_config("# only a comment\n", "runner.yml", "/"));
  }

  TEST_CASE("an alias of its own anchor is refused, not followed forever") {
    // yaml-cpp resolves `&a [*a]` into a list that contains itself.
    std::string message = parse_error("benchmarks:\n  - exec: &a [*a]\n");
    CHECK(message.find("'exec' list items must be strings") !=
          std::string::npos);
    message = parse_error("benchmarks: &b [*b]\n");
    CHECK(message.find("each benchmark must be a mapping") !=
          std::string::npos);
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
    CHECK((*found)->targets[0].command[0] == "codspeed");

    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        std::string_view("options:\n  working-directory: w\nbenchmarks:\n  - "
                         "exec: mine\n")));
    found = load_exec_config(dir.path());
    REQUIRE(found);
    CHECK((*found)->targets[0].command[0] == "mine");
    CHECK((*found)->targets[0].working_directory == dir.file("w"));

    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        std::string_view("benchmarks:\n  - entrypoint: x\n")));
    auto bad = load_exec_config(dir.path());
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message().find(dir.file("runner.yml") + ":2:5:") !=
          std::string::npos);
  }
}
