// exec-harness: turns commands into walltime benchmarks (spec
// codspeed-runner-walltime.md §6). Each round spawns the command (no shell)
// and waits for it; the rounds are reported to the runner over the FIFO
// (client library) and written to results/<pid>.json.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/child_process.hpp"
#include "base/unique_fd.hpp"
#include "instrument_hooks.hpp"
#include "integrations/exec-harness/walltime_loop.hpp"
#include "integrations/results/walltime_results.hpp"

extern char** environ;

namespace runner::exec_harness {
namespace {

constexpr const char* kIntegrationName = "exec-harness";
constexpr const char* kIntegrationVersion = "1.3.0";
// The name is truncated (the URI is not) so that it stays displayable.
constexpr size_t kMaxNameBytes = 924;

constexpr const char* kUsage =
    "usage: exec-harness [--name NAME] [--warmup-time DUR] [--max-time DUR]\n"
    "                    [--min-time DUR] [--max-rounds N] [--min-rounds N]\n"
    "                    [--] COMMAND [ARGS...]\n"
    "       exec-harness -     (JSON array of benchmarks on stdin)\n"
    "Durations: 500ms, 1.5s, 2m, 1h, 10us, 100ns, or seconds (2, 0.5).\n";

struct Target {
  std::vector<std::string> command;
  std::optional<std::string> name;
  WalltimeArgs args;
  std::optional<std::string> working_directory;
};

// Usage errors exit 2, command-not-found 127, everything else 1.
struct Failure {
  int exit_code;
  std::string message;
};

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

std::optional<Failure> parse_cli(int argc, char** argv,
                                 std::vector<Target>& targets,
                                 bool& read_stdin) {
  Target target;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-" && i == 1 && argc == 2) {
      read_stdin = true;
      return std::nullopt;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the command starts here
    std::string key = arg, value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      key = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const bool takes_value = key == "--name" || key == "--warmup-time" ||
                             key == "--max-time" || key == "--min-time" ||
                             key == "--max-rounds" || key == "--min-rounds";
    if (!takes_value) {
      return Failure{2, "unknown option '" + arg + "'\n" + kUsage};
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return Failure{2, "option " + key + " needs a value\n" + kUsage};
      }
      value = argv[++i];
    }
    if (key == "--name") {
      target.name = value;
    } else if (key == "--warmup-time") {
      target.args.warmup_time = value;
    } else if (key == "--max-time") {
      target.args.max_time = value;
    } else if (key == "--min-time") {
      target.args.min_time = value;
    } else {
      auto rounds = parse_rounds(value);
      if (!rounds) return Failure{2, key + ": " + rounds.error().message()};
      (key == "--max-rounds" ? target.args.max_rounds
                             : target.args.min_rounds) = *rounds;
    }
  }
  for (; i < argc; ++i) target.command.emplace_back(argv[i]);
  if (target.command.empty()) {
    return Failure{2, std::string("missing the command\n") + kUsage};
  }
  targets.push_back(std::move(target));
  return std::nullopt;
}

std::optional<Failure> optional_string(const nlohmann::json& obj,
                                       const char* key,
                                       std::optional<std::string>& out,
                                       const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    return Failure{2, where + ": '" + key + "' must be a string or null"};
  }
  out = it->get<std::string>();
  return std::nullopt;
}

std::optional<Failure> optional_count(const nlohmann::json& obj,
                                      const char* key,
                                      std::optional<uint64_t>& out,
                                      const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned()) {
    return Failure{
        2, where + ": '" + key + "' must be a non-negative integer or null"};
  }
  out = it->get<uint64_t>();
  return std::nullopt;
}

