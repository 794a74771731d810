// End-to-end tests of what the runner tells a user on first contact: a
// program without an integration under `runner run`, a JavaScript plugin
// outside a git repository, `runner report` on a folder that is not a
// profile, and the live progress line on a terminal.
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

struct TerminalRun {
  int exit_code = -1;
  bool timed_out = false;
  std::string output;  // what the terminal received (stdout and stderr)
  double seconds = 0;
};

// Runs argv (absolute program path) on a new pseudo-terminal of 200 columns
// (its stdin, stdout and stderr; TERM=xterm) and collects what it writes.
TerminalRun run_on_terminal(const std::vector<std::string>& argv,
                            const std::vector<std::string>& extra_env,
                            int timeout_s = 120) {
  std::vector<std::string> env_text = extra_env;
  env_text.push_back("TERM=xterm");
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("TERM=", 0) != 0) env_text.push_back(*e);
  }
  std::vector<char*> args, env;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : env_text) env.push_back(const_cast<char*>(e.c_str()));
  args.push_back(nullptr);
  env.push_back(nullptr);
  struct winsize size {};
  size.ws_col = 200;
  size.ws_row = 50;
  int master = -1;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  TerminalRun run;
  const auto deadline = start + std::chrono::seconds(timeout_s);
  for (;;) {
    struct pollfd pfd {
      master, POLLIN, 0
    };
    if (::poll(&pfd, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof(buf));
      if (n <= 0) break;  // EIO: every writer of the terminal is gone
      run.output.append(buf, static_cast<size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1))
    ++n;
  return n;
}

// A benchmark of about two seconds: exec-harness rounds of the spinner.
std::vector<std::string> two_second_exec(const TempDir& dir) {
  return {binary("RUNNER_BIN"),  "exec",
          "--profile-folder",    dir.file("profile"),
          "--fifo-dir",          dir.path(),
          "--warmup-time",       "0",
          "--max-time",          "2s",
          "--allow-no-profile",  "--",
          binary("SPINNER_BIN"), "20"};
}

constexpr const char* kErase = "\r\033[K";
constexpr const char* kProgressMark = " MB written, ";

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

  TEST_CASE("a live progress line on a terminal, none on a pipe") {
    TempDir dir;
    const std::vector<std::string> harness = {"RUNNER_EXEC_HARNESS=" +
                                              binary("EXEC_HARNESS_BIN")};
    TerminalRun tty = run_on_terminal(two_second_exec(dir), harness);
    INFO(tty.output);
    REQUIRE_FALSE(tty.timed_out);
    CHECK(tty.exit_code == 0);
    // Drawn in place: erase the line, then the counts.
    const size_t first = tty.output.find(std::string(kErase) + "runner: ");
    REQUIRE(first != std::string::npos);
    const std::string line = tty.output.substr(
        first + 4, tty.output.find_first_of("\r\n", first + 4) - first - 4);
    CHECK(line.find(" s, ") != std::string::npos);        // elapsed
    CHECK(line.find(" windows, ") != std::string::npos);  // StartBenchmark
    CHECK(line.find(" samples, ") != std::string::npos);
    CHECK(line.find(kProgressMark) != std::string::npos);
    CHECK(line.find(" lost") != std::string::npos);
    CHECK(line.size() < 200);  // never wider than the terminal
    // Redrawn, at most a few times a second.
    const size_t draws = count_of(tty.output, kProgressMark);
    CHECK(draws >= 2);
    CHECK(static_cast<double>(draws) <= tty.seconds * 5);
    // exec-harness announces its benchmark when its rounds are done.
    CHECK(line.find("no benchmark yet") != std::string::npos);
    // Erased before the runner's next output and at the end: the last
    // line drawn is followed by an erase before any new line.
    const size_t last = tty.output.rfind(kProgressMark);
    const size_t erase = tty.output.find(kErase, last);
    REQUIRE(erase != std::string::npos);
    CHECK(erase < tty.output.find('\n', last));
    CHECK(tty.output.find("runner: profile folder: ", erase) !=
          std::string::npos);

    // The same run with stderr on a pipe: nothing of it.
    TempDir piped_dir;
    auto piped = run_process(two_second_exec(piped_dir), harness);
    CHECK(piped.exit_code == 0);
    CHECK(piped.err.find(kProgressMark) == std::string::npos);
    CHECK(piped.err.find("\033[") == std::string::npos);
    CHECK(piped.err.find('\r') == std::string::npos);
  }
}
