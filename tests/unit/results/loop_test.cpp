// Option validation, round planning and the measurement
// loop, driven by fake rounds on a fake clock (no timing in the tests).
#include <doctest/doctest.h>

#include "integrations/exec-harness/walltime_loop.hpp"

// Designated initializers of WalltimeOptions leave the other fields empty on
// purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace runner::exec_harness;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000'000'000;

// Each round takes `round_ns` of fake time; `fail_at` (1-based) fails.
struct FakeBench {
  uint64_t now = 1'000'000;
  uint64_t round_ns = 10 * kMs;
  uint64_t calls = 0;
  uint64_t fail_at = 0;
  RoundFn round() {
    return [this]() -> runner::base::Result<Round> {
      ++calls;
      if (calls == fail_at)
        return runner::base::Error("command exited with code 3");
      Round r{now, now + round_ns};
      now += round_ns;
      return r;
    };
  }
  ClockFn clock() {
    return [this] { return now; };
  }
};

// Two commands on one fake clock: A's rounds take a_ns, B's b_ns; every
// call is logged as 'A'/'B' (measured) or 'a'/'b' (warmup); the call
// number `fail_at` (1-based) fails.
struct FakePair {
  uint64_t now = 1'000'000;
  uint64_t a_ns = 10 * kMs, b_ns = 13 * kMs;
  uint64_t fail_at = 0;
  std::string log;
  SideRoundFn round() {
    return [this](Side side, bool measured) -> runner::base::Result<Round> {
      const bool is_a = side == Side::kA;
      log += measured ? (is_a ? 'A' : 'B') : (is_a ? 'a' : 'b');
      if (log.size() == fail_at)
        return runner::base::Error("command exited with code 3");
      const uint64_t took = is_a ? a_ns : b_ns;
      Round r{now, now + took};
      now += took;
      return r;
    };
  }
  ClockFn clock() {
    return [this] { return now; };
  }
};

LoopConfig config_of(runner::format::WalltimeOptions args) {
  auto c = make_loop_config(args);
  REQUIRE_MESSAGE(c, c.error().message());
  return *c;
}

}  // namespace

