// The shared profile store as CI jobs use it: the real `runner upload
// --store` and `runner compare --store` against a real s3rver (npm,
// tests/s3) on 127.0.0.1 with its own data folder. A faked GitHub Actions
// environment names the repository, commit and branch. Checked: a stored
// run is found by its branch, fetched, verified and compared; a multipart
// upload comes back byte for byte; two uploads at once for one branch are
// both stored; a server killed mid-upload gives a clear error, a non-zero
// exit and nothing visible under the run's keys. A hostile store: a pull
// request from a fork's branch called main is never main's base, records
// that cannot be read or are not a push's are skipped (a scripted S3
// endpoint, tests/support/fake_s3.hpp, gives the 404 and 403), archive
// bombs are refused within the runner's own limits, and the cache folder
// is private and evicted.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/e2e/store_support.hpp"
#include "tests/support/fake_s3.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;
namespace format = runner::format;
namespace upload = runner::upload;

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

// `env` with each "NAME=value" of `changes` in place of NAME's entry.
std::vector<std::string> with(std::vector<std::string> env,
                              const std::vector<std::string>& changes) {
  for (const std::string& change : changes) {
    const std::string name = change.substr(0, change.find('=') + 1);
    std::erase_if(env,
                  [&](const std::string& e) { return e.starts_with(name); });
    env.push_back(change);
  }
  return env;
}

// Pull request 66 from a fork whose branch is called main (head commit
// c…c): GitHub names the head ref "main".
std::vector<std::string> fork_main_env(const S3rver& server,
                                       const TempDir& dir) {
  return with(
      store_job_env(server, dir, true),
      {"GITHUB_HEAD_REF=main", "GITHUB_REF=refs/pull/66/merge",
       "GITHUB_REF_NAME=66/merge", "GITHUB_SHA=" + std::string(40, 'c')});
}

