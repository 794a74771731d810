// The subset of the S3 API the store needs, over HTTP with SigV4 and
// path-style addressing (<endpoint>/<bucket>/<key>): PutObject (multipart
// above a threshold, aborted on failure), GetObject streamed to a file,
// ListObjectsV2 with pagination. Works with AWS S3, MinIO, Ceph RGW, R2,
// GCS interop and s3rver.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/environment.hpp"
#include "upload/http.hpp"

namespace runner::upload {

// s3://BUCKET[/PREFIX]: prefix without leading or trailing '/'. Refused:
// a bucket name outside S3's rules (3 to 63 of [a-z0-9.-], a letter or
// digit at both ends, no ".."), a prefix with an empty, "." or ".." part
// (a URL path would resolve it to another object, even in another
// bucket), or with a control character.
struct S3Location {
  std::string bucket;
  std::string prefix;
};
base::Result<S3Location> parse_s3_url(const std::string& url);

// A key the client reads or writes: 1 to 1024 bytes of printable UTF-8
// (base::is_printable_text) whose '/'-separated parts are neither empty
// nor "." nor "..". Keys in a listing are the store's word: the others
// are skipped.
bool is_safe_s3_key(std::string_view key);

// Bounds of one list(): a store that keeps answering IsTruncated with new
// tokens, or slowly, is cut here with an error (a repeated continuation
// token at once).
struct S3ListLimits {
  size_t max_keys = 100000;
  size_t max_pages = 10000;
  std::chrono::milliseconds max_time{300000};
};

// The default cap of get_object: larger objects are refused (EFBIG).
inline constexpr uint64_t kDefaultMaxGetBytes = 2ull << 30;

struct S3Config {
  std::string endpoint;  // "http://127.0.0.1:4568", no trailing '/'
  AwsSigv4 credentials;
  uint64_t multipart_threshold = 64ull << 20;  // parts of this size
  RetryPolicy retry;
  S3ListLimits list_limits;
};

// From --s3-endpoint (when given) or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL
// (else https://s3.<region>.amazonaws.com), AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_REGION /
// AWS_DEFAULT_REGION (default us-east-1). Missing credentials are an error
// naming the variables.
base::Result<S3Config> s3_config_from_environment(
    const Environment& env, const std::optional<std::string>& endpoint);

class S3Client {
 public:
  static base::Result<S3Client> create(S3Config config, std::ostream& log);

  // PUT of size bytes of fd (from offset 0); multipart when size exceeds
  // the threshold (parts of multipart_threshold bytes, the last smaller;
  // on failure the upload is aborted so that no part is left).
  base::Status put_object(const std::string& bucket, const std::string& key,
                          int fd, uint64_t size,
                          const std::string& content_type);
  base::Status put_text(const std::string& bucket, const std::string& key,
                        const std::string& text,
                        const std::string& content_type);
  // GET into out_fd, at most max_bytes (a larger object is an error with
  // code EFBIG, checked while it streams: out_fd then holds a partial
  // copy); a missing key is an error with code ENOENT.
  base::Status get_object(const std::string& bucket, const std::string& key,
                          int out_fd, uint64_t max_bytes = kDefaultMaxGetBytes);
  // A small object (at most max_bytes, else EFBIG) as text.
  base::Result<std::string> get_text(const std::string& bucket,
                                     const std::string& key,
                                     uint64_t max_bytes = 1u << 20);
  // Every key under `prefix`, all pages, within config.list_limits; keys
  // that are not under the prefix or not is_safe_s3_key are skipped (a
  // warning counts them).
  base::Result<std::vector<format::S3Object>> list(const std::string& bucket,
                                                   const std::string& prefix);

 private:
  S3Client(S3Config config, HttpClient http, std::ostream& log);
  // A signed request for bucket/key?query (query already canonical).
  HttpRequest request(const std::string& method, const std::string& bucket,
                      const std::string& key, const std::string& query) const;
  base::Result<HttpResponse> send(const HttpRequest& request,
                                  const std::string& what);
  // One page of list(): its objects appended to `out`.
  base::Result<format::S3ListPage> list_page(
      const std::string& bucket, const std::string& prefix,
      const std::string& token, std::chrono::milliseconds time_left);
  base::Status put_multipart(const std::string& bucket, const std::string& key,
                             int fd, uint64_t size,
                             const std::string& content_type);
  base::Result<std::vector<std::string>> put_parts(const std::string& bucket,
                                                   const std::string& key,
                                                   const std::string& upload_id,
                                                   int fd, uint64_t size);
  void abort_multipart(const std::string& bucket, const std::string& key,
                       const std::string& upload_id);

  S3Config config_;
  HttpClient http_;
  std::ostream* log_;
};

}  // namespace runner::upload
