// The real `runner compare --store` and `runner upload --store` against a
// hostile S3 endpoint (tests/support/http_server playing S3 on
// 127.0.0.1): a listing that repeats its continuation token, keys that
// climb out of the listed prefix or carry controls, error documents that
// echo the runner's keys, and an s3:// prefix that would resolve to
// another bucket.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;

namespace {

const std::string kKeyId = "AKID-E2E-KEY";
const std::string kSecret = "secret-E2E-4242";

// A push job of acme/widgets whose store is `server`.
std::vector<std::string> store_env(const HttpServer& server,
                                   const TempDir& dir) {
  std::vector<std::string> env = github_job_env(false, "");
  env.push_back("AWS_ACCESS_KEY_ID=" + kKeyId);
  env.push_back("AWS_SECRET_ACCESS_KEY=" + kSecret);
  env.push_back("AWS_SESSION_TOKEN=");
  env.push_back("AWS_REGION=us-east-1");
  env.push_back("AWS_ENDPOINT_URL_S3=" + server.url(""));
  env.push_back("AWS_ENDPOINT_URL=");
  env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
  env.push_back("RUNNER_HTTP_RETRY_DELAY_MS=5");
  return env;
}

// `runner compare --store s3://bench` of an empty head folder (the store
// is asked first), killed after 60 s.
ProcessResult compare_with_store(const HttpServer& server, const TempDir& dir) {
  fs::create_directories(dir.file("head"));
  return run_process({binary("RUNNER_BIN"), "compare", "--store", "s3://bench",
                      dir.file("head")},
                     store_env(server, dir), "", 60);
}

// The value of `name` in the request's query, percent-decoded.
std::string query_value(const std::string& target, const std::string& name) {
  const size_t at = target.find(name + "=");
  if (at == std::string::npos) return "";
  std::string value;
  for (size_t i = at + name.size() + 1; i < target.size() && target[i] != '&';
       ++i) {
    if (target[i] == '%' && i + 2 < target.size()) {
      value +=
          static_cast<char>(std::stoi(target.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      value += target[i];
    }
  }
  return value;
}

std::string listing(const std::vector<std::string>& keys,
                    const std::string& token) {
  std::string xml = "<ListBucketResult>";
  xml += token.empty() ? "<IsTruncated>false</IsTruncated>"
                       : "<IsTruncated>true</IsTruncated>"
                         "<NextContinuationToken>" +
                             token + "</NextContinuationToken>";
  for (const std::string& key : keys)
    xml += "<Contents><Key>" + key + "</Key><Size>100</Size></Contents>";
  return xml + "</ListBucketResult>";
}

bool is_listing(const RecordedRequest& r) {
  return r.target.find("list-type=2") != std::string::npos;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a store listing that repeats its continuation token stops") {
    TempDir dir;
    HttpServer server([](const RecordedRequest&) {
      return ScriptedResponse{200, {}, listing({}, "same")};
    });
    const auto start = std::chrono::steady_clock::now();
    auto r = compare_with_store(server, dir);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    INFO(r.err);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("repeats an earlier continuation token") !=
          std::string::npos);
    CHECK(server.requests().size() == 2);
    CHECK(took < 30);
  }

  TEST_CASE("listed keys outside the prefix or not names are never fetched") {
    TempDir dir;
    HttpServer server([](const RecordedRequest& r) {
      if (!is_listing(r)) return ScriptedResponse{404, {}, ""};
      const std::string prefix = query_value(r.target, "prefix");
      return ScriptedResponse{200,
                              {},
                              listing({prefix + "../../../../other/evil.json",
                                       prefix + "a/./b.json",
                                       prefix + "\xC2\x9B"
                                                "2J.json",
                                       "elsewhere/x.json"},
                                      "")};
    });
    auto r = compare_with_store(server, dir);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    for (const auto& request : server.requests())
      CHECK_MESSAGE(is_listing(request), request.target);
    CHECK(r.err.find("4 key(s) skipped") != std::string::npos);
    CHECK(r.err.find("\xC2\x9B") == std::string::npos);
  }

  TEST_CASE("S3 error documents echoing the runner's keys are redacted") {
    TempDir dir;
    HttpServer server([](const RecordedRequest& r) {
      return ScriptedResponse{
          403,
          {},
          "<Error><Code>SignatureDoesNotMatch</Code><Message>" +
              r.header("Authorization").value_or("") + " with " + kSecret +
              "</Message></Error>"};
    });
    auto r = compare_with_store(server, dir);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("HTTP 403 SignatureDoesNotMatch") != std::string::npos);
    CHECK((r.out + r.err).find(kSecret) == std::string::npos);
    CHECK((r.out + r.err).find(kKeyId) == std::string::npos);
  }

  TEST_CASE("an s3:// prefix with '..' is refused before any request") {
    TempDir dir;
    HttpServer server([](const RecordedRequest&) {
      return ScriptedResponse{200, {"ETag: \"e\""}, ""};
    });
    const std::string folder = dir.file("profile");
    fs::create_directories(folder + "/results");
    REQUIRE(runner::base::write_file_atomic(folder + "/results/1.json", "{}"));
    for (const std::string url :
         {"s3://bench/../other", "s3://bench/ci/../../other/x",
          "s3://bench/./ci", "s3://bench//ci"}) {
      INFO(url);
      auto r =
          run_process({binary("RUNNER_BIN"), "upload", "--store", url, folder},
                      store_env(server, dir), "", 60);
      INFO(r.err);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("the prefix has an empty, '.' or '..' part") !=
            std::string::npos);
    }
    CHECK(server.requests().empty());
  }
}
