// upload/s3 against a hostile store (tests/support/http_server playing
// S3): listings that never end, repeat their token, drag on or carry keys
// that are not under the prefix or not names; objects larger than the
// GET's cap; error documents that echo the keys or carry terminal
// escapes; s3:// URLs whose prefix would resolve elsewhere.
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

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

using Clock = std::chrono::steady_clock;

const AwsSigv4 kKeys{"us-east-1", "AKIDTESTKEY", "secret-TEST-key",
                     "session-TEST-token"};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

S3Config config_for(const HttpServer& server) {
  S3Config config;
  config.endpoint = server.url("");
  config.credentials = kKeys;
  config.retry.base_delay = std::chrono::milliseconds(1);
  config.retry.max_delay = std::chrono::milliseconds(5);
  return config;
}

// A ListObjectsV2 page of `keys`, truncated with `token` when not empty.
std::string page(const std::vector<std::string>& keys,
                 const std::string& token) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bench</Name>";
  xml += token.empty()
             ? "<IsTruncated>false</IsTruncated>"
             : "<IsTruncated>true</IsTruncated><NextContinuationToken>" +
                   token + "</NextContinuationToken>";
  for (const std::string& key : keys)
    xml += "<Contents><Key>" + key + "</Key><Size>3</Size></Contents>";
  return xml + "</ListBucketResult>";
}

size_t list_requests(const HttpServer& server) {
  size_t n = 0;
  for (const auto& r : server.requests())
    if (r.target.find("list-type=2") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("a listing that repeats its continuation token stops at once") {
  HttpServer server([](const RecordedRequest&) {
    return ScriptedResponse{200, {}, page({"p/a.json"}, "same-token")};
  });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  const auto start = Clock::now();
  auto listed = client->list("bench", "p/");
  REQUIRE_FALSE(listed);
  CHECK(listed.error().message().find(
            "page 2 repeats an earlier continuation token: listing stopped") !=
        std::string::npos);
  CHECK(list_requests(server) == 2);
  CHECK(seconds_since(start) < 10);
}

TEST_CASE("an endless listing stops at the page cap, the key cap, the time") {
  int pages = 0;
  HttpServer server([&](const RecordedRequest& r) {
    ++pages;
    std::vector<std::string> keys;
    const bool many = r.target.find("many") != std::string::npos;
    for (size_t i = 0; i < (many ? 1000 : 1); ++i)
      keys.push_back((many ? "p/many/" : "p/") + std::to_string(pages) + "-" +
                     std::to_string(i));
    ScriptedResponse response{200, {}, page(keys, "t" + std::to_string(pages))};
    if (r.target.find("slow") != std::string::npos)
      response.delay = std::chrono::milliseconds(300);
    return response;
  });
  S3Config config = config_for(server);
  config.list_limits.max_pages = 50;
  config.list_limits.max_keys = 2500;
  config.list_limits.max_time = std::chrono::milliseconds(1000);
  std::ostringstream log;
  auto client = S3Client::create(config, log);
  REQUIRE(client);
  auto listed = client->list("bench", "p/");
  REQUIRE_FALSE(listed);
  CHECK(listed.error().message().find("more than 50 pages: listing stopped") !=
        std::string::npos);
  CHECK(pages == 50);
  pages = 0;
  listed = client->list("bench", "p/many/");
  REQUIRE_FALSE(listed);
  CHECK(listed.error().message().find("more than 2500 keys") !=
        std::string::npos);
  CHECK(pages == 3);
  pages = 0;
  const auto start = Clock::now();
  listed = client->list("bench", "p/slow");
  REQUIRE_FALSE(listed);
  CHECK(listed.error().code() == ETIMEDOUT);
  CHECK(seconds_since(start) < 2.0);
  CHECK(pages <= 4);
}

TEST_CASE("a 40,000-key page without LastModified or ETag lists fast") {
  std::vector<std::string> keys;
  for (int i = 0; i < 40000; ++i)
    keys.push_back("p/" + std::to_string(i) + ".json");
  const std::string body = page(keys, "");
  HttpServer server([&](const RecordedRequest&) {
    return ScriptedResponse{200, {}, body};
  });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  const auto start = Clock::now();
  auto listed = client->list("bench", "p/");
  REQUIRE(listed);
  CHECK(listed->size() == 40000);
  CHECK(seconds_since(start) < 15.0);  // quadratic reading took minutes
}

TEST_CASE("keys from a listing are checked before use") {
  HttpServer server([](const RecordedRequest&) {
    return ScriptedResponse{
        200,
        {},
        page({"p/ok.json", "other/x.json", "p/../../elsewhere.json",
              "p/a\xC2\x9B"
              "2J.json",
              "p//x.json", "p/", "p/./y.json", "p/\xE2\x80\xAEnosj.exe",
              "p/" + std::string(2000, 'k')},
             "")};
  });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  auto listed = client->list("bench", "p/");
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].key == "p/ok.json");
  INFO(log.str());
  CHECK(log.str().find("8 key(s) skipped") != std::string::npos);
  CHECK(log.str().find("the first: other/x.json") != std::string::npos);
  CHECK(log.str().find("\xC2\x9B") == std::string::npos);
  CHECK(is_safe_s3_key("a/b.json"));
  CHECK_FALSE(is_safe_s3_key("a/../b"));
  CHECK_FALSE(is_safe_s3_key(""));
  CHECK_FALSE(is_safe_s3_key("a/"));
  CHECK_FALSE(is_safe_s3_key("/a"));
  CHECK_FALSE(is_safe_s3_key("a\nb"));
}

