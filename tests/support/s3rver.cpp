// s3rver for the store tests (see s3rver.hpp).
#include "tests/support/s3rver.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <utility>

namespace runner::testing {
namespace {

// "S3rver listening on 127.0.0.1:PORT" in what the server printed to its
// log file within 30 s; "" when it did not come up. (The log is a file, not
// a pipe: the server logs every request, and would die of SIGPIPE once the
// pipe's reader is gone.)
std::string wait_for_endpoint(int fd) {
  std::string text;
  const auto limit =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < limit) {
    char chunk[512];
    const ssize_t got =
        ::pread(fd, chunk, sizeof(chunk), static_cast<off_t>(text.size()));
    if (got < 0) return "";
    if (got == 0) {
      ::usleep(50 * 1000);
      continue;
    }
    text.append(chunk, static_cast<size_t>(got));
    const std::string marker = "listening on ";
    const size_t at = text.find(marker);
    const size_t end = at == std::string::npos ? at : text.find('\n', at);
    if (end != std::string::npos)
      return "http://" +
             text.substr(at + marker.size(), end - at - marker.size());
  }
  return "";
}

}  // namespace

std::optional<S3rver> S3rver::start(const std::string& data_dir,
                                    const std::string& bucket,
                                    std::string* why_not) {
  const char* dir = std::getenv("S3RVER_DIR");
  const std::string script =
      std::string(dir ? dir : "") + "/node_modules/s3rver/bin/s3rver.js";
  struct stat st {};
  if (dir == nullptr || ::stat(script.c_str(), &st) != 0) {
    *why_not = "s3rver is not installed (" + script +
               " missing: `make test` installs it with npm ci in tests/s3)";
    return std::nullopt;
  }
  const std::string log = data_dir + ".log";
  const int out =
      ::open(log.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    *why_not = "cannot create " + log;
    return std::nullopt;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execlp("node", "node", script.c_str(), "-d", data_dir.c_str(), "-a",
             "127.0.0.1", "-p", "0", "--configure-bucket", bucket.c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  S3rver server;
  server.pid_ = pid;
  server.endpoint_ = pid > 0 ? wait_for_endpoint(out) : "";
  ::close(out);
  if (server.endpoint_.empty()) {
    *why_not = "s3rver did not start (is node installed?)";
    return std::nullopt;
  }
  return server;
}

S3rver::S3rver(S3rver&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      endpoint_(std::move(other.endpoint_)) {}

S3rver& S3rver::operator=(S3rver&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    endpoint_ = std::move(other.endpoint_);
  }
  return *this;
}

S3rver::~S3rver() { kill(); }

std::string S3rver::endpoint() const { return endpoint_; }
pid_t S3rver::pid() const { return pid_; }

void S3rver::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::vector<std::string> S3rver::environment() const {
  return {"AWS_ENDPOINT_URL=" + endpoint_, "AWS_ACCESS_KEY_ID=S3RVER",
          "AWS_SECRET_ACCESS_KEY=S3RVER", "AWS_REGION=us-east-1"};
}

}  // namespace runner::testing
