/* Spins 100 ms of CPU time, then forks a child that execs argv[1] with the
 * remaining arguments, spins again while it runs and reaps it. Exits with
 * the child's status. */
#include <stdio.h>
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
  if (argc < 2) return 2;
  spin(100);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execv(argv[1], argv + 1);
    perror("execv");
    _exit(127);
  }
  spin(100);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
