// LogLimiter: caps a warning that outside input (a client, a benchmark) can
// repeat without bound. The first `limit` occurrences are logged, the last
// of them says that further ones are only counted, and the count can be
// reported once at the end.
//
//   base::LogLimiter enable_errors(10);
//   if (enable_errors.admit())
//     RUNNER_LOG("agent", kError) << "..." << enable_errors.note();
//   ...
//   if (enable_errors.suppressed() > 0) RUNNER_LOG(...) << ...;
#pragma once

#include <cstdint>
#include <string>

namespace runner::base {

class LogLimiter {
 public:
  explicit LogLimiter(uint64_t limit) : limit_(limit) {}

  // Counts one occurrence; true when it is to be logged.
  bool admit() { return ++seen_ <= limit_; }
  // Text to append to the message admit() let through: empty, except for
  // the last one logged.
  std::string note() const {
    return seen_ == limit_ ? " (further ones are counted, not logged)" : "";
  }
  uint64_t seen() const { return seen_; }
  uint64_t suppressed() const { return seen_ > limit_ ? seen_ - limit_ : 0; }

 private:
  uint64_t limit_;
  uint64_t seen_ = 0;
};

}  // namespace runner::base
