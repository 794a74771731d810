// compute_load_bias: the worked examples of docs/formats.md ("Load bias")
// plus edge cases.
#include <vector>

#include <doctest/doctest.h>

#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

// A PT_LOAD whose file and memory sizes are equal (all of these examples).
LoadSegment segment(uint64_t vaddr, uint64_t offset, uint64_t size,
                    uint32_t flags) {
  return {.vaddr = vaddr,
          .offset = offset,
          .filesz = size,
          .memsz = size,
          .flags = flags};
}

TEST_SUITE("symbols") {
  TEST_CASE("load bias: go_fib non-PIE, segment contains mapping -> 0") {
    std::vector<LoadSegment> loads = {
        segment(0x400000, 0, 0x1000, 4),
        segment(0x402000, 0x2000, 0x10d000, 5),
    };
    auto bias = compute_load_bias(loads, 0x402000, 0x50f000, 0x2000);
    REQUIRE(bias);
    CHECK(*bias == 0);
  }

  TEST_CASE(
      "load bias: divan PIE, mapping contains segment -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        segment(0, 0, 0x4c26c, 4),
        segment(0x4e26c, 0x4d26c, 0xef24a, 5),
    };
    auto bias =
        compute_load_bias(loads, 0x5555555a2000, 0x555555692000, 0x4d000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE("load bias: the_algorithms PIE -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        segment(0, 0, 0x51a10, 4),
        segment(0x53a10, 0x52a10, 0x100000, 5),
    };
    auto bias =
        compute_load_bias(loads, 0x5555555a7000, 0x5555556a8000, 0x52000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE(
      "load bias: ty PIE, segment larger than mapping -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        segment(0, 0, 0x916040, 4),
        segment(0x918040, 0x917040, 0x2000000, 5),
    };
    auto bias =
        compute_load_bias(loads, 0x555555e6d000, 0x555555e7d000, 0x918000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE("load bias: first matching segment wins") {
    std::vector<LoadSegment> loads = {
        segment(0x10000, 0x1000, 0x1000, 5),
        segment(0x20000, 0x1000, 0x1000, 5),
    };
    auto bias =
        compute_load_bias(loads, 0x7f0000001000, 0x7f0000002000, 0x1000);
    REQUIRE(bias);
    CHECK(*bias == 0x7f0000001000 - 0x10000);
  }

  TEST_CASE("load bias: wrapping subtraction") {
    std::vector<LoadSegment> loads = {
        segment(0x2000, 0, 0x1000, 5),
    };
    auto bias = compute_load_bias(loads, 0x1000, 0x2000, 0);
    REQUIRE(bias);
    CHECK(*bias == 0xfffffffffffff000ULL);
    CHECK(*bias + 0x2000 == 0x1000);  // runtime = svma + bias still holds
  }

  TEST_CASE("load bias: no overlapping segment is an error") {
    std::vector<LoadSegment> loads = {
        segment(0x400000, 0, 0x1000, 4),
    };
    auto bias = compute_load_bias(loads, 0x500000, 0x503000, 0x5000);
    REQUIRE_FALSE(bias);
    CHECK(bias.error().message().find("Could not find segment") !=
          std::string::npos);
    CHECK_FALSE(compute_load_bias({}, 0x1000, 0x2000, 0));
    // Overflowing ranges never match (and never crash).
    std::vector<LoadSegment> huge = {
        segment(0, ~0ULL - 10, 100, 5),
    };
    CHECK_FALSE(compute_load_bias(huge, 0x1000, 0x2000, ~0ULL - 5));
  }
}

}  // namespace
}  // namespace runner::symbols
