// The shared profile store as CI jobs use it: the real `runner upload
// --store` and `runner compare --store` against a real s3rver (npm,
// tests/s3) on 127.0.0.1 with its own data folder. A faked GitHub Actions
// environment names the repository, commit and branch. Checked: a stored
// run is found by its branch, fetched, verified and compared; a multipart
// upload comes back byte for byte; two uploads at once for one branch are
// both stored; a server killed mid-upload gives a clear error, a non-zero
// exit and nothing visible under the run's keys.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;
namespace format = runner::format;

namespace {

constexpr uint64_t kIters = 100;
const std::string kStore = "s3://bench/ci";

// A folder with one benchmark "fib" of 20 rounds around ns_per_iter.
std::string write_folder(const std::string& folder, double ns_per_iter) {
  format::BenchmarkResult r;
  r.name = "fib";
  r.uri = "bench.cpp::fib";
  std::vector<double> per_iter;
  for (uint64_t i = 0; i < 20; ++i) {
    const uint64_t t = static_cast<uint64_t>(
        ns_per_iter * kIters * (1 + 0.01 * static_cast<double>(i % 5) / 5));
    r.times_per_round_ns.push_back(t);
    r.iters_per_round.push_back(kIters);
    per_iter.push_back(static_cast<double>(t) / kIters);
  }
  std::sort(per_iter.begin(), per_iter.end());
  r.stats.rounds = 20;
  r.stats.iter_per_round = kIters;
  r.stats.mean_ns = r.stats.median_ns = per_iter[10];
  r.stats.min_ns = per_iter.front();
  r.stats.max_ns = per_iter.back();
  r.stats.q1_ns = per_iter[5];
  r.stats.q3_ns = per_iter[15];
  fs::create_directories(folder + "/results");
  REQUIRE(runner::base::write_file_atomic(
      folder + "/results/1.json",
      format::write_walltime_results({"store-test", "1.0", 1}, {{r}})));
  return folder;
}

// `bytes` of incompressible data in folder/blob.bin.
void write_blob(const std::string& folder, size_t bytes) {
  std::mt19937_64 random(42);
  std::string data(bytes, '\0');
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t v = random();
    std::memcpy(&data[i], &v, 8);
  }
  REQUIRE(runner::base::write_file_atomic(folder + "/blob.bin", data));
}

// A GitHub Actions job of acme/widgets (tests/support/github_job.hpp)
// with the store's settings.
std::vector<std::string> github_env(const S3rver& server, const TempDir& dir,
                                    bool pull_request) {
  std::vector<std::string> env = server.environment();
  for (std::string& e : github_job_env(pull_request, ""))
    env.push_back(std::move(e));
  env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
  env.push_back("RUNNER_HTTP_RETRY_DELAY_MS=5");
  return env;
}

ProcessResult run_runner(const std::vector<std::string>& args,
                         const std::vector<std::string>& env) {
  std::vector<std::string> argv{binary("RUNNER_BIN")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env);
}

