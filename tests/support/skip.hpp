// Per-case skips. A test case that needs something this machine lacks (a
// PMU, a perf binary, a second user, root) calls RUNNER_SKIP_CASE("why"):
// it prints "SKIP <case>: <why>" and leaves that case only; every other case
// of the binary still runs. The listener in doctest_main.cpp counts the
// skips and lists them at the end of the binary's output, and `make test`
// collects the SKIP lines of every binary from meson's test log.
#pragma once

#include <string>

namespace runner::testing {

// Records a skip of the running test case; RUNNER_SKIP_CASE returns after it.
void note_skip(const std::string& reason);

}  // namespace runner::testing

#define RUNNER_SKIP_CASE(reason)          \
  do {                                    \
    ::runner::testing::note_skip(reason); \
    return;                               \
  } while (0)
