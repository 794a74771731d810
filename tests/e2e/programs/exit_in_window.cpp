// Starts a benchmark window and exits while sampling is still enabled.
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "integrations/client/instrument_hooks.hpp"
#include "tests/e2e/programs/spin.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void busy_until_exit(uint64_t ns) {
  g_sink = g_sink + e2e::spin_for(ns, 3);
}

}  // namespace

int main() {
  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-e2e", "1.0.0");
  hooks.start_benchmark();
  busy_until_exit(200000000ull);
  _exit(0);  // no StopBenchmark, no results
}
