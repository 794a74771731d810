// `runner upload` speaking CodSpeed's upload protocol to a scripted HTTP
// server on 127.0.0.1 (tests/support/http_server): the metadata JSON field
// by field, the archive's MD5 and its contents (listed by the real `tar`),
// retries after a 503 and after a 429 with Retry-After, a 401 that fails at
// once, the token never printed, GitHub OIDC, and the tokenless run hash;
// a hostile service: answers that are not JSON, echo the token late in a
// long body, carry terminal escapes, never end or dribble.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kToken = "tok-SECRET-4242";
const std::string kHeadSha(40, 'c');

// A small profile folder: a results file, a nested file, an empty folder.
std::string write_folder(const TempDir& dir) {
  const std::string folder = dir.file("profile");
  fs::create_directories(folder + "/results");
  fs::create_directories(folder + "/empty");
  REQUIRE(runner::base::write_file_atomic(folder + "/results/1.json", "{}\n"));
  REQUIRE(runner::base::write_file_atomic(folder + "/perf.metadata",
                                          std::string(5000, 'm')));
  return folder;
}

// A pull_request job of acme/widgets (feat/x into main), its payload in
// dir/event.json.
std::vector<std::string> github_env(const TempDir& dir) {
  json event = {{"number", 7},
                {"pull_request",
                 {{"number", 7},
                  {"head", {{"sha", kHeadSha}, {"ref", "feat/x"}}},
                  {"base", {{"sha", std::string(40, 'b')}, {"ref", "main"}}}}},
                {"sender", {{"login", "octo"}, {"id", 583231}}}};
  REQUIRE(
      runner::base::write_file_atomic(dir.file("event.json"), event.dump()));
  return {"GITHUB_ACTIONS=true",
          "GITLAB_CI=",
          "GITHUB_REPOSITORY=acme/widgets",
          "GITHUB_SHA=" + std::string(40, 'e'),
          "GITHUB_REF=refs/pull/7/merge",
          "GITHUB_REF_NAME=7/merge",
          "GITHUB_HEAD_REF=feat/x",
          "GITHUB_BASE_REF=main",
          "GITHUB_EVENT_NAME=pull_request",
          "GITHUB_EVENT_PATH=" + dir.file("event.json"),
          "GITHUB_RUN_ID=123456",
          "GITHUB_JOB=bench",
          "GITHUB_ACTOR=octo",
          "GITHUB_WORKSPACE=/work/widgets",
          "CODSPEED_TOKEN=",
          "CODSPEED_UPLOAD_URL=",
          "ACTIONS_ID_TOKEN_REQUEST_URL=",
          "ACTIONS_ID_TOKEN_REQUEST_TOKEN=",
          "RUNNER_HTTP_RETRY_DELAY_MS=5"};
}

ProcessResult upload(const std::string& folder, const std::string& url,
                     std::vector<std::string> env,
                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{binary("RUNNER_BIN"), "upload", folder,
                                "--upload-url", url};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv, env);
}

// The service: POST /upload answers with the PUT URL; PUT /archive/run-1
// takes the archive. `put_failures` PUTs are answered 503 first.
struct FakeService {
  int put_failures = 0;
  int puts = 0;
  ScriptedResponse operator()(const RecordedRequest& r) {
    if (r.method == "POST" && r.target == "/upload")
      return {200,
              {"Content-Type: application/json"},
              json{{"status", "success"},
                   {"uploadUrl", url_base + "/archive/run-1?sig=abc"},
                   {"runId", "run-1"}}
                  .dump()};
    if (r.method == "PUT" && r.target.rfind("/archive/run-1", 0) == 0)
      return ++puts <= put_failures ? ScriptedResponse{503, {}, "busy"}
                                    : ScriptedResponse{200, {}, ""};
    return {404, {}, "no route"};
  }
  std::string url_base;
};

std::string hex_to_base64(const std::string& hex) {
  static const char* kChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 2]);
    out += kChars[(n >> 18) & 63];
    out += kChars[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kChars[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kChars[n & 63] : '=';
  }
  return out;
}

