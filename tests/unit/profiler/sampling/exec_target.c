// Exec'd by sampling_target in the tracking tests: a second program whose
// MMAP2 record must be present when the tracking event is on.
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t exec_sink;

__attribute__((noinline)) static void exec_target_work(long ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    for (int i = 0; i < 100000; ++i) exec_sink = exec_sink * 3 + 1;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 +
               (now.tv_nsec - start.tv_nsec) / 1000000 <
           ms);
}

int main(int argc, char** argv) {
  exec_target_work(argc > 1 ? atol(argv[1]) : 50);
  return 0;
}
