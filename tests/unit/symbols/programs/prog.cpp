// Test program for tests/unit/symbols: mangled names and inlined calls
// (built with -O2 so the outermost-frame logic of debug info is exercised).
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace demo {

__attribute__((always_inline)) inline int square_plus(int x) {
  return x * x + 1;
}

struct Accumulator {
  std::vector<int> values;
  __attribute__((noinline)) void add(int v) {
    values.push_back(square_plus(v));
  }
  __attribute__((noinline)) long total() const {
    long sum = 0;
    for (int v : values) sum += square_plus(v);
    return sum;
  }
};

int outer(int x);

__attribute__((noinline)) int outer(int x) {
  return square_plus(x) + square_plus(x + 1);
}

}  // namespace demo

int main(int argc, char** argv) {
  demo::Accumulator acc;
  int n = argc > 1 ? std::atoi(argv[1]) : 10;
  for (int i = 0; i < n; ++i) acc.add(demo::outer(i));
  std::printf("%ld\n", acc.total());
  return 0;
}
