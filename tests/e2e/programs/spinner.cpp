// A CPU-bound program with one hot function: spinner [MS] spins for MS ms
// (default 50) in spin_hot().
#include <time.h>

#include <cstdint>
#include <cstdlib>

#include "tests/e2e/programs/spin.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void spin_hot(int ms) {
  g_sink = g_sink + e2e::spin_for(static_cast<uint64_t>(ms) * 1000000ull, 11);
}

}  // namespace

int main(int argc, char** argv) {
  spin_hot(argc > 1 ? std::atoi(argv[1]) : 50);
  return 0;
}
