// exec-harness: turns commands into walltime benchmarks (see
// docs/exec.md). Each round spawns the command (no shell)
// and waits for it; the rounds are reported to the runner over the FIFO
// (client library) and written to results/<pid>.json.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "instrument_hooks.hpp"
#include "integrations/exec-harness/options.hpp"
#include "integrations/exec-harness/walltime_loop.hpp"
#include "integrations/results/walltime_results.hpp"

#include <CLI/CLI.hpp>

extern char** environ;

namespace runner::exec_harness {
namespace {

constexpr const char* kIntegrationName = "exec-harness";
constexpr const char* kIntegrationVersion = "1.3.0";
// The name is truncated (the URI is not) so that it stays displayable.
constexpr size_t kMaxNameBytes = 924;

constexpr const char* kDescription =
    "Runs COMMAND (no shell) as a walltime benchmark: warmup rounds, then\n"
    "measured rounds of spawn + wait, reported to the runner over its FIFOs\n"
    "and written to $CODSPEED_PROFILE_FOLDER/results/<pid>.json.\n"
    "'exec-harness -' reads the benchmarks as a JSON array on stdin instead.";

using format::ExecTarget;

// Usage errors exit 2, command-not-found 127, everything else 1; 0 with no
// message after --help or --version.
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

// "exec-harness -": the exec targets JSON array on stdin (docs/formats.md).
std::optional<Failure> read_stdin_targets(std::vector<ExecTarget>& targets) {
  std::string text((std::istreambuf_iterator<char>(std::cin)),
                   std::istreambuf_iterator<char>());
  auto read = format::read_exec_targets(text);
  if (!read) return Failure{2, "stdin: " + read.error().message()};
  targets = std::move(*read);
  return std::nullopt;
}

// The options, then COMMAND [ARGS...] (the first argument that is not an
// option, or everything after `--`).
std::optional<Failure> parse_command_line(int argc, char** argv,
                                          std::vector<ExecTarget>& targets) {
  if (argc == 2 && std::string_view(argv[1]) == "-")
    return read_stdin_targets(targets);
  CLI::App app(kDescription, "exec-harness");
  app.formatter(std::make_shared<CommandUsageFormatter>("exec-harness -"));
  app.set_version_flag("-V,--version", std::string(kIntegrationName) + " " +
                                           kIntegrationVersion);
  app.prefix_command();
  ExecTarget target;
  add_benchmark_options(app, target);
  const std::string hint = " (see 'exec-harness --help')";
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return Failure{app.exit(e), ""};
  } catch (const CLI::ParseError& e) {
    return Failure{2, e.what() + hint};
  }
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest[0] == "--") {
    rest.erase(rest.begin());
  } else if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
    return Failure{2, "unknown option '" + rest[0] + "'" + hint};
  }
  if (rest.empty()) return Failure{2, "missing the command" + hint};
  target.command = std::move(rest);
  targets.push_back(std::move(target));
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
  if (!f.message.empty())
    std::fprintf(stderr, "exec-harness: %s\n", f.message.c_str());
  return f.exit_code;
}

// Checks every target before the first round runs: its walltime options,
// its working directory and that its program is found. A relative program
// path is made relative to the benchmark's working directory.
std::optional<Failure> validate_targets(std::vector<ExecTarget>& targets,
                                        std::vector<LoopConfig>& configs) {
  const char* path_env = std::getenv("PATH");
  for (auto& target : targets) {
    const std::string label = target.name.value_or(join(target.command));
    if (target.command[0].empty()) return Failure{2, "empty command name"};
    auto config = make_loop_config(target.walltime);
    if (!config) {
      return Failure{2,
                     "benchmark '" + label + "': " + config.error().message()};
    }
    configs.push_back(*config);
    if (target.working_directory) {
      if (::access(target.working_directory->c_str(), X_OK) != 0) {
        return Failure{2, "benchmark '" + label + "': working directory " +
                              *target.working_directory + ": " +
                              std::strerror(errno)};
      }
      std::string& program = target.command[0];
      if (program.find('/') != std::string::npos && program[0] != '/') {
        program = *target.working_directory + "/" + program;
      }
    }
    auto found =
        base::find_executable(target.command[0], path_env ? path_env : "");
    if (!found) return Failure{127, found.error().what()};
  }
  return std::nullopt;
}

// What every round of every target shares.
struct Harness {
  client::InstrumentHooks hooks;
  std::vector<std::string> env;
  int dev_null = -1;
  int32_t pid = 0;
};

// How a target's command is started in every round.
base::SpawnOptions spawn_options(const Harness& harness,
                                 const ExecTarget& target) {
  base::SpawnOptions spawn;
  spawn.argv = target.command;
  spawn.env = harness.env;
  spawn.cwd = target.working_directory.value_or("");
  // stdin may be our JSON input and stdout would interleave with rounds;
  // stderr stays inherited so a failing command's message is shown.
  spawn.stdin_fd = harness.dev_null;
  spawn.stdout_fd = harness.dev_null;
  return spawn;
}

