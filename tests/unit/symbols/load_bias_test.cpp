// compute_load_bias: the worked examples of spec §5.4 plus edge cases.
#include <vector>

#include <doctest/doctest.h>

#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

TEST_SUITE("symbols") {
  TEST_CASE("load bias: go_fib non-PIE, segment contains mapping -> 0") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0x400000,
         .offset = 0,
         .filesz = 0x1000,
         .memsz = 0x1000,
         .flags = 4},
        {.vaddr = 0x402000,
         .offset = 0x2000,
         .filesz = 0x10d000,
         .memsz = 0x10d000,
         .flags = 5},
    };
    auto bias = compute_load_bias(loads, 0x402000, 0x50f000, 0x2000);
    REQUIRE(bias);
    CHECK(*bias == 0);
  }

  TEST_CASE(
      "load bias: divan PIE, mapping contains segment -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0,
         .offset = 0,
         .filesz = 0x4c26c,
         .memsz = 0x4c26c,
         .flags = 4},
        {.vaddr = 0x4e26c,
         .offset = 0x4d26c,
         .filesz = 0xef24a,
         .memsz = 0xef24a,
         .flags = 5},
    };
    auto bias =
        compute_load_bias(loads, 0x5555555a2000, 0x555555692000, 0x4d000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE("load bias: the_algorithms PIE -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0,
         .offset = 0,
         .filesz = 0x51a10,
         .memsz = 0x51a10,
         .flags = 4},
        {.vaddr = 0x53a10,
         .offset = 0x52a10,
         .filesz = 0x100000,
         .memsz = 0x100000,
         .flags = 5},
    };
    auto bias =
        compute_load_bias(loads, 0x5555555a7000, 0x5555556a8000, 0x52000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE(
      "load bias: ty PIE, segment larger than mapping -> 0x555555554000") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0,
         .offset = 0,
         .filesz = 0x916040,
         .memsz = 0x916040,
         .flags = 4},
        {.vaddr = 0x918040,
         .offset = 0x917040,
         .filesz = 0x2000000,
         .memsz = 0x2000000,
         .flags = 5},
    };
    auto bias =
        compute_load_bias(loads, 0x555555e6d000, 0x555555e7d000, 0x918000);
    REQUIRE(bias);
    CHECK(*bias == 0x555555554000);
  }

  TEST_CASE("load bias: first matching segment wins") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0x10000,
         .offset = 0x1000,
         .filesz = 0x1000,
         .memsz = 0x1000,
         .flags = 5},
        {.vaddr = 0x20000,
         .offset = 0x1000,
         .filesz = 0x1000,
         .memsz = 0x1000,
         .flags = 5},
    };
    auto bias =
        compute_load_bias(loads, 0x7f0000001000, 0x7f0000002000, 0x1000);
    REQUIRE(bias);
    CHECK(*bias == 0x7f0000001000 - 0x10000);
  }

  TEST_CASE("load bias: wrapping subtraction") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0x2000,
         .offset = 0,
         .filesz = 0x1000,
         .memsz = 0x1000,
         .flags = 5},
    };
    auto bias = compute_load_bias(loads, 0x1000, 0x2000, 0);
    REQUIRE(bias);
    CHECK(*bias == 0xfffffffffffff000ULL);
    CHECK(*bias + 0x2000 == 0x1000);  // runtime = svma + bias still holds
  }

  TEST_CASE("load bias: no overlapping segment is an error") {
    std::vector<LoadSegment> loads = {
        {.vaddr = 0x400000,
         .offset = 0,
         .filesz = 0x1000,
         .memsz = 0x1000,
         .flags = 4},
    };
    auto bias = compute_load_bias(loads, 0x500000, 0x503000, 0x5000);
    REQUIRE_FALSE(bias);
    CHECK(bias.error().message().find("Could not find segment") !=
          std::string::npos);
    CHECK_FALSE(compute_load_bias({}, 0x1000, 0x2000, 0));
    // Overflowing ranges never match (and never crash).
    std::vector<LoadSegment> huge = {
        {.vaddr = 0,
         .offset = ~0ULL - 10,
         .filesz = 100,
         .memsz = 100,
         .flags = 5},
    };
    CHECK_FALSE(compute_load_bias(huge, 0x1000, 0x2000, ~0ULL - 5));
  }
}

}  // namespace
}  // namespace runner::symbols
