// upload/store against a scripted S3 endpoint (tests/support/http_server):
// where each kind of run is stored (pushes under refs/, pull requests
// under pulls/<number>/, the rest under events/), which records are a
// branch's base, a base lookup that goes past records it cannot read or
// use, and a fetch bounded by the runner's own limits into a private,
// evicted cache.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "format/format.hpp"
#include "tests/support/fake_s3.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::upload;
using runner::testing::FakeS3;
using runner::testing::ScriptedResponse;
using runner::testing::TempDir;
namespace fs = std::filesystem;
namespace format = runner::format;

namespace {

const S3Location kLocation{"bench", "ci"};
const std::string kRepo = "ci/acme/widgets/";

RunFacts push_facts(const std::string& branch = "main") {
  RunFacts f;
  f.provider = CiProvider::kGitHubActions;
  f.owner = "acme";
  f.repository = "widgets";
  f.commit = std::string(40, 'a');
  f.ref = "refs/heads/" + branch;
  f.branch = branch;
  f.event = "push";
  return f;
}

// A pull request from a fork whose branch is called `head`.
RunFacts pull_request_facts(uint64_t number, const std::string& head) {
  RunFacts f = push_facts();
  f.commit = std::string(40, 'b');
  f.ref = "refs/pull/" + std::to_string(number) + "/merge";
  f.branch = head;
  f.head_ref = head;
  f.base_ref = "main";
  f.pull_request = number;
  f.event = "pull_request";
  return f;
}

S3Client client_of(const FakeS3& s3, std::ostream& log) {
  S3Config config;
  config.endpoint = s3.endpoint();
  config.credentials = {"us-east-1", "key", "secret", ""};
  config.retry.attempts = 2;
  config.retry.base_delay = std::chrono::milliseconds(1);
  auto client = S3Client::create(config, log);
  REQUIRE(client);
  return std::move(*client);
}

// A record of a push to main, as store_upload writes it, for `run_id`.
format::StoreRecord push_record(const std::string& run_id) {
  format::StoreRecord r;
  r.owner = "acme";
  r.repository = "widgets";
  r.branch = "main";
  r.ref = "refs/heads/main";
  r.commit = std::string(40, 'a');
  r.run_id = run_id;
  r.created_at = "2026-01-01T00:00:00.000Z";
  r.event = "push";
  r.archive_key = kRepo + "runs/" + r.commit + "/" + run_id + ".tar.zst";
  r.archive_sha256 = std::string(64, '0');
  r.runner_version = "test";
  return r;
}

std::string record_key(const std::string& run_id) {
  return kRepo + "refs/main/" + run_id + ".json";
}

std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string data(n, '\0');
  for (char& c : data) c = static_cast<char>(random());
  return data;
}

// `folder` packed as the store packs it, served under a record of a push
// to main with id `run_id`.
StoredRun serve_folder(FakeS3& s3, const std::string& folder,
                       const std::string& run_id) {
  auto archive = pack_folder(folder, ArchiveCompression::kZstd);
  REQUIRE(archive);
  std::string bytes(archive->size, '\0');
  REQUIRE(::pread(archive->fd.get(), bytes.data(), bytes.size(), 0) ==
          static_cast<ssize_t>(bytes.size()));
  format::StoreRecord record = push_record(run_id);
  record.archive_bytes = bytes.size();
  record.archive_sha256 = sha256_hex(bytes);
  record.folder_bytes = archive->folder_bytes;
  s3.put(record.archive_key, bytes);
  s3.put(record_key(run_id), format::write_store_record(record));
  return {record, record_key(run_id)};
}

void write(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  REQUIRE(runner::base::write_file_atomic(path, data));
}

