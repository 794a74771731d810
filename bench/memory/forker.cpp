// bench/memory workload: forks and execs itself COUNT times, one process
// after the other, like a shell script running commands:
//   forker COUNT
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return 0;
  const long count = argc > 1 ? std::atol(argv[1]) : 1000;
  for (long i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      ::execl("/proc/self/exe", argv[0], "--child",
              static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      return 1;
  }
  return 0;
}
