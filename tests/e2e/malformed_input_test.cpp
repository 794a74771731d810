// Hostile input through the real `runner` binary: `runner report` on a
// full disk and on a profile folder with wrong JSON types or a URI that is
// not UTF-8; `runner report` and `runner compare` on an
// ExecutionTimestamps.msgpack nested 100,000 levels deep; `runner exec` on
// a runner.yml nested 20 000 levels deep or starting with a byte order
// mark. The profile folder is the fixture of
// tests/fuzz/ (report_folder/ plus the perf.pipedata of the same real run).
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

// The recorded fixture as a profile folder at `dir` (created).
void copy_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string fuzz_dir = RUNNER_FUZZ_SOURCE_DIR;
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(fuzz_dir + "/report_folder"))
    fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename());
  fs::copy_file(fuzz_dir + "/corpus/report/dwarf_run.pipedata",
                dir + "/perf.pipedata");
}

void write_msgpack(const std::string& path, const nlohmann::json& doc) {
  const auto bytes = nlohmann::json::to_msgpack(doc);
  REQUIRE(runner::base::write_file_atomic(
      path, std::span<const uint8_t>(bytes.data(), bytes.size())));
}

ProcessResult runner_report(const std::string& folder) {
  return run_process({binary("RUNNER_BIN"), "report", folder});
}

