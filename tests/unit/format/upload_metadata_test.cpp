// format/upload_metadata: CodSpeed's upload metadata (version 10) and the
// service's answers.
#include <doctest/doctest.h>

#include "format/format.hpp"

using namespace runner::format;

TEST_CASE("the metadata is written in CodSpeed's shape and read back") {
  UploadMetadata m;
  m.repository_provider = "GITHUB";
  m.profile_md5 = "1B2M2Y8AsgTpgAmY7PhCfg==";
  m.runner.version = "0.2.0";
  m.runner.os = "debian";
  m.runner.cpu_cores = 2;
  m.runner.cpu_flags = {"sse2", "avx2"};
  m.run_environment = "GITHUB_ACTIONS";
  m.run_part = UploadRunPart{"99", "bench-walltime", "bench", {{"k", "v"}}};
  m.commit_hash = std::string(40, 'c');
  m.ref = "refs/pull/7/merge";
  m.head_ref = "feat/x";
  m.owner = "acme";
  m.repository = "widgets";
  m.event = "pull_request";
  m.sender = UploadSender{"1", "octo"};
  m.gh_data = UploadGhData{"99", "bench"};
  m.repository_root_path = "/work/";
  const std::string text = write_upload_metadata(m);
  CHECK(text.rfind(
            R"({"repositoryProvider":"GITHUB","version":10,"tokenless":false,)",
            0) == 0);
  CHECK(text.find(R"("headRef":"feat/x","baseRef":null,)") !=
        std::string::npos);
  CHECK(
      text.find(
          R"("ghData":{"runId":"99","job":"bench"},"glData":null,"localData":null,)") !=
      std::string::npos);
  auto back = read_upload_metadata(text);
  REQUIRE_MESSAGE(back, back.error().message());
  CHECK(write_upload_metadata(*back) == text);
}

TEST_CASE("the service's answers") {
  auto answer = read_upload_answer(
      R"({"status":"success","uploadUrl":"https://s/put?x=1","runId":"r1"})");
  REQUIRE(answer);
  CHECK(answer->upload_url == "https://s/put?x=1");
  CHECK(answer->run_id == "r1");
  // The answer may echo a token: the error names the fault, never the text
  // (upload::read_service_answer quotes it, redacted).
  auto refused = read_upload_answer("<html>gateway tok-SECRET</html>");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message() ==
        "unexpected answer of the upload service: not JSON");
  refused = read_upload_answer(R"({"status":"tok-SECRET"})");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message().find("tok-SECRET") == std::string::npos);
  CHECK_FALSE(read_upload_answer(R"({"uploadUrl":3})"));
  CHECK_FALSE(read_upload_answer("[]"));
  auto token = read_oidc_answer(R"({"count":1,"value":"eyJ.x.y"})");
  REQUIRE(token);
  CHECK(*token == "eyJ.x.y");
  CHECK_FALSE(read_oidc_answer(R"({"value":""})"));
  CHECK_FALSE(read_oidc_answer("null"));
}
