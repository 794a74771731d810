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

#include "base/result.hpp"

namespace runner::upload {

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
  // offset); otherwise it is kept in HttpResponse::body, at most
  // kMaxMemoryBody bytes (the rest is dropped and `truncated` set).
  int response_fd = -1;
  // With response_fd: a 2xx body longer than this is cut off and the
  // request fails with code EFBIG (not retried).
  uint64_t max_response_bytes = UINT64_MAX;
  std::optional<AwsSigv4> sigv4;
  std::chrono::seconds connect_timeout{15};
  // The whole transfer may last this long; a transfer slower than
  // 1 KiB/s for 60 s is also cut (a dead server never hangs an upload).
  std::chrono::seconds timeout{3600};
};

struct HttpResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;
  bool truncated = false;
  // The first header named `name` (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
};

inline constexpr size_t kMaxMemoryBody = 8u << 20;

// A transport failure (no HTTP status): the Error's code is ECONNREFUSED,
// ETIMEDOUT, ECONNRESET, EHOSTUNREACH or EIO (not retried), its message is
// curl's reason; callers name the request. EFBIG: a body longer than
// max_response_bytes (not retried).
class HttpClient {
 public:
  static base::Result<HttpClient> create();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  ~HttpClient();

  base::Result<HttpResponse> perform(const HttpRequest& request);

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct RetryPolicy {
  int attempts = 5;                            // in all, the first included
  std::chrono::milliseconds base_delay{1000};  // doubled per attempt
  std::chrono::milliseconds max_delay{30000};  // also caps Retry-After
};

// RetryPolicy{} with base_delay from RUNNER_HTTP_RETRY_DELAY_MS when set
// (tests use a few milliseconds).
RetryPolicy retry_policy_from_environment();

// 5xx, 408 and 429.
bool is_transient_status(long status);

// perform() until it gives a non-transient outcome or the attempts are
// spent; each retry is logged to `log` as "<what>: <why>, retrying in Ns
// (attempt k of n)". Returns the last response (whatever its status) or the
// last transport error. A 429's or 503's Retry-After (seconds) replaces the
// backoff delay, capped by max_delay.
base::Result<HttpResponse> perform_with_retries(HttpClient& client,
                                                const HttpRequest& request,
                                                const RetryPolicy& policy,
                                                std::string_view what,
                                                std::ostream& log);

// "HTTP 401 Unauthorized: <the first 300 bytes of the body, one line>",
// with every occurrence of each non-empty `secrets` entry replaced by
// "***".
std::string describe_status(const HttpResponse& response,
                            const std::vector<std::string>& secrets = {});

// RFC 3986 percent-encoding: every byte outside A-Z a-z 0-9 - _ . ~ as
// %XX (uppercase), '/' kept when keep_slash (an S3 object key's path).
std::string percent_encode(std::string_view text, bool keep_slash = false);

// `text` with every occurrence of each non-empty secret replaced by "***".
std::string redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace runner::upload