// Writes zeros to `path` until the file system is full.
void fill_up(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  static const char kZeros[4096] = {};
  while (::write(fd, kZeros, sizeof(kZeros)) > 0) {
  }
  const int code = errno;
  ::close(fd);
  REQUIRE(code == ENOSPC);
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("runner report on a full disk fails and names the file") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("needs root to mount a tmpfs");
    // A mount namespace of this test process: the tmpfs goes away with it,
    // even if the test dies before unmounting.
    if (::unshare(CLONE_NEWNS) != 0)
      RUNNER_SKIP_CASE(std::string("unshare(CLONE_NEWNS) refused: ") +
                       std::strerror(errno));
    REQUIRE(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0);
    TempDir mnt;
    if (::mount("tmpfs", mnt.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                "size=1m") != 0)
      RUNNER_SKIP_CASE(std::string("mounting a tmpfs refused: ") +
                       std::strerror(errno));
    const std::string folder = mnt.file("profile");
    copy_fixture(folder);
    // The report directory exists already; the outputs cannot be written.
    std::filesystem::create_directory(folder + "/report");
    fill_up(mnt.file("filler"));

    auto r = runner_report(folder);
    INFO(r.out);
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("runner report: error: cannot write " + folder +
                     "/report/") != std::string::npos);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(r.out.find("Report:") == std::string::npos);
    // The terminal summary is still printed.
    CHECK(r.out.find("samples") != std::string::npos);
    REQUIRE(::umount2(mnt.path().c_str(), MNT_DETACH) == 0);
  }

  TEST_CASE("runner report names the file and key of wrong JSON types") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    copy_fixture(folder);
    auto meta = read_json_file(folder + "/perf.metadata");
    REQUIRE(meta["mapped_process_module_symbols"].size() == 1);
    const std::string pid = meta["mapped_process_module_symbols"].begin().key();
    meta["mapped_process_module_symbols"][pid][0]["perf_map_key"] = 5;
    meta["runner"]["tracked_pids"] = "all of them";
    REQUIRE(runner::base::write_file_atomic(folder + "/perf.metadata",
                                            meta.dump()));

    auto r = runner_report(folder);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("warning: perf.metadata: mapped_process_module_symbols." +
                     pid + "[0].perf_map_key: expected string, got number") !=
          std::string::npos);
    CHECK(r.err.find("warning: perf.metadata: runner.tracked_pids: expected "
                     "array, got string") != std::string::npos);
    CHECK(r.err.find("json.exception") == std::string::npos);
    CHECK(r.out.find("Report:") != std::string::npos);
  }

  TEST_CASE("runner report with an invalid UTF-8 byte in a URI") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    copy_fixture(folder);
    auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
    std::string uri = ts["uri_by_ts"][0][1];
    uri += "\xff";
    ts["uri_by_ts"][0][1] = uri;
    write_msgpack(folder + "/ExecutionTimestamps.msgpack", ts);

    auto r = runner_report(folder);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    auto summary = read_json_file(folder + "/report/summary.json");
    CHECK(summary["benchmarks"][0]["uri"] ==
          uri.substr(0, uri.size() - 1) + "\xEF\xBF\xBD");
  }

  TEST_CASE("report and compare on a msgpack nested 100,000 deep: no crash") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    copy_fixture(folder);
    // 100 KB: fixarray(1) 100,000 times around a nil.
    REQUIRE(
        runner::base::write_file_atomic(folder + "/ExecutionTimestamps.msgpack",
                                        std::string(100'000, '\x91') + '\xc0'));
    const std::string why =
        "ExecutionTimestamps.msgpack is corrupt: nested deeper than 128 "
        "levels";

    // report: the copy of the timestamps in perf.metadata is used instead;
    // the fixture's has none, so no sample is in a benchmark window.
    auto r = runner_report(folder);
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("runner report: warning: " + why +
                     ": using the copy in perf.metadata") != std::string::npos);
    CHECK(r.err.find("runner report: nothing to report in " + folder +
                     ": no sample in a benchmark window") != std::string::npos);

    // compare: the folder has no results, and its markers cannot be read.
    auto c = run_process({binary("RUNNER_BIN"), "compare", folder, folder});
    INFO(c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.err.find("runner compare: base folder '" + folder +
                     "': no results") != std::string::npos);
    CHECK(c.err.find(why + ": markers not used") != std::string::npos);
    CHECK(c.out.empty());
  }

  TEST_CASE("runner exec refuses a runner.yml nested 20 000 levels deep") {
    TempDir dir;
    TempDir cwd;
    std::string doc = "benchmarks: ";
    doc.append(20000, '[');
    doc.append(20000, ']');
    REQUIRE(runner::base::write_file_atomic(cwd.file("runner.yml"), doc));
    auto r = run_process(
        runner_argv("exec", dir.file("profile"), dir.path(), {}, {}), {},
        cwd.path());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    // file:line:column (where yaml-cpp met the 65th level).
    CHECK(r.err.find("/runner.yml:1:") != std::string::npos);
    CHECK(r.err.find(": lists and mappings nested deeper than 64 levels") !=
          std::string::npos);
  }

  TEST_CASE("runner exec reads a runner.yml that starts with a BOM") {
    TempDir dir;
    TempDir cwd;
    REQUIRE(runner::base::write_file_atomic(
        cwd.file("runner.yml"), std::string_view("\xEF\xBB\xBF"
                                                 "benchmarks:\n"
                                                 "  - name: bom\n"
                                                 "    exec: \"true\"\n"
                                                 "    options:\n"
                                                 "      warmup-time: 0s\n"
                                                 "      max-rounds: 2\n")));
    auto r = run_process(runner_argv("exec", dir.file("profile"), dir.path(),
                                     {"--no-profile"}, {}),
                         {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")},
                         cwd.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("unknown key") == std::string::npos);
    auto files = list_dir(dir.file("profile/results"));
    REQUIRE(files.size() == 1);
    auto res = read_json_file(dir.file("profile/results/" + files[0]));
    REQUIRE(res["benchmarks"].size() == 1);
    CHECK(res["benchmarks"][0]["name"] == "bom");
  }

  TEST_CASE("runner run of a benchmark under a path that is not UTF-8") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // A directory named "b\xff": the benchmark's path, and so the paths of
    // its mappings, are bytes that are not UTF-8.
    const std::string odd = dir.file("b\xff");
    std::filesystem::create_directories(odd);
    const std::string bench = odd + "/bench_example";
    std::filesystem::copy_file(binary("EXAMPLE_BIN"), bench);
    std::filesystem::permissions(bench, std::filesystem::perms::owner_all);
    auto r = run_process(
        runner_argv("run", dir.file("profile"), dir.path(), {}, {bench}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("fatal") == std::string::npos);
    REQUIRE(file_exists(dir.file("profile/perf.metadata")));
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    CHECK(meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              .find("b\xEF\xBF\xBD/bench_example") != std::string::npos);
  }
}
