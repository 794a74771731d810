// The S3 API subset of the store, path-style, SigV4-signed by libcurl (see
// s3.hpp). With curl 7.88 the query string is signed as written, so every
// query below is already sorted by name and canonically encoded, and the
// payload hash header is always given (ci-jit-compare-formats.md §4.4).
#include "upload/s3.hpp"

#include <errno.h>

#include <algorithm>
#include <cctype>

#include "upload/digest.hpp"

namespace runner::upload {
namespace {

constexpr const char* kUnsignedPayload = "UNSIGNED-PAYLOAD";

std::string display(const std::string& bucket, const std::string& key) {
  return "s3://" + bucket + "/" + key;
}

}  // namespace

base::Result<S3Location> parse_s3_url(const std::string& url) {
  constexpr std::string_view kScheme = "s3://";
  if (url.rfind(kScheme, 0) != 0)
    return base::Error("'" + url + "' is not an s3://BUCKET[/PREFIX] URL");
  std::string rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t slash = rest.find('/');
  S3Location out;
  out.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) out.prefix = rest.substr(slash + 1);
  const bool bucket_ok =
      out.bucket.size() >= 3 && out.bucket.size() <= 63 &&
      std::all_of(out.bucket.begin(), out.bucket.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) ||
               std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
               c == '.';
      });
  if (!bucket_ok)
    return base::Error("'" + url + "': bucket names are 3 to 63 of [a-z0-9.-]");
  if (out.prefix.find("//") != std::string::npos || out.prefix.front() == '/')
    return base::Error("'" + url + "': empty component in the prefix");
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
// error naming the operation, the object and what S3 said (code ENOENT
// for a 404).
base::Result<HttpResponse> S3Client::send(const HttpRequest& r,
                                          const std::string& what) {
  auto response = perform_with_retries(http_, r, config_.retry, what, *log_);
  if (!response)
    return base::Error(what + ": " + response.error().message(),
                       response.error().code());
  const auto error = format::read_s3_error(response->body);
  if (response->status >= 200 && response->status < 300 && !error)
    return response;
  std::string why = "HTTP " + std::to_string(response->status);
  if (error)
    why += " " + error->code +
           (error->message.empty() ? "" : ": " + error->message);
  return base::Error(what + ": " + why, response->status == 404 ? ENOENT : 0);
}

base::Status S3Client::put_text(const std::string& bucket,
                                const std::string& key, const std::string& text,
                                const std::string& content_type) {
  HttpRequest r = request("PUT", bucket, key, "");
  r.headers = {"x-amz-content-sha256: " + sha256_hex(text),
               "Content-Type: " + content_type};
  r.body = text;
  auto response = send(r, "S3 PUT " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Status S3Client::put_object(const std::string& bucket,
                                  const std::string& key, int fd, uint64_t size,
                                  const std::string& content_type) {
  if (size > config_.multipart_threshold)
    return put_multipart(bucket, key, fd, size, content_type);
  HttpRequest r = request("PUT", bucket, key, "");
  r.headers = {std::string("x-amz-content-sha256: ") + kUnsignedPayload,
               "Content-Type: " + content_type};
  r.body_fd = fd;
  r.body_size = size;
  auto response = send(r, "S3 PUT " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Status S3Client::get_object(const std::string& bucket,
                                  const std::string& key, int out_fd,
                                  uint64_t max_bytes) {
  HttpRequest r = request("GET", bucket, key, "");
  r.response_fd = out_fd;
  r.max_response_bytes = max_bytes;
  auto response = send(r, "S3 GET " + display(bucket, key));
  if (!response) return response.error();
  return {};
}

base::Result<std::string> S3Client::get_text(const std::string& bucket,
                                             const std::string& key,
                                             uint64_t max_bytes) {
  auto response =
      send(request("GET", bucket, key, ""), "S3 GET " + display(bucket, key));
  if (!response) return response.error();
  if (response->truncated || response->body.size() > max_bytes)
    return base::Error(display(bucket, key) + " is larger than " +
                       std::to_string(max_bytes) + " bytes: not read");
  return std::move(response->body);
}

base::Result<std::vector<format::S3Object>> S3Client::list(
    const std::string& bucket, const std::string& prefix) {
  std::vector<format::S3Object> out;
  std::string token;
  for (int page = 0; page < 100000; ++page) {
    const std::string query =
        (token.empty()
             ? ""
             : "continuation-token=" + percent_encode(token, false) + "&") +
        "list-type=2&prefix=" + percent_encode(prefix, false);
    auto response = send(request("GET", bucket, "", query),
                         "S3 list " + display(bucket, prefix));
    if (!response) return response.error();
    auto listing = format::read_s3_list_page(response->body);
    if (!listing) return listing.error();
    for (auto& object : listing->objects) out.push_back(std::move(object));
    if (!listing->truncated) return out;
    token = listing->next_continuation_token;
  }
  return base::Error("S3 list " + display(bucket, prefix) + ": too many pages");
}

}  // namespace runner::upload