// The bytes of the regular files under `dir`.
uint64_t bytes_under(const std::string& dir) {
  uint64_t total = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("run_place: pushes under refs/, pull requests under pulls/<n>/") {
  RunPlace push = run_place(kLocation, push_facts("feat/x"));
  CHECK(push.kind == RunKind::kPush);
  CHECK(push.branch == "feat/x");
  CHECK(push.records == kRepo + "refs/feat~2Fx/");
  CHECK(push.archives == kRepo + "runs/" + std::string(40, 'a') + "/");

  // A fork's branch called main: a pull request's run, whatever its name.
  RunPlace fork = run_place(kLocation, pull_request_facts(7, "main"));
  CHECK(fork.kind == RunKind::kPullRequest);
  CHECK(fork.pull_request == 7);
  CHECK(fork.records == kRepo + "pulls/7/");
  CHECK(fork.archives == kRepo + "pulls/7/");

  // pull_request_target runs with the base's ref: still the pull request's.
  RunFacts target = pull_request_facts(8, "main");
  target.event = "pull_request_target";
  target.ref = "refs/heads/main";
  CHECK(run_place(kLocation, target).records == kRepo + "pulls/8/");
  // Without the payload, the number comes from the ref.
  RunFacts no_payload = pull_request_facts(9, "main");
  no_payload.pull_request.reset();
  CHECK(run_place(kLocation, no_payload).records == kRepo + "pulls/9/");
  // A pull request's run without any number is not a push either.
  target.pull_request.reset();
  RunPlace unnumbered = run_place(kLocation, target);
  CHECK(unnumbered.kind == RunKind::kOther);
  CHECK(unnumbered.records ==
        kRepo + "events/pull_request_target/refs~2Fheads~2Fmain/");
  // A push that carries a head ref is not a plain push.
  RunFacts odd = push_facts();
  odd.head_ref = "main";
  CHECK(run_place(kLocation, odd).kind != RunKind::kPush);

  RunFacts schedule = push_facts();
  schedule.event = "schedule";
  CHECK(run_place(kLocation, schedule).records ==
        kRepo + "events/schedule/refs~2Fheads~2Fmain/");
  RunFacts local = push_facts();
  local.event = "local";
  CHECK(run_place(kLocation, local).kind == RunKind::kOther);
  RunFacts tag = push_facts();
  tag.ref = "refs/tags/main";
  CHECK(run_place(kLocation, tag).records ==
        kRepo + "events/push/refs~2Ftags~2Fmain/");
}

TEST_CASE("run_place: GitLab merge requests, and a tag called like a branch") {
  const Environment mr = {{"GITLAB_CI", "true"},
                          {"CI_COMMIT_SHA", std::string(40, 'c')},
                          {"CI_COMMIT_REF_NAME", "main"},
                          {"CI_MERGE_REQUEST_IID", "5"},
                          {"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "main"},
                          {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"},
                          {"CI_PROJECT_NAMESPACE", "acme"},
                          {"CI_PROJECT_NAME", "widgets"},
                          {"CI_PIPELINE_SOURCE", "merge_request_event"}};
  auto facts = collect_run_facts(".", mr);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(run_place(kLocation, *facts).records == kRepo + "pulls/5/");

  const Environment tag = {{"GITLAB_CI", "true"},
                           {"CI_COMMIT_SHA", std::string(40, 'c')},
                           {"CI_COMMIT_REF_NAME", "main"},
                           {"CI_COMMIT_TAG", "main"},
                           {"CI_PROJECT_NAMESPACE", "acme"},
                           {"CI_PROJECT_NAME", "widgets"},
                           {"CI_PIPELINE_SOURCE", "push"}};
  facts = collect_run_facts(".", tag);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(facts->ref == "refs/tags/main");
  CHECK(run_place(kLocation, *facts).kind == RunKind::kOther);

  const Environment push = {{"GITLAB_CI", "true"},
                            {"CI_COMMIT_SHA", std::string(40, 'c')},
                            {"CI_COMMIT_REF_NAME", "main"},
                            {"CI_COMMIT_BRANCH", "main"},
                            {"CI_PROJECT_NAMESPACE", "acme"},
                            {"CI_PROJECT_NAME", "widgets"},
                            {"CI_PIPELINE_SOURCE", "push"}};
  facts = collect_run_facts(".", push);
  REQUIRE_MESSAGE(facts, facts.error().what());
  CHECK(run_place(kLocation, *facts).records == kRepo + "refs/main/");
}

TEST_CASE("run_place: GitHub's event name decides, not the payload alone") {
  TempDir dir;
  REQUIRE(runner::base::write_file_atomic(
      dir.file("event.json"),
      R"({"number": 7, "pull_request": {"number": 7, "head": {"sha": ")" +
          std::string(40, 'b') + R"(", "ref": "main"}}})"));
  Environment env = {{"GITHUB_ACTIONS", "true"},
                     {"GITHUB_SHA", std::string(40, 'a')},
                     {"GITHUB_REF", "refs/heads/main"},
                     {"GITHUB_REF_NAME", "main"},
                     {"GITHUB_REPOSITORY", "acme/widgets"},
                     {"GITHUB_EVENT_NAME", "push"},
                     {"GITHUB_EVENT_PATH", dir.file("event.json")}};
  auto push = collect_run_facts(dir.path(), env);
  REQUIRE_MESSAGE(push, push.error().what());
  CHECK(push->commit == std::string(40, 'a'));
  CHECK(run_place(kLocation, *push).records == kRepo + "refs/main/");
  // pull_request_target: GitHub gives the base's ref and commit; the
  // payload makes it pull request 7's run.
  env["GITHUB_EVENT_NAME"] = "pull_request_target";
  env["GITHUB_HEAD_REF"] = "main";
  auto target = collect_run_facts(dir.path(), env);
  REQUIRE_MESSAGE(target, target.error().what());
  CHECK(target->commit == std::string(40, 'b'));
  CHECK(run_place(kLocation, *target).records == kRepo + "pulls/7/");
}

