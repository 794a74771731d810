// A deterministic CPU workload of about 30 ms for `runner compare`
// (tests/e2e/compare_workload_test.cpp, bench/compare/): three stages with
// distinct names, never inlined or cloned so that each keeps its own
// symbol and self time: stage_parse (~40% of the time), stage_hash (~30%),
// stage_sort (~30%). Built -O2 -g -fno-omit-frame-pointer, unsanitized.
//
//   compare_workload [--slower PCT | --scale PCT]
//
// --slower PCT gives stage_hash, and only it, more work, so that the whole
// program takes about PCT% longer (10: stage_hash does 1 + 10/30 times its
// work); its share of the time grows, the others' shrink. How much longer
// depends on stage_hash's share on the machine at hand.
// --scale PCT gives every stage 1 + PCT/100 times its work: the program's
// work takes PCT% longer on any machine, its split unchanged (the
// calibration of bench/compare, which needs a known change).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#define STAGE __attribute__((noinline))
#else
#define STAGE __attribute__((noinline, noclone))
#endif

// Work units per stage, calibrated on the 2-core development VM for the
// 40/30/30 split; kHashShare is stage_hash's share of the whole process.
enum { kParsePasses = 1150, kHashBlocks = 9000, kSortPasses = 195 };
static const double kHashShare = 0.30;

enum { kTextBytes = 16384, kHashBytes = 16384, kBlockBytes = 1024 };
enum { kSortValues = 1024 };

static char g_text[kTextBytes];
static uint8_t g_bytes[kHashBytes];
static uint32_t g_values[kSortValues];
volatile uint64_t g_sink;

static uint32_t g_seed = 12345;
static uint32_t next_random(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed;
}

// Comma-separated decimal numbers, one line per 12 of them.
static void make_text(void) {
  size_t at = 0;
  int column = 0;
  while (at + 12 < kTextBytes) {
    at += (size_t)snprintf(g_text + at, kTextBytes - at, "%u",
                           next_random() % 100000u);
    g_text[at++] = (++column % 12 == 0) ? '\n' : ',';
  }
  memset(g_text + at, '\n', kTextBytes - at);
}

// Sums the numbers of the text, `passes` times.
STAGE uint64_t stage_parse(const char* text, size_t size, int passes) {
  uint64_t sum = 0;
  for (int p = 0; p < passes; ++p) {
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) {
      const unsigned char c = (unsigned char)text[i];
      if (c >= '0' && c <= '9') {
        value = value * 10 + (c - '0');
      } else {
        sum = (sum ^ value) * 31 + (uint64_t)p;
        value = 0;
      }
    }
  }
  return sum;
}

// FNV-1a over `blocks` blocks of 1 KiB, cycling through the buffer (a
// dependent chain: its time is proportional to the blocks).
STAGE uint64_t stage_hash(const uint8_t* bytes, size_t size, long blocks) {
  uint64_t h = 14695981039346656037ull;
  size_t at = 0;
  for (long b = 0; b < blocks; ++b) {
    for (size_t i = 0; i < kBlockBytes; ++i) {
      h = (h ^ bytes[at + i]) * 1099511628211ull;
    }
    at = (at + kBlockBytes) % size;
  }
  return h;
}

// Shell sort of a fresh pseudo-random array, `passes` times.
STAGE uint64_t stage_sort(uint32_t* values, size_t count, int passes) {
  static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
  uint64_t sum = 0;
  uint32_t x = 7;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < count; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      values[i] = x;
    }
    for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); ++g) {
      const size_t gap = gaps[g];
      for (size_t i = gap; i < count; ++i) {
        const uint32_t v = values[i];
        size_t j = i;
        for (; j >= gap && values[j - gap] > v; j -= gap) {
          values[j] = values[j - gap];
        }
        values[j] = v;
      }
    }
    sum += values[count / 2];
  }
  return sum;
}

static int usage(void) {
  fprintf(stderr, "usage: compare_workload [--slower PCT | --scale PCT]\n");
  return 2;
}

// Work units scaled by `factor`, rounded.
static long scaled(long units, double factor) {
  return (long)((double)units * factor + 0.5);
}

int main(int argc, char** argv) {
  double slower = 0, scale = 0;
  if (argc == 3 &&
      (strcmp(argv[1], "--slower") == 0 || strcmp(argv[1], "--scale") == 0)) {
    char* end = NULL;
    const double pct = strtod(argv[2], &end);
    if (end == argv[2] || *end != '\0' || pct < 0 || pct > 1000) {
      return usage();
    }
    *(strcmp(argv[1], "--slower") == 0 ? &slower : &scale) = pct;
  } else if (argc != 1) {
    return usage();
  }
  make_text();
  for (size_t i = 0; i < kHashBytes; ++i) g_bytes[i] = (uint8_t)next_random();

  const double all = 1.0 + scale / 100.0;
  const long hash_blocks =
      scaled(kHashBlocks, all * (1.0 + slower / 100.0 / kHashShare));
  uint64_t sink =
      stage_parse(g_text, kTextBytes, (int)scaled(kParsePasses, all));
  sink ^= stage_hash(g_bytes, kHashBytes, hash_blocks);
  sink ^= stage_sort(g_values, kSortValues, (int)scaled(kSortPasses, all));
  g_sink = sink;
  return 0;
}
