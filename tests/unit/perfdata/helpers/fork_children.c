/* Forks argv[1] children (default 3); every process spins argv[2] ms
 * (default 200) of CPU time; the parent reaps them all. */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static volatile unsigned long sink;

static void spin(long ms) {
  long long end = cpu_ms() + ms;
  while (cpu_ms() < end)
    for (int i = 0; i < 10000; ++i) sink += (unsigned long)i;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  long ms = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      spin(ms);
      _exit(0);
    }
  }
  spin(ms);
  int status;
  while (wait(&status) > 0) {
  }
  return 0;
}