TEST_CASE("store_upload: a fork's branch called main is stored as its PR") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  write(dir.file("folder/results/1.json"), "{}");
  auto stored = store_upload(client, kLocation, dir.file("folder"),
                             pull_request_facts(7, "main"), log);
  REQUIRE_MESSAGE(stored, stored.error().what());
  const std::string id = stored->run.record.run_id;
  CHECK(stored->run.record_key == kRepo + "pulls/7/" + id + ".json");
  CHECK(stored->run.record.archive_key == kRepo + "pulls/7/" + id + ".tar.zst");
  CHECK(s3.keys() ==
        std::vector<std::string>{kRepo + "pulls/7/" + id + ".json",
                                 kRepo + "pulls/7/" + id + ".tar.zst"});
  auto record = format::read_store_record(s3.object(stored->run.record_key));
  REQUIRE(record);
  CHECK(record->pull_request == std::optional<uint64_t>(7));
  CHECK(record->event == "pull_request");
  CHECK(record->branch == "main");

  // A push's record is under refs/<branch>/ and names the branch of its ref.
  RunFacts push = push_facts("release/2");
  push.branch = "something else";
  auto pushed = store_upload(client, kLocation, dir.file("folder"), push, log);
  REQUIRE_MESSAGE(pushed, pushed.error().what());
  CHECK(pushed->run.record_key.starts_with(kRepo + "refs/release~2F2/"));
  CHECK(pushed->run.record.branch == "release/2");
  CHECK_FALSE(pushed->run.record.pull_request);
  // ... and is the branch's base; the pull request's run never is.
  auto base = find_newest_run(client, kLocation, push_facts("release/2"),
                              "release/2", log);
  REQUIRE_MESSAGE(base, base.error().what());
  CHECK(base->record.run_id == pushed->run.record.run_id);
  auto none = find_newest_run(client, kLocation, push_facts(), "main", log);
  REQUIRE_FALSE(none);
  CHECK(none.error().code() == ENOENT);
}

