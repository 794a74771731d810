// upload/http against the scripted server: bodies from memory and from a
// file, answers to memory and to a file, retries, Retry-After, status
// descriptions with secrets redacted, and SigV4 signing checked with AWS's
// published example.
#include <fcntl.h>
#include <unistd.h>

#include <sstream>
#include <thread>

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

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// An endless body of 64 KiB chunks, sent as fast as the client reads.
bool flood(std::string& chunk) {
  chunk.assign(65536, 'f');
  return true;
}

// An endless body of 512 bytes every 100 ms (5 KiB/s: above libcurl's
// low-speed limit, so only a time limit ends it).
bool dribble(std::string& chunk) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  chunk.assign(512, 'd');
  return true;
}

}  // namespace

TEST_CASE("a 2xx body past its cap ends the transfer: EFBIG, not retried") {
  int calls = 0;
  HttpServer server([&](const RecordedRequest& r) {
    ++calls;
    ScriptedResponse response{200, {}, ""};
    if (r.target == "/endless") response.stream = flood;
    if (r.target == "/large") response.body = std::string(3 << 20, 'l');
    return response;
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = server.url("/endless");
  request.max_response_bytes = 1 << 20;
  const auto start = Clock::now();
  auto r = perform_with_retries(*client, request, fast_retries(), "get", log);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == EFBIG);
  CHECK(r.error().message().find("answered more than 1048576 bytes") !=
        std::string::npos);
  CHECK(calls == 1);
  CHECK(seconds_since(start) < 10);
  // Announced by Content-Length: refused before the body; to a file too.
  runner::testing::TempDir dir;
  auto out = runner::base::create_file(dir.file("out"));
  REQUIRE(out);
  request.url = server.url("/large");
  request.response_fd = out->get();
  r = client->perform(request);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == EFBIG);
  request.max_response_bytes = 4 << 20;
  r = client->perform(request);
  REQUIRE(r);
  CHECK(r->status == 200);
}

TEST_CASE("an endless error body is cut, its status kept") {
  HttpServer server([](const RecordedRequest&) {
    ScriptedResponse response{404, {}, "missing: "};
    response.stream = flood;
    return response;
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  HttpRequest request;
  request.url = server.url("/x");
  const auto start = Clock::now();
  auto r = client->perform(request);
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(r->truncated);
  CHECK(r->body.size() == kMaxErrorBody);
  CHECK(r->body.rfind("missing: ff", 0) == 0);
  CHECK(seconds_since(start) < 10);
}

TEST_CASE("a dribbling body ends at the time limit, retries included") {
  int calls = 0;
  HttpServer server([&](const RecordedRequest&) {
    ++calls;
    ScriptedResponse response{200, {}, ""};
    response.stream = dribble;
    return response;
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = server.url("/slow");
  request.timeout = std::chrono::milliseconds(1500);
  const auto start = Clock::now();
  auto r = perform_with_retries(*client, request, fast_retries(), "get", log);
  const double took = seconds_since(start);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == ETIMEDOUT);
  // One time limit for all the attempts: 5 attempts of 1.5 s do not fit.
  CHECK(took >= 1.4);
  CHECK(took < 3.0);
  MESSAGE("the dribbling GET ended after " << took << " s, " << calls
                                           << " attempt(s)");
  // The policy's time limit (RUNNER_HTTP_TIME_LIMIT_MS) caps it too.
  RetryPolicy capped = fast_retries();
  capped.time_limit = std::chrono::milliseconds(700);
  request.timeout = std::chrono::minutes(10);
  const auto again = Clock::now();
  r = perform_with_retries(*client, request, capped, "get", log);
  REQUIRE_FALSE(r);
  CHECK(seconds_since(again) < 2.0);
}

TEST_CASE("slow failures are retried only while the time limit allows") {
  int calls = 0;
  HttpServer server([&](const RecordedRequest&) {
    ++calls;
    ScriptedResponse response{503, {}, "busy"};
    response.delay = std::chrono::milliseconds(800);
    return response;
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = server.url("/busy");
  request.timeout = std::chrono::milliseconds(2000);
  const auto start = Clock::now();
  auto r = perform_with_retries(*client, request, fast_retries(), "get", log);
  const double took = seconds_since(start);
  INFO(log.str());
  // The last attempt either answered 503 or was cut by the time limit.
  CHECK((r ? r->status == 503 : r.error().code() == ETIMEDOUT));
  CHECK(calls <= 3);  // not the policy's 5
  CHECK(took < 3.0);
  CHECK(log.str().find("not retried: the time limit of 2.0 s") !=
        std::string::npos);
}

TEST_CASE("server texts: redacted before any cut, then made printable") {
  HttpResponse r;
  r.status = 400;
  // The token from byte 290 on: a cut at 300 before redaction would
  // print its first 10 bytes.
  const std::string token = "tok-SECRET-0123456789";
  r.body = std::string(290, 'x') + token + " trailing";
  const std::string text = describe_status(r, {token});
  CHECK(text.find("tok-SECRE") == std::string::npos);
  CHECK(text.find("tok-") == std::string::npos);
  CHECK(text.find("***") != std::string::npos);
  // Terminal control sequences, bidi overrides, invalid UTF-8.
  r.body =
      "\x1B]0;pwned\x07\x1B[2J\x1B[31mred \xE2\x80\xAE"
      "evil \xFF";
  CHECK(describe_status(r) ==
        "HTTP 400: \\x1B]0;pwned\\x07\\x1B[2J\\x1B[31mred \\u{202E}evil "
        "\\xFF");
  CHECK(server_text("a" + token + "b", {token}) == "a***b");
}

TEST_CASE("retry lines and transport errors never show the request's secrets") {
  const std::string token = "tok-SECRET-4242";
  int calls = 0;
  HttpServer server([&](const RecordedRequest& r) {
    return ++calls == 1
               ? ScriptedResponse{503,
                                  {},
                                  "busy " +
                                      r.header("Authorization").value_or("") +
                                      " \x1B[2J"}
               : ScriptedResponse{200, {}, "ok"};
  });
  auto client = HttpClient::create();
  REQUIRE(client);
  std::ostringstream log;
  HttpRequest request;
  request.url = server.url("/x");
  request.headers = {"Authorization: " + token};
  request.secrets = {token};
  auto r = perform_with_retries(*client, request, fast_retries(), "get", log);
  REQUIRE(r);
  CHECK(log.str().find("get: HTTP 503: busy *** \\x1B[2J, retrying") !=
        std::string::npos);
  CHECK(log.str().find(token) == std::string::npos);
  CHECK(log.str().find('\x1B') == std::string::npos);
  // SigV4 keys are the request's secrets too.
  HttpRequest signed_request;
  signed_request.sigv4 = AwsSigv4{"r", "AKIDKEY", "secret-key", "session"};
  CHECK(secrets_of(signed_request) ==
        std::vector<std::string>{"AKIDKEY", "secret-key", "session"});
}
