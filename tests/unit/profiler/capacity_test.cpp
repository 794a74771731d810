// The capacity model (profiler/capacity.hpp): the drain's share of a core
// and the ring buffers under the locked-memory limit, for requests that fit
// and requests that do not, and the suggestions it makes.
#include "profiler/capacity.hpp"

#include <limits>
#include <string>

#include <doctest/doctest.h>

namespace runner::profiler {
namespace {

// An ordinary user on Debian's defaults: 516 KiB per CPU, ulimit -l 8 MiB.
MachineLimits user_limits(uint32_t cpus) {
  MachineLimits limits;
  limits.cpus = cpus;
  limits.page_size = 4096;
  limits.perf_event_mlock_kb = 516;
  limits.memlock_bytes = 8ULL << 20;
  return limits;
}

MachineLimits root_limits(uint32_t cpus) {
  MachineLimits limits = user_limits(cpus);
  limits.lock_unlimited = true;
  return limits;
}

SamplerOptions dwarf(uint32_t frequency, uint32_t stack) {
  SamplerOptions options;
  options.frequency = frequency;
  options.stack_size = stack;
  return options;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("capacity") {
  TEST_CASE("the default request fits 2 CPUs, as a user and as root") {
    for (uint32_t cpus : {1u, 2u}) {
      CAPTURE(cpus);
      for (const MachineLimits& limits :
           {user_limits(cpus), root_limits(cpus)}) {
        auto e = estimate_capacity(SamplerOptions{}, limits);
        CHECK(e.samples_per_second == uint64_t{cpus} * 997);
        CHECK(e.bytes_per_sample == 8192 + kSampleOverheadBytes);
        CHECK_FALSE(e.drain_too_slow);
        CHECK_FALSE(e.buffers_limited);
        CHECK(e.buffer_bytes == default_mmap_size(SamplerOptions{}));
        CHECK(capacity_warnings(e, SamplerOptions{}, limits).empty());
        CHECK(contains(format_capacity(e, SamplerOptions{}, limits),
                       "This request fits this machine."));
      }
    }
  }

  TEST_CASE("on 16 CPUs the default drains fine; a user's buffers shrink") {
    auto root = estimate_capacity(SamplerOptions{}, root_limits(16));
    CHECK_FALSE(root.drain_too_slow);
    CHECK_FALSE(root.buffers_limited);
    CHECK(capacity_warnings(root, SamplerOptions{}, root_limits(16)).empty());
    // 16 x (4 MiB + a page) is more than 16 x 516 KiB + 8 MiB: the sampler
    // maps 1 MiB per CPU, about 120 ms of samples.
    auto user = estimate_capacity(SamplerOptions{}, user_limits(16));
    CHECK_FALSE(user.drain_too_slow);
    CHECK(user.buffer_bytes == (1ULL << 20));
    CHECK(user.buffers_limited);
    auto warnings = capacity_warnings(user, SamplerOptions{}, user_limits(16));
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "lower --freq or --call-graph dwarf,SIZE"));
  }

  TEST_CASE("the drain's cost grows with the stack written and the CPUs") {
    auto limits = root_limits(2);
    auto fp_options = SamplerOptions{};
    fp_options.call_graph = CallGraphMode::kFramePointer;
    auto fp = estimate_capacity(fp_options, limits);
    auto small = estimate_capacity(dwarf(997, 2048), limits);
    auto large = estimate_capacity(dwarf(997, 4096), limits);
    CHECK(fp.drain_us_per_sample * 1000.0 ==
          doctest::Approx(kDrainNsPerSample));
    CHECK(small.drain_us_per_sample * 1000.0 ==
          doctest::Approx(kDrainNsPerSample + kDrainNsPerDwarfSample +
                          2 * kDrainNsPerStackKiB));
    CHECK(large.drain_us_per_sample > small.drain_us_per_sample);
    // Copies are written cut to the program's stack: asking for more than
    // kWrittenStackBytes is charged as that much.
    auto asked = estimate_capacity(dwarf(997, 32768), limits);
    CHECK(asked.drain_us_per_sample ==
          doctest::Approx(large.drain_us_per_sample));
    CHECK(fp.bytes_per_sample == kSampleOverheadBytes);
    auto sixteen = estimate_capacity(dwarf(997, 2048), root_limits(16));
    CHECK(sixteen.drain_core_share ==
          doctest::Approx(8 * small.drain_core_share));
  }