// The first word md5sum/sha256sum print for `data`.
std::string digest_hex(const char* tool, const std::string& data,
                       const TempDir& dir) {
  REQUIRE(runner::base::write_file_atomic(dir.file("digest.in"), data));
  auto r = run_process({tool, dir.file("digest.in")});
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, r.out.find(' '));
}

std::vector<std::string> tar_listing(const std::string& archive,
                                     const TempDir& dir) {
  REQUIRE(runner::base::write_file_atomic(dir.file("archive.tar"), archive));
  auto r = run_process({"tar", "-tf", dir.file("archive.tar")});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> names;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  std::sort(names.begin(), names.end());
  return names;
}

const RecordedRequest* find_request(const std::vector<RecordedRequest>& all,
                                    const std::string& method) {
  for (const auto& r : all)
    if (r.method == method) return &r;
  return nullptr;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("runner upload: the metadata, the MD5 and the tar, with a token") {
    TempDir dir;
    FakeService service;
    HttpServer server([&](const RecordedRequest& r) { return service(r); });
    service.url_base = server.url("");
    const std::string folder = write_folder(dir);
    auto r = upload(folder, server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("uploaded run run-1") != std::string::npos);
    CHECK((r.out + r.err).find(kToken) == std::string::npos);
    const auto requests = server.requests();
    const RecordedRequest* post = find_request(requests, "POST");
    const RecordedRequest* put = find_request(requests, "PUT");
    REQUIRE(post != nullptr);
    REQUIRE(put != nullptr);
    CHECK(post->header("Authorization") == kToken);
    CHECK(post->header("Content-Type") == "application/json");
    const json m = json::parse(post->body);
    CHECK(m["version"] == 10);
    CHECK(m["repositoryProvider"] == "GITHUB");
    CHECK(m["runEnvironment"] == "GITHUB_ACTIONS");
    CHECK(m["tokenless"] == false);
    CHECK(m["commitHash"] == kHeadSha);  // the PR head, not the merge commit
    CHECK(m["ref"] == "refs/pull/7/merge");
    CHECK(m["headRef"] == "feat/x");
    CHECK(m["baseRef"] == "main");
    CHECK(m["owner"] == "acme");
    CHECK(m["repository"] == "widgets");
    CHECK(m["event"] == "pull_request");
    CHECK(m["sender"] == json{{"id", "583231"}, {"login", "octo"}});
    CHECK(m["ghData"] == json{{"runId", "123456"}, {"job", "bench"}});
    CHECK(m["glData"].is_null());
    CHECK(m["repositoryRootPath"] == "/work/widgets/");
    CHECK(m["profileEncoding"].is_null());
    CHECK(m["allowEmpty"] == false);
    CHECK(m["runPart"]["runId"] == "123456");
    CHECK(m["runner"]["executor"] == "walltime");
    CHECK(m["runner"]["name"] == "codspeed-runner");
    CHECK(m["runner"]["version"] == binary("RUNNER_PROJECT_VERSION"));
    CHECK(m["runner"]["cpuCores"].get<int>() > 0);
    CHECK(m["runner"]["totalMemoryGb"].get<int>() > 0);
    CHECK_FALSE(m["runner"]["arch"].get<std::string>().empty());
    CHECK_FALSE(m["runner"]["os"].get<std::string>().empty());
    // The archive: its MD5 in the metadata and the header, its contents.
    const std::string md5 = hex_to_base64(digest_hex("md5sum", put->body, dir));
    CHECK(m["profileMd5"] == md5);
    CHECK(put->header("Content-MD5") == md5);
    CHECK(put->header("Content-Type") == "application/x-tar");
    CHECK(put->header("Content-Length") == std::to_string(put->body.size()));
    CHECK(put->target == "/archive/run-1?sig=abc");
    CHECK(tar_listing(put->body, dir) ==
          std::vector<std::string>{"./empty/", "./perf.metadata", "./results/",
                                   "./results/1.json"});
  }

  TEST_CASE("runner upload retries a PUT answered 503") {
    TempDir dir;
    FakeService service;
    service.put_failures = 2;
    HttpServer server([&](const RecordedRequest& r) { return service(r); });
    service.url_base = server.url("");
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(service.puts == 3);
    CHECK(r.err.find("archive upload: HTTP 503: busy, retrying in") !=
          std::string::npos);
  }

  TEST_CASE("runner upload waits as a 429's Retry-After says") {
    TempDir dir;
    FakeService service;
    int posts = 0;
    HttpServer server([&](const RecordedRequest& r) {
      if (r.method == "POST" && ++posts == 1)
        return ScriptedResponse{429, {"Retry-After: 1"}, "slow down"};
      return service(r);
    });
    service.url_base = server.url("");
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(posts == 2);
    CHECK(
        r.err.find("HTTP 429: slow down, retrying in 1.0 s (attempt 2 of 5)") !=
        std::string::npos);
  }

  TEST_CASE("a 401 fails at once with the status and body, token redacted") {
    TempDir dir;
    HttpServer server([](const RecordedRequest& r) {
      return ScriptedResponse{
          401, {}, "bad token " + r.header("Authorization").value_or("")};
    });
    auto env = github_env(dir);
    env.push_back("CODSPEED_TOKEN=" + kToken);
    auto r = upload(write_folder(dir), server.url("/upload"), env);
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(server.requests().size() == 1);
    CHECK(r.err.find(
              "the upload service refused the run: HTTP 401: bad token ***") !=
          std::string::npos);
    CHECK((r.out + r.err).find(kToken) == std::string::npos);
  }

  TEST_CASE("without a token, GitHub OIDC gives one") {
    TempDir dir;
    FakeService service;
    HttpServer server([&](const RecordedRequest& r) {
      if (r.method == "GET" && r.target.rfind("/oidc?", 0) == 0)
        return ScriptedResponse{200, {}, json{{"value", "jwt-123"}}.dump()};
      return service(r);
    });
    service.url_base = server.url("");
    auto env = github_env(dir);
    env.push_back("ACTIONS_ID_TOKEN_REQUEST_URL=" +
                  server.url("/oidc?api-version=2.0"));
    env.push_back("ACTIONS_ID_TOKEN_REQUEST_TOKEN=bearer-secret");
    auto r = upload(write_folder(dir), server.url("/upload"), env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    const RecordedRequest* oidc = find_request(requests, "GET");
    REQUIRE(oidc != nullptr);
    CHECK(oidc->target == "/oidc?api-version=2.0&audience=codspeed.io");
    CHECK(oidc->header("Authorization") == "Bearer bearer-secret");
    CHECK(find_request(requests, "POST")->header("Authorization") == "jwt-123");
    CHECK((r.out + r.err).find("bearer-secret") == std::string::npos);
    CHECK((r.out + r.err).find("jwt-123") == std::string::npos);
  }

  TEST_CASE("tokenless: the run hash is the SHA-256 of the metadata sent") {
    TempDir dir;
    FakeService service;
    HttpServer server([&](const RecordedRequest& r) { return service(r); });
    service.url_base = server.url("");
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    const RecordedRequest* post = find_request(requests, "POST");
    REQUIRE(post != nullptr);
    CHECK_FALSE(post->header("Authorization").has_value());
    CHECK(json::parse(post->body)["tokenless"] == true);
    CHECK(r.out ==
          "Run hash: " + digest_hex("sha256sum", post->body, dir) + "\n");
  }

  TEST_CASE("a dead server: retried, then exit 1 naming the cause") {
    TempDir dir;
    std::string url;
    {
      HttpServer gone(
          [](const RecordedRequest&) { return ScriptedResponse{}; });
      url = gone.url("/upload");
    }
    auto r =
        upload(write_folder(dir), url, github_env(dir), {"--token", kToken});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("(attempt 5 of 5)") != std::string::npos);
    CHECK(r.err.find("runner upload: upload metadata to " + url) !=
          std::string::npos);
  }

  TEST_CASE("a 2xx answer that is not JSON is quoted with the token redacted") {
    TempDir dir;
    HttpServer server([](const RecordedRequest& r) {
      return ScriptedResponse{200,
                              {},
                              "<html>welcome " +
                                  r.header("Authorization").value_or("") +
                                  "</html>"};
    });
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("unexpected answer of the upload service: not JSON "
                     "(HTTP 200): <html>welcome ***</html>") !=
          std::string::npos);
    CHECK((r.out + r.err).find(kToken) == std::string::npos);
  }

  TEST_CASE("a 4xx echoing the token at byte 290 prints none of it") {
    TempDir dir;
    HttpServer server([](const RecordedRequest& r) {
      return ScriptedResponse{400,
                              {},
                              std::string(290, '.') +
                                  r.header("Authorization").value_or("") +
                                  " is not valid"};
    });
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("HTTP 400: " + std::string(290, '.') + "***") !=
          std::string::npos);
    // Not even the start of it (a cut at byte 300 left "tok-SECRE").
    CHECK((r.out + r.err).find(kToken.substr(0, 4)) == std::string::npos);
  }

  TEST_CASE("terminal escapes in an answer never reach the terminal raw") {
    TempDir dir;
    int posts = 0;
    HttpServer server([&](const RecordedRequest&) {
      return ++posts == 1
                 ? ScriptedResponse{503, {}, "busy \x1B[2J\x1B]0;owned\x07"}
                 : ScriptedResponse{
                       403, {}, "no \x1B[31mred\x9B \xE2\x80\xAEtxt.exe"};
    });
    auto r = upload(write_folder(dir), server.url("/upload"), github_env(dir),
                    {"--token", kToken});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("HTTP 503: busy \\x1B[2J\\x1B]0;owned\\x07, retrying") !=
          std::string::npos);
    CHECK(r.err.find("HTTP 403: no \\x1B[31mred\\x9B \\u{202E}txt.exe") !=
          std::string::npos);
    CHECK(r.err.find('\x1B') == std::string::npos);
    CHECK(r.err.find('\x07') == std::string::npos);
    CHECK(r.err.find("\xE2\x80\xAE") == std::string::npos);
  }

  TEST_CASE("an answer that never ends is cut at its size cap") {
    TempDir dir;
    int posts = 0;
    HttpServer server([&](const RecordedRequest&) {
      ++posts;
      ScriptedResponse response{200, {}, "{\"uploadUrl\": \""};
      response.stream = [](std::string& chunk) {
        chunk.assign(65536, 'a');
        return true;
      };
      return response;
    });
    const auto start = std::chrono::steady_clock::now();
    auto r =
        run_process({binary("RUNNER_BIN"), "upload", write_folder(dir),
                     "--upload-url", server.url("/upload"), "--token", kToken},
                    github_env(dir), "", 60);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    INFO(r.err);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("answered more than 1048576 bytes") != std::string::npos);
    CHECK(posts == 1);  // not retried
    CHECK(took < 30);
  }

  TEST_CASE("a dribbling answer ends at the time limit, retries included") {
    TempDir dir;
    int posts = 0;
    HttpServer server([&](const RecordedRequest&) {
      ++posts;
      ScriptedResponse response{200, {}, "{"};
      response.stream = [](std::string& chunk) {  // 5 KiB/s, forever
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        chunk.assign(512, ' ');
        return true;
      };
      return response;
    });
    auto env = github_env(dir);
    env.push_back("RUNNER_HTTP_TIME_LIMIT_MS=2000");
    const auto start = std::chrono::steady_clock::now();
    auto r =
        run_process({binary("RUNNER_BIN"), "upload", write_folder(dir),
                     "--upload-url", server.url("/upload"), "--token", kToken},
                    env, "", 60);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    INFO(r.err);
    MESSAGE("a dribbling upload service: runner upload ended after " << took
                                                                     << " s");
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("timed out") != std::string::npos);
    CHECK(took >= 1.9);
    CHECK(took < 15);
  }
}
