// A CPU-bound program with one hot function: spinner [MS] spins for MS ms
// (default 50) in spin_hot().
#include <time.h>

#include <cstdint>
#include <cstdlib>

namespace {

volatile uint64_t g_sink = 0;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) void spin_hot(int ms) {
  uint64_t end = now_ns() + static_cast<uint64_t>(ms) * 1000000ull;
  uint64_t x = 11;
  while (now_ns() < end) {
    for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ull + 7;
  }
  g_sink = g_sink + x;
}

}  // namespace

int main(int argc, char** argv) {
  spin_hot(argc > 1 ? std::atoi(argv[1]) : 50);
  return 0;
}
