// A benchmark that ignores SIGTERM (and SIGINT, SIGHUP) and never exits on
// its own:  ignore_term PID_FILE
// Writes its pid to PID_FILE (atomically: temp file + rename) once the
// signals are ignored, then sleeps forever. Only SIGKILL ends it.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_IGN);
  std::string tmp = std::string(argv[1]) + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return 1;
  std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
  std::fclose(f);
  if (std::rename(tmp.c_str(), argv[1]) != 0) return 1;
  while (true) ::pause();
}
