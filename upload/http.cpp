// libcurl, wrapped here and nowhere else (see http.hpp).
#include "upload/http.hpp"

#include <errno.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "base/base.hpp"

#include <curl/curl.h>

namespace runner::upload {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// What the callbacks of one transfer share.
struct Transfer {
  const HttpRequest* request = nullptr;
  uint64_t sent = 0;
  uint64_t received = 0;  // bytes of the current response's body
  HttpResponse response;
  int write_errno = 0;          // the response fd could not be written
  bool too_large = false;       // a 2xx body over max_response_bytes
  bool error_body_cut = false;  // another body cut at kMaxErrorBody
};

uint64_t body_size(const HttpRequest& r) {
  return r.body_fd >= 0 ? r.body_size : r.body.size();
}

size_t read_body(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const HttpRequest& r = *t->request;
  const uint64_t left = body_size(r) - t->sent;
  const size_t want =
      static_cast<size_t>(std::min<uint64_t>(size * count, left));
  if (want == 0) return 0;
  if (r.body_fd < 0) {
    std::copy_n(r.body.data() + t->sent, want, buffer);
    t->sent += want;
    return want;
  }
  ssize_t got;
  do {
    got = ::pread(r.body_fd, buffer, want,
                  static_cast<off_t>(r.body_offset + t->sent));
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return CURL_READFUNC_ABORT;  // a file that shrank
  t->sent += static_cast<uint64_t>(got);
  return static_cast<size_t>(got);
}

bool is_success(long status) { return status >= 200 && status < 300; }

// Returning less than n aborts the transfer: a 2xx body past its cap (an
// error), another body past kMaxErrorBody (what came is kept). The caps
// hold for chunked bodies too, which CURLOPT_MAXFILESIZE cannot see.
size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const bool success = is_success(t->response.status);
  const uint64_t cap = success ? t->request->max_response_bytes : kMaxErrorBody;
  const uint64_t room = cap - std::min(cap, t->received);
  t->received += n;
  if (n > room) {
    if (success) {
      t->too_large = true;
      return 0;
    }
    t->response.body.append(data, static_cast<size_t>(room));
    t->response.truncated = t->error_body_cut = true;
    return 0;
  }
  if (t->request->response_fd >= 0 && success) {
    if (!base::write_all(t->request->response_fd, std::string_view(data, n))) {
      t->write_errno = errno != 0 ? errno : EIO;
      return 0;
    }
    return n;
  }
  t->response.body.append(data, n);
  return n;
}

std::string trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

// Called once per header line; a new status line (after a redirect or a
// 100 Continue) starts the headers afresh.
size_t header_line(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();
    t->response.body.clear();
    t->received = 0;
    const size_t space = line.find(' ');
    if (space != std::string_view::npos)
      t->response.status = std::strtol(line.data() + space + 1, nullptr, 10);
    return line.size();
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    t->response.headers.emplace_back(trim(line.substr(0, colon)),
                                     trim(line.substr(colon + 1)));
  return line.size();
}

// The URL without its query string (which may carry a signature or an
// upload id): what errors name.
std::string url_for_errors(const std::string& url) {
  return url.substr(0, url.find('?'));
}

int errno_of(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return ECONNREFUSED;
    case CURLE_OPERATION_TIMEDOUT:
      return ETIMEDOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return EHOSTUNREACH;
    case CURLE_FILESIZE_EXCEEDED:
      return EFBIG;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return ECONNRESET;
    default:
      return EIO;
  }
}

curl_slist* header_list(const HttpRequest& request) {
  curl_slist* list = nullptr;
  for (const std::string& h : request.headers)
    list = curl_slist_append(list, h.c_str());
  if (request.sigv4 && !request.sigv4->session_token.empty())
    list = curl_slist_append(
        list,
        ("x-amz-security-token: " + request.sigv4->session_token).c_str());
  return list;
}

// Bodies of PUT (and of a POST from a file) go through read_body, so that
// a retry restarts them from the beginning; an in-memory POST body is
// handed to curl whole (SigV4 then hashes it).
void set_method(CURL* curl, const HttpRequest& request, Transfer& transfer) {
  const std::string& m = request.method;
  const bool streamed = m == "PUT" || (m == "POST" && request.body_fd >= 0);
  if (m == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (streamed) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_body);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(body_size(request)));
  } else if (m == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  if (m != "GET" && m != "HEAD" && m != "PUT" && !(m == "POST" && !streamed))
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, m.c_str());
}

