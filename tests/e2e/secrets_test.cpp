// Nothing of a benchmark's environment or arguments leaves the machine in
// a profile: secrets planted in the environment (a token, an S3 key) and
// in argv of the real runner's `run` and `exec` are found in no byte of the
// profile folder (reports included), of the archive `runner upload` sends
// to a CodSpeed-like service (a scripted HTTP server here) or of the one
// `runner upload --store` puts in s3rver, decompressed. Nor are the
// AT_RANDOM bytes the kernel put on a sampled program's initial stack.
// And the stacks still unwind to _start, in perf script and in
// `runner report`.
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/at_random.hpp"
#include "tests/support/github_job.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
namespace fs = std::filesystem;

namespace {

const std::string kEnvSecret = "PLANTED-ENV-9c4e1f0b27d8";
const std::string kToken = "PLANTED-TOKEN-5a7d3e91c0f2";
const std::string kAwsKey = "PLANTED-AWS-KEY-e8b2049d6a13";
const std::string kArgSecret = "PLANTED-ARG-71f0c3a9b6e5";

std::vector<std::string> secrets() {
  return {kEnvSecret, kToken, kAwsKey, kArgSecret};
}

// The runner's environment in a CI job whose secrets the benchmark
// inherits.
std::vector<std::string> planted_env() {
  return {"PLANTED_SECRET=" + kEnvSecret, "CODSPEED_TOKEN=" + kToken,
          "AWS_SECRET_ACCESS_KEY=" + kAwsKey};
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "<what>: <secret>" for every needle found in `bytes`.
std::vector<std::string> found_in(const std::string& what,
                                  const std::string& bytes,
                                  const std::vector<std::string>& needles) {
  std::vector<std::string> found;
  for (const std::string& needle : needles)
    if (bytes.find(needle) != std::string::npos)
      found.push_back(what + ": " + needle);
  return found;
}

// The first of `found`, for a failure's message.
std::string first(const std::vector<std::string>& found) {
  return found.empty() ? std::string() : found.front();
}

// Every regular file under `folder`, searched; also counts the files.
std::vector<std::string> found_in_folder(
    const std::string& folder, const std::vector<std::string>& needles,
    size_t* files = nullptr) {
  std::vector<std::string> found;
  size_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    ++count;
    for (auto& f : found_in(entry.path().string(),
                            file_bytes(entry.path().string()), needles))
      found.push_back(std::move(f));
  }
  if (files != nullptr) *files = count;
  return found;
}

// An archive as uploaded: zstd-compressed (the store), gzip-compressed, or
// a plain tar; decompressed into the tar stream, whose file contents lie
// in it verbatim.
std::string decompressed(const std::string& archive, const TempDir& dir) {
  const auto starts = [&](std::string_view magic) {
    return archive.compare(0, magic.size(), magic) == 0;
  };
  if (starts("\x28\xb5\x2f\xfd")) {
    std::string out;
    ZSTD_DCtx* context = ZSTD_createDCtx();
    ZSTD_inBuffer in{archive.data(), archive.size(), 0};
    std::vector<char> chunk(1 << 16);
    while (in.pos < in.size) {
      ZSTD_outBuffer piece{chunk.data(), chunk.size(), 0};
      const size_t rc = ZSTD_decompressStream(context, &piece, &in);
      REQUIRE_FALSE(ZSTD_isError(rc));
      out.append(chunk.data(), piece.pos);
    }
    ZSTD_freeDCtx(context);
    return out;
  }
  if (starts("\x1f\x8b")) {
    std::ofstream(dir.file("archive.gz"), std::ios::binary) << archive;
    auto r = run_process({"gzip", "-dc", dir.file("archive.gz")});
    REQUIRE(r.exit_code == 0);
    return r.out;
  }
  return archive;
}

// Names of the tar stream's members (a tar whose files we did search).
size_t tar_members(const std::string& tar, const TempDir& dir) {
  std::ofstream(dir.file("members.tar"), std::ios::binary) << tar;
  auto r = run_process({"tar", "-tf", dir.file("members.tar")});
  REQUIRE(r.exit_code == 0);
  return static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n'));
}

// The AT_RANDOM values sampling_target wrote, as bytes.
std::vector<std::string> random_values(const std::string& path) {
  return at_random_values(file_bytes(path));
}

// Of the samples whose leaf is `leaf`: how many, and how many have a frame
// of `function` (their outermost when `outermost`).
std::pair<size_t, size_t> reaching(const std::vector<PerfSample>& samples,
                                   const std::string& leaf,
                                   const std::string& function,
                                   bool outermost) {
  size_t hot = 0, reached = 0;
  auto is = [](const PerfFrame& f, const std::string& name) {
    return f.sym == name || f.sym.rfind(name + "+", 0) == 0;
  };
  for (const PerfSample& s : samples) {
    if (s.frames.empty() || !is(s.frames.front(), leaf)) continue;
    ++hot;
    if (outermost
            ? is(s.frames.back(), function)
            : std::any_of(s.frames.begin(), s.frames.end(),
                          [&](const PerfFrame& f) { return is(f, function); }))
      ++reached;
  }
  return {hot, reached};
}

bool have_perf() {
  return run_process({"sh", "-c", "command -v perf"}).exit_code == 0;
}

// The upload service: POST /upload answers with the PUT URL, PUT takes the
// archive.
ScriptedResponse codspeed(const RecordedRequest& r, const std::string& base) {
  if (r.method == "POST" && r.target == "/upload")
    return {200,
            {"Content-Type: application/json"},
            "{\"status\":\"success\",\"uploadUrl\":\"" + base +
                "/archive/run-1\",\"runId\":\"run-1\"}"};
  if (r.method == "PUT") return {200, {}, ""};
  return {404, {}, "no route"};
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "runner exec: no byte of the environment, argv or AT_RANDOM in the "
      "folder; perf script and runner report still unwind to _start") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    const std::string randoms = dir.file("random.hex");
    std::vector<std::string> env = planted_env();
    env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
    auto r = run_runner(
        {"exec", "--profile-folder", folder, "--name", "planted",
         "--warmup-time", "0", "--max-rounds", "3", "--",
         binary("SAMPLING_TARGET_BIN"), "random", randoms, "150", kArgSecret},
        env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("reached the initial stack") != std::string::npos);
    std::vector<std::string> needles = secrets();
    const std::vector<std::string> random = random_values(randoms);
    REQUIRE(random.size() >= 3);  // one per process run
    needles.insert(needles.end(), random.begin(), random.end());
    size_t files = 0;
    const auto found = found_in_folder(folder, needles, &files);
    CHECK(files > 5);
    CHECK_MESSAGE(found.empty(), found.size(), " found, first: ", first(found));
    const auto meta = read_json_file(folder + "/perf.metadata");
    CHECK(meta["runner"].value("stacks_blanked", uint64_t{0}) > 100);
    CHECK(meta["runner"].value("stack_bytes_blanked", uint64_t{0}) > 0);

