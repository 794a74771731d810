#include "integrations/exec-harness/walltime_loop.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

namespace runner::exec_harness {
namespace {

__extension__ typedef unsigned __int128 u128;  // exact ns arithmetic
constexpr u128 kMaxNs = std::numeric_limits<uint64_t>::max();

struct Unit {
  std::string_view name;
  uint64_t ns;
};

constexpr uint64_t kSecond = 1'000'000'000;
constexpr std::array<Unit, 22> kUnits{{
    {"ns", 1},
    {"nsec", 1},
    {"us", 1'000},
    {"usec", 1'000},
    {"\xC2\xB5s", 1'000},  // µs
    {"ms", 1'000'000},
    {"msec", 1'000'000},
    {"s", kSecond},
    {"sec", kSecond},
    {"secs", kSecond},
    {"second", kSecond},
    {"seconds", kSecond},
    {"m", 60 * kSecond},
    {"min", 60 * kSecond},
    {"mins", 60 * kSecond},
    {"minute", 60 * kSecond},
    {"minutes", 60 * kSecond},
    {"h", 3600 * kSecond},
    {"hr", 3600 * kSecond},
    {"hrs", 3600 * kSecond},
    {"hour", 3600 * kSecond},
    {"hours", 3600 * kSecond},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Parses "<digits>[.<digits>]" at the start of `s` into `unit`-sized
// nanoseconds, exactly (no floating point). Returns false on no number or
// overflow.
bool take_decimal(std::string_view& s, uint64_t unit, u128& out) {
  size_t i = 0;
  u128 whole = 0;
  bool any = false;
  while (i < s.size() && is_digit(s[i])) {
    whole = whole * 10 + static_cast<u128>(s[i] - '0');
    if (whole > kMaxNs) return false;
    any = true;
    ++i;
  }
  u128 frac = 0, scale = 1;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) {
      // Digits below 1e-19 of a unit cannot change the nanosecond count.
      if (scale < static_cast<u128>(10'000'000'000'000'000'000ULL)) {
        frac = frac * 10 + static_cast<u128>(s[i] - '0');
        scale *= 10;
      }
      any = true;
      ++i;
    }
  }
  if (!any) return false;
  out = whole * unit + frac * unit / scale;
  s.remove_prefix(i);
  return out <= kMaxNs;
}

base::Error duration_error(std::string_view text, std::string_view why) {
  return base::Error("invalid duration '" + std::string(text) +
                     "': " + std::string(why) +
                     " (expected e.g. 500ms, 1.5s, 2m, 1h or a number of "
                     "seconds)");
}

std::string seconds_text(uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2fs", static_cast<double>(ns) / 1e9);
  return buf;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

std::optional<uint64_t> parse_optional_duration(
    const std::optional<std::string>& text, const char* what,
    base::Result<uint64_t>& status) {
  if (!text || !status) return std::nullopt;
  auto parsed = parse_duration_ns(*text);
  if (!parsed) {
    status = std::move(parsed.error()).context(std::string("invalid ") + what);
    return std::nullopt;
  }
  return *parsed;
}

}  // namespace

base::Result<uint64_t> parse_duration_ns(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return duration_error(text, "empty");
  // "-0" disables the warmup like "0"; any other negative value is refused.
  if (s.front() == '-') {
    std::string_view rest = s.substr(1);
    u128 value = 0;
    if (take_decimal(rest, kSecond, value) && rest.empty() && value == 0) {
      return uint64_t{0};
    }
    return duration_error(text, "negative durations are not allowed");
  }
  if (s.front() == '+') s.remove_prefix(1);

  // A bare number is seconds.
  {
    std::string_view rest = s;
    u128 value = 0;
    if (take_decimal(rest, kSecond, value) && rest.empty()) {
      return static_cast<uint64_t>(value);
    }
  }

  u128 total = 0;
  while (!s.empty()) {
    // Each piece is <number><unit>, pieces optionally separated by blanks.
    size_t unit_start = 0;
    while (unit_start < s.size() &&
           (is_digit(s[unit_start]) || s[unit_start] == '.')) {
      ++unit_start;
    }
    size_t unit_end = unit_start;
    while (unit_end < s.size() && !is_blank(s[unit_end]) &&
           !is_digit(s[unit_end])) {
      ++unit_end;
    }
    std::string_view unit_name = s.substr(unit_start, unit_end - unit_start);
    if (unit_start == 0) return duration_error(text, "expected a number");
    if (unit_name.empty()) {
      return duration_error(text, "missing unit after a number");
    }
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (u.name == unit_name) unit = &u;
    }
    if (unit == nullptr) {
      return duration_error(text,
                            "unknown unit '" + std::string(unit_name) + "'");
    }
    std::string_view number = s.substr(0, unit_start);
    u128 value = 0;
    if (!take_decimal(number, unit->ns, value) || !number.empty()) {
      return duration_error(text, "bad number or too large");
    }
    total += value;
    if (total > kMaxNs) return duration_error(text, "too large");
    s.remove_prefix(unit_end);
    s = trim(s);
  }
  return static_cast<uint64_t>(total);
}

base::Result<uint64_t> parse_rounds(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return base::Error("invalid round count: empty");
  uint64_t value = 0;
  for (char c : s) {
    if (!is_digit(c)) {
      return base::Error("invalid round count '" + std::string(text) +
                         "': expected a non-negative integer");
    }
    if (value > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
      return base::Error("invalid round count '" + std::string(text) +
                         "': too large");
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

base::Result<LoopConfig> make_loop_config(const WalltimeArgs& args) {
  base::Result<uint64_t> status = uint64_t{0};
  auto warmup =
      parse_optional_duration(args.warmup_time, "warmup_time", status);
  auto max_time = parse_optional_duration(args.max_time, "max_time", status);
  auto min_time = parse_optional_duration(args.min_time, "min_time", status);
  if (!status) return std::move(status.error());

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

base::Result<LoopOutcome> run_loop(const LoopConfig& config,
                                   const RoundFn& round, const ClockFn& clock) {
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

}  // namespace runner::exec_harness