  TEST_CASE("100 kHz x dwarf,65528 on 2 CPUs is too much, with a way out") {
    auto limits = root_limits(2);
    auto options = dwarf(100000, 65528);
    auto e = estimate_capacity(options, limits);
    CHECK(e.drain_too_slow);
    CHECK(e.drain_core_share > kMaxDrainCoreShare);
    auto warnings = capacity_warnings(e, options, limits);
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "lower --freq (at most about " +
                                    std::to_string(e.max_frequency) + " Hz"));
    // The suggested frequency fits, one more hertz does not.
    REQUIRE(e.max_frequency > 0);
    CHECK_FALSE(estimate_capacity(dwarf(e.max_frequency, 65528), limits)
                    .drain_too_slow);
    CHECK(estimate_capacity(dwarf(e.max_frequency + 1, 65528), limits)
              .drain_too_slow);
  }

  TEST_CASE("the suggested stack size fits at the requested frequency") {
    // 16 CPUs at 10 kHz with dwarf,32768: the case of the 16-CPU machine.
    auto limits = root_limits(16);
    auto options = dwarf(10000, 32768);
    auto e = estimate_capacity(options, limits);
    REQUIRE(e.drain_too_slow);
    REQUIRE(e.max_stack_size >= 1024);
    CHECK(e.max_stack_size % 8 == 0);
    CHECK(e.max_stack_size < 32768);
    auto warnings = capacity_warnings(e, options, limits);
    REQUIRE(!warnings.empty());
    CHECK(contains(warnings[0],
                   "--call-graph dwarf," + std::to_string(e.max_stack_size)));
    CHECK_FALSE(estimate_capacity(dwarf(10000, e.max_stack_size), limits)
                    .drain_too_slow);
    CHECK(estimate_capacity(dwarf(10000, e.max_stack_size + 8), limits)
              .drain_too_slow);
  }

  TEST_CASE("frame pointers are suggested when no useful dwarf size fits") {
    // 0.5 core / (64 CPUs x 20 kHz) is about 390 ns per sample: above a
    // frame-pointer sample's cost, below any dwarf sample's.
    auto limits = root_limits(64);
    auto options = dwarf(20000, 8192);
    auto e = estimate_capacity(options, limits);
    REQUIRE(e.drain_too_slow);
    CHECK(e.max_stack_size == 0);
    auto warnings = capacity_warnings(e, options, limits);
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "--call-graph fp"));
    // And not when even they do not.
    auto crowded = root_limits(512);
    auto e2 = estimate_capacity(options, crowded);
    CHECK_FALSE(contains(capacity_warnings(e2, options, crowded)[0],
                         "--call-graph fp"));
  }

  TEST_CASE("the locked-memory limit shrinks the buffers as the sampler does") {
    // 997 Hz x dwarf,16384 wants 8 MiB per CPU; a user on 2 CPUs may lock
    // 2 x 516 KiB + 8 MiB: 4 MiB buffers, about 250 ms of samples.
    auto limits = user_limits(2);
    auto options = dwarf(997, 16384);
    auto e = estimate_capacity(options, limits);
    CHECK(e.wanted_buffer_bytes == (8ULL << 20));
    CHECK(e.buffer_bytes == (4ULL << 20));
    CHECK(e.lock_limit_bytes == (2 * 516ULL + 8192) << 10);
    CHECK(e.buffer_ms == doctest::Approx(4194304.0 * 1000 / (997.0 * 16896)));
    CHECK(e.buffers_limited);
    CHECK_FALSE(e.drain_too_slow);
    auto warnings = capacity_warnings(e, options, limits);
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "shrinks the ring buffers to 4096 KiB"));
    CHECK(contains(warnings[0], "kernel.perf_event_mlock_kb=8196"));
    // Root has no limit; neither has perf_event_paranoid -1.
    CHECK_FALSE(estimate_capacity(options, root_limits(2)).buffers_limited);
    // An explicit smaller --mmap-size is what the user asked for.
    options.mmap_size = 1ULL << 20;
    CHECK_FALSE(estimate_capacity(options, limits).buffers_limited);
  }

  TEST_CASE("no room for even the smallest buffer: sampling will fail") {
    MachineLimits limits = user_limits(4);
    limits.perf_event_mlock_kb = 0;
    limits.memlock_bytes = 64 << 10;
    auto options = dwarf(997, 8192);
    auto e = estimate_capacity(options, limits);
    CHECK(e.buffers_fail);
    CHECK(e.buffer_bytes == 0);
    auto warnings = capacity_warnings(e, options, limits);
    REQUIRE(warnings.size() == 1);
    CHECK(contains(warnings[0], "sampling will fail"));
    CHECK(contains(format_capacity(e, options, limits), "Warning: "));
  }

  TEST_CASE("an unlimited ulimit -l lifts the limit") {
    MachineLimits limits = user_limits(2);
    limits.memlock_bytes = std::numeric_limits<uint64_t>::max();
    auto e = estimate_capacity(dwarf(997, 65528), limits);
    CHECK(e.lock_limit_bytes == std::numeric_limits<uint64_t>::max());
    CHECK(e.buffer_bytes == e.wanted_buffer_bytes);
    CHECK_FALSE(e.buffers_limited);
  }
}

}  // namespace runner::profiler