void set_options(CURL* curl, const HttpRequest& request, Transfer& transfer,
                 curl_slist* headers, std::string& userpwd,
                 std::string& sigv4_scope, std::chrono::milliseconds limit) {
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(
      curl, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(std::min(request.connect_timeout, limit).count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(limit.count()));
  // An announced Content-Length over the cap fails before any byte.
  curl_easy_setopt(
      curl, CURLOPT_MAXFILESIZE_LARGE,
      static_cast<curl_off_t>(std::min<uint64_t>(
          std::max(request.max_response_bytes, kMaxErrorBody), INT64_MAX)));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_line);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  if (request.sigv4) {
    sigv4_scope = "aws:amz:" + request.sigv4->region + ":s3";
    userpwd = request.sigv4->access_key + ":" + request.sigv4->secret_key;
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4_scope.c_str());
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd.c_str());
  }
  set_method(curl, request, transfer);
}

}  // namespace

struct HttpClient::Impl {
  CURL* curl = nullptr;
  ~Impl() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;
HttpClient::~HttpClient() = default;

base::Result<HttpClient> HttpClient::create() {
  global_init();
  auto impl = std::make_unique<Impl>();
  impl->curl = curl_easy_init();
  if (impl->curl == nullptr) return base::Error("cannot start libcurl");
  return HttpClient(std::move(impl));
}

namespace {

using Clock = std::chrono::steady_clock;

// The time this attempt may take: the request's, cut to the deadline.
std::chrono::milliseconds attempt_limit(
    const HttpRequest& request, std::optional<Clock::time_point> deadline) {
  auto limit = std::max(request.timeout, std::chrono::milliseconds(1));
  if (deadline)
    limit = std::min(limit, std::chrono::ceil<std::chrono::milliseconds>(
                                *deadline - Clock::now()));
  return limit;
}

// The outcome of a finished transfer.
base::Result<HttpResponse> outcome(CURL* curl, const HttpRequest& request,
                                   Transfer& transfer, CURLcode code,
                                   const char* reason) {
  if (transfer.write_errno != 0)
    return base::Error(
        "cannot write the answer of " + url_for_errors(request.url),
        transfer.write_errno);
  if (transfer.too_large || code == CURLE_FILESIZE_EXCEEDED)
    return base::Error(
        server_text(url_for_errors(request.url), secrets_of(request), 200) +
            " answered more than " +
            std::to_string(request.max_response_bytes) + " bytes",
        EFBIG);
  if (code != CURLE_OK && !transfer.error_body_cut) {
    const std::string why = reason[0] != 0 ? reason : curl_easy_strerror(code);
    return base::Error(server_text(why, secrets_of(request), 1000),
                       errno_of(code));
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  transfer.response.status = status;
  return std::move(transfer.response);
}

}  // namespace

base::Result<HttpResponse> HttpClient::perform(
    const HttpRequest& request, std::optional<Clock::time_point> deadline) {
  const auto limit = attempt_limit(request, deadline);
  if (limit.count() <= 0)
    return base::Error(
        "no time left for " +
            server_text(url_for_errors(request.url), secrets_of(request), 200),
        ETIMEDOUT);
  CURL* curl = impl_->curl;
  curl_easy_reset(curl);
  Transfer transfer;
  transfer.request = &request;
  curl_slist* headers = header_list(request);
  std::string userpwd, scope;
  set_options(curl, request, transfer, headers, userpwd, scope, limit);
  char reason[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, reason);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  std::fill(userpwd.begin(), userpwd.end(), '\0');
  return outcome(curl, request, transfer, code, reason);
}

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key.size() == name.size() &&
        ::strncasecmp(key.data(), name.data(), name.size()) == 0)
      return value;
  return std::nullopt;
}

namespace {

// A whole number of milliseconds in [0, max] from the environment.
std::optional<std::chrono::milliseconds> env_milliseconds(const char* name,
                                                          long max) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > max)
    return std::nullopt;
  return std::chrono::milliseconds(value);
}

}  // namespace

