// The S3 API subset of the store, path-style, SigV4-signed by libcurl (see
// s3.hpp). With curl 7.88 the query string is signed as written, so every
// query below is already sorted by name and canonically encoded, and the
// payload hash header (x-amz-content-sha256) is always given.
#include "upload/s3.hpp"

#include <errno.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/base.hpp"
#include "upload/digest.hpp"

namespace runner::upload {
namespace {

constexpr const char* kUnsignedPayload = "UNSIGNED-PAYLOAD";
constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxTokenBytes = 4096;

// A bucket and key as errors and logs show them (keys may come from a
// listing: printable whatever they hold).
std::string display(const std::string& bucket, const std::string& key) {
  return "s3://" + bucket + "/" + base::printable_text(key, 2 * kMaxKeyBytes);
}

// No part between slashes is empty, "." or "..".
bool parts_are_names(std::string_view path) {
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool is_bucket_name(const std::string& bucket) {
  const auto alnum = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  return bucket.size() >= 3 && bucket.size() <= 63 && alnum(bucket.front()) &&
         alnum(bucket.back()) && bucket.find("..") == std::string::npos &&
         std::all_of(bucket.begin(), bucket.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// A prefix list() may be given: a key's start, so a trailing '/' is fine.
bool is_safe_prefix(std::string_view prefix) {
  if (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return prefix.empty() || is_safe_s3_key(prefix);
}

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               start);
}

// The time a transfer of `bytes` may take: 2 minutes, plus what 256 KiB/s
// needs for the bytes.
std::chrono::milliseconds transfer_timeout(uint64_t bytes) {
  return std::chrono::milliseconds(120000) +
         std::chrono::milliseconds(
             std::min<uint64_t>(bytes / 262144, 1ull << 32) * 1000);
}

}  // namespace

bool is_safe_s3_key(std::string_view key) {
  return !key.empty() && key.size() <= kMaxKeyBytes &&
         base::is_printable_text(key) && parts_are_names(key);
}

base::Result<S3Location> parse_s3_url(const std::string& url) {
  constexpr std::string_view kScheme = "s3://";
  const std::string shown = base::printable_text(url, 2048);
  if (url.rfind(kScheme, 0) != 0)
    return base::Error("'" + shown + "' is not an s3://BUCKET[/PREFIX] URL");
  std::string rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t slash = rest.find('/');
  S3Location out;
  out.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) out.prefix = rest.substr(slash + 1);
  if (!is_bucket_name(out.bucket))
    return base::Error("'" + shown +
                       "': bucket names are 3 to 63 of [a-z0-9.-], with a "
                       "letter or digit at both ends and no '..'");
  if (!out.prefix.empty() && !is_safe_s3_key(out.prefix))
    return base::Error("'" + shown +
                       "': the prefix has an empty, '.' or '..' part, a "
                       "control character, or more than 1024 bytes");
  return out;
}

base::Result<S3Config> s3_config_from_environment(
    const Environment& env, const std::optional<std::string>& endpoint) {
  S3Config config;
  config.credentials.region =
      env_value(env, "AWS_REGION")
          .value_or(env_value(env, "AWS_DEFAULT_REGION").value_or("us-east-1"));
  config.endpoint = endpoint.value_or(
      env_value(env, "AWS_ENDPOINT_URL_S3")
          .value_or(env_value(env, "AWS_ENDPOINT_URL")
                        .value_or("https://s3." + config.credentials.region +
                                  ".amazonaws.com")));
  while (!config.endpoint.empty() && config.endpoint.back() == '/')
    config.endpoint.pop_back();
  if (config.endpoint.rfind("http://", 0) != 0 &&
      config.endpoint.rfind("https://", 0) != 0)
    return base::Error("S3 endpoint '" + config.endpoint +
                       "' is not an http:// or https:// URL");
  auto key = env_value(env, "AWS_ACCESS_KEY_ID");
  auto secret = env_value(env, "AWS_SECRET_ACCESS_KEY");
  if (!key || !secret)
    return base::Error(
        "S3 credentials missing: set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)");
  config.credentials.access_key = *key;
  config.credentials.secret_key = *secret;
  config.credentials.session_token =
      env_value(env, "AWS_SESSION_TOKEN").value_or("");
  config.retry = retry_policy_from_environment();
  return config;
}

S3Client::S3Client(S3Config config, HttpClient http, std::ostream& log)
    : config_(std::move(config)), http_(std::move(http)), log_(&log) {}

base::Result<S3Client> S3Client::create(S3Config config, std::ostream& log) {
  auto http = HttpClient::create();
  if (!http) return http.error();
  return S3Client(std::move(config), std::move(*http), log);
}

HttpRequest S3Client::request(const std::string& method,
                              const std::string& bucket, const std::string& key,
                              const std::string& query) const {
  HttpRequest r;
  r.method = method;
  r.url = config_.endpoint + "/" + percent_encode(bucket, false) +
          (key.empty() ? "" : "/" + percent_encode(key, true)) +
          (query.empty() ? "" : "?" + query);
  r.sigv4 = config_.credentials;
  r.headers = {"x-amz-content-sha256: " + sha256_hex("")};
  return r;
}

// The response when it is a success (2xx with no <Error> body); else an
// error naming the operation, the object and what S3 said, redacted and
// printable (code ENOENT for a 404, EFBIG for an answer over its cap).
base::Result<HttpResponse> S3Client::send(const HttpRequest& r,
                                          const std::string& what) {
  auto response = perform_with_retries(http_, r, config_.retry, what, *log_);
  if (!response)
    return base::Error(what + ": " + response.error().message(),
                       response.error().code());
  const auto error = format::read_s3_error(response->body);
  if (response->status >= 200 && response->status < 300 && !error)
    return response;
  const std::vector<std::string> secrets = secrets_of(r);
  std::string why = "HTTP " + std::to_string(response->status);
  if (error)
    why +=
        " " + server_text(error->code, secrets, 100) +
        (error->message.empty() ? ""
                                : ": " + server_text(error->message, secrets));
  else
    why = describe_status(*response, secrets);
  return base::Error(what + ": " + why, response->status == 404 ? ENOENT : 0);
}

base::Status S3Client::put_text(const std::string& bucket,
                                const std::string& key, const std::string& text,
                                const std::string& content_type) {
  if (!is_safe_s3_key(key))
    return base::Error("S3 PUT " + display(bucket, key) + ": unsafe key");
  HttpRequest r = request("PUT", bucket, key, "");
  r.headers = {"x-amz-content-sha256: " + sha256_hex(text),
               "Content-Type: " + content_type};
  r.body = text;
  r.timeout = transfer_timeout(text.size());
  auto response = send(r, "S3 PUT " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Status S3Client::put_object(const std::string& bucket,
                                  const std::string& key, int fd, uint64_t size,
                                  const std::string& content_type) {
  if (!is_safe_s3_key(key))
    return base::Error("S3 PUT " + display(bucket, key) + ": unsafe key");
  if (size > config_.multipart_threshold)
    return put_multipart(bucket, key, fd, size, content_type);
  HttpRequest r = request("PUT", bucket, key, "");
  r.headers = {std::string("x-amz-content-sha256: ") + kUnsignedPayload,
               "Content-Type: " + content_type};
  r.body_fd = fd;
  r.body_size = size;
  r.timeout = transfer_timeout(size);
  auto response = send(r, "S3 PUT " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Status S3Client::get_object(const std::string& bucket,
                                  const std::string& key, int out_fd,
                                  uint64_t max_bytes) {
  if (!is_safe_s3_key(key))
    return base::Error("S3 GET " + display(bucket, key) + ": unsafe key");
  HttpRequest r = request("GET", bucket, key, "");
  r.response_fd = out_fd;
  r.max_response_bytes = max_bytes;
  r.timeout = transfer_timeout(max_bytes);
  auto response = send(r, "S3 GET " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Result<std::string> S3Client::get_text(const std::string& bucket,
                                             const std::string& key,
                                             uint64_t max_bytes) {
  if (!is_safe_s3_key(key))
    return base::Error("S3 GET " + display(bucket, key) + ": unsafe key");
  HttpRequest r = request("GET", bucket, key, "");
  r.max_response_bytes = max_bytes;
  auto response = send(r, "S3 GET " + display(bucket, key));
  if (!response && response.error().code() == EFBIG)
    return base::Error(display(bucket, key) + " is larger than " +
                           std::to_string(max_bytes) + " bytes: not read",
                       EFBIG);
  if (!response) return response.error();
  return std::move(response->body);
}

base::Result<format::S3ListPage> S3Client::list_page(
    const std::string& bucket, const std::string& prefix,
    const std::string& token, std::chrono::milliseconds time_left) {
  const std::string query =
      (token.empty()
           ? ""
           : "continuation-token=" + percent_encode(token, false) + "&") +
      "list-type=2&prefix=" + percent_encode(prefix, false);
  HttpRequest r = request("GET", bucket, "", query);
  r.timeout = std::min(r.timeout, time_left);
  auto response = send(r, "S3 list " + display(bucket, prefix));
  if (!response) return response.error();
  auto page = format::read_s3_list_page(response->body);
  if (!page)
    return std::move(page.error())
        .context("S3 list " + display(bucket, prefix));
  return page;
}

namespace {

// What list() skipped: counted, the first one named.
struct SkippedKeys {
  size_t count = 0;
  std::string first;
  void add(const std::string& key) {
    if (count++ == 0) first = base::printable_text(key, 200);
  }
};

}  // namespace

base::Result<std::vector<format::S3Object>> S3Client::list(
    const std::string& bucket, const std::string& prefix) {
  const std::string where = "S3 list " + display(bucket, prefix);
  if (!is_safe_prefix(prefix))
    return base::Error(where + ": the prefix has an empty, '.' or '..' part");
  const S3ListLimits& limits = config_.list_limits;
  const auto start = Clock::now();
  std::vector<format::S3Object> out;
  std::set<std::string> tokens;
  std::string token;
  SkippedKeys skipped;
  for (size_t page = 1;; ++page) {
    if (page > limits.max_pages)
      return base::Error(where + ": more than " +
                         std::to_string(limits.max_pages) +
                         " pages: listing stopped");
    if (since(start) >= limits.max_time)
      return base::Error(where + ": not done after " +
                             std::to_string(limits.max_time.count() / 1000) +
                             " s: listing stopped",
                         ETIMEDOUT);
    auto listing =
        list_page(bucket, prefix, token, limits.max_time - since(start));
    if (!listing) return listing.error();
    for (auto& object : listing->objects) {
      if (object.key.rfind(prefix, 0) != 0 || !is_safe_s3_key(object.key))
        skipped.add(object.key);
      else
        out.push_back(std::move(object));
    }
    if (out.size() > limits.max_keys)
      return base::Error(where + ": more than " +
                         std::to_string(limits.max_keys) +
                         " keys: listing stopped");
    if (!listing->truncated) break;
    token = std::move(listing->next_continuation_token);
    if (token.size() > kMaxTokenBytes || !tokens.insert(token).second)
      return base::Error(where + ": page " + std::to_string(page) +
                         (token.size() > kMaxTokenBytes
                              ? " has a continuation token of more than " +
                                    std::to_string(kMaxTokenBytes) + " bytes"
                              : " repeats an earlier continuation token") +
                         ": listing stopped");
  }
  if (skipped.count > 0)
    *log_ << "warning: " << where << ": " << skipped.count
          << " key(s) skipped (outside the prefix, unprintable, or with an "
             "empty, '.' or '..' part), the first: "
          << skipped.first << "\n";
  return out;
}

}  // namespace runner::upload
