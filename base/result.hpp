// Result<T>: a value or an Error (errno + context chain). A subset of
// std::expected (not available in C++20 on bookworm), so it can be swapped
// for it later.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace runner::base {

class Error {
 public:
  Error() = default;
  explicit Error(std::string message, int code = 0)
      : code_(code), message_(std::move(message)) {}

  // errno value (0 when the error did not come from a system call).
  int code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prepends context as the error travels up: "reading maps: open: ENOENT".
  Error& context(std::string_view outer) & {
    message_ = std::string(outer) + ": " + message_;
    return *this;
  }
  Error&& context(std::string_view outer) && {
    message_ = std::string(outer) + ": " + message_;
    return std::move(*this);
  }

  // Full text including strerror(code) when code != 0.
  std::string what() const {
    if (code_ == 0) return message_;
    return message_ + ": " + std::strerror(code_);
  }

 private:
  int code_ = 0;
  std::string message_;
};

// Builds an Error from the current errno.
inline Error errno_error(std::string message) {
  return Error(std::move(message), errno);
}
inline Error errno_error(std::string message, int code) {
  return Error(std::move(message), code);
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return storage_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

  Error& error() & { return std::get<1>(storage_); }
  const Error& error() const& { return std::get<1>(storage_); }
  Error&& error() && { return std::get<1>(std::move(storage_)); }

 private:
  std::variant<T, Error> storage_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const {}

  Error& error() & { return error_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace runner::base

// Evaluates a Result expression; on error returns it (with context) from the
// enclosing function, otherwise moves the value into `lhs`.
#define RUNNER_CONCAT_INNER(a, b) a##b
#define RUNNER_CONCAT(a, b) RUNNER_CONCAT_INNER(a, b)
#define RUNNER_ASSIGN_OR_RETURN(lhs, expr, ctx)                              \
  auto RUNNER_CONCAT(result_, __LINE__) = (expr);                            \
  if (!RUNNER_CONCAT(result_, __LINE__))                                     \
    return std::move(RUNNER_CONCAT(result_, __LINE__).error()).context(ctx); \
  lhs = std::move(RUNNER_CONCAT(result_, __LINE__)).value()
#define RUNNER_RETURN_IF_ERROR(expr, ctx)                    \
  do {                                                       \
    auto runner_status_ = (expr);                            \
    if (!runner_status_)                                     \
      return std::move(runner_status_.error()).context(ctx); \
  } while (0)
