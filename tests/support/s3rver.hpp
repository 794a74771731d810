// A real S3-protocol server for tests: s3rver 3.7.1 from npm (installed by
// `make test` under tests/s3/node_modules), started on 127.0.0.1 with its
// own data folder and one bucket, and killed with the test.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/skip.hpp"

namespace runner::testing {

class S3rver {
 public:
  // std::nullopt with *why_not set when node or s3rver is missing (the
  // case then skips with that reason) or it does not come up.
  static std::optional<S3rver> start(const std::string& data_dir,
                                     const std::string& bucket,
                                     std::string* why_not);
  S3rver(S3rver&&) noexcept;
  S3rver& operator=(S3rver&&) noexcept;
  ~S3rver();

  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  pid_t pid() const;
  void kill();  // SIGKILL now (a server dying mid-upload)
  // AWS_* variables for the runner: endpoint, S3RVER/S3RVER keys, region.
  std::vector<std::string> environment() const;

 private:
  S3rver() = default;
  pid_t pid_ = -1;
  std::string endpoint_;
};

}  // namespace runner::testing

// Starts s3rver as `server` (data in dir/s3, bucket "bench") and runs the
// block that follows only when it came up; otherwise the case skips with
// the reason.
#define RUNNER_WITH_S3RVER(server, dir)                                   \
  std::string server##_why_not;                                           \
  auto server = runner::testing::S3rver::start((dir).file("s3"), "bench", \
                                               &server##_why_not);        \
  if (!server) RUNNER_SKIP_CASE(server##_why_not);                        \
  if (server)
