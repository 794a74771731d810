// The CI action's logic (packaging/ci/runner-ci) in a faked GitHub Actions
// job against a real s3rver: a push to main stores the base run, then a
// pull request whose benchmark is 50% slower is compared with it: the job
// summary holds the comparison table, the step outputs hold the verdict
// and the profile folder, the exit code follows fail-on-regression. Inputs
// holding shell code are never run.
//
// The gate fails closed: a comparison that could not be made (the real
// runner failing to reach the store, or, through a wrapper standing in for
// `runner compare`, a crash, a hang, a fatal error, a missing verdict) is
// verdict=error and, with fail-on-regression, a failed job. The benchmark
// never sees the credentials; the base branch never comes from the pull
// request's head; runner-install never installs a cached package it cannot
// verify (tampered, swapped, linked, writable by others); the action and
// the GitLab template parse and hand secrets to no step that does not need
// them.
//
// What a reviewer sees: the verdict is read from compare.json; the summary
// always has the results table (a push too), the comparison when there is a
// base, and the flamegraphs of the artifact, which really holds them, with
// no path of the machine; the runner's notes on how it sampled (a Node
// benchmark's language flags among them) are one collapsed log group;
// `runner-ci check-os` accepts Debian 12 only, saying what to do; the
// action's example and the GitLab job run in debian:bookworm and install no
// test tools.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/runtimes.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

#include <yaml-cpp/yaml.h>

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
      "RUNNER_CI_ARTIFACT_FOLDER=" + dir.file(name + "-artifact"),
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

// The job's environment with `more` replacing entries of the same name.
ProcessResult run_job(const std::vector<std::string>& env,
                      const std::vector<std::string>& more = {},
                      int timeout_s = 300) {
  auto name = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> all;
  for (const std::string& kv : env)
    if (std::none_of(more.begin(), more.end(),
                     [&](const std::string& m) { return name(m) == name(kv); }))
      all.push_back(kv);
  all.insert(all.end(), more.begin(), more.end());
  return run_process({"bash", runner::testing::binary("CI_SCRIPT")}, all, "",
                     timeout_s);
}

void write_executable(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every byte of every regular file under `dir`, for a search.
std::string all_bytes(const std::string& dir) {
  std::string bytes;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && !entry.is_symlink())
      bytes += file_text(entry.path().string());
  return bytes;
}

// The artifact's files a summary names: its "- `<file>`" lines under
// "### runner: flamegraphs".
std::vector<std::string> summary_files(const std::string& summary) {
  std::vector<std::string> files;
  const size_t at = summary.find("### runner: flamegraphs");
  if (at == std::string::npos) return files;
  const std::string part = summary.substr(at);
  const std::regex line(R"(\n- \[?`([^`\n]+)`)");
  for (std::sregex_iterator it(part.begin(), part.end(), line), end; it != end;
       ++it)
    files.push_back((*it)[1]);
  return files;
}

// The runner, except `compare` when FAKE_COMPARE names how it goes wrong
// (its arguments are written to FAKE_ARGS first).
const char* kFakeRunner = R"sh(#!/usr/bin/env bash
if [ "$1" = compare ]; then
  if [ -n "${FAKE_ARGS:-}" ]; then printf '%s\n' "$@" > "$FAKE_ARGS"; fi
  case "${FAKE_COMPARE:-}" in
    segv) echo "runner compare: reading the base" >&2; kill -SEGV $$ ;;
    hang) exec sleep 300 ;;
    fatal) echo "runner: fatal: std::bad_alloc" >&2; exit 1 ;;
    silent) exit 0 ;;
    refuse) echo "runner compare: no run of the base" >&2; exit 2 ;;
    json:*)  # compare.json with this verdict in --out, exit FAKE_EXIT
      while [ "$#" -gt 0 ] && [ "$1" != --out ]; do shift; done
      mkdir -p "$2"
      printf '{\n  "verdict": "%s",\n  "summary": {}\n}\n' \
        "${FAKE_COMPARE#json:}" > "$2/compare.json"
      exit "${FAKE_EXIT:-0}" ;;
  esac
fi
exec "$REAL_RUNNER_BIN" "$@"
)sh";

// A job of acme/widgets whose `runner` is the wrapper above, with no store
// server: a pull request (feat/x into main) benchmarking `true`, uploading
// nothing, comparing with s3://bench/ci at an endpoint that refuses
// connections.
std::vector<std::string> gate_env(const TempDir& dir, const std::string& name,
                                  const std::string& fake_compare) {
  write_executable(dir.file("fake-runner"), kFakeRunner);
  std::vector<std::string> env = {
      "RUNNER_BIN=" + dir.file("fake-runner"),
      "REAL_RUNNER_BIN=" + binary("RUNNER_BIN"),
      "FAKE_COMPARE=" + fake_compare,
      "FAKE_ARGS=" + dir.file(name + "-compare-args"),
      "RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN"),
      "RUNNER_CI_RUN=true",
      "RUNNER_CI_MODE=exec",
      "RUNNER_CI_UPLOAD=none",
      "RUNNER_CI_STORE=s3://bench/ci",
      "RUNNER_CI_S3_ENDPOINT=http://127.0.0.1:1",
      "AWS_ACCESS_KEY_ID=k",
      "AWS_SECRET_ACCESS_KEY=s",
      "RUNNER_CI_BASE_REF=",
      "RUNNER_CI_FAIL_ON_REGRESSION=true",
      "RUNNER_CI_COMPARE_TIMEOUT=",
      "RUNNER_CI_SECRET_VARIABLES=",
      "RUNNER_CI_PROFILE_FOLDER=" + dir.file(name + "-profile"),
      "RUNNER_CI_ARTIFACT_FOLDER=" + dir.file(name + "-artifact"),
      "RUNNER_TEMP=" + dir.path(),
      "GITHUB_STEP_SUMMARY=" + dir.file(name + "-summary.md"),
      "GITHUB_OUTPUT=" + dir.file(name + "-output"),
      "XDG_CACHE_HOME=" + dir.file("cache"),
      "RUNNER_HTTP_RETRY_DELAY_MS=5"};
  for (std::string& e : github_job_env(true, dir.file("event.json")))
    env.push_back(std::move(e));
  write_event(dir);
  return env;
}

