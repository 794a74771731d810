// upload/http against the scripted server: bodies from memory and from a
// file, answers to memory and to a file, retries, Retry-After, status
// descriptions with secrets redacted, and SigV4 signing checked with AWS's
// published example.
#include <fcntl.h>
#include <unistd.h>

#include <sstream>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::upload;
using runner::testing::HttpServer;
using runner::testing::RecordedRequest;
using runner::testing::ScriptedResponse;

namespace {

RetryPolicy fast_retries() {
  RetryPolicy p;
  p.base_delay = std::chrono::milliseconds(1);
  p.max_delay = std::chrono::milliseconds(1500);
  return p;
}

}  // namespace

TEST_CASE("a PUT streamed from a file region, a GET streamed to a file") {
  runner::testing::TempDir dir;
  HttpServer server([](const RecordedRequest& r) {
    return ScriptedResponse{200,
                            {"ETag: \"e\""},
                            r.method == "GET" ? std::string(100000, 'g') : ""};
  });
  REQUIRE(runner::base::write_file_atomic(dir.file("in"), "0123456789"));
  auto in = runner::base::open_regular_file(dir.file("in"));
  REQUIRE(in);
  auto client = HttpClient::create();
  REQUIRE(client);
  HttpRequest put;
  put.method = "PUT";
  put.url = server.url("/obj");
  put.body_fd = in->get();
  put.body_offset = 3;
  put.body_size = 4;
  auto r = client->perform(put);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("etag") == "\"e\"");
  auto out = runner::base::create_file(dir.file("out"));
  REQUIRE(out);
  HttpRequest get;
  get.url = server.url("/obj");
  get.response_fd = out->get();
  REQUIRE(client->perform(get));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].body == "3456");
  CHECK(requests[0].header("Content-Length") == "4");
  auto text = runner::base::read_file(dir.file("out"));
  REQUIRE(text);
  CHECK(*text == std::string(100000, 'g'));
}

TEST_CASE("transient statuses are retried, others are not") {
  int calls = 0;
  HttpServer server([&](const RecordedRequest& r) {
    ++calls;
    if (r.target == "/flaky" && calls < 3)
      return ScriptedResponse{503, {}, "busy"};
    if (r.target == "/limit" && calls == 1)
      return ScriptedResponse{429, {"Retry-After: 1"}, ""};
    if (r.target == "/missing") return ScriptedResponse{404, {}, "gone"};
    return ScriptedResponse{200, {}, "ok"};
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = server.url("/flaky");
  auto r = perform_with_retries(*client, request, fast_retries(), "get", log);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(calls == 3);
  CHECK(log.str().find(
            "get: HTTP 503: busy, retrying in 0.0 s (attempt 2 of 5)") !=
        std::string::npos);
  calls = 0;
  log.str("");
  request.url = server.url("/limit");
  const auto start = std::chrono::steady_clock::now();
  r = perform_with_retries(*client, request, fast_retries(), "get", log);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(1));
  CHECK(log.str().find("retrying in 1.0 s") != std::string::npos);
  calls = 0;
  request.url = server.url("/missing");
  r = perform_with_retries(*client, request, fast_retries(), "get", log);
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(calls == 1);
  CHECK(describe_status(*r) == "HTTP 404: gone");
}

TEST_CASE("a refused connection is retried, then reported with its cause") {
  std::string url;
  {
    HttpServer gone([](const RecordedRequest&) { return ScriptedResponse{}; });
    url = gone.url("/x");
  }
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = url;
  auto r = perform_with_retries(*client, request, fast_retries(), "x", log);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == ECONNREFUSED);
  CHECK(log.str().find("(attempt 5 of 5)") != std::string::npos);
}

TEST_CASE("secrets never show in a status description") {
  HttpResponse r;
  r.status = 401;
  r.body = "token abc-SECRET is wrong\nline two";
  CHECK(describe_status(r, {"abc-SECRET", ""}) ==
        "HTTP 401: token *** is wrong line two");
  CHECK(redact("a-b-a", {"a"}) == "***-b-***");
}

TEST_CASE("SigV4 through libcurl: AWS's 'GET Object' example") {
  // sig-v4-header-based-auth.html: GET /test.txt of examplebucket, Range
  // bytes=0-9, the empty payload hash, 2013-05-24T00:00:00Z, us-east-1.
  HttpServer server([](const RecordedRequest&) { return ScriptedResponse{}; });
  auto client = HttpClient::create();
  REQUIRE(client);
  HttpRequest request;
  request.url = server.url("/test.txt");
  request.headers = {
      "Host: examplebucket.s3.amazonaws.com", "Range: bytes=0-9",
      "x-amz-content-sha256: "
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "x-amz-date: 20130524T000000Z"};
  request.sigv4 = AwsSigv4{"us-east-1", "AKIAIOSFODNN7EXAMPLE",
                           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
  REQUIRE(client->perform(request));
  const auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].header("Authorization") ==
        "AWS4-HMAC-SHA256 "
        "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature="
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}
