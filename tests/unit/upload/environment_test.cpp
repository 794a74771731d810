// upload/environment and the store's naming: the facts of a run from a
// faked GitHub Actions or GitLab CI job, or from a real git checkout made
// here; S3 URLs and settings; branch names as keys.
#include <cstdlib>
#include <filesystem>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::upload;
using runner::testing::TempDir;

TEST_CASE("GitHub Actions: a pull request's facts come from its payload") {
  TempDir dir;
  REQUIRE(runner::base::write_file_atomic(
      dir.file("event.json"),
      R"({"pull_request": {"number": 12, "head": {"sha": "h1", "ref": "feat/y"},)"
      R"( "base": {"sha": "b1", "ref": "main"}}, "sender": {"login": "octo", "id": 9}})"));
  const Environment env = {{"GITHUB_ACTIONS", "true"},
                           {"GITHUB_SHA", "merge1"},
                           {"GITHUB_REF", "refs/pull/12/merge"},
                           {"GITHUB_REF_NAME", "12/merge"},
                           {"GITHUB_HEAD_REF", "feat/y"},
                           {"GITHUB_BASE_REF", "main"},
                           {"GITHUB_REPOSITORY", "acme/widgets"},
                           {"GITHUB_EVENT_NAME", "pull_request"},
                           {"GITHUB_EVENT_PATH", dir.file("event.json")},
                           {"GITHUB_RUN_ID", "77"},
                           {"GITHUB_JOB", "bench"}};
  auto facts = collect_run_facts(dir.path(), env);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(facts->provider == CiProvider::kGitHubActions);
  CHECK(facts->commit == "h1");
  CHECK(facts->branch == "feat/y");
  CHECK(facts->base_ref == "main");
  CHECK(facts->base_commit == "b1");
  CHECK(facts->pull_request == 12u);
  CHECK(facts->owner == "acme");
  CHECK(facts->repository == "widgets");
  CHECK(facts->sender == "octo");
  CHECK(facts->sender_id == "9");
  CHECK(facts->run_url == "https://github.com/acme/widgets/actions/runs/77");
  CHECK(default_base_branch(env) == "main");
  CHECK(facts->machine.cpu_cores > 0);
  CHECK_FALSE(facts->machine.arch.empty());
}

TEST_CASE("GitLab CI: a merge request pipeline") {
  const Environment env = {{"GITLAB_CI", "true"},
                           {"CI_COMMIT_SHA", "c1"},
                           {"CI_COMMIT_REF_NAME", "feat/z"},
                           {"CI_MERGE_REQUEST_IID", "5"},
                           {"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feat/z"},
                           {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "develop"},
                           {"CI_MERGE_REQUEST_DIFF_BASE_SHA", "d1"},
                           {"CI_PROJECT_NAMESPACE", "group/sub"},
                           {"CI_PROJECT_NAME", "proj"},
                           {"CI_PIPELINE_SOURCE", "merge_request_event"},
                           {"CI_PIPELINE_ID", "1001"},
                           {"CI_JOB_NAME", "bench"}};
  auto facts = collect_run_facts(".", env);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(facts->provider == CiProvider::kGitLabCi);
  CHECK(facts->ref == "refs/merge-requests/5/head");
  CHECK(facts->event == "pull_request");
  CHECK(facts->owner == "group/sub");
  CHECK(facts->base_commit == "d1");
  CHECK(default_base_branch(env) == "develop");
}

TEST_CASE("CI without the variables it must give is an error naming them") {
  auto facts = collect_run_facts(".", {{"GITHUB_ACTIONS", "true"}});
  REQUIRE_FALSE(facts);
  CHECK(facts.error().message() ==
        "GITHUB_ACTIONS without GITHUB_SHA GITHUB_REPOSITORY GITHUB_REF_NAME");
}

TEST_CASE("outside CI, git tells the commit, branch and repository") {
  TempDir dir;
  const std::string repo = dir.file("repo");
  const std::string git = "git -C '" + repo + "' ";
  REQUIRE(std::system(("git init -q -b feat/local '" + repo + "'").c_str()) ==
          0);
  REQUIRE(std::system((git + "-c user.email=a@b -c user.name=a commit -q "
                             "--allow-empty -m one")
                          .c_str()) == 0);
  REQUIRE(
      std::system((git + "remote add origin git@github.com:acme/gadgets.git")
                      .c_str()) == 0);
  // git never looks above the test's folder for a checkout, wherever TMPDIR
  // is (even inside another checkout): its parent is a ceiling.
  const Environment env = {
      {"PATH", std::getenv("PATH")},
      {"GIT_CEILING_DIRECTORIES",
       std::filesystem::path(dir.path()).parent_path().string()}};
  auto facts = collect_run_facts(repo, env);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(facts->provider == CiProvider::kLocal);
  CHECK(facts->commit.size() == 40);
  CHECK(facts->branch == "feat/local");
  CHECK(facts->owner == "acme");
  CHECK(facts->repository == "gadgets");
  CHECK(facts->event == "local");
  auto outside = collect_run_facts(dir.path(), env);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message().find("cannot tell the commit under test") ==
        0);
}

TEST_CASE("S3 URLs, settings and branch keys") {
  auto location = parse_s3_url("s3://bench-profiles/ci/team/");
  REQUIRE(location);
  CHECK(location->bucket == "bench-profiles");
  CHECK(location->prefix == "ci/team");
  CHECK(parse_s3_url("s3://bench")->prefix.empty());
  CHECK_FALSE(parse_s3_url("https://bench"));
  CHECK_FALSE(parse_s3_url("s3://B"));
  CHECK_FALSE(parse_s3_url("s3://bench//x"));
  auto config =
      s3_config_from_environment({{"AWS_ACCESS_KEY_ID", "k"},
                                  {"AWS_SECRET_ACCESS_KEY", "s"},
                                  {"AWS_DEFAULT_REGION", "eu-west-3"}},
                                 std::nullopt);
  REQUIRE(config);
  CHECK(config->endpoint == "https://s3.eu-west-3.amazonaws.com");
  CHECK(config->credentials.region == "eu-west-3");
  config = s3_config_from_environment(
      {{"AWS_ACCESS_KEY_ID", "k"},
       {"AWS_SECRET_ACCESS_KEY", "s"},
       {"AWS_ENDPOINT_URL", "http://127.0.0.1:9000/"}},
      std::nullopt);
  REQUIRE(config);
  CHECK(config->endpoint == "http://127.0.0.1:9000");
  auto missing = s3_config_from_environment({}, std::nullopt);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message().find("AWS_ACCESS_KEY_ID") !=
        std::string::npos);
  CHECK(ref_key("main") == "main");
  CHECK(ref_key("feat/x y") == "feat~2Fx~20y");
  CHECK(ref_key("..") == "~..");
  CHECK(default_store_cache({{"XDG_CACHE_HOME", "/c"}}) == "/c/runner/store");
  CHECK(default_store_cache({{"HOME", "/h"}}) == "/h/.cache/runner/store");
}
