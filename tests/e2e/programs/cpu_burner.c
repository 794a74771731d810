// cpu_burner MODE MS OUT: burns MS ms of CPU time, then appends the CPU time
// (user + system, ns) of itself and its waited-for children, from getrusage,
// as one line to OUT: the independent measure counters_test.cpp checks the
// runner's task-clock against.
//   spin      one thread, user space
//   threads   three threads of MS ms each
//   fork      two child processes of MS ms each (the parent waits)
//   syscalls  reads of /dev/zero: mostly kernel time
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t cpu_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static void spin(uint64_t ms) {
  const uint64_t end = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000u;
  while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)
    for (int i = 0; i < 10000; ++i) sink += (uint64_t)i * i;
}

static void* spin_thread(void* arg) {
  spin((uint64_t)(uintptr_t)arg);
  return NULL;
}

static void syscalls(uint64_t ms) {
  static char buffer[1 << 16];
  int fd = open("/dev/zero", O_RDONLY);
  if (fd < 0) exit(2);
  const uint64_t end = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000u;
  while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)
    if (read(fd, buffer, sizeof(buffer)) < 0) exit(2);
  close(fd);
}

static uint64_t usage_ns(int who) {
  struct rusage u;
  getrusage(who, &u);
  return ((uint64_t)u.ru_utime.tv_sec + (uint64_t)u.ru_stime.tv_sec) *
             1000000000u +
         ((uint64_t)u.ru_utime.tv_usec + (uint64_t)u.ru_stime.tv_usec) * 1000u;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: cpu_burner spin|threads|fork|syscalls MS OUT\n");
    return 2;
  }
  const uint64_t ms = strtoull(argv[2], NULL, 10);
  if (strcmp(argv[1], "spin") == 0) {
    spin(ms);
  } else if (strcmp(argv[1], "threads") == 0) {
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i)
      pthread_create(&threads[i], NULL, spin_thread, (void*)(uintptr_t)ms);
    for (int i = 0; i < 3; ++i) pthread_join(threads[i], NULL);
  } else if (strcmp(argv[1], "fork") == 0) {
    for (int i = 0; i < 2; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        spin(ms);
        _exit(0);
      }
    }
    while (wait(NULL) > 0) {
    }
  } else if (strcmp(argv[1], "syscalls") == 0) {
    syscalls(ms);
  } else {
    return 2;
  }
  const uint64_t total = usage_ns(RUSAGE_SELF) + usage_ns(RUSAGE_CHILDREN);
  FILE* out = fopen(argv[3], "a");
  if (out == NULL) return 2;
  fprintf(out, "%llu\n", (unsigned long long)total);
  return fclose(out) == 0 ? 0 : 2;
}
