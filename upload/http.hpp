// HTTP through libcurl, wrapped here and nowhere else: one request at a
// time on a reusable handle (keep-alive), bodies sent from memory or
// streamed from a file descriptor, responses read into memory (capped) or
// streamed to a file descriptor; optional SigV4 signing (libcurl's
// CURLOPT_AWS_SIGV4) for S3. Retries of transient failures (connection
// errors, timeouts, 5xx, 429 with Retry-After) live in perform_with_retries.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base.hpp"

namespace runner::upload {

inline constexpr uint64_t kMaxMemoryBody = 8u << 20;
inline constexpr uint64_t kMaxErrorBody = 64u << 10;

// SigV4 credentials and scope: "aws:amz:<region>:s3".
struct AwsSigv4 {
  std::string region;
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // sent as x-amz-security-token when not empty
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, POST, PUT, DELETE
  std::string url;
  std::vector<std::string> headers;  // "Name: value", sent as given
  // The body: `body` from memory, or, when body_fd >= 0, body_size bytes
  // read from body_fd at body_offset (pread: the fd's offset is not moved).
  std::string body;
  int body_fd = -1;
  uint64_t body_offset = 0;
  uint64_t body_size = 0;
  // When >= 0, a 2xx response body is written to this fd (from its current
  // offset); otherwise it is kept in HttpResponse::body.
  int response_fd = -1;
  // The most bytes of a 2xx body taken, to memory or to response_fd: a
  // longer one (announced or sent) ends the transfer with an error of code
  // EFBIG, never retried. Of any other status, the first kMaxErrorBody
  // bytes are kept and the transfer ends there (`truncated` set).
  uint64_t max_response_bytes = kMaxMemoryBody;
  std::optional<AwsSigv4> sigv4;
  // Strings that never appear in what is said about this request (errors,
  // status descriptions, retry lines): tokens sent in its headers. The
  // sigv4 keys and session token are added to them.
  std::vector<std::string> secrets;
  std::chrono::milliseconds connect_timeout{15000};
  // The whole request may last this long; through perform_with_retries,
  // its attempts and the waits between them together (retries never
  // multiply it). A transfer slower than 1 KiB/s for 60 s is also cut.
  std::chrono::milliseconds timeout{120000};
};

struct HttpResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;
  bool truncated = false;  // an error body cut at kMaxErrorBody
  // The first header named `name` (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
};

// A transport failure (no HTTP status): the Error's code is ECONNREFUSED,
// ETIMEDOUT, ECONNRESET, EHOSTUNREACH (retried), EFBIG (an answer over
// max_response_bytes) or EIO (not retried); its message is curl's reason,
// secrets redacted and made printable; callers name the request.
class HttpClient {
 public:
  static base::Result<HttpClient> create();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  ~HttpClient();

  // One attempt, ended by request.timeout or by `deadline`, whichever
  // comes first (ETIMEDOUT at once when the deadline has passed).
  base::Result<HttpResponse> perform(
      const HttpRequest& request,
      std::optional<std::chrono::steady_clock::time_point> deadline = {});

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct RetryPolicy {
  int attempts = 5;                            // in all, the first included
  std::chrono::milliseconds base_delay{1000};  // doubled per attempt
  std::chrono::milliseconds max_delay{30000};  // also caps Retry-After
  // Caps every request's timeout (attempts and waits together).
  std::chrono::milliseconds time_limit = std::chrono::milliseconds::max();
};

// RetryPolicy{} with base_delay from RUNNER_HTTP_RETRY_DELAY_MS and
// time_limit from RUNNER_HTTP_TIME_LIMIT_MS when set (tests use a few
// milliseconds and a few seconds).
RetryPolicy retry_policy_from_environment();

// 5xx, 408 and 429.
bool is_transient_status(long status);

// perform() until it gives a non-transient outcome, the attempts are spent
// or the request's time is (request.timeout, capped by the policy's
// time_limit, from the first attempt on: no retry starts, and no wait
// is begun, that would end past it); each retry is logged to `log` as
// "<what>: <why>, retrying in Ns (attempt k of n)". Returns the last
// response (whatever its status) or the last transport error. A 429's or
// 503's Retry-After (seconds) replaces the backoff delay, capped by
// max_delay.
base::Result<HttpResponse> perform_with_retries(HttpClient& client,
                                                const HttpRequest& request,
                                                const RetryPolicy& policy,
                                                std::string_view what,
                                                std::ostream& log);

// "HTTP 401: <the start of the body>": the body with every occurrence of
// each non-empty `secrets` entry replaced by "***" first, then its first
// 300 bytes as one printable line (base::printable_text).
std::string describe_status(const HttpResponse& response,
                            const std::vector<std::string>& secrets = {});

// RFC 3986 percent-encoding: every byte outside A-Z a-z 0-9 - _ . ~ as
// %XX (uppercase), '/' kept when keep_slash (an S3 object key's path).
std::string percent_encode(std::string_view text, bool keep_slash = false);

// `text` with every occurrence of each non-empty secret replaced by "***".
std::string redact(std::string text, const std::vector<std::string>& secrets);

// What a server said, fit to quote: `text` redacted, then its first
// max_bytes as one printable line. Every text from a server goes through
// it before it is printed.
std::string server_text(std::string_view text,
                        const std::vector<std::string>& secrets,
                        size_t max_bytes = 300);

// The request's secrets and its sigv4 keys and session token.
std::vector<std::string> secrets_of(const HttpRequest& request);

}  // namespace runner::upload
