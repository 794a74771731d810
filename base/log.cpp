#include "base/log.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "base/fs.hpp"
#include "base/status_line.hpp"
#include "base/text.hpp"

namespace runner::base {
namespace {

struct LogState {
  std::mutex mutex;
  LogLevel default_level = LogLevel::kInfo;
  std::map<std::string, LogLevel, std::less<>> levels;
  FILE* file = nullptr;
  std::string status_line;  // on the terminal now ("" none)
};

constexpr std::string_view kEraseLine = "\r\033[K";

void write_stderr(std::string_view text) {
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

LogState& state() {
  static LogState instance;
  return instance;
}

bool parse_level(std::string_view word, LogLevel& out) {
  if (word == "debug" || word == "trace")
    out = LogLevel::kDebug;
  else if (word == "info")
    out = LogLevel::kInfo;
  else if (word == "warning" || word == "warn")
    out = LogLevel::kWarning;
  else if (word == "error")
    out = LogLevel::kError;
  else
    return false;
  return true;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

}  // namespace

void configure_logging(std::string_view spec) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.default_level = LogLevel::kInfo;
  s.levels.clear();
  while (!spec.empty()) {
    std::string_view item = take_item(spec, ',');
    size_t colon = item.find(':');
    LogLevel level;
    if (colon == std::string_view::npos) {
      if (parse_level(item, level)) s.default_level = level;
    } else if (parse_level(item.substr(colon + 1), level)) {
      s.levels[std::string(item.substr(0, colon))] = level;
    }
  }
}

void configure_logging_from_env() {
  const char* spec = std::getenv("RUNNER_LOG");
  configure_logging(spec != nullptr ? spec : "");
}

bool log_enabled(std::string_view category, LogLevel level) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.levels.find(category);
  LogLevel threshold = it != s.levels.end() ? it->second : s.default_level;
  // The log file records debug messages of every category.
  return level >= threshold || (s.file != nullptr);
}

void log_message(std::string_view category, LogLevel level,
                 std::string_view message) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.levels.find(category);
  LogLevel threshold = it != s.levels.end() ? it->second : s.default_level;
  if (s.file != nullptr) {
    std::fprintf(s.file, "[%s] %s: %.*s\n", level_name(level),
                 std::string(category).c_str(),
                 static_cast<int>(message.size()), message.data());
    std::fflush(s.file);
  }
  if (level < threshold) return;
  std::string line = "runner";
  if (level != LogLevel::kInfo) {
    line += ": ";
    line += level_name(level);
  }
  if (level == LogLevel::kDebug || level == LogLevel::kError) {
    line += " [";
    line += category;
    line += "]";
  }
  line += ": ";
  line += message;
  line += '\n';
  if (!s.status_line.empty()) line = std::string(kEraseLine) + line;
  write_stderr(line);
  write_stderr(s.status_line);
}

void set_status_line(std::string_view line) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (line.empty() && s.status_line.empty()) return;
  s.status_line = line;
  write_stderr(std::string(kEraseLine) + s.status_line);
}

Status set_log_file(const std::string& path) {
  // Created afresh: a symlink planted at the name is replaced, not followed.
  auto fd = create_file(path);
  FILE* file = fd ? ::fdopen(fd->get(), "w") : nullptr;
  if (file != nullptr) (void)fd->release();
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.file != nullptr) std::fclose(s.file);
  s.file = file;
  if (!fd) return std::move(fd.error());
  if (file == nullptr) return errno_error("fdopen " + path);
  return {};
}

void close_log_file() {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.file != nullptr) std::fclose(s.file);
  s.file = nullptr;
}

}  // namespace runner::base
