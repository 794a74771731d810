// format/s3_xml: the S3 documents the store reads and writes.
#include <doctest/doctest.h>

#include "format/format.hpp"

using namespace runner::format;

TEST_CASE("a ListObjectsV2 page: keys (entities decoded), sizes, truncation") {
  const std::string xml =
      R"(<?xml version="1.0" encoding="UTF-8"?>)"
      R"(<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      "<Name>bench</Name><Prefix>ci/</Prefix><KeyCount>2</KeyCount>"
      "<IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>1/x+y=</NextContinuationToken>"
      "<Contents><Key>ci/a&amp;b.json</"
      "Key><LastModified>2026-11-24T00:00:00.000Z"
      "</LastModified><ETag>&quot;abc&quot;</ETag><Size>42</Size></Contents>"
      "<Contents><Key>ci/c&#47;d</Key><Size>0</Size></Contents>"
      "</ListBucketResult>";
  auto page = read_s3_list_page(xml);
  REQUIRE_MESSAGE(page, page.error().message());
  REQUIRE(page->objects.size() == 2);
  CHECK(page->objects[0].key == "ci/a&b.json");
  CHECK(page->objects[0].size == 42);
  CHECK(page->objects[0].etag == "\"abc\"");
  CHECK(page->objects[0].last_modified == "2026-11-24T00:00:00.000Z");
  CHECK(page->objects[1].key == "ci/c/d");
  CHECK(page->truncated);
  CHECK(page->next_continuation_token == "1/x+y=");
}

TEST_CASE("malformed listings are errors, not guesses") {
  CHECK_FALSE(read_s3_list_page("<html>no</html>"));
  CHECK_FALSE(read_s3_list_page("<ListBucketResult><Contents><Key>a</Key>"));
  CHECK_FALSE(read_s3_list_page(
      "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents>"
      "</ListBucketResult>"));
  CHECK_FALSE(read_s3_list_page(
      "<ListBucketResult><Contents><Key>a&bogus;</Key><Size>1</Size>"
      "</Contents></ListBucketResult>"));
  CHECK_FALSE(read_s3_list_page(
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"));
  auto empty = read_s3_list_page("<ListBucketResult></ListBucketResult>");
  REQUIRE(empty);
  CHECK(empty->objects.empty());
  CHECK_FALSE(empty->truncated);
}

TEST_CASE("upload ids, error documents, the completion document") {
  auto id = read_s3_upload_id(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
      "<UploadId>u-1&amp;2</UploadId></InitiateMultipartUploadResult>");
  REQUIRE(id);
  CHECK(*id == "u-1&2");
  CHECK_FALSE(read_s3_upload_id("<InitiateMultipartUploadResult/>"));
  auto error = read_s3_error(
      "<?xml version=\"1.0\"?><Error><Code>InvalidPart</Code>"
      "<Message>One or more parts could not be found</Message></Error>");
  REQUIRE(error);
  CHECK(error->code == "InvalidPart");
  CHECK(error->message == "One or more parts could not be found");
  CHECK_FALSE(read_s3_error("<CompleteMultipartUploadResult/>"));
  CHECK(write_s3_complete_multipart({"\"e1\"", "\"e<2>&\""}) ==
        "<CompleteMultipartUpload "
        "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1"
        "</PartNumber><ETag>&quot;e1&quot;</ETag></Part><Part><PartNumber>2"
        "</PartNumber><ETag>&quot;e&lt;2&gt;&amp;&quot;</ETag></Part>"
        "</CompleteMultipartUpload>");
}
