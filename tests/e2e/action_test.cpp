// The CI action's logic (packaging/ci/runner-ci) in a faked GitHub Actions
// job against a real s3rver: a push to main stores the base run, then a
// pull request whose benchmark is 50% slower is compared with it: the job
// summary holds the comparison table, the step outputs hold the verdict
// and the profile folder, the exit code follows fail-on-regression. Inputs
// holding shell code are never run.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The workload through bash, its arguments from $WORKLOAD_ARGS, so that the
// command (and so the benchmark's name) is the same in every job.
const char* kRun = "\"$COMPARE_WORKLOAD_BIN\" $WORKLOAD_ARGS";

// A job of acme/widgets: a push to main, or pull request 7 (feat/x into
// main) with the workload `slower` percent slower.
std::vector<std::string> job_env(const S3rver& server, const TempDir& dir,
                                 const std::string& name, bool pull_request,
                                 const std::string& slower) {
  std::vector<std::string> env = server.environment();
  const std::vector<std::string> job = {
      "RUNNER_BIN=" + binary("RUNNER_BIN"),
      "RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN"),
      "COMPARE_WORKLOAD_BIN=" + binary("COMPARE_WORKLOAD_BIN"),
      "WORKLOAD_ARGS=" + (slower.empty() ? "" : "--slower " + slower),
      "RUNNER_CI_RUN=" + std::string(kRun),
      "RUNNER_CI_MODE=exec",
      "RUNNER_CI_UPLOAD=s3",
      "RUNNER_CI_STORE=s3://bench/ci",
      "RUNNER_CI_BASE_REF=",
      "RUNNER_CI_FAIL_ON_REGRESSION=false",
      "RUNNER_CI_PROFILE_FOLDER=" + dir.file(name + "-profile"),
      "RUNNER_TEMP=" + dir.path(),
      "GITHUB_STEP_SUMMARY=" + dir.file(name + "-summary.md"),
      "GITHUB_OUTPUT=" + dir.file(name + "-output"),
      "XDG_CACHE_HOME=" + dir.file("cache"),
      "RUNNER_HTTP_RETRY_DELAY_MS=5"};
  env.insert(env.end(), job.begin(), job.end());
  for (std::string& e : github_job_env(pull_request, dir.file("event.json")))
    env.push_back(std::move(e));
  return env;
}

void write_event(const TempDir& dir) {
  std::ofstream(dir.file("event.json"))
      << R"({"number": 7, "pull_request": {"number": 7, )"
      << R"("head": {"sha": ")" << std::string(40, 'b')
      << R"(", "ref": "feat/x"}, "base": {"sha": ")" << std::string(40, 'a')
      << R"(", "ref": "main"}}, "sender": {"login": "octo", "id": 1}})";
}

ProcessResult run_job(const std::vector<std::string>& env,
                      const std::vector<std::string>& more = {}) {
  std::vector<std::string> all = env;
  all.insert(all.end(), more.begin(), more.end());
  return run_process({"bash", runner::testing::binary("CI_SCRIPT")}, all, "",
                     300);
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("the CI script: main stored, a slower pull request flagged") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_event(dir);
      auto main_job = run_job(job_env(*server, dir, "main", false, ""));
      INFO(main_job.err);
      REQUIRE(main_job.exit_code == 0);
      CHECK(main_job.err.find("no comparison") != std::string::npos);
      CHECK(file_text(dir.file("main-output")) ==
            "profile-folder=" + dir.file("main-profile") + "\nverdict=none\n");

      auto pr = run_job(job_env(*server, dir, "pr", true, "50"));
      INFO(pr.err);
      CHECK(pr.exit_code == 0);  // fail-on-regression false
      CHECK(file_text(dir.file("pr-output")) ==
            "profile-folder=" + dir.file("pr-profile") +
                "\nverdict=regression\n");
      const std::string summary = file_text(dir.file("pr-summary.md"));
      CHECK(summary.find("| benchmark | base | head |") != std::string::npos);
      CHECK(summary.find("regression") != std::string::npos);
      CHECK(fs::exists(dir.file("pr-profile/compare/compare.json")));

      auto failing = run_job(job_env(*server, dir, "pr2", true, "50"),
                             {"RUNNER_CI_FAIL_ON_REGRESSION=true"});
      INFO(failing.err);
      CHECK(failing.exit_code == 1);
      CHECK(file_text(dir.file("pr2-output")).find("verdict=regression") !=
            std::string::npos);
    }
  }

  TEST_CASE("the CI script runs no input but the command as code") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_event(dir);
      const std::string pwned = dir.file("pwned");
      auto job = run_job(
          job_env(*server, dir, "x", true, ""),
          {"RUNNER_CI_BASE_REF=$(touch " + pwned + ")", "RUNNER_CI_UPLOAD=none",
           "RUNNER_CI_S3_ENDPOINT=" + server->endpoint() + "`touch " + pwned +
               "`"});
      INFO(job.err);
      CHECK(job.exit_code == 0);
      CHECK_FALSE(fs::exists(pwned));
      CHECK(file_text(dir.file("x-output")).find("verdict=none") !=
            std::string::npos);
    }
  }

  TEST_CASE("the CI script refuses bad inputs before running anything") {
    TempDir dir;
    auto r = run_process(
        {"bash", binary("CI_SCRIPT")},
        {"RUNNER_CI_RUN=touch " + dir.file("ran"), "RUNNER_CI_UPLOAD=ftp"});
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "runner-ci: upload must be none, codspeed or s3, not 'ftp'\n");
    CHECK_FALSE(fs::exists(dir.file("ran")));
  }
}