    auto ours = run_runner({"report", "--format", "perf-script", folder}, {});
    REQUIRE(ours.exit_code == 0);
    const auto [our_hot, our_rooted] =
        reaching(parse_perf_script(ours.out), "hot_spin", "_start", true);
    CHECK(our_hot > 100);
    CHECK_MESSAGE(our_rooted * 100 >= our_hot * 95, our_rooted, " of ", our_hot,
                  " unwind to _start (runner report)");
    if (!have_perf()) {
      MESSAGE("SKIP perf script on the blanked profile: perf is not installed");
      return;
    }
    // perf 6.1 keeps the mappings a forked process had before its exec
    // and goes wrong past __libc_start_call_main in the exec'd program (as
    // on profiles without blanking, tests/e2e/report_test.cpp): its stacks
    // are checked down to there.
    const auto [perf_hot, perf_reached] =
        reaching(parse_perf_script(perf_script(folder + "/perf.pipedata").out),
                 "hot_spin", "__libc_start_call_main", false);
    CHECK(perf_hot == our_hot);
    CHECK_MESSAGE(perf_reached * 100 >= perf_hot * 95, perf_reached, " of ",
                  perf_hot, " reach __libc_start_call_main (perf script)");
  }

  TEST_CASE(
      "runner run, exec, upload and upload --store: no planted secret in the "
      "folders or the archives") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    std::vector<std::string> env = planted_env();
    env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
    // The example benchmark, the secret in its argv (bench_example reads
    // "0.3<secret>" as the scale 0.3).
    const std::string run_folder = dir.file("run");
    auto run =
        run_runner({"run", "--profile-folder", run_folder, "--",
                    binary("EXAMPLE_BIN"), "--scale", "0.3" + kArgSecret},
                   env);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    // A shell loop; the secret is its $0.
    const std::string exec_folder = dir.file("exec");
    auto exec = run_runner(
        {"exec", "--profile-folder", exec_folder, "--name", "loop",
         "--warmup-time", "0", "--max-rounds", "2", "--", "sh", "-c",
         "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done", kArgSecret},
        env);
    INFO(exec.err);
    REQUIRE(exec.exit_code == 0);
    for (const std::string& folder : {run_folder, exec_folder}) {
      auto report = run_runner({"report", folder}, {});
      CHECK(report.exit_code == 0);
      CHECK(fs::exists(folder + "/report"));
      CHECK(read_json_file(folder + "/perf.metadata")["runner"].value(
                "stacks_blanked", uint64_t{0}) > 0);
      const auto found = found_in_folder(folder, secrets());
      CHECK_MESSAGE(found.empty(), found.size(),
                    " found, first: ", first(found));
    }

    // Upload both to a CodSpeed-like service, with the planted token.
    std::string base;
    HttpServer server(
        [&](const RecordedRequest& r) { return codspeed(r, base); });
    base = server.url("");
    std::vector<std::string> upload_env = github_job_env(false, "");
    upload_env.push_back("CODSPEED_TOKEN=" + kToken);
    upload_env.push_back("RUNNER_HTTP_RETRY_DELAY_MS=5");
    for (const std::string& folder : {run_folder, exec_folder}) {
      auto up =
          run_runner({"upload", folder, "--upload-url", server.url("/upload")},
                     upload_env);
      INFO(up.err);
      CHECK(up.exit_code == 0);
    }
    size_t archives = 0;
    for (const RecordedRequest& r : server.requests()) {
      INFO(r.method, " ", r.target);
      if (r.method == "POST") {
        CHECK(found_in("metadata", r.body, secrets()).empty());
        continue;
      }
      ++archives;
      const std::string tar = decompressed(r.body, dir);
      CHECK(tar_members(tar, dir) > 5);
      const auto found = found_in("uploaded archive", tar, secrets());
      CHECK_MESSAGE(found.empty(), first(found));
    }
    CHECK(archives == 2);

    // Store both in s3rver.
    RUNNER_WITH_S3RVER(store, dir) {
      std::vector<std::string> store_env = store->environment();
      for (std::string& e : github_job_env(false, ""))
        store_env.push_back(std::move(e));
      store_env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
      for (const std::string& folder : {run_folder, exec_folder}) {
        auto up = run_runner({"upload", "--store", "s3://bench/ci", folder},
                             store_env);
        INFO(up.err);
        CHECK(up.exit_code == 0);
      }
      size_t stored = 0;
      for (const auto& e :
           fs::recursive_directory_iterator(dir.file("s3") + "/bench")) {
        const std::string path = e.path().string();
        if (!e.is_regular_file() || !path.ends_with("._S3rver_object"))
          continue;
        const std::string object = file_bytes(path);
        if (path.find(".tar.zst") != std::string::npos) {
          ++stored;
          const std::string tar = decompressed(object, dir);
          CHECK(tar_members(tar, dir) > 5);
          const auto found = found_in(path, tar, secrets());
          CHECK_MESSAGE(found.empty(), first(found));
        } else {
          CHECK(found_in(path, object, secrets()).empty());
        }
      }
      CHECK(stored == 2);
    }
  }
}
