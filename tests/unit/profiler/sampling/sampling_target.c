// Test workload for the sampler tests. Modes:
//   spin MS                 busy loop in hot_spin for MS ms of CPU time
//   fork N MS               N forked workers each spin MS, parent waits
//   exec MS PATH ARGS...    sleep MS, then exec PATH ARGS
//   early_exit MS           a child spins MS/4 and exits, the parent spins MS
//   random PATH MS [ARGS]   appends the 16 AT_RANDOM bytes the kernel put on
//                           its initial stack to PATH (32 hex digits and a
//                           newline), then spins MS (ARGS are ignored: they
//                           are there to be looked for)
//   thread_random PATH MS   the same, then spins MS in a second thread
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// CPU time of the calling thread, so that the number of samples does not
// depend on how loaded the machine is.
static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

volatile uint64_t sink;

__attribute__((noinline)) void hot_spin(uint64_t ms) {
  uint64_t end = now_ms() + ms;
  uint64_t x = 1;
  while (1) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + 1;
    sink = x;
    if (now_ms() >= end) break;
  }
}

__attribute__((noinline)) static void run_workers(int n, uint64_t ms) {
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      hot_spin(ms);
      _exit(0);
    }
  }
  while (wait(NULL) > 0) {
  }
}

// The AT_RANDOM bytes as hex, appended to `path` in one write.
static int append_random(const char* path) {
  const unsigned char* bytes = (const unsigned char*)getauxval(AT_RANDOM);
  if (bytes == NULL) return -1;
  char line[34];
  for (int i = 0; i < 16; ++i) snprintf(line + 2 * i, 3, "%02x", bytes[i]);
  line[32] = '\n';
  FILE* out = fopen(path, "a");
  if (out == NULL) return -1;
  fwrite(line, 1, 33, out);
  return fclose(out);
}

static void* spin_thread(void* ms) {
  hot_spin(*(const uint64_t*)ms);
  return NULL;
}

// Spins in a thread of its own (whose stack glibc allocates, with the
// thread's control block at its top).
__attribute__((noinline)) static int spin_in_thread(uint64_t ms) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, spin_thread, &ms) != 0) return 1;
  return pthread_join(thread, NULL) != 0;
}

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "thread_random") == 0) {
    if (append_random(argv[2]) != 0) {
      perror(argv[2]);
      return 1;
    }
    return spin_in_thread(strtoull(argv[3], NULL, 10));
  }
  if (argc >= 4 && strcmp(argv[1], "random") == 0) {
    if (append_random(argv[2]) != 0) {
      perror(argv[2]);
      return 1;
    }
    hot_spin(strtoull(argv[3], NULL, 10));
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "spin") == 0) {
    hot_spin(strtoull(argv[2], NULL, 10));
    return 0;
  }
  if (argc >= 4 && strcmp(argv[1], "fork") == 0) {
    run_workers(atoi(argv[2]), strtoull(argv[3], NULL, 10));
    return 0;
  }
  if (argc >= 4 && strcmp(argv[1], "exec") == 0) {
    usleep((useconds_t)(strtoull(argv[2], NULL, 10) * 1000u));
    execv(argv[3], argv + 3);
    perror("execv");
    return 127;
  }
  if (argc >= 3 && strcmp(argv[1], "early_exit") == 0) {
    uint64_t ms = strtoull(argv[2], NULL, 10);
    pid_t pid = fork();
    if (pid == 0) {
      hot_spin(ms / 4);
      _exit(0);
    }
    hot_spin(ms);
    waitpid(pid, NULL, 0);
    return 0;
  }
  fprintf(stderr,
          "usage: %s spin MS | fork N MS | exec MS PATH ARGS | early_exit MS "
          "| random PATH MS [ARGS] | thread_random PATH MS\n",
          argv[0]);
  return 2;
}