// The verdict of the single benchmark in out/compare.json.
format::Verdict verdict_in(const std::string& out) {
  auto report = format::read_compare_report(file_text(out + "/compare.json"));
  REQUIRE_MESSAGE(report, report.error().message());
  REQUIRE(report->benchmarks.size() == 1);
  return report->benchmarks[0].verdict;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The names in the store's cache folder (none when it is absent).
std::vector<std::string> cached(const TempDir& dir) {
  const std::string cache = dir.file("cache") + "/runner/store";
  std::vector<std::string> names =
      fs::exists(cache) ? list_dir(cache) : std::vector<std::string>{};
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a stored run of main is the base of a pull request's compare") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("base"), 1000);
      write_folder(dir.file("head"), 1200);
      auto up = run_runner({"upload", "--store", kStore, dir.file("base")},
                           store_job_env(*server, dir, false));
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
      CHECK(record->runner_version == binary("RUNNER_PROJECT_VERSION"));

      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out"), "--format", "json"},
                            store_job_env(*server, dir, true));
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

  // One run per side: the between-run noise comes from main's last stored
  // runs. With one stored run it is not estimated (said once) and +8% with
  // tight rounds is a regression; with five runs 5-15% apart the interval
  // widens and the same head is inconclusive. Hostile records under
  // refs/main/ (a negative, a huge, a NaN median, too many medians, one
  // URI twice) are skipped from the history with a warning.
  TEST_CASE("the base branch's stored runs give the between-run noise") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      const auto push = store_job_env(*server, dir, false);
      const auto pr = store_job_env(*server, dir, true);
      write_folder(dir.file("head"), 1080);
      const std::vector<double> mains{1100, 950, 1050, 1150, 1000};
      for (size_t i = 0; i < mains.size(); ++i) {
        const std::string folder = dir.file("main" + std::to_string(i));
        write_folder(folder, mains[i]);
        auto up = run_runner({"upload", "--store", kStore, folder}, push);
        REQUIRE_MESSAGE(up.exit_code == 0, up.err);
        if (i != 0) continue;
        // The record carries the run's median per iteration.
        const auto records =
            stored_keys(dir.file("s3"), "ci/acme/widgets/refs/main/");
        REQUIRE(records.size() == 1);
        auto record = format::read_store_record(file_text(
            dir.file("s3") + "/bench/" + records[0] + "._S3rver_object"));
        REQUIRE_MESSAGE(record, record.error().message());
        REQUIRE(record->benchmark_medians.size() == 1);
        CHECK(record->benchmark_medians[0].uri == "bench.cpp::fib");
        CHECK(record->benchmark_medians[0].median_ns ==
              doctest::Approx(1100 * 1.004).epsilon(0.003));

        auto alone = run_runner({"compare", "--store", kStore, dir.file("head"),
                                 "--out", dir.file("one")},
                                pr);
        INFO(alone.out, alone.err);
        CHECK(alone.exit_code == 0);  // 1080 against 1100: -2%, unchanged
        CHECK(has(alone.out,
                  "run-to-run noise not estimated (one run per side and no "
                  "store history)"));
        auto report = format::read_compare_report(
            file_text(dir.file("one/compare.json")));
        REQUIRE_MESSAGE(report, report.error().message());
        REQUIRE(report->benchmarks.size() == 1);
        CHECK(report->benchmarks[0].noise ==
              format::NoiseSource::kNotEstimated);
        CHECK(!report->benchmarks[0].runs);
      }
      // Without the history, +8% against the newest run (1000) is a
      // confident regression: its rounds are within 1%.
      auto rounds_only =
          run_runner({"compare", dir.file("main4"), dir.file("head"), "--out",
                      dir.file("plain"), "--format", "json"},
                     pr);
      CHECK(rounds_only.exit_code == 1);
      auto plain = format::read_compare_report(
          file_text(dir.file("plain/compare.json")));
      REQUIRE_MESSAGE(plain, plain.error().message());
      REQUIRE(plain->benchmarks.size() == 1);
      CHECK(plain->benchmarks[0].verdict == format::Verdict::kRegression);

      upload::S3Client client = store_client(server->endpoint());
      const std::vector<std::function<void(format::StoreRecord&)>> hostile{
          [](format::StoreRecord& r) {
            r.benchmark_medians = {{"bench.cpp::fib", -5, {}, {}, {}, {}}};
          },
          [](format::StoreRecord& r) {
            r.benchmark_medians = {{"bench.cpp::fib", 1e300, {}, {}, {}, {}}};
          },
          [](format::StoreRecord& r) {
            r.benchmark_medians = {{"bench.cpp::fib", NAN, {}, {}, {}, {}}};
          },
          [](format::StoreRecord& r) {
            r.benchmark_medians = {{"bench.cpp::fib", 1000, {}, {}, {}, {}},
                                   {"bench.cpp::fib", 1e9, {}, {}, {}, {}}};
          },
          [](format::StoreRecord& r) {
            for (int i = 0; i < 12000; ++i)
              r.benchmark_medians.push_back(
                  {"b" + std::to_string(i), 1e6, {}, {}, {}, {}});
          }};
      for (size_t i = 0; i < hostile.size(); ++i)
        plant_run(client, dir.file("main4"),
                  "20990101T00000000" + std::to_string(i) + "Z-0000000" +
                      std::to_string(i),
                  hostile[i]);

      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out")},
                            pr);
      INFO(cmp.out, cmp.err);
      CHECK(cmp.exit_code == 0);
      CHECK(has(cmp.err,
                "-00000000.json skipped: the median of bench.cpp::fib "
                "is not a time per iteration (-5 ns)"));
      CHECK(has(cmp.err,
                "-00000001.json skipped: the median of bench.cpp::fib "
                "is not a time per iteration (1e+300 ns)"));
      CHECK(has(cmp.err,
                "-00000002.json skipped: store record: "
                "benchmark_medians[0] is not"));
      CHECK(has(cmp.err,
                "-00000003.json skipped: the benchmark "
                "bench.cpp::fib has two medians"));
      CHECK(has(cmp.err,
                "-00000004.json skipped: 12000 medians, more than "
                "10000"));
      CHECK(has(cmp.out,
                "run-to-run noise from the store's history: 5 stored "
                "runs of pushes to 'main' in s3://bench/ci"));
      CHECK(!has(cmp.out, "not estimated"));
      auto report =
          format::read_compare_report(file_text(dir.file("out/compare.json")));
      REQUIRE_MESSAGE(report, report.error().message());
      REQUIRE(report->benchmarks.size() == 1);
      const format::BenchmarkComparison& b = report->benchmarks[0];
      CHECK(report->history.find("5 stored runs") != std::string::npos);
      CHECK(b.noise == format::NoiseSource::kHistory);
      REQUIRE(b.runs);
      CHECK(b.runs->history_runs == 5);
      CHECK(b.runs->log_stdev > 0.05);
      REQUIRE(b.ci_low);
      REQUIRE(b.ci_high);
      REQUIRE(plain->benchmarks[0].ci_low);
      CHECK(*b.ci_high - *b.ci_low >
            5 * (*plain->benchmarks[0].ci_high - *plain->benchmarks[0].ci_low));
      CHECK(*b.ci_low < 0);
      CHECK(b.verdict == format::Verdict::kInconclusive);
      CHECK(has(b.reason,
                "run-to-run spread of 5 stored runs of the base "
                "branch"));
    }
  }

  TEST_CASE("no stored run of the base branch: exit 2 naming it") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("head"), 1000);
      auto cmp = run_runner({"compare", "--store", kStore, "--base",
                             "release/1", dir.file("head")},
                            store_job_env(*server, dir, true));
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
                           store_job_env(*server, dir, false));
      INFO(up.err);
      REQUIRE(up.exit_code == 0);
      CHECK(up.err.find("part 3 of 3 sent") != std::string::npos);
      write_folder(dir.file("head"), 1000);
      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out")},
                            store_job_env(*server, dir, true));
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
      const auto env = store_job_env(*server, dir, false);
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
          store_job_env(*server, dir, false), [&](const std::string& line) {
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
  // A fork's pull request from its branch "main" stored a slow run; the next
  // pull request, 4x slower than the real main, must still be a regression
  // (taking the fork's run as main's reported it as a 20% improvement).
  TEST_CASE("a pull request from a fork's branch main is never main's base") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("main"), 1000);
      write_folder(dir.file("fork"), 5000);
      write_folder(dir.file("head"), 4000);
      auto up = run_runner({"upload", "--store", kStore, dir.file("main")},
                           store_job_env(*server, dir, false));
      REQUIRE_MESSAGE(up.exit_code == 0, up.err);
      auto fork = run_runner({"upload", "--store", kStore, dir.file("fork")},
                             fork_main_env(*server, dir));
      REQUIRE_MESSAGE(fork.exit_code == 0, fork.err);
      CHECK(stored_keys(dir.file("s3"), "ci/acme/widgets/pulls/66/").size() ==
            2);
      CHECK(stored_keys(dir.file("s3"), "ci/acme/widgets/refs/").size() == 1);

      auto cmp = run_runner(
          {"compare", "--store", kStore, "--base", "main", dir.file("head"),
           "--out", dir.file("out"), "--format", "json"},
          store_job_env(*server, dir, true));
      INFO(cmp.err);
      CHECK(cmp.exit_code == 1);
      CHECK(verdict_in(dir.file("out")) == format::Verdict::kRegression);
      // It says which run it took: main's push, commit a…a.
      CHECK(has(cmp.err, "runner compare: base: run "));
      CHECK(has(cmp.err, "of a push to 'main' (commit " + std::string(40, 'a') +
                             ", stored 20"));
      CHECK(has(cmp.err, "from s3://bench/ci/acme/widgets/refs/main/"));
    }
  }

  // Records under refs/main/ that are not a push's (an older runner filed
  // pull requests' runs by their head branch) or not records at all.
  TEST_CASE("a pull request's record and garbage under refs/main/: skipped") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("main"), 1000);
      write_folder(dir.file("fork"), 5000);
      auto up = run_runner({"upload", "--store", kStore, dir.file("main")},
                           store_job_env(*server, dir, false));
      REQUIRE_MESSAGE(up.exit_code == 0, up.err);
      upload::S3Client client = store_client(server->endpoint());
      plant_run(client, dir.file("fork"), "20990101T000000000Z-00000001",
                [](format::StoreRecord& r) {
                  r.event = "pull_request";
                  r.ref = "refs/pull/66/merge";
                  r.commit = std::string(40, 'c');
                });
      REQUIRE(client.put_text(
          "bench", "ci/acme/widgets/refs/main/20990102T000000000Z-0.json",
          "{\"version\": 1, \"owner\": ", "application/json"));
      auto cmp = run_runner({"compare", "--store", kStore, dir.file("main"),
                             "--out", dir.file("out"), "--format", "json"},
                            store_job_env(*server, dir, true));
      INFO(cmp.err);
      CHECK(cmp.exit_code == 0);
      CHECK(verdict_in(dir.file("out")) == format::Verdict::kUnchanged);
      CHECK(has(cmp.err, "20990102T000000000Z-0.json skipped: store record:"));
      CHECK(has(cmp.err,
                "20990101T000000000Z-00000001.json skipped: not a "
                "base: not the run of a push (event "
                "'pull_request')"));
      CHECK(has(cmp.err, "(commit " + std::string(40, 'a')));
    }
  }

  // What s3rver cannot do: a newest record listed but gone (404) and one the
  // store refuses (403), from a scripted S3 endpoint; the real runner goes
  // on to the next one.
  TEST_CASE("records that answer 404 or 403 are skipped, the next is used") {
    TempDir dir;
    FakeS3 s3;
    write_folder(dir.file("main"), 1000);
    write_folder(dir.file("head"), 1000);
    std::string good;
    {  // the scripted server serves one connection at a time: closed after
      upload::S3Client client = store_client(s3.endpoint());
      good =
          plant_run(client, dir.file("main"), "20260101T000000000Z-00000001");
    }
    const std::string prefix = "ci/acme/widgets/refs/main/";
    s3.script(prefix + "20260103T000000000Z-00000003.json",
              {404, {}, "<Error><Code>NoSuchKey</Code></Error>"});
    s3.script(prefix + "20260102T000000000Z-00000002.json",
              {403, {}, "<Error><Code>AccessDenied</Code></Error>"});
    std::vector<std::string> env = github_job_env(true, "");
    for (const std::string& e : {"AWS_ENDPOINT_URL=" + s3.endpoint(),
                                 std::string("AWS_ACCESS_KEY_ID=k"),
                                 std::string("AWS_SECRET_ACCESS_KEY=s"),
                                 "XDG_CACHE_HOME=" + dir.file("cache"),
                                 std::string("RUNNER_HTTP_RETRY_DELAY_MS=5")})
      env.push_back(e);
    auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                           "--out", dir.file("out"), "--format", "json"},
                          env);
    INFO(cmp.err);
    CHECK(cmp.exit_code == 0);
    CHECK(has(cmp.err, "00000003.json skipped: S3 GET"));
    CHECK(has(cmp.err, "HTTP 404"));
    CHECK(has(cmp.err, "00000002.json skipped: S3 GET"));
    CHECK(has(cmp.err, "HTTP 403"));
    CHECK(has(cmp.err, "from s3://bench/" + good));
    CHECK(verdict_in(dir.file("out")) == format::Verdict::kUnchanged);
  }

  // A 34 KB-sized archive of a 1 GiB file whose record claims 1 GiB: the
  // runner's ratio refuses it, and no file it writes ever passes 64 MiB
  // (prlimit --fsize: writing past it kills the runner).
  TEST_CASE("an archive bomb is refused within the runner's limits") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      if (::access("/usr/bin/prlimit", X_OK) != 0)
        RUNNER_SKIP_CASE("no /usr/bin/prlimit (util-linux) to cap file sizes");
      write_folder(dir.file("bomb"), 1000);
      { std::ofstream(dir.file("bomb/perf.pipedata")); }
      fs::resize_file(dir.file("bomb/perf.pipedata"), uint64_t{1} << 30);
      upload::S3Client client = store_client(server->endpoint());
      plant_run(client, dir.file("bomb"), "20990101T000000000Z-00000001",
                [](format::StoreRecord& r) {
                  REQUIRE(r.archive_bytes < (1u << 20));
                  MESSAGE("bomb archive: " << r.archive_bytes << " bytes");
                });
      write_folder(dir.file("head"), 1000);
      std::vector<std::string> argv{"/usr/bin/prlimit",
                                    "--fsize=" + std::to_string(64u << 20),
                                    binary("RUNNER_BIN"),
                                    "compare",
                                    "--store",
                                    kStore,
                                    dir.file("head"),
                                    "--out",
                                    dir.file("out")};
      auto cmp = run_process(argv, store_job_env(*server, dir, true));
      INFO(cmp.err);
      CHECK(cmp.exit_code == 2);
      CHECK(has(cmp.err, "runner compare: s3://bench/ci/acme/widgets/runs/"));
      CHECK(has(cmp.err,
                "times its size), at './perf.pipedata' "
                "(RUNNER_STORE_MAX_UNPACK_MB and "
                "RUNNER_STORE_MAX_ENTRIES raise the limits)"));
      CHECK(cached(dir).empty());  // the partial folder is gone too
    }
  }

  TEST_CASE("an archive of 25,000 tiny files is refused") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      write_folder(dir.file("many"), 1000);
      for (int i = 0; i < 25000; ++i)
        std::ofstream(dir.file("many/f" + std::to_string(i))) << 'x';
      upload::S3Client client = store_client(server->endpoint());
      plant_run(client, dir.file("many"), "20990101T000000000Z-00000001");
      write_folder(dir.file("head"), 1000);
      auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                             "--out", dir.file("out")},
                            store_job_env(*server, dir, true));
      INFO(cmp.err);
      CHECK(cmp.exit_code == 2);
      CHECK(has(cmp.err,
                "refused an archive of more than 20000 files and "
                "folders"));
      CHECK(cached(dir).empty());
    }
  }

  TEST_CASE(
      "the cache folder is private and keeps the newest runs in its cap") {
    TempDir dir;
    RUNNER_WITH_S3RVER(server, dir) {
      // An older runner's cache folder, open to others.
      const std::string cache = dir.file("cache") + "/runner/store";
      fs::create_directories(cache);
      REQUIRE(::chmod(cache.c_str(), 0755) == 0);
      write_folder(dir.file("head"), 1000);
      std::vector<std::string> env = store_job_env(*server, dir, true);
      env.push_back("RUNNER_STORE_CACHE_MAX_MB=1");
      std::vector<std::string> ids;
      for (int i = 0; i < 2; ++i) {
        const std::string folder = dir.file("main" + std::to_string(i));
        write_folder(folder, 1000);
        write_blob(folder, 700u << 10);
        auto up = run_runner({"upload", "--store", kStore, folder},
                             store_job_env(*server, dir, false));
        REQUIRE_MESSAGE(up.exit_code == 0, up.err);
        auto cmp = run_runner({"compare", "--store", kStore, dir.file("head"),
                               "--out", dir.file("out")},
                              env);
        REQUIRE_MESSAGE(cmp.exit_code == 0, cmp.err);
        ids.push_back(cmp.err.substr(cmp.err.find("base: run ") + 10, 28));
      }
      struct stat st {};
      REQUIRE(::lstat(cache.c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0700);
      CHECK(st.st_uid == ::geteuid());
      // Two runs of 700 KiB do not fit 1 MiB: the older one went.
      CHECK(ids[0] != ids[1]);
      CHECK(cached(dir) == std::vector<std::string>{ids[1]});

      // A cache folder planted as a symlink is not written through.
      fs::create_directories(dir.file("elsewhere"));
      fs::create_directories(dir.file("xdg2/runner"));
      fs::create_directory_symlink(dir.file("elsewhere"),
                                   dir.file("xdg2/runner/store"));
      auto linked =
          run_runner({"compare", "--store", kStore, dir.file("head"), "--out",
                      dir.file("out")},
                     with(env, {"XDG_CACHE_HOME=" + dir.file("xdg2")}));
      CHECK(linked.exit_code == 2);
      CHECK(has(linked.err, "symbolic link"));
      CHECK(fs::is_empty(dir.file("elsewhere")));
    }
  }
}
