// exec-harness measurement logic (docs/exec.md, "Rounds"):
// validation of the walltime options (format::WalltimeOptions, parsed by
// format/quantities and shared with `runner exec`), the round-count rules
// derived from the warmup, and the warmup + measurement loop. Rounds and the
// clock are injected, so the whole algorithm is testable without processes;
// main.cpp supplies spawn+wait rounds and CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::exec_harness {

inline constexpr uint64_t kDefaultWarmupTimeNs = 1'000'000'000;
inline constexpr uint64_t kDefaultMaxTimeNs = 3'000'000'000;

// Validated options with defaults applied. A time of std::nullopt means "no
// constraint" (an explicit max_time of 0 is unlimited too).
struct LoopConfig {
  uint64_t warmup_time_ns = kDefaultWarmupTimeNs;
  std::optional<uint64_t> min_time_ns, max_time_ns;
  std::optional<uint64_t> min_rounds, max_rounds;
};

// Defaults: warmup 1 s; max_time 3 s only when none of min_time, max_rounds,
// min_rounds is given. Fails on min_time > max_time, min_rounds >
// max_rounds, zero round counts, or no constraint at all with warmup 0.
base::Result<LoopConfig> make_loop_config(
    const format::WalltimeOptions& options);

// Number of measured rounds from the warmup's average round time (warmup >
// 0): min = max(min_rounds, (min_time+avg)/avg + 1), max = min(max_rounds,
// (max_time+avg)/avg), then (min+max)/2, or max when min > max (sets
// `*min_above_max`), or whichever exists. Error when neither exists.
base::Result<uint64_t> rounds_from_warmup(const LoopConfig& config,
                                          uint64_t avg_round_ns,
                                          bool* min_above_max = nullptr);
// Without warmup: explicit max_rounds, else min_rounds, else std::nullopt
// (the "degraded" time-only mode).
std::optional<uint64_t> rounds_without_warmup(const LoopConfig& config);

struct Round {
  uint64_t start_ns = 0, end_ns = 0;
};

struct LoopOutcome {
  std::vector<Round> rounds;  // measured rounds, in order
  uint64_t warmup_rounds = 0;
  // A single warmup round already reached max_time: it is the only round.
  bool single_warmup_round = false;
  std::optional<uint64_t> planned_rounds;  // nullopt: degraded time-only mode
  bool min_above_max = false;
};

using RoundFn = std::function<base::Result<Round>()>;
using ClockFn = std::function<uint64_t()>;

// One round of `command` (spawn, wait, check its exit): the clock is read
// before the command starts and after it ended, so what the spawn costs,
// and any wait for a CPU around it, is inside the round. Timing after the
// spawn returned made rounds impossibly fast on a busy machine (the command
// could be done before the clock was read).
base::Result<Round> timed_round(const std::function<base::Status()>& command,
                                const ClockFn& clock);

// Warmup (until warmup_time elapsed), then measured rounds until max_time
// (from the loop start; priority), the planned round count, or — without a
// planned count — min_time. Always runs at least one round. The first failing
// round aborts with its error. `before_measured`, when set, is called once
// just before the first measured round (not when a single warmup round is
// the only round).
base::Result<LoopOutcome> run_loop(
    const LoopConfig& config, const RoundFn& round, const ClockFn& clock,
    const std::function<void()>& before_measured = nullptr);

// Interleaved mode (docs/exec.md, "Interleaving"): two commands, A and B,
// alternate round by round inside one loop. Round i of A and round i of B
// form pair i; pair p runs A then B when p is even, B then A when odd
// (A B B A A B B A ...), counted from 0 in the warmup and again from 0 in
// the measured rounds, so that a drift of the machine that is linear over
// two pairs hits both commands alike.
enum class Side { kA = 0, kB = 1 };

struct InterleavedOutcome {
  // The measured rounds of A and of B, in order: always as many of each.
  std::vector<Round> a, b;
  uint64_t warmup_pairs = 0;
  // A single warmup pair already reached max_time: it is the only pair.
  bool single_warmup_pair = false;
  std::optional<uint64_t> planned_pairs;  // nullopt: time-only mode
  bool min_above_max = false;
};

// Whether `targets` ask for the interleaved mode (a target with
// "interleave"), checked: then there are exactly two targets, both marked,
// with equal walltime options (one loop runs both). Two equal names
// (default: the command joined by spaces) become "NAME (A)" and "NAME (B)",
// so that each benchmark keeps a URI of its own. The errors say what to
// change.
base::Result<bool> prepare_interleaved(
    std::vector<format::ExecTarget>& targets);

// One round of `side`; `measured` is false in the warmup.
using SideRoundFn =
    std::function<base::Result<Round>(Side side, bool measured)>;

// The first side of pair `pair` (0-based): A for even pairs, B for odd.
Side first_side_of_pair(uint64_t pair);

// run_loop over pairs: the warmup, the planning and the limits of `config`
// count pairs (max_rounds N: N rounds of each command; the time limits
// cover both commands). The first failing round aborts with its error,
// prefixed with the pair ("round 3: ...", "warmup round 2: ...").
base::Result<InterleavedOutcome> run_interleaved(const LoopConfig& config,
                                                 const SideRoundFn& round,
                                                 const ClockFn& clock);

}  // namespace runner::exec_harness