// The spec §6.1 stdin document: [{"command": [...], "name"?: str,
// "walltime_args": {...}}]. "working_directory" (optional string) is our
// extension for runner.yml's working-directory; unknown fields are ignored.
std::optional<Failure> parse_stdin_targets(const std::string& text,
                                           std::vector<Target>& targets) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Failure{2, "stdin: invalid JSON (expected an array of benchmarks)"};
  }
  if (!doc.is_array()) return Failure{2, "stdin: expected a JSON array"};
  if (doc.empty()) return Failure{2, "stdin: no benchmarks given"};
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& item = doc[i];
    const std::string where = "stdin: benchmark #" + std::to_string(i + 1);
    if (!item.is_object()) return Failure{2, where + ": expected an object"};
    Target target;
    auto command = item.find("command");
    if (command == item.end() || !command->is_array() || command->empty()) {
      return Failure{2, where + ": 'command' must be a non-empty array"};
    }
    for (const auto& word : *command) {
      if (!word.is_string()) {
        return Failure{2, where + ": 'command' must hold strings"};
      }
      target.command.push_back(word.get<std::string>());
    }
    if (auto f = optional_string(item, "name", target.name, where)) return f;
    if (auto f = optional_string(item, "working_directory",
                                 target.working_directory, where)) {
      return f;
    }
    auto args = item.find("walltime_args");
    if (args != item.end() && !args->is_null()) {
      if (!args->is_object()) {
        return Failure{2, where + ": 'walltime_args' must be an object"};
      }
      const std::string aw = where + " walltime_args";
      if (auto f = optional_string(*args, "warmup_time",
                                   target.args.warmup_time, aw))
        return f;
      if (auto f = optional_string(*args, "max_time", target.args.max_time, aw))
        return f;
      if (auto f = optional_string(*args, "min_time", target.args.min_time, aw))
        return f;
      if (auto f =
              optional_count(*args, "max_rounds", target.args.max_rounds, aw))
        return f;
      if (auto f =
              optional_count(*args, "min_rounds", target.args.min_rounds, aw))
        return f;
    }
    targets.push_back(std::move(target));
  }
  return std::nullopt;
}

// The children's environment: ours, plus --perf-basic-prof in NODE_OPTIONS
// so Node.js programs write perf-<pid>.map files the runner can symbolize.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  bool found = false;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("NODE_OPTIONS=", 0) == 0) {
      found = true;
      std::string value = entry.substr(13);
      if (value.find("--perf-basic-prof") == std::string::npos) {
        value =
            value.empty() ? "--perf-basic-prof" : value + " --perf-basic-prof";
      }
      entry = "NODE_OPTIONS=" + value;
    }
    env.push_back(std::move(entry));
  }
  if (!found) env.emplace_back("NODE_OPTIONS=--perf-basic-prof");
  return env;
}

std::string truncate_name(std::string name) {
  if (name.size() <= kMaxNameBytes) return name;
  size_t cut = kMaxNameBytes;
  // Never split a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  name.resize(cut);
  return name;
}

std::string format_ns(double ns) {
  char buf[64];
  if (ns >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.3f s", ns / 1e9);
  } else if (ns >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", ns / 1e6);
  } else if (ns >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.3f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  }
  return buf;
}

int fail(const Failure& f) {
  std::fprintf(stderr, "exec-harness: %s\n", f.message.c_str());
  return f.exit_code;
}