TEST_CASE("base_record_problem: only a push to the branch is its base") {
  const RunFacts facts = push_facts();
  const format::StoreRecord good = push_record("20260101T000000000Z-00000001");
  const std::string key = record_key(good.run_id);
  CHECK(base_record_problem(good, key, kLocation, facts, "main").empty());
  auto problem = [&](auto&& change, std::string at = "") {
    format::StoreRecord r = good;
    change(r);
    return base_record_problem(r, at.empty() ? key : at, kLocation, facts,
                               "main");
  };
  CHECK(contains(problem([](auto& r) { r.event = "pull_request"; }),
                 "not the run of a push"));
  CHECK(
      contains(problem([](auto& r) { r.pull_request = 7; }), "pull request 7"));
  CHECK(contains(problem([](auto& r) { r.ref = "refs/pull/7/merge"; }),
                 "refs/pull/7/merge, not of refs/heads/main"));
  CHECK(contains(problem([](auto& r) { r.branch = "feat"; }),
                 "names the branch 'feat'"));
  CHECK(problem([](auto& r) { r.ref = std::string(5000, 'r'); }).size() < 300);
  CHECK(contains(problem([](auto& r) { r.repository = "gadgets"; }),
                 "another repository"));
  CHECK(contains(problem([](auto&) {}, kRepo + "refs/main/other.json"),
                 "does not match its key"));
  CHECK(contains(problem([](auto& r) { r.run_id = "../x"; }),
                 "does not match its key"));
  CHECK(contains(
      problem([](auto& r) { r.archive_key = kRepo + "pulls/7/x.tar.zst"; }),
      "not under " + kRepo + "runs/"));
  CHECK(contains(problem([](auto& r) {
                   r.archive_key = kRepo + "runs/../pulls/7/x.tar.zst";
                 }),
                 "not under"));
  CHECK(contains(problem([](auto& r) { r.commit = "main\x1b[2J"; }),
                 "not a SHA"));
  CHECK(contains(problem([](auto& r) { r.created_at = "\x1b]0;x\x07"; }),
                 "not UTC ISO 8601"));
}

TEST_CASE("find_newest_run: what cannot be read or used is skipped") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  const std::string good = "20260101T000000000Z-00000001";
  s3.put(record_key(good), format::write_store_record(push_record(good)));
  // Newer, each unusable: a pull request's run filed under main (an older
  // runner's layout, or a forged key), an unparsable record, one the store
  // refuses, one listed but deleted since.
  format::StoreRecord pr = push_record("20260102T000000000Z-00000002");
  pr.event = "pull_request";
  pr.pull_request = 7;
  pr.ref = "refs/pull/7/merge";
  s3.put(record_key(pr.run_id), format::write_store_record(pr));
  s3.put(record_key("20260103T000000000Z-00000003"), "{\"version\": 1, ");
  s3.script(record_key("20260104T000000000Z-00000004"),
            {403, {}, "<Error><Code>AccessDenied</Code></Error>"});
  s3.script(record_key("20260105T000000000Z-00000005"),
            {404, {}, "<Error><Code>NoSuchKey</Code></Error>"});
  // A hostile listing: keys outside the prefix or below it are never read.
  s3.list_also(kRepo + "refs/main~2Fx/20990101T000000000Z-00000009.json");
  s3.list_also(kRepo + "refs/main/sub/20990101T000000000Z-00000009.json");
  s3.list_also("elsewhere.json");

  auto run = find_newest_run(client, kLocation, push_facts(), "main", log);
  INFO(log.str());
  REQUIRE_MESSAGE(run, run.error().what());
  CHECK(run->record.run_id == good);
  CHECK(run->record_key == record_key(good));
  const std::string text = log.str();
  CHECK(contains(text, "00000005.json skipped: S3 GET"));
  CHECK(contains(text, "HTTP 404"));
  CHECK(contains(text, "00000004.json skipped: S3 GET"));
  CHECK(contains(text, "HTTP 403"));
  CHECK(contains(text, "00000003.json skipped: store record:"));
  CHECK(contains(text,
                 "00000002.json skipped: not a base: the run of pull "
                 "request 7"));
  const auto gets = s3.gets();
  CHECK(std::count_if(gets.begin(), gets.end(), [](const std::string& k) {
          return contains(k, "2099") || contains(k, "elsewhere");
        }) == 0);
}

