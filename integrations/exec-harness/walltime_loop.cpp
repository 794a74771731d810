#include "integrations/exec-harness/walltime_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace runner::exec_harness {
namespace {

std::string seconds_text(uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2fs", static_cast<double>(ns) / 1e9);
  return buf;
}

std::optional<uint64_t> to_ns(const std::optional<format::Duration>& d) {
  if (!d) return std::nullopt;
  return static_cast<uint64_t>(d->count());
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

}  // namespace

base::Result<LoopConfig> make_loop_config(const format::WalltimeOptions& args) {
  const auto warmup = to_ns(args.warmup_time);
  const auto max_time = to_ns(args.max_time);
  const auto min_time = to_ns(args.min_time);
  if (args.max_rounds && *args.max_rounds == 0) {
    return base::Error("max_rounds must be at least 1");
  }
  if (args.min_rounds && *args.min_rounds == 0) {
    return base::Error("min_rounds must be at least 1");
  }

  LoopConfig config;
  config.warmup_time_ns = warmup.value_or(kDefaultWarmupTimeNs);
  const bool other_constraint =
      args.min_time || args.max_rounds || args.min_rounds;
  uint64_t max_ns = max_time.value_or(other_constraint ? 0 : kDefaultMaxTimeNs);
  if (max_ns > 0) config.max_time_ns = max_ns;
  config.min_time_ns = min_time;
  config.min_rounds = args.min_rounds;
  config.max_rounds = args.max_rounds;

  if (config.max_time_ns && config.min_time_ns &&
      *config.min_time_ns > *config.max_time_ns) {
    return base::Error("min_time (" + seconds_text(*config.min_time_ns) +
                       ") cannot be greater than max_time (" +
                       seconds_text(*config.max_time_ns) + ")");
  }
  if (config.min_rounds && config.max_rounds &&
      *config.min_rounds > *config.max_rounds) {
    return base::Error("min_rounds (" + std::to_string(*config.min_rounds) +
                       ") cannot be greater than max_rounds (" +
                       std::to_string(*config.max_rounds) + ")");
  }
  if (config.warmup_time_ns == 0 && !config.min_rounds && !config.max_rounds &&
      !config.min_time_ns && !config.max_time_ns) {
    return base::Error(
        "when warmup is disabled, at least one of min_rounds, max_rounds, "
        "min_time or max_time must be set");
  }
  return config;
}

base::Result<uint64_t> rounds_from_warmup(const LoopConfig& config,
                                          uint64_t avg_round_ns,
                                          bool* min_above_max) {
  if (min_above_max != nullptr) *min_above_max = false;
  const uint64_t avg = std::max<uint64_t>(avg_round_ns, 1);
  std::optional<uint64_t> min_rounds = config.min_rounds;
  if (config.min_time_ns) {
    uint64_t from_time =
        saturating_add(saturating_add(*config.min_time_ns, avg) / avg, 1);
    min_rounds = min_rounds ? std::max(*min_rounds, from_time) : from_time;
  }
  std::optional<uint64_t> max_rounds = config.max_rounds;
  if (config.max_time_ns) {
    uint64_t from_time = saturating_add(*config.max_time_ns, avg) / avg;
    max_rounds = max_rounds ? std::min(*max_rounds, from_time) : from_time;
  }
  if (min_rounds && max_rounds) {
    if (*min_rounds > *max_rounds) {
      if (min_above_max != nullptr) *min_above_max = true;
      return *max_rounds;
    }
    // Average without overflow.
    return *min_rounds + (*max_rounds - *min_rounds) / 2;
  }
  if (max_rounds) return *max_rounds;
  if (min_rounds) return *min_rounds;
  return base::Error("unable to determine the number of rounds to perform");
}

std::optional<uint64_t> rounds_without_warmup(const LoopConfig& config) {
  if (config.max_rounds) return config.max_rounds;
  return config.min_rounds;
}

base::Result<Round> timed_round(const std::function<base::Status()>& command,
                                const ClockFn& clock) {
  Round r;
  r.start_ns = clock();
  if (base::Status done = command(); !done) return std::move(done.error());
  r.end_ns = clock();
  return r;
}

base::Result<LoopOutcome> run_loop(
    const LoopConfig& config, const RoundFn& round, const ClockFn& clock,
    const std::function<void()>& before_measured) {
  LoopOutcome outcome;
  if (config.warmup_time_ns > 0) {
    std::vector<Round> warmup;
    const uint64_t warmup_start = clock();
    const uint64_t warmup_deadline =
        saturating_add(warmup_start, config.warmup_time_ns);
    while (clock() < warmup_deadline) {
      RUNNER_ASSIGN_OR_RETURN(Round r, round(), "warmup round");
      warmup.push_back(r);
    }
    const uint64_t warmup_end = clock();
    outcome.warmup_rounds = warmup.size();
    if (warmup.size() == 1 && config.max_time_ns &&
        warmup[0].end_ns - warmup[0].start_ns >= *config.max_time_ns) {
      outcome.single_warmup_round = true;
      outcome.rounds = std::move(warmup);
      outcome.planned_rounds = 1;
      return outcome;
    }
    // The clock could already be past the deadline: at least one round.
    if (warmup.empty()) {
      RUNNER_ASSIGN_OR_RETURN(Round r, round(), "warmup round");
      warmup.push_back(r);
      outcome.warmup_rounds = 1;
    }
    const uint64_t avg =
        (std::max(warmup_end, clock()) - warmup_start) / warmup.size();
    RUNNER_ASSIGN_OR_RETURN(
        uint64_t planned,
        rounds_from_warmup(config, avg, &outcome.min_above_max),
        "planning rounds");
    outcome.planned_rounds = planned;
  } else {
    outcome.planned_rounds = rounds_without_warmup(config);
    if (!outcome.planned_rounds && !config.min_time_ns && !config.max_time_ns) {
      return base::Error(
          "when warmup is disabled, at least one constraint (min_rounds, "
          "max_rounds, min_time or max_time) must be set");
    }
  }

  // Reserve for the plan, but never trust a huge count with memory.
  if (outcome.planned_rounds) {
    outcome.rounds.reserve(
        std::min<uint64_t>(*outcome.planned_rounds, 1 << 16));
  }
  if (before_measured) before_measured();
  const uint64_t loop_start = clock();
  while (true) {
    RUNNER_ASSIGN_OR_RETURN(
        Round r, round(), "round " + std::to_string(outcome.rounds.size() + 1));
    outcome.rounds.push_back(r);
    const uint64_t elapsed = clock() - loop_start;
    if (config.max_time_ns && elapsed >= *config.max_time_ns) break;
    if (outcome.planned_rounds &&
        outcome.rounds.size() >= *outcome.planned_rounds) {
      break;
    }
    if (!outcome.planned_rounds && config.min_time_ns &&
        elapsed >= *config.min_time_ns) {
      break;
    }
  }
  return outcome;
}

base::Result<bool> prepare_interleaved(
    std::vector<format::ExecTarget>& targets) {
  const auto marked = std::count_if(targets.begin(), targets.end(),
                                    [](const auto& t) { return t.interleave; });
  if (marked == 0) return false;
  if (targets.size() != 2 || marked != 2)
    return base::Error(
        "interleaving alternates exactly two benchmarks, A and B (" +
        std::to_string(targets.size()) + " given" +
        (targets.size() == 2 ? ", one not marked \"interleave\"" : "") + ")");
  if (!(targets[0].walltime == targets[1].walltime))
    return base::Error(
        "interleaved benchmarks run in one loop: give both the same "
        "walltime options");
  auto name_of = [](const format::ExecTarget& t) {
    if (t.name) return *t.name;
    std::string joined;
    for (const auto& word : t.command)
      joined += (joined.empty() ? "" : " ") + word;
    return joined;
  };
  const std::string a = name_of(targets[0]), b = name_of(targets[1]);
  if (a == b) {
    targets[0].name = a + " (A)";
    targets[1].name = b + " (B)";
  }
  return true;
}

Side first_side_of_pair(uint64_t pair) {
  return pair % 2 == 0 ? Side::kA : Side::kB;
}

base::Result<InterleavedOutcome> run_interleaved(const LoopConfig& config,
                                                 const SideRoundFn& round,
                                                 const ClockFn& clock) {
  // Every pair's rounds, warmup included; the measured pairs are the last
  // outcome.rounds.size() of them.
  std::vector<Round> a, b;
  uint64_t pair = 0;
  bool measured = false;
  auto run_pair = [&]() -> base::Result<Round> {
    const Side first = first_side_of_pair(pair++);
    const Side second = first == Side::kA ? Side::kB : Side::kA;
    auto r1 = round(first, measured);
    if (!r1) return std::move(r1).error();
    auto r2 = round(second, measured);
    if (!r2) return std::move(r2).error();
    (first == Side::kA ? a : b).push_back(*r1);
    (second == Side::kA ? a : b).push_back(*r2);
    return Round{r1->start_ns, r2->end_ns};
  };
  auto start_measuring = [&] {
    pair = 0;
    measured = true;
  };
  auto loop = run_loop(config, run_pair, clock, start_measuring);
  if (!loop) return std::move(loop).error();
  InterleavedOutcome outcome;
  outcome.warmup_pairs = loop->warmup_rounds;
  outcome.single_warmup_pair = loop->single_warmup_round;
  outcome.planned_pairs = loop->planned_rounds;
  outcome.min_above_max = loop->min_above_max;
  const size_t n = loop->rounds.size();
  outcome.a.assign(a.end() - static_cast<ptrdiff_t>(n), a.end());
  outcome.b.assign(b.end() - static_cast<ptrdiff_t>(n), b.end());
  return outcome;
}

}  // namespace runner::exec_harness
