/* Spins until it used argv[1] milliseconds of CPU time (default 300):
 * CPU time, not wall time, so a loaded machine does not thin the samples. */
#include <stdlib.h>
#include <time.h>

static long long cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static volatile unsigned long sink;

static void __attribute__((noinline)) work(void) {
  for (int i = 0; i < 100000; ++i) sink += (unsigned long)i * 2654435761u;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
  long long end = cpu_ms() + ms;
  while (cpu_ms() < end) work();
  return 0;
}