// The job's outputs with this verdict.
std::string job_output(const TempDir& dir, const std::string& name,
                       const std::string& verdict) {
  return "profile-folder=" + dir.file(name + "-profile") +
         "\nartifact-folder=" + dir.file(name + "-artifact") +
         "\nartifact-name=runner-benchmarks\nverdict=" + verdict + "\n";
}

// The job's outputs when no comparison could be made.
std::string error_output(const TempDir& dir, const std::string& name) {
  return job_output(dir, name, "error");
}

// runner-install's neighbours: the .deb's version (debian/changelog's first
// entry) and dpkg's architecture.
std::string install_script() {
  return (fs::path(binary("CI_SCRIPT")).parent_path() / "runner-install")
      .string();
}

std::string package_version() {
  std::ifstream in(
      fs::path(binary("CI_SCRIPT")).parent_path().parent_path().parent_path() /
      "debian" / "changelog");
  std::string line;
  std::getline(in, line);
  std::smatch m;
  REQUIRE(std::regex_search(line, m, std::regex(R"(^runner \(([^)]+)\))")));
  return m[1];
}

std::string dpkg_architecture() {
  auto r = run_process({"dpkg", "--print-architecture"});
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, r.out.find('\n'));
}

// Stand-ins for what runner-install runs as root or for minutes: make (the
// `deb` target, building a small real package with dpkg-deb), sudo,
// apt-get (records what it was given and its SHA-256) and sysctl; each
// logs to FAKE_LOG.
void write_install_tools(const TempDir& dir) {
  fs::create_directories(dir.file("bin"));
  write_executable(dir.file("bin/make"), R"sh(#!/usr/bin/env bash
set -e
echo "make $*" >> "$FAKE_LOG"
for a; do case $a in DEB_OUT=*) out=${a#DEB_OUT=} ;; esac; done
arch=$(dpkg --print-architecture)
pkg=$(mktemp -d)
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$out"
printf '#!/bin/sh\necho build %s\n' "$(od -An -N8 -tx8 /dev/urandom)" > "$pkg/usr/bin/runner"
chmod 755 "$pkg/usr/bin/runner"
printf 'Package: runner\nVersion: %s\nArchitecture: %s\nMaintainer: t <t@example.org>\nDescription: t\n' \
  "${FAKE_DEB_VERSION:?}" "$arch" > "$pkg/DEBIAN/control"
dpkg-deb --root-owner-group -b "$pkg" "$out/runner_${FAKE_DEB_VERSION}_$arch.deb" > /dev/null
rm -rf "$pkg"
)sh");
  write_executable(dir.file("bin/sudo"), "#!/bin/sh\nexec \"$@\"\n");
  write_executable(dir.file("bin/apt-get"), R"sh(#!/usr/bin/env bash
for deb; do :; done
echo "apt-get $* sha256=$(sha256sum < "$deb" | cut -c1-64)" >> "$FAKE_LOG"
)sh");
  write_executable(dir.file("bin/sysctl"),
                   "#!/bin/sh\necho \"sysctl $*\" >> \"$FAKE_LOG\"\n");
}

ProcessResult run_install(const TempDir& dir, const std::string& command,
                          const std::vector<std::string>& more = {}) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> env = {
      "PATH=" + dir.file("bin") + ":" +
          (path != nullptr ? path : "/usr/bin:/bin"),
      "FAKE_LOG=" + dir.file("log"), "FAKE_DEB_VERSION=" + package_version(),
      "RUNNER_TEMP=" + dir.path()};
  env.insert(env.end(), more.begin(), more.end());
  return run_process({"bash", install_script(), command, dir.file("cache")},
                     env, "", 120);
}

// The one package entry of the cache folder (runner-<arch>-<hash>).
std::string cache_entry(const TempDir& dir) {
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir.file("cache")))
    entries.push_back(e.path().string());
  REQUIRE(entries.size() == 1);
  return entries[0];
}

std::string sha256_of(const std::string& path) {
  auto r = run_process({"sha256sum", path});
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, 64);
}

// The last apt-get line of the log: its SHA-256, "" when none.
std::string installed_sha(const TempDir& dir) {
  std::string log = file_text(dir.file("log")), sha;
  for (size_t at = log.find("apt-get "); at != std::string::npos;
       at = log.find("apt-get ", at + 1)) {
    size_t s = log.find("sha256=", at);
    if (s != std::string::npos) sha = log.substr(s + 7, 64);
  }
  return sha;
}

