// The subset of the S3 API the store needs, over HTTP with SigV4 and
// path-style addressing (<endpoint>/<bucket>/<key>): PutObject (multipart
// above a threshold, aborted on failure), GetObject streamed to a file,
// ListObjectsV2 with pagination. Works with AWS S3, MinIO, Ceph RGW, R2,
// GCS interop and s3rver.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "format/format.hpp"
#include "upload/environment.hpp"
#include "upload/http.hpp"

namespace runner::upload {

// s3://BUCKET[/PREFIX]: prefix without leading or trailing '/'.
struct S3Location {
  std::string bucket;
  std::string prefix;
};
base::Result<S3Location> parse_s3_url(const std::string& url);

struct S3Config {
  std::string endpoint;  // "http://127.0.0.1:4568", no trailing '/'
  AwsSigv4 credentials;
  uint64_t multipart_threshold = 64ull << 20;  // parts of this size
  RetryPolicy retry;
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
  // GET into out_fd; a missing key is an error with code ENOENT, an
  // object longer than max_bytes one with code EFBIG.
  base::Status get_object(const std::string& bucket, const std::string& key,
                          int out_fd, uint64_t max_bytes = UINT64_MAX);
  // A small object (at most max_bytes) as text.
  base::Result<std::string> get_text(const std::string& bucket,
                                     const std::string& key,
                                     uint64_t max_bytes = 1u << 20);
  // Every key under `prefix`, all pages.
  base::Result<std::vector<format::S3Object>> list(const std::string& bucket,
                                                   const std::string& prefix);

 private:
  S3Client(S3Config config, HttpClient http, std::ostream& log);
  // A signed request for bucket/key?query (query already canonical).
  HttpRequest request(const std::string& method, const std::string& bucket,
                      const std::string& key, const std::string& query) const;
  base::Result<HttpResponse> send(const HttpRequest& request,
                                  const std::string& what);
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
