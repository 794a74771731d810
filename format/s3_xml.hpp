// The XML documents of the S3 API subset the store uses: ListObjectsV2's
// ListBucketResult, InitiateMultipartUploadResult, CompleteMultipartUpload
// (written), CompleteMultipartUploadResult and Error. Read with expat
// (format/xml: size, depth and text limits, no DTD, linear time); the
// texts are returned as the store sent them (entities decoded, UTF-8):
// callers check keys and quote texts through base::printable_text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

struct S3Object {
  std::string key;
  uint64_t size = 0;
  std::string last_modified;
  std::string etag;
};

struct S3ListPage {
  std::vector<S3Object> objects;
  bool truncated = false;
  std::string next_continuation_token;
};

base::Result<S3ListPage> read_s3_list_page(std::string_view xml);
base::Result<std::string> read_s3_upload_id(std::string_view xml);

struct S3ErrorDocument {
  std::string code;
  std::string message;
};
// The <Error> document in `xml`, if it is one (CompleteMultipartUpload may
// answer 200 with an error body).
std::optional<S3ErrorDocument> read_s3_error(std::string_view xml);

// <CompleteMultipartUpload> with one <Part> per ETag, numbered from 1.
std::string write_s3_complete_multipart(const std::vector<std::string>& etags);

}  // namespace runner::format