TEST_CASE("find_newest_run: a store that does not answer ends the lookup") {
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  for (int i = 1; i <= 3; ++i) {
    const std::string id = "2026010" + std::to_string(i) + "T000000000Z-0";
    ScriptedResponse gone;
    gone.hang_up = true;
    s3.script(record_key(id), gone);
  }
  auto run = find_newest_run(client, kLocation, push_facts(), "main", log);
  REQUIRE_FALSE(run);
  CHECK(run.error().code() != ENOENT);
  // Only the newest was tried (with its retry), not every record in turn.
  const auto gets = s3.gets();
  CHECK(std::all_of(gets.begin(), gets.end(), [](const std::string& k) {
    return contains(k, "20260103");
  }));
}

TEST_CASE("find_newest_run: at most kMaxBaseCandidates records are read") {
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  for (int i = 0; i < 150; ++i) {
    char id[64];
    std::snprintf(id, sizeof(id), "20260101T000%03dZ-0", i);
    s3.put(record_key(id), "not a record");
  }
  auto run = find_newest_run(client, kLocation, push_facts(), "main", log);
  REQUIRE_FALSE(run);
  CHECK(run.error().code() == ENOENT);
  CHECK(contains(run.error().message(),
                 "100 records skipped, 50 older ones not read"));
  CHECK(s3.gets().size() == kMaxBaseCandidates);
}

TEST_CASE("fetch_run: the limits are the runner's, not the record's") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  const std::string cache = dir.file("cache");
  StoreLimits limits;

  SUBCASE("a small archive of a huge file: the ratio refuses it") {
    // 256 MiB of zeros (a sparse file) pack to a few KiB of zstd.
    fs::create_directories(dir.file("bomb"));
    { std::ofstream(dir.file("bomb/zeros")); }
    fs::resize_file(dir.file("bomb/zeros"), uint64_t{256} << 20);
    StoredRun run = serve_folder(s3, dir.file("bomb"), "20260101T0Z-1");
    run.record.folder_bytes = uint64_t{1} << 40;  // the record is not asked
    REQUIRE(run.record.archive_bytes < (1u << 20));
    auto fetched = fetch_run(client, kLocation, run, cache, limits, log);
    REQUIRE_FALSE(fetched);
    INFO(fetched.error().what());
    CHECK(contains(fetched.error().what(), "times its size"));
    CHECK(contains(fetched.error().what(), "RUNNER_STORE_MAX_UNPACK_MB"));
  }
  SUBCASE("more bytes than the cap") {
    write(dir.file("big/blob"), random_bytes(3u << 20, 1));
    StoredRun run = serve_folder(s3, dir.file("big"), "20260101T0Z-1");
    limits.max_bytes = 1u << 20;
    auto fetched = fetch_run(client, kLocation, run, cache, limits, log);
    REQUIRE_FALSE(fetched);
    CHECK(contains(fetched.error().what(), "more than 1048576 bytes"));
  }
  SUBCASE("many tiny files") {
    for (int i = 0; i < 300; ++i)
      write(dir.file("many/f" + std::to_string(i)), "x");
    StoredRun run = serve_folder(s3, dir.file("many"), "20260101T0Z-1");
    limits.max_entries = 100;
    auto fetched = fetch_run(client, kLocation, run, cache, limits, log);
    REQUIRE_FALSE(fetched);
    CHECK(contains(fetched.error().what(), "more than 100 files and folders"));
  }
  SUBCASE("a record claiming an archive beyond the limits is not fetched") {
    write(dir.file("small/a"), "a");
    StoredRun run = serve_folder(s3, dir.file("small"), "20260101T0Z-1");
    run.record.archive_bytes = uint64_t{1} << 50;
    auto fetched = fetch_run(client, kLocation, run, cache, limits, log);
    REQUIRE_FALSE(fetched);
    CHECK(contains(fetched.error().what(), "more than the limits allow"));
    CHECK(s3.gets().empty());
  }
  SUBCASE("an archive longer than its record says is cut off") {
    write(dir.file("small/a"), random_bytes(100000, 2));
    StoredRun run = serve_folder(s3, dir.file("small"), "20260101T0Z-1");
    s3.put(run.record.archive_key,
           s3.object(run.record.archive_key) + random_bytes(1u << 20, 3));
    auto fetched = fetch_run(client, kLocation, run, cache, limits, log);
    REQUIRE_FALSE(fetched);
    CHECK(contains(fetched.error().what(),
                   "answered more than " +
                       std::to_string(run.record.archive_bytes) + " bytes"));
    // Refused at once, not retried.
    CHECK(s3.gets().size() == 1);
  }
  // Whatever was refused, nothing of it stays in the cache.
  CHECK(names_in(cache).empty());
}