YAML::Node load_yaml(const std::string& path) {
  INFO(path);
  REQUIRE(fs::exists(path));
  return YAML::LoadFile(path);
}
}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("the CI script: main stored, a slower pull request flagged") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_event(dir);
      auto main_job = run_job(job_env(*server, dir, "main", false, ""),
                              {"RUNNER_CI_HISTORY=true"});
      INFO(main_job.err);
      REQUIRE(main_job.exit_code == 0);
      CHECK(main_job.err.find("no comparison") != std::string::npos);
      CHECK(file_text(dir.file("main-output")) ==
            job_output(dir, "main", "none"));
      const std::string main_summary = file_text(dir.file("main-summary.md"));
      CHECK(contains(main_summary,
                     "no base branch: this is not a pull or merge request"));
      // A push to main has no comparison, but its results and flamegraph.
      CHECK(contains(main_summary, "### runner: benchmark results"));
      CHECK(std::regex_search(main_summary,
                              std::regex("Benchmark +Rounds +Median +Stdev")));
      CHECK(summary_files(main_summary).size() == 1);
      CHECK_FALSE(contains(main_summary, dir.path()));
      // history: true on a push: the branch's history (this one run) in the
      // summary, its page in the artifact.
      CHECK(contains(main_summary, "### History of acme/widgets 'main'"));
      CHECK(contains(main_summary, "`history/index.html` in the artifact"));
      CHECK(fs::is_regular_file(dir.file("main-artifact/history/index.html")));
      CHECK(
          fs::is_regular_file(dir.file("main-artifact/history/history.json")));

      auto pr = run_job(job_env(*server, dir, "pr", true, "50"),
                        {"RUNNER_CI_HISTORY=true"});
      INFO(pr.err);
      CHECK(pr.exit_code == 0);  // fail-on-regression false
      CHECK(file_text(dir.file("pr-output")) ==
            job_output(dir, "pr", "regression"));
      const std::string summary = file_text(dir.file("pr-summary.md"));
      CHECK(summary.find("| benchmark | base | head |") != std::string::npos);
      CHECK(summary.find("regression") != std::string::npos);
      CHECK(fs::exists(dir.file("pr-profile/compare/compare.json")));
      // The verdict came from compare.json, where a script finds it.
      const std::string json =
          file_text(dir.file("pr-profile/compare/compare.json"));
      CHECK(json.starts_with("{\n  \"verdict\": \"regression\",\n"));
      // The summary: the results, the comparison, the flamegraphs of the
      // artifact (the run's and the differential one), no machine path.
      CHECK(contains(summary, "### runner: benchmark results"));
      CHECK(contains(summary, "### runner: comparison with main"));
      CHECK(contains(summary, "**runner compare: regression**"));
      const std::vector<std::string> files = summary_files(summary);
      CHECK(files.size() == 2);
      for (const std::string& file : files) {
        INFO(file);
        CHECK(fs::is_regular_file(dir.file("pr-artifact/" + file)));
      }
      CHECK(std::any_of(files.begin(), files.end(), [](const std::string& f) {
        return f.starts_with("compare/") && f.ends_with(".diff.svg");
      }));
      CHECK(fs::is_regular_file(dir.file("pr-artifact/summary.md")));
      CHECK(fs::is_regular_file(dir.file("pr-artifact/compare/compare.json")));
      CHECK_FALSE(contains(summary, dir.path()));
      // On a pull request: the base branch's history, linking its newest
      // push run (whose artifact has the page); no page of its own.
      CHECK(contains(summary, "### History of acme/widgets 'main'"));
      CHECK(contains(summary,
                     "Newest run: [aaaaaaaaaaaa](https://github.com/"
                     "acme/widgets/actions/runs/99)"));
      CHECK_FALSE(fs::exists(dir.file("pr-artifact/history")));

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
      // No base run under that name, at that endpoint: a comparison that
      // could not be made (fail-on-regression false: a warning).
      CHECK(file_text(dir.file("x-output")).find("verdict=error") !=
            std::string::npos);
      CHECK(contains(job.out, "::warning"));
    }
  }

  TEST_CASE("the CI gate: the real runner cannot reach the store") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto job = run_job(gate_env(dir, "pr", ""));
    INFO(job.err);
    CHECK(job.exit_code == 4);
    CHECK(file_text(dir.file("pr-output")) == error_output(dir, "pr"));
    CHECK(contains(job.err, "runner compare failed (exit 2)"));
    const std::string summary = file_text(dir.file("pr-summary.md"));
    CHECK(contains(summary, "### runner: no comparison"));
    CHECK(contains(summary, "<pre>base branch: main"));

    // Without fail-on-regression: the same verdict, a warning, exit 0.
    auto lenient = run_job(gate_env(dir, "lenient", ""),
                           {"RUNNER_CI_FAIL_ON_REGRESSION=false"});
    INFO(lenient.err);
    CHECK(lenient.exit_code == 0);
    CHECK(file_text(dir.file("lenient-output")) ==
          error_output(dir, "lenient"));
    CHECK(contains(lenient.out,
                   "::warning title=runner benchmarks::no "
                   "comparison with the base branch could be "
                   "made"));
  }

  TEST_CASE("the CI gate: runner compare killed by SIGSEGV") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto job = run_job(gate_env(dir, "pr", "segv"));
    INFO(job.err);
    CHECK(job.exit_code == 4);
    CHECK(file_text(dir.file("pr-output")) == error_output(dir, "pr"));
    CHECK(contains(job.err, "runner compare was killed by signal SEGV"));
    CHECK(contains(file_text(dir.file("pr-summary.md")),
                   "runner compare: reading the base</pre>"));
  }

  TEST_CASE("the CI gate: runner compare hanging past the time limit") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // The benchmark takes about 5 s; the comparison would take 300.
    auto job = run_job(gate_env(dir, "pr", "hang"),
                       {"RUNNER_CI_COMPARE_TIMEOUT=2"}, 90);
    INFO(job.err);
    CHECK_FALSE(job.timed_out);
    CHECK(job.exit_code == 4);
    CHECK(file_text(dir.file("pr-output")) == error_output(dir, "pr"));
    CHECK(contains(job.err, "did not finish within 2 s"));

    auto bad = run_job(gate_env(dir, "bad", "hang"),
                       {"RUNNER_CI_COMPARE_TIMEOUT=soon"}, 90);
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "the compare timeout must be a number"));
  }

  TEST_CASE("the CI gate: an exit code without a verdict is no verdict") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // exit 1 is a regression only with the verdict file saying so: here a
    // fatal error, with fail-on-regression the job fails as an error (4),
    // not as a regression (1).
    auto fatal = run_job(gate_env(dir, "fatal", "fatal"));
    INFO(fatal.err);
    CHECK(fatal.exit_code == 4);
    CHECK(file_text(dir.file("fatal-output")) == error_output(dir, "fatal"));
    CHECK(contains(fatal.err, "exited 1 without a compare.json verdict"));
    // exit 0 and nothing written: not "unchanged".
    auto silent = run_job(gate_env(dir, "silent", "silent"));
    INFO(silent.err);
    CHECK(silent.exit_code == 4);
    CHECK(file_text(dir.file("silent-output")) == error_output(dir, "silent"));
  }

  TEST_CASE("the CI gate: nothing to compare is none, and says why") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto job = run_job(gate_env(dir, "push", "segv"),
                       {"RUNNER_CI_STORE=", "GITHUB_BASE_REF="});
    INFO(job.err);
    CHECK(job.exit_code == 0);
    CHECK(file_text(dir.file("push-output")) ==
          job_output(dir, "push", "none"));
    CHECK(contains(file_text(dir.file("push-summary.md")),
                   "no store is configured"));
    CHECK_FALSE(fs::exists(dir.file("push-compare-args")));
  }

  TEST_CASE("the CI script takes the base from the target, never the head") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // A pull request from a branch called like the base into release.
    auto github = run_job(gate_env(dir, "gh", "refuse"),
                          {"GITHUB_HEAD_REF=main", "GITHUB_BASE_REF=release"});
    INFO(github.err);
    CHECK(github.exit_code == 4);
    const std::string args = file_text(dir.file("gh-compare-args"));
    CHECK(contains(args, "\n--base=release\n"));
    CHECK_FALSE(contains(args, "main"));
    // GitLab: a merge request from main into release.
    auto gitlab = run_job(
        gate_env(dir, "gl", "refuse"),
        {"GITHUB_ACTIONS=", "GITLAB_CI=true", "GITHUB_BASE_REF=",
         "GITHUB_HEAD_REF=", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=release",
         "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=main",
         "CI_COMMIT_REF_NAME=main"});
    INFO(gitlab.err);
    CHECK(gitlab.exit_code == 4);
    CHECK(
        contains(file_text(dir.file("gl-compare-args")), "\n--base=release\n"));
    // A base name that is an option, or holds a line break: refused as an
    // error before anything is compared.
    int n = 0;
    for (const std::string bad : {"--store=s3://evil", "main\nverdict=none"}) {
      const std::string name = "bad" + std::to_string(++n);
      auto job =
          run_job(gate_env(dir, name, "refuse"), {"RUNNER_CI_BASE_REF=" + bad});
      CHECK(job.exit_code == 4);
      CHECK(contains(job.err, "the base branch's name is not a branch name"));
      CHECK_FALSE(fs::exists(dir.file(name + "-compare-args")));
      CHECK(file_text(dir.file(name + "-output")) == error_output(dir, name));
    }
  }

  TEST_CASE("the CI script keeps the credentials from the benchmark") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::vector<std::string> planted = {
        "AWS_ACCESS_KEY_ID=planted-aws-key-id",
        "AWS_SECRET_ACCESS_KEY=planted-aws-secret",
        "AWS_SESSION_TOKEN=planted-aws-session",
        "CODSPEED_TOKEN=planted-codspeed-token",
        "RUNNER_CI_TOKEN=planted-runner-ci-token",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN=planted-oidc-request",
        "ACTIONS_RUNTIME_TOKEN=planted-actions-runtime",
        "GITHUB_TOKEN=planted-github-token",
        "CI_JOB_TOKEN=planted-job-token",
        "CI_REPOSITORY_URL=https://gitlab-ci-token:planted-job-token@"
        "gitlab.example.com/acme/widgets.git",
        "MY_DB_PASSWORD=planted-db-password",
        "RUNNER_CI_SECRET_VARIABLES=MY_DB_PASSWORD OTHER_SECRET",
        "MY_PUBLIC_SETTING=visible-setting",
        "ENV_DUMP=" + dir.file("benchmark-env"),
        "RUNNER_CI_RUN=env > \"$ENV_DUMP\"",
        "RUNNER_CI_STORE="};
    auto job = run_job(gate_env(dir, "pr", ""), planted);
    INFO(job.err);
    CHECK(job.exit_code == 0);
    const std::string seen = file_text(dir.file("benchmark-env"));
    CHECK(contains(seen, "MY_PUBLIC_SETTING=visible-setting\n"));
    CHECK_FALSE(contains(seen, "planted-"));
    CHECK_FALSE(contains(seen, "AWS_SECRET_ACCESS_KEY"));
    CHECK_FALSE(contains(all_bytes(dir.file("pr-profile")), "planted-"));

    auto bad = run_job(gate_env(dir, "bad", ""),
                       {"RUNNER_CI_SECRET_VARIABLES=OK $(touch x)"});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "is not a variable name"));
  }

  TEST_CASE("the CI script: credentials reach the upload, not the benchmark") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_event(dir);
      std::vector<std::string> env = job_env(*server, dir, "main", false, "");
      env.push_back("ENV_DUMP=" + dir.file("benchmark-env"));
      env.push_back("RUNNER_CI_RUN=env > \"$ENV_DUMP\"");
      auto main_job = run_job(env);
      INFO(main_job.err);
      CHECK(main_job.exit_code == 0);
      CHECK(contains(main_job.err, "stored in s3://bench/ci/"));
      const std::string seen = file_text(dir.file("benchmark-env"));
      CHECK(contains(seen, "GITHUB_REPOSITORY=acme/widgets\n"));
      CHECK_FALSE(contains(seen, "AWS_ACCESS_KEY_ID"));
      CHECK_FALSE(contains(seen, "AWS_SECRET_ACCESS_KEY"));
    }
  }

  TEST_CASE("runner compare --verdict-file") {
    TempDir dir;
    const std::string folder =
        binary("GOLDEN_DIR") + std::string("/folders/example");
    const std::string verdict = dir.file("verdict");
    auto made =
        run_process({binary("RUNNER_BIN"), "compare", "--verdict-file", verdict,
                     "--out", dir.file("out"), folder, folder});
    INFO(made.err);
    CHECK(made.exit_code == 0);
    // The golden folder has 3 rounds per benchmark: every one inconclusive.
    CHECK(file_text(verdict) == "inconclusive\n");
    // compare.json says the same, on the line runner-ci reads.
    CHECK(file_text(dir.file("out/compare.json"))
              .starts_with("{\n  \"verdict\": \"inconclusive\",\n"));
    // A comparison that cannot be made leaves no verdict, not the last one.
    auto failed =
        run_process({binary("RUNNER_BIN"), "compare", "--verdict-file", verdict,
                     folder, dir.file("missing")});
    CHECK(failed.exit_code == 2);
    CHECK_FALSE(fs::exists(verdict));
  }

  TEST_CASE("runner-install builds, verifies and installs a private copy") {
    TempDir dir;
    write_install_tools(dir);
    // A package left loose in the cache folder (any runner_*.deb) is
    // never installed: the folder holds none of these sources yet.
    fs::create_directories(dir.file("cache"));
    fs::permissions(dir.file("cache"),
                    fs::perms::owner_all | fs::perms::group_read |
                        fs::perms::group_exec | fs::perms::others_read |
                        fs::perms::others_exec);
    std::ofstream(dir.file("cache/runner_0.2.0-1_amd64.deb")) << "planted";
    auto first = run_install(dir, "install");
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(contains(file_text(dir.file("log")), "make -C "));
    const std::string entry = cache_entry(dir);
    const std::string manifest = file_text(entry + "/runner.deb.manifest");
    CHECK(
        contains(manifest, "package=runner\nversion=" + package_version() +
                               "\narchitecture=" + dpkg_architecture() +
                               "\nsha256=" + sha256_of(entry + "/runner.deb")));
    CHECK(installed_sha(dir) == sha256_of(entry + "/runner.deb"));
    // What apt-get got was a private copy, not the cache's file.
    CHECK_FALSE(contains(file_text(dir.file("log")), entry));
    CHECK_FALSE(fs::exists(dir.file("cache/runner_0.2.0-1_amd64.deb")));

    // Again: taken from the cache, not rebuilt.
    fs::remove(dir.file("log"));
    auto second = run_install(dir, "install");
    INFO(second.err);
    CHECK(second.exit_code == 0);
    CHECK_FALSE(contains(file_text(dir.file("log")), "make "));
    CHECK(installed_sha(dir) == sha256_of(entry + "/runner.deb"));
    CHECK(run_install(dir, "check").exit_code == 0);
  }

  TEST_CASE("runner-install refuses a tampered cached package") {
    TempDir dir;
    write_install_tools(dir);
    REQUIRE(run_install(dir, "install").exit_code == 0);
    const std::string entry = cache_entry(dir);
    const std::string deb = entry + "/runner.deb";
    const std::string good = file_text(deb);
    const std::string good_manifest = file_text(entry + "/runner.deb.manifest");

    SUBCASE("its bytes changed") {
      std::ofstream(deb, std::ios::binary | std::ios::app) << "tampered";
      auto check = run_install(dir, "check");
      CHECK(check.exit_code == 1);
      CHECK(contains(check.err, "does not have the SHA-256 recorded"));
    }
    SUBCASE("swapped, with a manifest that agrees, for another version") {
      auto built = run_process(
          {"bash", dir.file("bin/make"), "deb", "DEB_OUT=" + dir.file("swap")},
          {"FAKE_LOG=" + dir.file("swap.log"), "FAKE_DEB_VERSION=0.0.1-1"});
      REQUIRE(built.exit_code == 0);
      const std::string other =
          dir.file("swap/runner_0.0.1-1_" + dpkg_architecture() + ".deb");
      fs::copy_file(other, deb, fs::copy_options::overwrite_existing);
      std::string m = good_manifest;
      m.replace(m.find("sha256=") + 7, 64, sha256_of(deb));
      std::ofstream(entry + "/runner.deb.manifest") << m;
      auto check = run_install(dir, "check");
      CHECK(check.exit_code == 1);
      CHECK(contains(check.err, "is not runner " + package_version()));
    }
    SUBCASE("a manifest of other sources") {
      std::string m = good_manifest;
      m.replace(m.find("source=") + 7, 32, "other-sources-than-these-ones-xx");
      std::ofstream(entry + "/runner.deb.manifest") << m;
      auto check = run_install(dir, "check");
      CHECK(check.exit_code == 1);
      CHECK(contains(check.err, "not for these sources"));
    }
    SUBCASE("a symbolic link to a good copy") {
      fs::copy_file(deb, dir.file("elsewhere.deb"));
      fs::remove(deb);
      fs::create_symlink(dir.file("elsewhere.deb"), deb);
      auto check = run_install(dir, "check");
      CHECK(check.exit_code == 1);
      CHECK(contains(check.err, "is a symbolic link"));
    }
    SUBCASE("its folder writable by others") {
      fs::permissions(entry, fs::perms::group_write, fs::perm_options::add);
      auto check = run_install(dir, "check");
      CHECK(check.exit_code == 1);
      CHECK(contains(check.err, "is writable by others"));
    }
    // Whatever was wrong, install rebuilds and installs the new package,
    // never the refused one.
    const std::string refused = fs::is_symlink(deb) ? "" : sha256_of(deb);
    fs::remove(dir.file("log"));
    auto install = run_install(dir, "install");
    INFO(install.err);
    CHECK(install.exit_code == 0);
    CHECK(contains(install.err, "refusing"));
    CHECK(contains(file_text(dir.file("log")), "make -C "));
    CHECK(installed_sha(dir) == sha256_of(deb));
    CHECK(installed_sha(dir) != refused);
    CHECK(run_install(dir, "check").exit_code == 0);
  }

  TEST_CASE("the action and the GitLab template: secrets and caches") {
    const std::string action_dir = binary("ACTION_DIR");
    YAML::Node action = load_yaml(action_dir + "/action.yml");
    YAML::Node steps = action["runs"]["steps"];
    REQUIRE(steps.IsSequence());
    int with_token = 0;
    for (const YAML::Node& step : steps) {
      const YAML::Node env = step["env"];
      const bool bench = step["id"] && step["id"].as<std::string>() == "bench";
      if (env && env["RUNNER_CI_TOKEN"]) ++with_token;
      CHECK(bench == static_cast<bool>(env && env["RUNNER_CI_TOKEN"]));
      if (step["run"] && !bench) {
        INFO(step["run"].as<std::string>());
        // The caller's credentials are blanked in every other script step.
        for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                 "AWS_SESSION_TOKEN", "CODSPEED_TOKEN"}) {
          REQUIRE(env);
          REQUIRE(env[name]);
          CHECK(env[name].as<std::string>().empty());
        }
      }
      if (step["uses"] &&
          contains(step["uses"].as<std::string>(), "actions/cache")) {
        CHECK(step["with"]["path"].as<std::string>() ==
              "${{ runner.temp }}/runner-deb");
        CHECK(contains(step["with"]["key"].as<std::string>(),
                       "steps.source.outputs.key"));
      }
    }
    CHECK(with_token == 1);
    CHECK(action["inputs"]["compare-timeout"]);
    CHECK(
        action["inputs"]["fail-on-inconclusive"]["default"].as<std::string>() ==
        "false");
    bool inconclusive_input = false;
    for (const YAML::Node& step : steps)
      if (step["env"] && step["env"]["RUNNER_CI_FAIL_ON_INCONCLUSIVE"])
        inconclusive_input =
            step["env"]["RUNNER_CI_FAIL_ON_INCONCLUSIVE"].as<std::string>() ==
            "${{ inputs.fail-on-inconclusive }}";
    CHECK(inconclusive_input);
    // Every input reaches runner-ci as RUNNER_CI_<INPUT>, quoted by env:.
    YAML::Node bench_env;
    for (const YAML::Node& step : steps)
      if (step["id"] && step["id"].as<std::string>() == "bench")
        bench_env = step["env"];
    REQUIRE(bench_env.IsMap());
    for (const auto& input : action["inputs"]) {
      const std::string name = input.first.as<std::string>();
      std::string var = "RUNNER_CI_";
      for (char c : name)
        var += c == '-' ? '_' : static_cast<char>(std::toupper(c));
      INFO(name);
      REQUIRE(bench_env[var]);
      CHECK(bench_env[var].as<std::string>() == "${{ inputs." + name + " }}");
    }
    CHECK(action["inputs"]["base-run"]);
    CHECK(action["inputs"]["metric"]["default"].as<std::string>().empty());
    CHECK(
        contains(action["outputs"]["verdict"]["description"].as<std::string>(),
                 "error"));

    YAML::Node gitlab =
        load_yaml(action_dir + "/../gitlab/runner.gitlab-ci.yml");
    YAML::Node job = gitlab[".runner-benchmarks"];
    REQUIRE(job.IsMap());
    const std::string key = job["cache"]["key"].as<std::string>();
    CHECK(contains(key, "$CI_MERGE_REQUEST_IID"));
    CHECK(contains(key, "$CI_COMMIT_REF_SLUG"));
    CHECK_FALSE(job["cache"]["unprotect"].as<bool>());
    bool install_without_secrets = false;
    for (const YAML::Node& line : job["before_script"]) {
      const std::string text = line.as<std::string>();
      if (contains(text, "runner-install"))
        install_without_secrets = contains(text, "-u AWS_SECRET_ACCESS_KEY") &&
                                  contains(text, "-u CI_JOB_TOKEN");
    }
    CHECK(install_without_secrets);
  }

  TEST_CASE("the CI gate reads the verdict from compare.json") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // No verdict file: compare.json's "verdict", checked against the exit
    // status.
    auto improved = run_job(gate_env(dir, "improved", "json:improvement"));
    INFO(improved.err);
    CHECK(improved.exit_code == 0);
    CHECK(file_text(dir.file("improved-output")) ==
          job_output(dir, "improved", "improvement"));
    auto regressed =
        run_job(gate_env(dir, "regressed", "json:regression"), {"FAKE_EXIT=1"});
    INFO(regressed.err);
    CHECK(regressed.exit_code == 1);
    CHECK(file_text(dir.file("regressed-output")) ==
          job_output(dir, "regressed", "regression"));
    // A verdict the exit status contradicts, or no known verdict: an error.
    for (const auto& [name, fake, exit] :
         {std::tuple{"lying", "json:unchanged", "FAKE_EXIT=1"},
          std::tuple{"odd", "json:better", "FAKE_EXIT=0"}}) {
      auto job = run_job(gate_env(dir, name, fake), {exit});
      INFO(job.err);
      CHECK(job.exit_code == 4);
      CHECK(file_text(dir.file(std::string(name) + "-output")) ==
            error_output(dir, name));
    }
  }

  TEST_CASE("the CI gate: inconclusive fails the job only when asked") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // runner compare --fail-on-inconclusive exits 3 with the verdict
    // inconclusive: accepted, the job passes unless asked to fail.
    auto quiet =
        run_job(gate_env(dir, "quiet", "json:inconclusive"), {"FAKE_EXIT=3"});
    INFO(quiet.err);
    CHECK(quiet.exit_code == 0);
    CHECK(file_text(dir.file("quiet-output")) ==
          job_output(dir, "quiet", "inconclusive"));
    CHECK_FALSE(contains(file_text(dir.file("quiet-compare-args")),
                         "--fail-on-inconclusive"));
    auto strict =
        run_job(gate_env(dir, "strict", "json:inconclusive"),
                {"FAKE_EXIT=3", "RUNNER_CI_FAIL_ON_INCONCLUSIVE=true"});
    INFO(strict.err);
    CHECK(strict.exit_code == 5);
    CHECK(file_text(dir.file("strict-output")) ==
          job_output(dir, "strict", "inconclusive"));
    CHECK(contains(file_text(dir.file("strict-compare-args")),
                   "\n--fail-on-inconclusive\n"));
    CHECK(contains(strict.err, "is inconclusive"));
    // Inconclusive with exit 0 (no benchmark on both sides) fails it too.
    auto empty = run_job(gate_env(dir, "empty", "json:inconclusive"),
                         {"RUNNER_CI_FAIL_ON_INCONCLUSIVE=true"});
    INFO(empty.err);
    CHECK(empty.exit_code == 5);
    // Exit 3 with any other verdict contradicts it: an error (fails closed).
    for (const auto& [name, fake] :
         {std::pair{"three-unchanged", "json:unchanged"},
          std::pair{"three-improved", "json:improvement"},
          std::pair{"three-regressed", "json:regression"}}) {
      auto job =
          run_job(gate_env(dir, name, fake),
                  {"FAKE_EXIT=3", "RUNNER_CI_FAIL_ON_INCONCLUSIVE=true"});
      INFO(job.err);
      CHECK(job.exit_code == 4);
      CHECK(file_text(dir.file(std::string(name) + "-output")) ==
            error_output(dir, name));
    }
    // A regression still fails as one, whatever the input.
    auto regressed =
        run_job(gate_env(dir, "regressed", "json:regression"),
                {"FAKE_EXIT=1", "RUNNER_CI_FAIL_ON_INCONCLUSIVE=true"});
    CHECK(regressed.exit_code == 1);
    auto bad = run_job(gate_env(dir, "bad", "json:inconclusive"),
                       {"RUNNER_CI_FAIL_ON_INCONCLUSIVE=yes"});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "fail-on-inconclusive must be true or false"));
  }

  TEST_CASE("the CI summary on a push: results and flamegraph, no paths") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // No store: nothing to compare, as on a first pull request.
    auto job =
        run_job(gate_env(dir, "push", ""),
                {"RUNNER_CI_STORE=", "GITHUB_BASE_REF=",
                 "COMPARE_WORKLOAD_BIN=" + binary("COMPARE_WORKLOAD_BIN"),
                 "RUNNER_CI_RUN=\"$COMPARE_WORKLOAD_BIN\""});
    INFO(job.err);
    CHECK(job.exit_code == 0);
    const std::string summary = file_text(dir.file("push-summary.md"));
    INFO(summary);
    CHECK(summary.starts_with("### runner: benchmark results\n"));
    CHECK(std::regex_search(
        summary, std::regex("<pre>\nBenchmark +Rounds +Median +Stdev\n")));
    CHECK(contains(summary, "### runner: no comparison"));
    CHECK(contains(summary,
                   "[this workflow run](https://github.com/"
                   "acme/widgets/actions/runs/99)"));
    const std::vector<std::string> files = summary_files(summary);
    REQUIRE(files.size() == 1);
    CHECK(files[0].starts_with("flamegraphs/"));
    CHECK(files[0].ends_with(".svg"));
    CHECK(fs::is_regular_file(dir.file("push-artifact/" + files[0])));
    CHECK(file_text(dir.file("push-artifact/summary.md")) == summary);
    CHECK_FALSE(contains(summary, dir.path()));

    // GitLab: the summary lives in the artifact, each file linked.
    auto gitlab = run_job(
        gate_env(dir, "gl", ""),
        {"RUNNER_CI_STORE=", "GITHUB_BASE_REF=", "GITHUB_ACTIONS=",
         "GITHUB_RUN_ID=", "GITHUB_STEP_SUMMARY=", "GITLAB_CI=true",
         "CI_PROJECT_DIR=" + dir.path(),
         "CI_JOB_URL=https://gitlab.example.com/acme/widgets/-/jobs/5"});
    INFO(gitlab.err);
    CHECK(gitlab.exit_code == 0);
    const std::string gl = file_text(dir.file("gl-artifact/summary.md"));
    INFO(gl);
    CHECK(contains(gl, "### runner: benchmark results"));
    CHECK(contains(gl,
                   "](https://gitlab.example.com/acme/widgets/-/jobs/5/"
                   "artifacts/file/gl-artifact/flamegraphs/"));
    CHECK_FALSE(contains(gl, dir.path()));
  }

  TEST_CASE("the CI log of a JS benchmark: the runner's details folded") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string node = find_runtime("node");
    if (node.empty()) RUNNER_SKIP_CASE("node is not installed");
    TempDir dir;
    std::ofstream(dir.file("bench.js"))
        << "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
           "const t = Date.now(); while (Date.now() - t < 200) fib(20);\n";
    RUNNER_WITH_S3RVER(server, dir) {
      write_event(dir);
      const std::vector<std::string> js = {
          "NODE_BIN=" + node, "RUNNER_CI_WORKING_DIRECTORY=" + dir.path(),
          "RUNNER_CI_RUN=\"$NODE_BIN\" bench.js"};
      auto main_job = run_job(job_env(*server, dir, "main", false, ""), js);
      INFO(main_job.err);
      REQUIRE(main_job.exit_code == 0);
      auto pr = run_job(job_env(*server, dir, "pr", true, ""), js);
      INFO(pr.err);
      CHECK(pr.exit_code == 0);
      // Lines on how the runner sampled, that ask nothing of the user: in
      // one collapsed group of the log, none among the lines shown.
      const char* details[] = {
          "runner: language support:", "runner: sampled with ",
          "runner: stack copies:",     "runner: its own CPU while sampling:",
          "runner: finalize:",         "runner: profile folder:"};
      for (const char* line : details) {
        INFO(line);
        CHECK_FALSE(contains(pr.err, line));
      }
      const size_t group =
          pr.out.find("::group::runner: how the benchmarks were sampled\n");
      REQUIRE(group != std::string::npos);
      const size_t end = pr.out.find("::endgroup::", group);
      REQUIRE(end != std::string::npos);
      CHECK(contains(pr.out.substr(group, end - group),
                     "runner: language support: NODE_OPTIONS"));
      // No path of the machine in the summary (a JS function it lists is
      // named by the script alone). The functions are JavaScript's: in the
      // run's flamegraph of the artifact, which holds every frame (the
      // summary's table lists only the functions whose share changed most,
      // which a 200 ms run need not include).
      const std::string summary = file_text(dir.file("pr-summary.md"));
      INFO(summary);
      CHECK_FALSE(contains(summary, dir.path()));
      std::string flamegraph;
      for (const std::string& file : summary_files(summary))
        if (file.starts_with("flamegraphs/"))
          flamegraph = file_text(dir.file("pr-artifact/" + file));
      REQUIRE_FALSE(flamegraph.empty());
      CHECK(std::regex_search(flamegraph,
                              std::regex(R"(JS:\S*fib \S*bench\.js:\d+)")));
    }
  }

  TEST_CASE("runner-ci check-os: Debian 12, or a clear message") {
    TempDir dir;
    auto check = [&](const std::string& os_release,
                     const std::vector<std::string>& more = {}) {
      std::ofstream(dir.file("os-release"), std::ios::trunc) << os_release;
      std::vector<std::string> env = {"RUNNER_CI_OS_RELEASE=" +
                                      dir.file("os-release")};
      env.insert(env.end(), more.begin(), more.end());
      return run_process({"bash", binary("CI_SCRIPT"), "check-os"}, env);
    };
    auto bookworm = check(
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian "
        "GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n"
        "ID=debian\n");
    CHECK(bookworm.exit_code == 0);
    CHECK(bookworm.err.empty());
    auto ubuntu = check(
        "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nNAME=\"Ubuntu\"\n"
        "VERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian\n");
    CHECK(ubuntu.exit_code == 2);
    CHECK(ubuntu.err ==
          "runner-ci: this job runs on Ubuntu 24.04.1 LTS, but the runner is "
          "built and tested on Debian 12 (bookworm) only. Run the job in a "
          "Debian bookworm container: on GitHub Actions, 'container: "
          "debian:bookworm' in the job; on GitLab CI, 'image: "
          "debian:bookworm'. RUNNER_CI_ANY_OS=true tries anyway.\n");
    CHECK(check("ID=debian\nVERSION_ID=\"11\"\n").exit_code == 2);
    CHECK(check("ID=ubuntu\n", {"RUNNER_CI_ANY_OS=true"}).exit_code == 0);
    auto none = run_process({"bash", binary("CI_SCRIPT"), "check-os"},
                            {"RUNNER_CI_OS_RELEASE=" + dir.file("missing")});
    CHECK(none.exit_code == 2);
    CHECK(contains(none.err,
                   "this job runs on a system without " + dir.file("missing")));
  }

  TEST_CASE("the action and the GitLab job: Debian bookworm, artifacts") {
    const std::string action_dir = binary("ACTION_DIR");
    const std::string action_text = file_text(action_dir + "/action.yml");
    YAML::Node action = load_yaml(action_dir + "/action.yml");
    YAML::Node steps = action["runs"]["steps"];
    REQUIRE(steps.IsSequence());
    REQUIRE(steps.size() >= 2);
    // The machine is checked first, before anything is installed.
    CHECK(steps[0]["run"].as<std::string>() ==
          "\"$ACTION_PATH/../ci/runner-ci\" check-os");
    // The documented example runs in a Debian bookworm container.
    CHECK(contains(action_text, "#       container: debian:bookworm\n"));
    // The artifact runner-ci filled is uploaded under the name it chose,
    // also when the benchmark regressed.
    bool uploaded = false;
    for (const YAML::Node& step : steps) {
      if (!step["uses"] ||
          !contains(step["uses"].as<std::string>(), "actions/upload-artifact@"))
        continue;
      uploaded = true;
      CHECK(step["with"]["path"].as<std::string>() ==
            "${{ steps.bench.outputs.artifact-folder }}");
      CHECK(step["with"]["name"].as<std::string>() ==
            "${{ steps.bench.outputs.artifact-name }}");
      CHECK(contains(step["if"].as<std::string>(), "always()"));
    }
    CHECK(uploaded);
    CHECK(action["inputs"]["artifact-name"]);

    const std::string gitlab_path =
        action_dir + "/../gitlab/runner.gitlab-ci.yml";
    YAML::Node job = load_yaml(gitlab_path)[".runner-benchmarks"];
    REQUIRE(job.IsMap());
    CHECK(job["image"].as<std::string>() == "debian:bookworm");
    CHECK(contains(job["before_script"][0].as<std::string>(),
                   "runner-ci\" check-os"));
    CHECK(job["variables"]["RUNNER_CI_ARTIFACT_FOLDER"].as<std::string>() ==
          "$CI_PROJECT_DIR/runner-artifact");
    CHECK(job["artifacts"]["paths"][0].as<std::string>() == "runner-artifact/");
    CHECK(job["artifacts"]["when"].as<std::string>() == "always");

    // Neither installs test tools: runner-install brings what the build
    // needs.
    for (const std::string& text : {action_text, file_text(gitlab_path)}) {
      for (const char* tool : {"chromium", "clang-tidy", "clang-format",
                               "valgrind", "npm", "make test"}) {
        INFO(tool);
        CHECK_FALSE(contains(text, tool));
      }
    }
  }

  TEST_CASE("the CI script refuses bad inputs before running anything") {
    TempDir dir;
    const std::string run = "RUNNER_CI_RUN=touch " + dir.file("ran");
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"RUNNER_CI_UPLOAD=ftp"},
         "upload must be none, codspeed or s3, not 'ftp'"},
        {{"RUNNER_CI_MODE=interleave"},
         "mode interleave needs base-run (RUNNER_CI_BASE_RUN), the base's "
         "benchmark command"},
        {{"RUNNER_CI_MODE=interleave", "RUNNER_CI_BASE_RUN=true",
          "RUNNER_CI_ROUNDS=0"},
         "rounds must be a number of rounds (1 to 999999)"},
        {{"RUNNER_CI_MODE=interleave", "RUNNER_CI_BASE_RUN=true",
          "RUNNER_CI_UPLOAD=s3", "RUNNER_CI_STORE=s3://b"},
         "mode interleave uploads nothing (its one run holds the base's and "
         "the head's benchmarks): set upload to none"},
        {{"RUNNER_CI_METRIC=cpu"},
         "metric cpu needs a value per round, which the interleave mode has "
         "(one run per side against the store gives one CPU time each): use "
         "mode interleave, or metric wall"},
        {{"RUNNER_CI_METRIC=$(touch x)"},
         "metric must be wall, cpu or instructions, not '$(touch x)'"},
        {{"RUNNER_CI_THRESHOLD=5; rm"},
         "threshold must be a percentage, 0 < PCT < 100 (e.g. 3 or 2.5)"},
        {{"RUNNER_CI_HISTORY=yes"}, "history must be true or false"},
        {{"RUNNER_CI_HISTORY=true"}, "history needs the store input"},
        {{"RUNNER_CI_HISTORY_RUNS=1e3"},
         "history-runs must be a number of runs (1 to 99999)"}};
    for (const auto& [env, message] : bad) {
      CAPTURE(message);
      std::vector<std::string> all = env;
      all.push_back(run);
      auto r = run_process({"bash", binary("CI_SCRIPT")}, all, dir.path());
      CHECK(r.exit_code == 2);
      CHECK(r.err == "runner-ci: " + message + "\n");
      CHECK_FALSE(fs::exists(dir.file("ran")));
      CHECK_FALSE(fs::exists(dir.file("x")));
    }
  }

  TEST_CASE("the CI script, mode interleave: base-run and run in one run") {
    // The head does 40% more work: a regression in CPU time per round
    // (the mode's default metric, at its 3% threshold), from one run, with
    // no store.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto job = run_job(
        gate_env(dir, "il", ""),
        {"RUNNER_BIN=" + binary("RUNNER_BIN"), "RUNNER_CI_MODE=interleave",
         "RUNNER_CI_STORE=", "RUNNER_CI_S3_ENDPOINT=",
         "COMPARE_WORKLOAD_BIN=" + binary("COMPARE_WORKLOAD_BIN"),
         "RUNNER_CI_BASE_RUN=\"$COMPARE_WORKLOAD_BIN\"",
         "RUNNER_CI_RUN=\"$COMPARE_WORKLOAD_BIN\" --scale 40",
         "RUNNER_CI_ROUNDS=12"});
    INFO(job.err);
    CHECK(job.exit_code == 1);  // fail-on-regression
    CHECK(file_text(dir.file("il-output")) ==
          job_output(dir, "il", "regression"));
    const auto json =
        read_json_file(dir.file("il-profile/compare/compare.json"));
    CHECK(json["settings"]["metric"] == "cpu");    // the mode's default
    CHECK(json["settings"]["threshold"] == 0.03);  // the mode's default
    CHECK(json["settings"]["paired"] == true);
    CHECK(json["benchmarks"].at(0)["base"]["rounds"] == 12);
    const std::string summary = file_text(dir.file("il-summary.md"));
    INFO(summary);
    CHECK(contains(summary,
                   "### runner: comparison with base-run, "
                   "interleaved"));
    CHECK(contains(summary, "**runner compare: regression**"));
    CHECK(contains(summary, "CPU time per iteration"));
    const std::vector<std::string> files = summary_files(summary);
    CHECK(std::any_of(files.begin(), files.end(), [](const std::string& f) {
      return f.starts_with("compare/") && f.ends_with(".diff.svg");
    }));
    CHECK_FALSE(contains(summary, dir.path()));
  }
}
