// Category/severity logger. Levels come from RUNNER_LOG:
//   RUNNER_LOG=debug                     every category at debug
//   RUNNER_LOG=fifo:debug,profiler:info  per category (others stay at info)
// Messages go to stderr and, once set_log_file() was called, to that file
// too (the runner copies it into the profile folder as runner.log).
// Never log in hot paths: count instead and write the counts into artifacts.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace runner::base {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Parses a RUNNER_LOG value; unknown words are ignored. Exposed for tests.
void configure_logging(std::string_view spec);
// Reads RUNNER_LOG from the environment (called once by main).
void configure_logging_from_env();
bool log_enabled(std::string_view category, LogLevel level);
void log_message(std::string_view category, LogLevel level,
                 std::string_view message);
// Also append every message (at any enabled level) to `path`, created afresh
// (whatever was at the name, a planted symlink included, is replaced).
Status set_log_file(const std::string& path);
void close_log_file();

class LogLine {
 public:
  LogLine(std::string_view category, LogLevel level)
      : category_(category), level_(level) {}
  ~LogLine() { log_message(category_, level_, stream_.str()); }
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::string_view category_;
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace runner::base

// RUNNER_LOG("fifo", kWarning) << "text";  (the stream is only built when
// the level is enabled; safe in an unbraced if/else)
#define RUNNER_LOG(category, level)                         \
  for (bool runner_log_once_ = ::runner::base::log_enabled( \
           category, ::runner::base::LogLevel::level);      \
       runner_log_once_; runner_log_once_ = false)          \
  ::runner::base::LogLine(category, ::runner::base::LogLevel::level)
