// A memory-bandwidth neighbour for bench/compare/compare_bench.py: reads and
// writes a buffer far larger than the last-level cache, pass after pass,
// until it is killed. compare_bench.py compiles it with `cc -O2` into its
// output folder and runs it for the whole "memory" condition.
//
//   memory_neighbour [MIB]     (buffer size in MiB, default 256)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

volatile uint64_t g_sink;

int main(int argc, char** argv) {
  const unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  if (mib < 1 || mib > 65536) {
    fprintf(stderr, "memory_neighbour: MIB must be 1..65536\n");
    return 2;
  }
  const size_t count = (size_t)mib * 1024 * 1024 / sizeof(uint64_t);
  uint64_t* buffer = malloc(count * sizeof *buffer);
  if (buffer == NULL) {
    perror("memory_neighbour: malloc");
    return 1;
  }
  for (size_t i = 0; i < count; ++i) buffer[i] = i;
  for (uint64_t pass = 0;; ++pass) {
    // One read and one write of every word: the whole buffer streams
    // through the memory bus each pass.
    for (size_t i = 0; i < count; ++i) buffer[i] = buffer[i] * 3 + pass;
    g_sink = buffer[pass % count];  // keeps the stores observable
  }
}