RetryPolicy retry_policy_from_environment() {
  RetryPolicy policy;
  if (auto ms = env_milliseconds("RUNNER_HTTP_RETRY_DELAY_MS", 60000))
    policy.base_delay = *ms;
  if (auto ms = env_milliseconds("RUNNER_HTTP_TIME_LIMIT_MS", 86400000);
      ms && ms->count() > 0)
    policy.time_limit = *ms;
  return policy;
}

bool is_transient_status(long status) {
  return status >= 500 || status == 408 || status == 429;
}

namespace {

// Retry-After in seconds (the HTTP-date form is not honoured: the backoff
// applies), capped by the policy's max_delay.
std::optional<std::chrono::milliseconds> retry_after(
    const HttpResponse& response, const RetryPolicy& policy) {
  auto value = response.header("Retry-After");
  if (!value) return std::nullopt;
  char* end = nullptr;
  const long seconds = std::strtol(value->c_str(), &end, 10);
  if (end == value->c_str() || *end != '\0' || seconds < 0) return std::nullopt;
  return std::min<std::chrono::milliseconds>(std::chrono::seconds(seconds),
                                             policy.max_delay);
}

std::chrono::milliseconds backoff(const RetryPolicy& policy, int attempt) {
  auto delay = policy.base_delay;
  for (int i = 1; i < attempt && delay < policy.max_delay; ++i) delay *= 2;
  return std::min(delay, policy.max_delay);
}

std::string seconds_text(std::chrono::milliseconds delay) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", delay.count() / 1000.0);
  return text;
}

}  // namespace

namespace {

bool is_transient_error(int code) {
  return code == ECONNREFUSED || code == ETIMEDOUT || code == ECONNRESET ||
         code == EHOSTUNREACH;
}

}  // namespace

base::Result<HttpResponse> perform_with_retries(HttpClient& client,
                                                const HttpRequest& request,
                                                const RetryPolicy& policy,
                                                std::string_view what,
                                                std::ostream& log) {
  const auto budget = std::min(request.timeout, policy.time_limit);
  const auto start = Clock::now();
  const auto deadline =
      budget >= std::chrono::duration_cast<std::chrono::milliseconds>(
                    Clock::time_point::max() - start)
          ? Clock::time_point::max()
          : start + budget;
  const std::vector<std::string> secrets = secrets_of(request);
  for (int attempt = 1;; ++attempt) {
    auto response = client.perform(request, deadline);
    std::string why;
    std::optional<std::chrono::milliseconds> delay;
    if (!response) {
      if (!is_transient_error(response.error().code())) return response;
      why = response.error().what();
    } else if (is_transient_status(response->status)) {
      why = describe_status(*response, secrets);
      delay = retry_after(*response, policy);
    } else {
      return response;
    }
    if (attempt >= policy.attempts) return response;
    const auto wait = delay.value_or(backoff(policy, attempt));
    if (Clock::now() + wait >= deadline) {
      log << what << ": " << why << ", not retried: the time limit of "
          << seconds_text(budget) << " leaves no time for it\n";
      return response;
    }
    log << what << ": " << why << ", retrying in " << seconds_text(wait)
        << " (attempt " << attempt + 1 << " of " << policy.attempts << ")\n";
    std::this_thread::sleep_for(wait);
  }
}

std::string percent_encode(std::string_view text, bool keep_slash) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      base::append_hex(out, c, base::HexCase::kUpper);
    }
  }
  return out;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + 3))
      text.replace(at, secret.size(), "***");
  }
  return text;
}

std::string server_text(std::string_view text,
                        const std::vector<std::string>& secrets,
                        size_t max_bytes) {
  return base::printable_text(trim(redact(std::string(text), secrets)),
                              max_bytes);
}

std::vector<std::string> secrets_of(const HttpRequest& request) {
  std::vector<std::string> out = request.secrets;
  if (request.sigv4) {
    out.push_back(request.sigv4->access_key);
    out.push_back(request.sigv4->secret_key);
    out.push_back(request.sigv4->session_token);
  }
  return out;
}

std::string describe_status(const HttpResponse& response,
                            const std::vector<std::string>& secrets) {
  std::string text = "HTTP " + std::to_string(response.status);
  const std::string body = server_text(response.body, secrets);
  if (!body.empty()) text += ": " + body;
  return text;
}

}  // namespace runner::upload
