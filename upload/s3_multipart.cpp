// Multipart uploads of the store's large archives (see s3.hpp): create,
// parts of multipart_threshold bytes streamed from the file, complete; on
// any failure the upload is aborted so that no part is left behind.
#include <errno.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "base/base.hpp"
#include "upload/digest.hpp"
#include "upload/s3.hpp"

namespace runner::upload {
namespace {

constexpr uint64_t kMaxParts = 10000;

std::string display(const std::string& bucket, const std::string& key) {
  return "s3://" + bucket + "/" + base::printable_text(key, 2048);
}

// As for a single PUT (s3.cpp): 2 minutes plus 256 KiB/s.
std::chrono::milliseconds part_timeout(uint64_t bytes) {
  return std::chrono::milliseconds(120000 + bytes / 262144 * 1000);
}

}  // namespace

base::Result<std::vector<std::string>> S3Client::put_parts(
    const std::string& bucket, const std::string& key,
    const std::string& upload_id, int fd, uint64_t size) {
  const uint64_t part_size = config_.multipart_threshold;
  const uint64_t parts = (size + part_size - 1) / part_size;
  std::vector<std::string> etags;
  for (uint64_t offset = 0, number = 1; offset < size;
       offset += part_size, ++number) {
    HttpRequest r = request("PUT", bucket, key,
                            "partNumber=" + std::to_string(number) +
                                "&uploadId=" + percent_encode(upload_id));
    r.headers = {"x-amz-content-sha256: UNSIGNED-PAYLOAD"};
    r.body_fd = fd;
    r.body_offset = offset;
    r.body_size = std::min(part_size, size - offset);
    r.timeout = part_timeout(r.body_size);
    auto response = send(r, "S3 PUT part " + std::to_string(number) + " of " +
                                display(bucket, key));
    if (!response) return response.error();
    auto etag = response->header("ETag");
    if (!etag || etag->empty())
      return base::Error("S3 PUT part " + std::to_string(number) + " of " +
                         display(bucket, key) + ": no ETag in the answer");
    etags.push_back(*etag);
    *log_ << "S3 multipart upload of " << display(bucket, key) << ": part "
          << number << " of " << parts << " sent\n";
  }
  return etags;
}

void S3Client::abort_multipart(const std::string& bucket,
                               const std::string& key,
                               const std::string& upload_id) {
  auto response = send(
      request("DELETE", bucket, key, "uploadId=" + percent_encode(upload_id)),
      "S3 abort of the multipart upload of " + display(bucket, key));
  if (!response)
    *log_ << "warning: " << response.error().message()
          << " (its parts stay until the bucket's lifecycle rules for "
             "incomplete multipart uploads remove them)\n";
}

base::Status S3Client::put_multipart(const std::string& bucket,
                                     const std::string& key, int fd,
                                     uint64_t size,
                                     const std::string& content_type) {
  if ((size + config_.multipart_threshold - 1) / config_.multipart_threshold >
      kMaxParts)
    return base::Error(display(bucket, key) + ": more than 10000 parts of " +
                       std::to_string(config_.multipart_threshold) + " bytes");
  HttpRequest create = request("POST", bucket, key, "uploads=");
  create.headers.push_back("Content-Type: " + content_type);
  auto created = send(create, "S3 multipart upload of " + display(bucket, key));
  if (!created) return created.error();
  auto upload_id = format::read_s3_upload_id(created->body);
  if (!upload_id) return upload_id.error();
  auto etags = put_parts(bucket, key, *upload_id, fd, size);
  if (!etags) {
    abort_multipart(bucket, key, *upload_id);
    return etags.error();
  }
  HttpRequest complete =
      request("POST", bucket, key, "uploadId=" + percent_encode(*upload_id));
  complete.body = format::write_s3_complete_multipart(*etags);
  complete.headers = {"x-amz-content-sha256: " + sha256_hex(complete.body),
                      "Content-Type: application/xml"};
  // S3 may take minutes to assemble the parts (it keeps the connection
  // alive with whitespace meanwhile).
  complete.timeout = std::chrono::minutes(10);
  auto completed = send(complete, "S3 completion of the multipart upload of " +
                                      display(bucket, key));
  if (!completed) {
    abort_multipart(bucket, key, *upload_id);
    return completed.error();
  }
  return {};
}

}  // namespace runner::upload