TEST_CASE("every GET has a size cap, a streamed one included") {
  HttpServer server([](const RecordedRequest& r) {
    ScriptedResponse response{200, {}, ""};
    if (r.target == "/bench/big.json")
      response.body = std::string(2 << 20, 'b');
    if (r.target == "/bench/small.tar.zst") response.body = "zst";
    if (r.target == "/bench/endless.tar.zst")
      response.stream = [](std::string& chunk) {
        chunk.assign(65536, 'e');
        return true;
      };
    return response;
  });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  auto text = client->get_text("bench", "big.json");
  REQUIRE_FALSE(text);
  CHECK(text.error().code() == EFBIG);
  CHECK(text.error().message().find("is larger than 1048576 bytes") !=
        std::string::npos);
  CHECK(client->get_text("bench", "big.json", 4 << 20));
  runner::testing::TempDir dir;
  auto out = runner::base::create_file(dir.file("archive"));
  REQUIRE(out);
  const auto start = Clock::now();
  auto got =
      client->get_object("bench", "endless.tar.zst", out->get(), 8 << 20);
  REQUIRE_FALSE(got);
  CHECK(got.error().code() == EFBIG);
  CHECK(seconds_since(start) < 10);
  struct stat st {};
  REQUIRE(::fstat(out->get(), &st) == 0);
  CHECK(st.st_size <= (8 << 20));
  CHECK(client->get_object("bench", "small.tar.zst", out->get(), 3));
  CHECK_FALSE(client->get_object("bench", "small.tar.zst", out->get(), 2));
}

TEST_CASE("S3 errors: the client's keys redacted, escapes made printable") {
  // XML 1.0 cannot carry C0 controls: an error document has C1 ones (CSI,
  // OSC as U+009B, U+009D), any other body anything.
  HttpServer server([](const RecordedRequest& r) {
    if (r.target == "/bench/xml.json")
      return ScriptedResponse{
          403,
          {},
          "<Error><Code>AccessDenied\xC2\x9B"
          "2J</Code><Message>key "
          "AKIDTESTKEY secret secret-TEST-key token session-TEST-token "
          "\xC2\x9D"
          "0;title\xE2\x80\xAE</Message></Error>"};
    return ScriptedResponse{
        500, {}, "oops secret-TEST-key \x1B]0;title\x07\x1B[2J\xFF"};
  });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  auto text = client->get_text("bench", "xml.json");
  REQUIRE_FALSE(text);
  std::string message = text.error().message();
  INFO(message);
  CHECK(message.find("HTTP 403 AccessDenied\\u{009B}2J: key *** secret *** "
                     "token *** \\u{009D}0;title\\u{202E}") !=
        std::string::npos);
  CHECK(message.find("TEST") == std::string::npos);
  text = client->get_text("bench", "other.json");
  REQUIRE_FALSE(text);
  message = text.error().message();
  CHECK(message.find("HTTP 500: oops *** \\x1B]0;title\\x07\\x1B[2J\\xFF") !=
        std::string::npos);
  for (const std::string& said : {message, log.str()}) {
    CHECK(said.find('\x1B') == std::string::npos);
    CHECK(said.find("TEST") == std::string::npos);
  }
}

TEST_CASE("unsafe keys are refused before any request") {
  HttpServer server([](const RecordedRequest&) { return ScriptedResponse{}; });
  std::ostringstream log;
  auto client = S3Client::create(config_for(server), log);
  REQUIRE(client);
  CHECK_FALSE(client->get_text("bench", "a/../../other/k"));
  CHECK_FALSE(client->put_text("bench", "a//k", "x", "text/plain"));
  CHECK_FALSE(client->list("bench", "a/../"));
  CHECK(server.requests().empty());
}

TEST_CASE("s3:// prefixes with empty, '.' or '..' parts are refused") {
  // s3://bucket alone: no prefix (and nothing read past an empty one).
  auto bare = parse_s3_url("s3://bench");
  REQUIRE(bare);
  CHECK(bare->bucket == "bench");
  CHECK(bare->prefix.empty());
  auto slash = parse_s3_url("s3://bench/");
  REQUIRE(slash);
  CHECK(slash->prefix.empty());
  CHECK(parse_s3_url("s3://bench/ci/team.v2/")->prefix == "ci/team.v2");
  for (const char* url :
       {"s3://bench/..", "s3://bench/../other", "s3://bench/ci/../../other/x",
        "s3://bench/./ci", "s3://bench/ci/.", "s3://bench//ci",
        "s3://bench/ci//team", "s3://bench/ci\x1B[2J", "s3://.bench",
        "s3://bench.", "s3://be..nch", "s3://", "s3:///ci"}) {
    INFO(url);
    auto location = parse_s3_url(url);
    CHECK_FALSE(location);
    if (!location)
      CHECK(location.error().message().find('\x1B') == std::string::npos);
  }
}