int run(int argc, char** argv) {
  if (argc == 2 &&
      (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-V")) {
    std::printf("%s %s\n", kIntegrationName, kIntegrationVersion);
    return 0;
  }
  if (argc == 2 &&
      (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }

  std::vector<Target> targets;
  bool read_stdin = false;
  if (auto f = parse_cli(argc, argv, targets, read_stdin)) return fail(*f);
  if (read_stdin) {
    std::string text((std::istreambuf_iterator<char>(std::cin)),
                     std::istreambuf_iterator<char>());
    if (auto f = parse_stdin_targets(text, targets)) return fail(*f);
  }

  // Everything is validated before the first round runs.
  const char* path_env = std::getenv("PATH");
  std::vector<LoopConfig> configs;
  for (auto& target : targets) {
    const std::string label = target.name.value_or(join(target.command));
    if (target.command[0].empty()) return fail({2, "empty command name"});
    auto config = make_loop_config(target.args);
    if (!config) {
      return fail(
          {2, "benchmark '" + label + "': " + config.error().message()});
    }
    configs.push_back(*config);
    if (target.working_directory) {
      if (::access(target.working_directory->c_str(), X_OK) != 0) {
        return fail({2, "benchmark '" + label + "': working directory " +
                            *target.working_directory + ": " +
                            std::strerror(errno)});
      }
      // A relative program path is relative to the benchmark's directory.
      std::string& program = target.command[0];
      if (program.find('/') != std::string::npos && program[0] != '/') {
        program = *target.working_directory + "/" + program;
      }
    }
    auto found =
        base::find_executable(target.command[0], path_env ? path_env : "");
    if (!found) return fail({127, found.error().what()});
  }

  base::UniqueFd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null)
    return fail({1, std::string("open /dev/null: ") + std::strerror(errno)});
  const std::vector<std::string> env = child_environment();

  client::InstrumentHooks hooks;
  hooks.set_integration(kIntegrationName, kIntegrationVersion);
  const auto pid = static_cast<int32_t>(::getpid());

  std::vector<results::BenchmarkResult> results;
  for (size_t t = 0; t < targets.size(); ++t) {
    const Target& target = targets[t];
    const std::string full_name = target.name.value_or(join(target.command));
    const std::string uri = "exec_harness::" + full_name;

    base::SpawnOptions spawn;
    spawn.argv = target.command;
    spawn.env = env;
    spawn.cwd = target.working_directory.value_or("");
    // stdin may be our JSON input and stdout would interleave with rounds;
    // stderr stays inherited so a failing command's message is shown.
    spawn.stdin_fd = dev_null.get();
    spawn.stdout_fd = dev_null.get();
    RoundFn round = [&spawn]() -> base::Result<Round> {
      RUNNER_ASSIGN_OR_RETURN(base::ChildProcess child,
                              base::ChildProcess::spawn(spawn), "spawn");
      Round r;
      r.start_ns = client::InstrumentHooks::now();
      RUNNER_ASSIGN_OR_RETURN(base::ExitStatus status, child.wait(), "wait");
      r.end_ns = client::InstrumentHooks::now();
      if (!status.success()) {
        return base::Error("command " + status.describe());
      }
      return r;
    };

    hooks.start_benchmark();  // before the warmup: warmup rounds are sampled
    auto outcome = run_loop(configs[t], round, &client::InstrumentHooks::now);
    if (!outcome) {
      hooks.stop_benchmark();
      return fail({1, "benchmark '" + full_name + "' failed: " +
                          outcome.error().what() + " (no results written)"});
    }
    // Markers after the loop, to keep the FIFO out of the measurement.
    std::vector<uint64_t> round_ns;
    round_ns.reserve(outcome->rounds.size());
    for (const Round& r : outcome->rounds) {
      hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_START, r.start_ns);
      hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_END, r.end_ns);
      round_ns.push_back(r.end_ns - r.start_ns);
    }
    hooks.stop_benchmark();
    hooks.set_executed_benchmark(pid, uri);

    if (outcome->min_above_max) {
      std::fprintf(stderr,
                   "exec-harness: %s: rounds needed for the minimum exceed "
                   "the maximum; using the maximum\n",
                   full_name.c_str());
    }
    results::BenchmarkResult result;
    result.name = truncate_name(full_name);
    result.uri = uri;
    result.stats = results::compute_stats(round_ns);
    std::fprintf(
        stderr, "exec-harness: %s: %llu rounds%s, median %s\n",
        full_name.c_str(), static_cast<unsigned long long>(result.stats.rounds),
        outcome->single_warmup_round ? " (one warmup round reached max_time)"
                                     : "",
        format_ns(result.stats.median_ns).c_str());
    results.push_back(std::move(result));
  }

  results::Creator creator{kIntegrationName, kIntegrationVersion,
                           static_cast<uint32_t>(pid)};
  auto written = results::write_results(creator, results);
  if (!written) return fail({1, written.error().what()});
  return 0;
}

}  // namespace
}  // namespace runner::exec_harness

int main(int argc, char** argv) {
  return runner::exec_harness::run(argc, argv);
}
