// A benchmark that leaves a daemon behind and exits 0:
//   leave_daemon PID_FILE
// The classic double fork: a child calls setsid() (its own session and
// process group), forks the daemon and exits; the daemon ignores SIGHUP and
// SIGTERM, writes its pid to PID_FILE (temp file + rename) and sleeps
// forever. The benchmark exits once the pid file exists.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string pid_file = argv[1];
  pid_t child = ::fork();
  if (child < 0) return 1;
  if (child == 0) {
    ::setsid();
    pid_t daemon = ::fork();
    if (daemon != 0) _exit(daemon < 0 ? 1 : 0);
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    std::string tmp = pid_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) _exit(1);
    std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
    std::fclose(f);
    if (std::rename(tmp.c_str(), pid_file.c_str()) != 0) _exit(1);
    while (true) ::pause();
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  // The daemon writes its pid file before the benchmark ends.
  for (int i = 0; i < 10000 && ::access(pid_file.c_str(), F_OK) != 0; ++i)
    ::usleep(1000);
  return ::access(pid_file.c_str(), F_OK) == 0 ? 0 : 1;
}
