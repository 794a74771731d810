// format/s3_xml: the S3 documents the store reads and writes.
#include <chrono>
#include <string>
#include <vector>

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

namespace {

// A listing page of `keys` objects with only <Key> and <Size> (no
// <LastModified>, no <ETag>).
std::string bare_page(size_t keys) {
  std::string xml = "<ListBucketResult><IsTruncated>false</IsTruncated>";
  for (size_t i = 0; i < keys; ++i)
    xml += "<Contents><Key>refs/main/" + std::to_string(i) +
           ".json</Key><Size>1</Size></Contents>";
  return xml + "</ListBucketResult>";
}

}  // namespace

TEST_CASE("a page of 40,000 keys without LastModified or ETag reads fast") {
  const std::string xml = bare_page(40000);
  const auto start = std::chrono::steady_clock::now();
  auto page = read_s3_list_page(xml);
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  REQUIRE(page);
  CHECK(page->objects.size() == 40000);
  CHECK(page->objects.back().key == "refs/main/39999.json");
  CHECK(page->objects.back().last_modified.empty());
  MESSAGE("40,000 bare keys read in " << seconds << " s");
  CHECK(seconds < 15.0);  // quadratic reading took minutes
}

TEST_CASE("listings: DTDs, entity bombs, deep nesting and bad roots refused") {
  // An entity bomb (a billion laughs in small) and an external entity.
  const std::string bomb =
      "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">"
      "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
      "<ListBucketResult><Contents><Key>&b;</Key><Size>1</Size></Contents>"
      "</ListBucketResult>";
  auto r = read_s3_list_page(bomb);
  REQUIRE_FALSE(r);
  CHECK(r.error().message().find("DOCTYPE") != std::string::npos);
  const std::string external =
      "<!DOCTYPE l [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<ListBucketResult><Contents><Key>&x;</Key><Size>1</Size></Contents>"
      "</ListBucketResult>";
  CHECK_FALSE(read_s3_list_page(external));
  std::string deep = "<ListBucketResult>";
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  r = read_s3_list_page(deep);
  REQUIRE_FALSE(r);
  CHECK(r.error().message().find("nested deeper than") != std::string::npos);
  CHECK_FALSE(
      read_s3_list_page("<Other><Contents><Key>a</Key><Size>1</Size>"
                        "</Contents></Other>"));
  CHECK_FALSE(
      read_s3_list_page("<ListBucketResult><IsTruncated>maybe"
                        "</IsTruncated></ListBucketResult>"));
  // Two <Key> in one <Contents>; a <Contents> without <Size>.
  CHECK_FALSE(read_s3_list_page(
      "<ListBucketResult><Contents><Key>a</Key><Key>b</Key><Size>1</Size>"
      "</Contents></ListBucketResult>"));
  CHECK_FALSE(
      read_s3_list_page("<ListBucketResult><Contents><Key>a</Key></Contents></"
                        "ListBucketResult>"));
  // Text longer than the reader's limit.
  CHECK_FALSE(read_s3_list_page("<ListBucketResult><Contents><Key>" +
                                std::string(100000, 'k') +
                                "</Key><Size>1</Size></Contents>"
                                "</ListBucketResult>"));
  // An error document behind a DOCTYPE is not taken for one.
  CHECK_FALSE(read_s3_error(
      "<!DOCTYPE e [<!ENTITY x \"y\">]><Error><Code>&x;</Code></Error>"));
}

TEST_CASE("read_xml: paths, texts, limits") {
  struct Recorder : XmlHandler {
    std::vector<std::string> events;
    runner::base::Status open(std::string_view path) override {
      events.push_back("+" + std::string(path));
      return {};
    }
    runner::base::Status close(std::string_view path,
                               std::string_view text) override {
      events.push_back("-" + std::string(path) + "=" + std::string(text));
      return {};
    }
  } recorder;
  REQUIRE(read_xml("<a>x<b>&lt;&#233;</b>y<!-- c --><c/></a>", recorder));
  CHECK(recorder.events == std::vector<std::string>{"+a", "+a/b",
                                                    "-a/b=<\xC3\xA9", "+a/c",
                                                    "-a/c=", "-a=xy"});
  XmlLimits small;
  small.max_bytes = 10;
  CHECK_FALSE(read_xml("<a>0123456789</a>", recorder, small));
  small = XmlLimits{};
  small.max_depth = 2;
  CHECK(read_xml("<a><b/></a>", recorder, small));
  CHECK_FALSE(read_xml("<a><b><c/></b></a>", recorder, small));
  CHECK_FALSE(read_xml("<a>&undefined;</a>", recorder));
  CHECK_FALSE(read_xml("<a></b>", recorder));
  CHECK_FALSE(read_xml("", recorder));
}