TEST_SUITE("results") {
  TEST_CASE("make_loop_config: defaults and validation") {
    auto d = config_of({});
    CHECK(d.warmup_time_ns == kS);
    CHECK(d.max_time_ns == 3 * kS);  // only when nothing else is given
    CHECK_FALSE(d.min_time_ns);

    auto r = config_of({.max_rounds = 10});
    CHECK_FALSE(r.max_time_ns);  // unlimited once another constraint exists
    CHECK(config_of({.min_time = 1s}).max_time_ns == std::nullopt);
    CHECK(config_of({.min_rounds = 2}).max_time_ns == std::nullopt);
    CHECK(config_of({.max_time = 0s}).max_time_ns == std::nullopt);
    CHECK(config_of({.warmup_time = 0s}).warmup_time_ns == 0);

    auto min_gt_max = make_loop_config({.max_time = 5s, .min_time = 10s});
    REQUIRE_FALSE(min_gt_max);
    CHECK(min_gt_max.error().message() ==
          "min_time (10.00s) cannot be greater than max_time (5.00s)");
    // max_time 0 means unlimited: no conflict.
    CHECK(make_loop_config({.max_time = 0s, .min_time = 10s}));

    auto rounds = make_loop_config({.max_rounds = 5, .min_rounds = 10});
    REQUIRE_FALSE(rounds);
    CHECK(rounds.error().message() ==
          "min_rounds (10) cannot be greater than max_rounds (5)");
    CHECK_FALSE(make_loop_config({.max_rounds = 0}));
    CHECK_FALSE(make_loop_config({.min_rounds = 0}));

    auto nothing = make_loop_config({.warmup_time = 0s, .max_time = 0s});
    REQUIRE_FALSE(nothing);
    CHECK(nothing.error().message().find("at least one") != std::string::npos);
  }

  TEST_CASE("rounds_from_warmup: the spec's formulas") {
    const uint64_t avg = 100 * kMs;
    bool flag = false;
    // max_time only: (1000 + 100) / 100 = 11.
    CHECK(*rounds_from_warmup(config_of({.max_time = 1s}), avg) == 11);
    // min_time only: (500 + 100) / 100 + 1 = 7.
    CHECK(*rounds_from_warmup(config_of({.min_time = 500ms}), avg) == 7);
    // both: (min + max) / 2 = (7 + 11) / 2 = 9.
    CHECK(*rounds_from_warmup(config_of({.max_time = 1s, .min_time = 500ms}),
                              avg, &flag) == 9);
    CHECK_FALSE(flag);
    // min_rounds + max_time: (5 + 11) / 2 = 8.
    CHECK(*rounds_from_warmup(config_of({.max_time = 1s, .min_rounds = 5}),
                              avg) == 8);
    // min = max(min_rounds, from min_time): max(10, 7) = 10.
    CHECK(*rounds_from_warmup(config_of({.min_time = 500ms, .min_rounds = 10}),
                              avg) == 10);
    // max = min(max_rounds, from max_time): min(4, 11) = 4.
    CHECK(*rounds_from_warmup(config_of({.max_time = 1s, .max_rounds = 4}),
                              avg) == 4);
    // min (12) > max (10): the max wins, with a warning flag.
    CHECK(*rounds_from_warmup(config_of({.min_time = 1s, .max_rounds = 10}),
                              avg, &flag) == 10);
    CHECK(flag);
    // No constraint at all: an error.
    LoopConfig none;
    none.max_time_ns.reset();
    CHECK_FALSE(rounds_from_warmup(none, avg));
    // A zero average (impossible clock) does not divide by zero.
    CHECK(rounds_from_warmup(config_of({.max_time = 1s}), 0));
  }

  TEST_CASE("rounds_without_warmup: max preferred, else min, else degraded") {
    CHECK(rounds_without_warmup(config_of(
              {.warmup_time = 0s, .max_rounds = 5, .min_rounds = 2})) == 5);
    CHECK(rounds_without_warmup(
              config_of({.warmup_time = 0s, .min_rounds = 2})) == 2);
    CHECK(rounds_without_warmup(config_of({.warmup_time = 0s})) ==
          std::nullopt);
  }

  TEST_CASE("run_loop: default options, warmup then rounds cut by max_time") {
    FakeBench bench;
    auto out = run_loop(config_of({.warmup_time = 100ms}), bench.round(),
                        bench.clock());
    REQUIRE(out);
    CHECK(out->warmup_rounds == 10);
    CHECK(out->planned_rounds == 301);  // (3000 + 10) / 10
    CHECK(out->rounds.size() == 300);   // max_time (3 s) reached first
    CHECK(bench.calls == 310);
    for (const Round& r : out->rounds) CHECK(r.end_ns - r.start_ns == 10 * kMs);
  }

  TEST_CASE("run_loop: planned count from warmup") {
    FakeBench bench;
    auto out = run_loop(config_of({.warmup_time = 50ms, .max_rounds = 7}),
                        bench.round(), bench.clock());
    REQUIRE(out);
    CHECK(out->warmup_rounds == 5);
    CHECK(out->rounds.size() == 7);
    CHECK_FALSE(out->single_warmup_round);
  }

  TEST_CASE("run_loop: a single warmup round past max_time is the only round") {
    FakeBench bench;
    bench.round_ns = 2 * kS;
    auto out = run_loop(config_of({.warmup_time = 1s, .max_time = 500ms}),
                        bench.round(), bench.clock());
    REQUIRE(out);
    CHECK(out->single_warmup_round);
    REQUIRE(out->rounds.size() == 1);
    CHECK(out->rounds[0].end_ns - out->rounds[0].start_ns == 2 * kS);
    CHECK(bench.calls == 1);
  }

  TEST_CASE("run_loop: no warmup, explicit rounds") {
    FakeBench bench;
    auto out = run_loop(config_of({.warmup_time = 0s, .max_rounds = 5}),
                        bench.round(), bench.clock());
    REQUIRE(out);
    CHECK(out->warmup_rounds == 0);
    CHECK(out->rounds.size() == 5);
    CHECK(bench.calls == 5);
  }

  TEST_CASE("run_loop: degraded time-only modes") {
    FakeBench a;
    a.round_ns = 30 * kMs;
    auto max_only = run_loop(config_of({.warmup_time = 0s, .max_time = 100ms}),
                             a.round(), a.clock());
    REQUIRE(max_only);
    CHECK_FALSE(max_only->planned_rounds);
    CHECK(max_only->rounds.size() == 4);  // 120 ms >= 100 ms

    FakeBench b;
    b.round_ns = 30 * kMs;
    auto min_only = run_loop(config_of({.warmup_time = 0s, .min_time = 61ms}),
                             b.round(), b.clock());
    REQUIRE(min_only);
    CHECK(min_only->rounds.size() == 3);  // 90 ms >= 61 ms

    // max_time has priority over a round target.
    FakeBench c;
    c.round_ns = 30 * kMs;
    auto both = run_loop(
        config_of({.warmup_time = 0s, .max_time = 100ms, .min_rounds = 50}),
        c.round(), c.clock());
    REQUIRE(both);
    CHECK(both->rounds.size() == 4);
  }

  TEST_CASE("run_loop: a failing round aborts with its error") {
    FakeBench bench;
    bench.fail_at = 3;
    auto out = run_loop(config_of({.warmup_time = 0s, .max_rounds = 5}),
                        bench.round(), bench.clock());
    REQUIRE_FALSE(out);
    CHECK(out.error().message().find("round 3") != std::string::npos);
    CHECK(out.error().message().find("code 3") != std::string::npos);

    FakeBench warm;
    warm.fail_at = 2;
    auto in_warmup =
        run_loop(config_of({.warmup_time = 1s}), warm.round(), warm.clock());
    REQUIRE_FALSE(in_warmup);
    CHECK(in_warmup.error().message().find("warmup") != std::string::npos);
  }

  TEST_CASE("run_interleaved: ABBA order, warmup alternating, equal counts") {
    FakePair pair;
    // Warmup 50 ms of 23 ms pairs: 3 pairs; then 4 measured pairs.
    auto out =
        run_interleaved(config_of({.warmup_time = 50ms, .max_rounds = 4}),
                        pair.round(), pair.clock());
    REQUIRE_MESSAGE(out, out.error().message());
    CHECK(pair.log ==
          "abbaab"
          "ABBAABBA");
    CHECK(out->warmup_pairs == 3);
    CHECK(out->planned_pairs == 4);
    REQUIRE(out->a.size() == 4);
    REQUIRE(out->b.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CHECK(out->a[i].end_ns - out->a[i].start_ns == 10 * kMs);
      CHECK(out->b[i].end_ns - out->b[i].start_ns == 13 * kMs);
    }
    // Pair 0 ran A then B, pair 1 B then A: A1 B1 B2 A2 in time.
    CHECK(out->a[0].end_ns <= out->b[0].start_ns);
    CHECK(out->b[0].end_ns <= out->b[1].start_ns);
    CHECK(out->b[1].end_ns <= out->a[1].start_ns);
    CHECK(out->a[1].end_ns <= out->a[2].start_ns);
    CHECK(first_side_of_pair(0) == Side::kA);
    CHECK(first_side_of_pair(1) == Side::kB);
    CHECK(first_side_of_pair(2) == Side::kA);
  }

  TEST_CASE("run_interleaved: the time limits count pairs, both sides alike") {
    // No warmup, max_time 100 ms of 23 ms pairs: the loop stops after the
    // pair that crosses it (5 pairs), never between A and B.
    FakePair pair;
    auto out =
        run_interleaved(config_of({.warmup_time = 0s, .max_time = 100ms}),
                        pair.round(), pair.clock());
    REQUIRE(out);
    CHECK(pair.log == "ABBAABBAAB");
    CHECK(out->a.size() == 5);
    CHECK(out->b.size() == 5);
    CHECK_FALSE(out->planned_pairs);

    // Planned from the warmup: max_time 230 ms of 23 ms pairs.
    FakePair planned;
    auto from_warmup =
        run_interleaved(config_of({.warmup_time = 46ms, .max_time = 230ms}),
                        planned.round(), planned.clock());
    REQUIRE(from_warmup);
    CHECK(from_warmup->planned_pairs == 11);
    CHECK(from_warmup->a.size() == from_warmup->b.size());
  }

  TEST_CASE("run_interleaved: a single warmup pair past max_time is the pair") {
    FakePair pair;
    pair.a_ns = pair.b_ns = 600 * kMs;  // one pair outlasts the warmup
    auto out =
        run_interleaved(config_of({.warmup_time = 1s, .max_time = 500ms}),
                        pair.round(), pair.clock());
    REQUIRE(out);
    CHECK(pair.log == "ab");
    CHECK(out->single_warmup_pair);
    CHECK(out->a.size() == 1);
    CHECK(out->b.size() == 1);
  }

  TEST_CASE("run_interleaved: a failing round aborts, naming its pair") {
    FakePair pair;
    pair.fail_at = 7;  // A B B A A B [B]: B's round 4
    auto out = run_interleaved(config_of({.warmup_time = 0s, .max_rounds = 5}),
                               pair.round(), pair.clock());
    REQUIRE_FALSE(out);
    CHECK(out.error().message() == "round 4: command exited with code 3");

    FakePair warm;
    warm.fail_at = 2;
    auto in_warmup = run_interleaved(config_of({.warmup_time = 1s}),
                                     warm.round(), warm.clock());
    REQUIRE_FALSE(in_warmup);
    CHECK(in_warmup.error().message() ==
          "warmup round: command exited with code 3");
  }

  TEST_CASE(
      "timed_round: the spawn and a wait for a CPU are inside the round") {
    // The command's spawn takes 3 ms (a busy machine), the program 10 ms.
    uint64_t now = 1'000'000;
    auto clock = [&now] { return now; };
    auto command = [&now]() -> runner::base::Status {
      now += 3 * kMs;   // fork, exec, waiting to be scheduled
      now += 10 * kMs;  // the program
      return {};
    };
    auto round = timed_round(command, clock);
    REQUIRE(round);
    CHECK(round->start_ns == 1'000'000);
    CHECK(round->end_ns - round->start_ns == 13 * kMs);

    auto failing = timed_round(
        []() -> runner::base::Status {
          return runner::base::Error("command exited with code 3");
        },
        clock);
    REQUIRE_FALSE(failing);
    CHECK(failing.error().message() == "command exited with code 3");
  }
}
