// Starts a benchmark window and exits while sampling is still enabled.
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "integrations/client/instrument_hooks.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void busy_until_exit(uint64_t ns) {
  uint64_t end = runner::client::InstrumentHooks::now() + ns;
  uint64_t x = 3;
  while (runner::client::InstrumentHooks::now() < end) {
    for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ull + 1;
  }
  g_sink = g_sink + x;
}

}  // namespace

int main() {
  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-e2e", "1.0.0");
  hooks.start_benchmark();
  busy_until_exit(200000000ull);
  _exit(0);  // no StopBenchmark, no results
}