// The objects s3rver holds under bucket/prefix (its data folder keeps one
// <key>._S3rver_object file per object).
std::vector<std::string> stored_keys(const std::string& data,
                                     const std::string& prefix) {
  std::vector<std::string> keys;
  const std::string root = data + "/bench/";
  if (!fs::exists(root)) return keys;
  const std::string suffix = "._S3rver_object";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string key = e.path().string().substr(root.size());
    if (key.size() <= suffix.size() ||
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    key.resize(key.size() - suffix.size());
    if (key.rfind(prefix, 0) == 0) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs the runner with `args`, calling on_line for each line it writes to
// stderr as it comes; returns {exit code, all of stderr}.
std::pair<int, std::string> runner_watched(
    const std::vector<std::string>& args, const std::vector<std::string>& env,
    const std::function<void(const std::string&)>& on_line) {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  std::vector<std::string> argv{binary("RUNNER_BIN")};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const std::string& e : env) ::putenv(::strdup(e.c_str()));
    ::dup2(pipe_fds[1], 2);
    ::execv(c_argv[0], c_argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::string err, line;
  char c;
  while (::read(pipe_fds[0], &c, 1) == 1) {
    err += c;
    if (c != '\n') {
      line += c;
      continue;
    }
    on_line(line);
    line.clear();
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
          err};
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a stored run of main is the base of a pull request's compare") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("base"), 1000);
      write_folder(dir.file("head"), 1200);
      auto up = run_runner({"upload", "--store", kStore, dir.file("base")},
                           github_env(*server, dir, false));
      INFO(up.err);
      REQUIRE(up.exit_code == 0);
      CHECK(up.err.find("stored in s3://bench/ci/acme/widgets/runs/aaaa") !=
            std::string::npos);
      const auto keys = stored_keys(dir.file("s3"), "ci/acme/widgets/");
      REQUIRE(keys.size() == 2);
      CHECK(keys[0].rfind("ci/acme/widgets/refs/main/", 0) == 0);
      CHECK(keys[1].rfind("ci/acme/widgets/runs/" + std::string(40, 'a') + "/",
                          0) == 0);
      // The record names the archive, the commit and the benchmarks.
      auto record = format::read_store_record(
          file_text(dir.file("s3") + "/bench/" + keys[0] + "._S3rver_object"));
      REQUIRE_MESSAGE(record, record.error().message());
      CHECK(record->archive_key == keys[1]);
      CHECK(record->branch == "main");
      CHECK(record->benchmarks == std::vector<std::string>{"bench.cpp::fib"});

      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out"), "--format", "json"},
                            github_env(*server, dir, true));
      INFO(cmp.out, cmp.err);
      CHECK(cmp.exit_code == 1);  // +20%: a regression
      auto report =
          format::read_compare_report(file_text(dir.file("out/compare.json")));
      REQUIRE_MESSAGE(report, report.error().message());
      REQUIRE(report->benchmarks.size() == 1);
      CHECK(report->benchmarks[0].verdict == format::Verdict::kRegression);
      // The base came from the cache, byte for byte the uploaded folder.
      const std::string cached =
          dir.file("cache") + "/runner/store/" + record->run_id;
      CHECK(file_text(cached + "/results/1.json") ==
            file_text(dir.file("base/results/1.json")));
    }
  }

  TEST_CASE("no stored run of the base branch: exit 2 naming it") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("head"), 1000);
      auto cmp = run_runner({"compare", "--store", kStore, "--base",
                             "release/1", dir.file("head")},
                            github_env(*server, dir, true));
      CHECK(cmp.exit_code == 2);
      CHECK(cmp.err.find("no run of branch 'release/1' in "
                         "s3://bench/ci/acme/widgets/refs/release~2F1/") !=
            std::string::npos);
    }
  }

  TEST_CASE("a multipart upload comes back byte for byte") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("base"), 1000);
      write_blob(dir.file("base"), 12u << 20);
      auto up = run_runner({"upload", "--store", kStore,
                            "--multipart-threshold", "5M", dir.file("base")},
                           github_env(*server, dir, false));
      INFO(up.err);
      REQUIRE(up.exit_code == 0);
      CHECK(up.err.find("part 3 of 3 sent") != std::string::npos);
      write_folder(dir.file("head"), 1000);
      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out")},
                            github_env(*server, dir, true));
      INFO(cmp.err);
      CHECK(cmp.exit_code == 0);
      const auto records = stored_keys(dir.file("s3"), "ci/acme/widgets/refs/");
      REQUIRE(records.size() == 1);
      auto record = format::read_store_record(file_text(
          dir.file("s3") + "/bench/" + records[0] + "._S3rver_object"));
      REQUIRE(record);
      CHECK(file_text(dir.file("cache") + "/runner/store/" + record->run_id +
                      "/blob.bin") == file_text(dir.file("base/blob.bin")));
    }
  }

  TEST_CASE("two uploads at once for one branch are both stored") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("one"), 1000);
      write_folder(dir.file("two"), 1000);
      const auto env = github_env(*server, dir, false);
      ProcessResult results[2];
      std::thread other([&] {
        results[1] =
            run_runner({"upload", "--store", kStore, dir.file("two")}, env);
      });
      results[0] =
          run_runner({"upload", "--store", kStore, dir.file("one")}, env);
      other.join();
      CHECK(results[0].exit_code == 0);
      CHECK(results[1].exit_code == 0);
      CHECK(stored_keys(dir.file("s3"), "ci/acme/widgets/refs/main/").size() ==
            2);
      CHECK(stored_keys(dir.file("s3"), "ci/acme/widgets/runs/").size() == 2);
    }
  }

  TEST_CASE("the server killed mid-upload: an error, exit 1, nothing stored") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("base"), 1000);
      write_blob(dir.file("base"), 40u << 20);
      bool killed = false;
      auto [code, err] = runner_watched(
          {"upload", "--store", kStore, "--multipart-threshold", "5M",
           dir.file("base")},
          github_env(*server, dir, false), [&](const std::string& line) {
            if (!killed && line.find(": part 1 of ") != std::string::npos) {
              server->kill();
              killed = true;
            }
          });
      INFO(err);
      REQUIRE(killed);
      CHECK(code == 1);
      CHECK(err.find("runner upload: S3 PUT part 2 of") != std::string::npos);
      CHECK(err.find("Connection refused") != std::string::npos);
      CHECK(stored_keys(dir.file("s3"), "ci/acme/widgets/").empty());
    }
  }
}