// One round: spawn the command and wait for it, timed from before the
// spawn; a failing command fails the round.
RoundFn spawn_round(const base::SpawnOptions& spawn) {
  return [&spawn]() -> base::Result<Round> {
    auto command = [&spawn]() -> base::Status {
      RUNNER_ASSIGN_OR_RETURN(base::ChildProcess child,
                              base::ChildProcess::spawn(spawn), "spawn");
      RUNNER_ASSIGN_OR_RETURN(base::ExitStatus status, child.wait(), "wait");
      if (!status.success()) return base::Error("command " + status.describe());
      return {};
    };
    return timed_round(command, &client::InstrumentHooks::now);
  };
}

// Sends the rounds to the runner as markers (after the loop, to keep the
// FIFO out of the measurement); returns the time of each.
std::vector<uint64_t> mark_rounds(Harness& harness,
                                  const std::vector<Round>& rounds) {
  std::vector<uint64_t> round_ns;
  round_ns.reserve(rounds.size());
  for (const Round& r : rounds) {
    harness.hooks.add_marker(harness.pid, MARKER_TYPE_BENCHMARK_START,
                             r.start_ns);
    harness.hooks.add_marker(harness.pid, MARKER_TYPE_BENCHMARK_END, r.end_ns);
    round_ns.push_back(r.end_ns - r.start_ns);
  }
  return round_ns;
}

// The result of a benchmark's rounds, and its line on stderr.
results::BenchmarkResult make_result(const std::string& full_name,
                                     const std::string& uri,
                                     const LoopOutcome& outcome,
                                     std::vector<uint64_t> round_ns) {
  if (outcome.min_above_max) {
    std::fprintf(stderr,
                 "exec-harness: %s: rounds needed for the minimum exceed "
                 "the maximum; using the maximum\n",
                 full_name.c_str());
  }
  results::BenchmarkResult result;
  result.name = truncate_name(full_name);
  result.uri = uri;
  result.stats = results::compute_stats(round_ns);
  // The warmup rounds (inside the benchmark's window, but for interleaved
  // runs: the runner's CPU counters count them only when the window's time
  // holds them); a single warmup round that reached max_time is the
  // measured round itself.
  result.stats.warmup_iters =
      outcome.single_warmup_round ? 0 : outcome.warmup_rounds;
  // The raw rounds, for `runner compare`: one spawn + wait per round.
  result.iters_per_round.assign(round_ns.size(), 1);
  result.times_per_round_ns = std::move(round_ns);
  std::fprintf(
      stderr, "exec-harness: %s: %llu rounds%s, median %s\n", full_name.c_str(),
      static_cast<unsigned long long>(result.stats.rounds),
      outcome.single_warmup_round ? " (one warmup round reached max_time)" : "",
      format_ns(result.stats.median_ns).c_str());
  return result;
}

// Runs one target's warmup and rounds between start and stop of a
// benchmark; its result, or the failure that ends the harness.
std::variant<results::BenchmarkResult, Failure> run_target(
    Harness& harness, const ExecTarget& target, const LoopConfig& config) {
  const std::string full_name = target.name.value_or(join(target.command));
  const std::string uri = "exec_harness::" + full_name;

  const base::SpawnOptions spawn = spawn_options(harness, target);
  const RoundFn round = spawn_round(spawn);

  harness.hooks.start_benchmark();  // before the warmup: warmup is sampled
  auto outcome = run_loop(config, round, &client::InstrumentHooks::now);
  if (!outcome) {
    harness.hooks.stop_benchmark();
    return Failure{1, "benchmark '" + full_name + "' failed: " +
                          outcome.error().what() + " (no results written)"};
  }
  std::vector<uint64_t> round_ns = mark_rounds(harness, outcome->rounds);
  harness.hooks.stop_benchmark();
  harness.hooks.set_executed_benchmark(harness.pid, uri);
  return make_result(full_name, uri, *outcome, std::move(round_ns));
}

// The two benchmarks of the interleaved mode (docs/exec.md,
// "Interleaving"). Each measured round is a benchmark window of its own:
// StartBenchmark, the round, its RoundStart/RoundEnd markers,
// StopBenchmark, then CurrentBenchmark with its URI, so that the profile's
// samples and ExecutionTimestamps' rounds go to the benchmark whose round
// it was. Every round is preceded by the same FIFO traffic, whichever
// command it runs; the warmup is not sampled.
struct Interleaved {
  Harness& harness;
  std::array<std::string, 2> names, uris;
  std::array<RoundFn, 2> rounds;

