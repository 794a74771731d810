// Exec'd by mp_bench between two benchmark windows: says it is loaded (a
// byte on the fd named by E2E_READY_FD, when set), waits for a byte on
// stdin, spins in child_hot(), then announces its own pid so the runner
// snapshots its /proc/<pid>/maps while it is alive.
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "integrations/client/instrument_hooks.hpp"
#include "tests/e2e/programs/spin.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void child_hot(int ms) {
  g_sink = g_sink + e2e::spin_for(static_cast<uint64_t>(ms) * 1000000ull, 7);
}

}  // namespace

int main(int argc, char** argv) {
  int ms = argc > 1 ? std::atoi(argv[1]) : 300;
  if (const char* fd_text = std::getenv("E2E_READY_FD")) {
    const int fd = std::atoi(fd_text);
    if (write(fd, "r", 1) != 1) return 4;
    close(fd);
  }
  char go;
  if (read(STDIN_FILENO, &go, 1) != 1) return 3;
  child_hot(ms);
  runner::client::InstrumentHooks hooks;
  hooks.set_executed_benchmark(static_cast<int32_t>(getpid()),
                               "tests/e2e/programs/child_prog.cpp::announce");
  return 0;
}
