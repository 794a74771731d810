// Test program for tests/unit/symbols/names_test.cpp, compiled there with
// `cc` under several PLT layouts: imported libc functions (called through
// PLT entries) and static functions (named only by .symtab or MiniDebugInfo).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int compare_ints(const void* a,
                                                  const void* b) {
  return *(const int*)a - *(const int*)b;
}

__attribute__((noinline)) static size_t static_length(const char* s) {
  return strlen(s) + 1;
}

__attribute__((noinline)) int exported_sum(const int* v, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += v[i];
  return sum;
}

int main(int argc, char** argv) {
  int values[4] = {4, 1, 3, 2};
  qsort(values, 4, sizeof(values[0]), compare_ints);
  char* copy = malloc(64);
  if (copy == NULL) return 2;
  memset(copy, 0, 64);
  strncpy(copy, argv[0], 63);
  puts(copy);
  int r = (int)static_length(copy) + exported_sum(values, 4) + argc;
  free(copy);
  return r == 12345 ? 1 : 0;
}