  // Closes the open window of `side`'s round: its markers, StopBenchmark,
  // then its URI.
  void close_window(size_t side, const Round& round) {
    (void)mark_rounds(harness, {round});
    harness.hooks.stop_benchmark();
    harness.hooks.set_executed_benchmark(harness.pid, uris[side]);
  }

  // A round that ran outside any window, told to the runner afterwards.
  void announce(size_t side, const Round& round) {
    harness.hooks.start_benchmark();
    close_window(side, round);
  }

  base::Result<Round> run(Side which, bool measured) {
    const auto side = static_cast<size_t>(which);
    if (measured) harness.hooks.start_benchmark();
    auto round = rounds[side]();
    if (!round) {
      if (measured) harness.hooks.stop_benchmark();
      return std::move(round).error().context("'" + names[side] + "'");
    }
    if (measured) close_window(side, *round);
    return round;
  }
};

std::vector<uint64_t> durations(const std::vector<Round>& rounds) {
  std::vector<uint64_t> out;
  out.reserve(rounds.size());
  for (const Round& r : rounds) out.push_back(r.end_ns - r.start_ns);
  return out;
}

// Runs targets[0] (A) and targets[1] (B) alternately in ABBA order; their
// two results, A's first, or the failure that ends the harness.
std::variant<std::vector<results::BenchmarkResult>, Failure>
run_interleaved_targets(Harness& harness,
                        const std::vector<ExecTarget>& targets,
                        const LoopConfig& config) {
  const std::array<base::SpawnOptions, 2> spawns{
      spawn_options(harness, targets[0]), spawn_options(harness, targets[1])};
  Interleaved run{harness, {}, {}, {}};
  for (size_t i = 0; i < 2; ++i) {
    run.names[i] = targets[i].name.value_or(join(targets[i].command));
    run.uris[i] = "exec_harness::" + run.names[i];
    run.rounds[i] = spawn_round(spawns[i]);
  }
  auto outcome = run_interleaved(
      config,
      [&run](Side side, bool measured) { return run.run(side, measured); },
      &client::InstrumentHooks::now);
  if (!outcome) {
    return Failure{1, "interleaved benchmarks '" + run.names[0] + "' and '" +
                          run.names[1] + "' failed: " + outcome.error().what() +
                          " (no results written)"};
  }
  // A single warmup pair reached max_time: it is the measured pair, told to
  // the runner now (unsampled).
  if (outcome->single_warmup_pair) {
    run.announce(0, outcome->a[0]);
    run.announce(1, outcome->b[0]);
  }
  LoopOutcome a, b;
  a.rounds = outcome->a;
  b.rounds = outcome->b;
  a.single_warmup_round = b.single_warmup_round = outcome->single_warmup_pair;
  a.min_above_max = outcome->min_above_max;
  std::fprintf(stderr,
               "exec-harness: interleaved: %zu pairs in ABBA order (A: '%s', "
               "B: '%s')\n",
               outcome->a.size(), run.names[0].c_str(), run.names[1].c_str());
  std::vector<results::BenchmarkResult> out;
  out.push_back(make_result(run.names[0], run.uris[0], a, durations(a.rounds)));
  out.push_back(make_result(run.names[1], run.uris[1], b, durations(b.rounds)));
  return out;
}

int run(int argc, char** argv) {
  std::vector<ExecTarget> targets;
  if (auto f = parse_command_line(argc, argv, targets)) return fail(*f);
  auto interleaved = prepare_interleaved(targets);
  if (!interleaved) return fail({2, interleaved.error().what()});
  std::vector<LoopConfig> configs;
  if (auto f = validate_targets(targets, configs)) return fail(*f);

  base::UniqueFd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null)
    return fail({1, std::string("open /dev/null: ") + std::strerror(errno)});
  Harness harness;
  harness.env = child_environment();
  harness.dev_null = dev_null.get();
  harness.hooks.set_integration(kIntegrationName, kIntegrationVersion);
  harness.pid = static_cast<int32_t>(::getpid());

  std::vector<results::BenchmarkResult> results;
  if (*interleaved) {
    auto both = run_interleaved_targets(harness, targets, configs[0]);
    if (auto* failure = std::get_if<Failure>(&both)) return fail(*failure);
    results = std::get<std::vector<results::BenchmarkResult>>(std::move(both));
  }
  for (size_t t = 0; t < targets.size() && !*interleaved; ++t) {
    auto result = run_target(harness, targets[t], configs[t]);
    if (auto* failure = std::get_if<Failure>(&result)) return fail(*failure);
    results.push_back(std::get<results::BenchmarkResult>(std::move(result)));
  }

  results::Creator creator{kIntegrationName, kIntegrationVersion,
                           static_cast<uint32_t>(harness.pid)};
  auto written = results::write_results(creator, results);
  if (!written) return fail({1, written.error().what()});
  return 0;
}

}  // namespace
}  // namespace runner::exec_harness

int main(int argc, char** argv) {
  return runner::exec_harness::run(argc, argv);
}