TEST_CASE("fetch_run: a private cache folder, evicted least recently used") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  const std::string cache = dir.file("cache/runner/store");
  std::vector<StoredRun> runs;
  for (int i = 0; i < 3; ++i) {
    const std::string folder = dir.file("run" + std::to_string(i));
    write(folder + "/blob", random_bytes(1u << 20, 10 + i));
    runs.push_back(
        serve_folder(s3, folder, "2026010" + std::to_string(i) + "T0Z-1"));
  }
  // An old cache folder open to others is tightened.
  fs::create_directories(cache);
  REQUIRE(::chmod(cache.c_str(), 0755) == 0);
  // A crashed fetch's leftover, two hours old.
  fs::create_directories(cache + "/.partial-old/x");
  const struct timespec old[2] = {{::time(nullptr) - 7200, 0},
                                  {::time(nullptr) - 7200, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (cache + "/.partial-old").c_str(), old, 0) ==
          0);
  StoreLimits limits;
  limits.cache_max_bytes = (5u << 20) / 2;  // two runs and a half
  for (int i : {0, 1, 0, 2}) {  // run 0 used again before run 2 comes
    auto fetched = fetch_run(client, kLocation, runs[i], cache, limits, log);
    REQUIRE_MESSAGE(fetched, fetched.error().what());
    CHECK(*fetched == cache + "/" + runs[i].record.run_id);
    CHECK(fs::exists(*fetched + "/blob"));
    // File times tick with the kernel's clock (a few ms): one apart.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  struct stat st {};
  REQUIRE(::lstat(cache.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  // Run 1 was the least recently used.
  INFO(log.str());
  CHECK(names_in(cache) ==
        std::vector<std::string>{runs[0].record.run_id, runs[2].record.run_id});
  CHECK(bytes_under(cache) <= limits.cache_max_bytes);
  // The run in use stays even alone above the cap.
  limits.cache_max_bytes = 0;
  auto alone = fetch_run(client, kLocation, runs[1], cache, limits, log);
  REQUIRE_MESSAGE(alone, alone.error().what());
  CHECK(names_in(cache) == std::vector<std::string>{runs[1].record.run_id});
}

TEST_CASE("fetch_run: a cache folder that is a symlink or not ours") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  S3Client client = client_of(s3, log);
  write(dir.file("run/a"), "a");
  const StoredRun run = serve_folder(s3, dir.file("run"), "20260101T0Z-1");
  fs::create_directories(dir.file("elsewhere"));
  fs::create_directory_symlink(dir.file("elsewhere"), dir.file("link"));
  auto linked = fetch_run(client, kLocation, run, dir.file("link"), {}, log);
  REQUIRE_FALSE(linked);
  CHECK(contains(linked.error().what(), "symbolic link"));
  CHECK(fs::is_empty(dir.file("elsewhere")));
  if (::geteuid() != 0) RUNNER_SKIP_CASE("chown to another user needs root");
  fs::create_directories(dir.file("theirs"));
  REQUIRE(::chown(dir.file("theirs").c_str(), 65534, 65534) == 0);
  auto theirs = fetch_run(client, kLocation, run, dir.file("theirs"), {}, log);
  REQUIRE_FALSE(theirs);
  CHECK(contains(theirs.error().what(), "owned by uid 65534"));
  CHECK(fs::is_empty(dir.file("theirs")));
}

TEST_CASE("store limits from the environment") {
  const StoreLimits defaults;
  const StoreLimits none = store_limits_from_environment({});
  CHECK(none.max_bytes == defaults.max_bytes);
  CHECK(none.max_entries == defaults.max_entries);
  CHECK(none.cache_max_bytes == defaults.cache_max_bytes);
  const StoreLimits set =
      store_limits_from_environment({{"RUNNER_STORE_MAX_UNPACK_MB", "10"},
                                     {"RUNNER_STORE_MAX_ENTRIES", "500000"},
                                     {"RUNNER_STORE_CACHE_MAX_MB", "0"}});
  CHECK(set.max_bytes == 10u << 20);
  CHECK(set.max_entries == 500000);
  CHECK(set.cache_max_bytes == 0);
  const StoreLimits bad =
      store_limits_from_environment({{"RUNNER_STORE_MAX_UNPACK_MB", "lots"},
                                     {"RUNNER_STORE_MAX_ENTRIES", "-1"}});
  CHECK(bad.max_bytes == defaults.max_bytes);
  CHECK(bad.max_entries == defaults.max_entries);
}

TEST_CASE("fetch_store_base: the newest push of the branch, fetched") {
  TempDir dir;
  FakeS3 s3;
  std::ostringstream log;
  write(dir.file("run/results/1.json"), "{}");
  const StoredRun run = serve_folder(s3, dir.file("run"), "20260101T0Z-1");
  const Environment env = {{"GITHUB_ACTIONS", "true"},
                           {"GITHUB_SHA", std::string(40, 'c')},
                           {"GITHUB_REF", "refs/heads/feat"},
                           {"GITHUB_REF_NAME", "feat"},
                           {"GITHUB_REPOSITORY", "acme/widgets"},
                           {"GITHUB_EVENT_NAME", "push"},
                           {"AWS_ACCESS_KEY_ID", "key"},
                           {"AWS_SECRET_ACCESS_KEY", "secret"},
                           {"XDG_CACHE_HOME", dir.file("cache")}};
  StoreBaseQuery query;
  query.store = "s3://bench/ci";
  query.s3_endpoint = s3.endpoint();
  query.checkout = dir.path();
  std::vector<std::string> found;
  std::string log_when_found;
  auto base =
      fetch_store_base(query, env, log, [&](const std::string& description) {
        found.push_back(description);
        log_when_found = log.str();
      });
  INFO(log.str());
  REQUIRE_MESSAGE(base, base.error().what());
  // The branch is the default base branch (main), not the run's own.
  const std::string expected =
      "run 20260101T0Z-1 of a push to 'main' (commit " + std::string(40, 'a') +
      ", stored 2026-01-01T00:00:00.000Z) from s3://bench/" + run.record_key;
  CHECK(base->description == expected);
  CHECK(found == std::vector<std::string>{expected});
  // Told before the download starts.
  CHECK_FALSE(contains(log_when_found, "fetching"));
  CHECK(contains(log.str(), "fetching 20260101T0Z-1"));
  CHECK(base->folder == dir.file("cache") + "/runner/store/20260101T0Z-1");
  CHECK(fs::exists(base->folder + "/results/1.json"));

  // Another branch has no base; a bad URL and missing credentials are
  // errors before any request.
  query.branch = "release";
  auto none = fetch_store_base(query, env, log);
  REQUIRE_FALSE(none);
  CHECK(none.error().code() == ENOENT);
  query.branch.reset();
  const size_t requests = s3.gets().size();
  query.store = "https://bench/ci";
  CHECK_FALSE(fetch_store_base(query, env, log));
  query.store = "s3://bench/ci";
  Environment no_credentials = env;
  no_credentials.erase("AWS_ACCESS_KEY_ID");
  auto refused = fetch_store_base(query, no_credentials, log);
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().what(), "AWS_ACCESS_KEY_ID"));
  CHECK(s3.gets().size() == requests);
}
