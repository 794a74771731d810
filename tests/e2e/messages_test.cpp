// End-to-end tests of what the runner tells a user on first contact: a
// program without an integration under `runner run`, a JavaScript plugin
// outside a git repository, `runner report` on a folder that is not a
// profile, and the live progress line on a terminal.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::file_exists;
using runner::testing::list_dir;
using runner::testing::run_process;
using runner::testing::TempDir;

namespace {

// The runner's own lines of `err` ("runner: ..."), one per element.
std::vector<std::string> runner_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("runner: ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

std::string line_with(const std::string& err, const std::string& needle) {
  for (const std::string& line : runner_lines(err)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

bool has_profile_folder(const std::string& dir) {
  for (const std::string& name : list_dir(dir)) {
    if (name.rfind("runner-profile.", 0) == 0) return true;
  }
  return false;
}

bool inside_git(std::filesystem::path dir) {
  for (;; dir = dir.parent_path()) {
    std::error_code ec;
    if (std::filesystem::exists(dir / ".git", ec)) return true;
    if (!dir.has_relative_path()) return false;
  }
}

// Behaves like CodSpeed's JavaScript plugins: before any protocol exchange,
// the benchmark file's own directory and its parents are searched for .git;
// without one it throws (node exits 1).
constexpr const char* kFakePlugin = R"(
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
let dir = dirname(fileURLToPath(import.meta.url));
while (!existsSync(join(dir, ".git"))) {
  if (dirname(dir) === dir) throw new Error("Could not find a git repository");
  dir = dirname(dir);
}
)";

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a program without an integration: use runner exec, no folder") {
    TempDir dir;
    auto r = run_process(
        {binary("RUNNER_BIN"), "run", "--fifo-dir", dir.path(), "--", "true"},
        {}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);  // no benchmark ran: the run did not do its job
    const std::string said = line_with(r.err, "spoke no benchmark protocol");
    const std::string hint = line_with(r.err, "runner exec -- true");
    CHECK_FALSE(said.empty());
    CHECK_FALSE(hint.empty());
    CHECK(said.size() <= 100);
    CHECK(hint.size() <= 100);
    CHECK(r.err.find("SetIntegration") == std::string::npos);
    CHECK(r.err.find("perf.metadata") == std::string::npos);
    CHECK(r.err.find("did not produce any CodSpeed result") ==
          std::string::npos);
    CHECK_FALSE(has_profile_folder(dir.path()));
    CHECK(r.err.find("profile folder:") == std::string::npos);

    // A failing program keeps its exit code, and the hint quotes its words.
    auto failed = run_process({binary("RUNNER_BIN"), "run", "--fifo-dir",
                               dir.path(), "--", "sh", "-c", "exit 3"},
                              {}, dir.path());
    CHECK(failed.exit_code == 3);
    CHECK(failed.err.find("runner exec -- sh -c 'exit 3'") !=
          std::string::npos);
    CHECK_FALSE(has_profile_folder(dir.path()));
  }

  TEST_CASE("a folder the runner did not create, or that holds more, stays") {
    TempDir dir;
    const std::string mine = dir.file("mine");
    REQUIRE(::mkdir(mine.c_str(), 0755) == 0);
    std::ofstream(mine + "/notes.txt") << "keep me\n";
    auto r = run_process({binary("RUNNER_BIN"), "run", "--profile-folder", mine,
                          "--fifo-dir", dir.path(), "--", "true"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("runner exec -- true") != std::string::npos);
    CHECK(file_exists(mine + "/notes.txt"));
    CHECK(r.err.find("profile folder: " + mine) != std::string::npos);

    // Created by the runner, but the program wrote a file of its own there.
    const std::string created = dir.file("created");
    auto wrote =
        run_process({binary("RUNNER_BIN"), "run", "--profile-folder", created,
                     "--fifo-dir", dir.path(), "--", "sh", "-c",
                     "echo data > \"$CODSPEED_PROFILE_FOLDER/out.txt\""});
    CHECK(wrote.exit_code == 1);
    CHECK(file_exists(created + "/out.txt"));

    // --allow-empty: no results is fine, the folder is the user's to keep.
    const std::string allowed = dir.file("allowed");
    auto ok =
        run_process({binary("RUNNER_BIN"), "run", "--profile-folder", allowed,
                     "--fifo-dir", dir.path(), "--allow-empty", "--", "true"});
    CHECK(ok.exit_code == 0);
    CHECK(file_exists(allowed + "/ExecutionTimestamps.msgpack"));
  }

  TEST_CASE("CodSpeed's JavaScript plugins outside a git repository") {
    if (run_process({"node", "--version"}).exit_code != 0)
      RUNNER_SKIP_CASE("no node");
    TempDir dir;
    if (inside_git(dir.path()))
      RUNNER_SKIP_CASE("the test directory is inside a git repository");
    std::ofstream(dir.file("bench.mjs")) << kFakePlugin;
    auto r = run_process({binary("RUNNER_BIN"), "run", "--fifo-dir", dir.path(),
                          "--", "node", "bench.mjs"},
                         {}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("Could not find a git repository") != std::string::npos);
    CHECK(r.err.find("CodSpeed's JavaScript plugins need a git repository: "
                     "run inside one (git init)") != std::string::npos);
    CHECK(r.err.find("may be incompatible") == std::string::npos);
    CHECK(r.err.find("compatible CodSpeed integration") == std::string::npos);
    CHECK_FALSE(has_profile_folder(dir.path()));

    // Inside a repository the plugin gets past its check: no git advice.
    const std::string repo = dir.file("repo");
    REQUIRE(::mkdir(repo.c_str(), 0755) == 0);
    REQUIRE(::mkdir((repo + "/.git").c_str(), 0755) == 0);
    std::ofstream(repo + "/bench.mjs") << kFakePlugin;
    auto in_repo = run_process({binary("RUNNER_BIN"), "run", "--fifo-dir",
                                dir.path(), "--", "node", "bench.mjs"},
                               {}, repo);
    INFO(in_repo.err);
    CHECK(in_repo.exit_code == 1);
    CHECK(in_repo.err.find("git repository") == std::string::npos);
    CHECK(in_repo.err.find("runner exec -- node bench.mjs") !=
          std::string::npos);
  }

  TEST_CASE("runner report on a folder that is not a profile says so") {
    TempDir dir;
    const std::string plain = dir.file("plain");
    REQUIRE(::mkdir(plain.c_str(), 0755) == 0);
    std::ofstream(plain + "/notes.txt") << "not a profile\n";
    auto r = run_process({binary("RUNNER_BIN"), "report", plain});
    CHECK(r.exit_code == 1);  // as for the other errors of report
    CHECK(r.err.find(plain + " is not a profile folder: no perf.pipedata or "
                             "perf.metadata") != std::string::npos);
    CHECK(r.err.find("no samples") == std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
  }
}
