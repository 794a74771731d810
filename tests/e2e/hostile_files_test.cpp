// End-to-end: the real runner against files a hostile local user planted
// (symlinks at artifact names, a folder someone else owns or can write, a
// FIFO or a link as /tmp/perf-<pid>.map, a perf.metadata linking to
// /dev/zero, a FIFO where an ELF was), a full disk, and TMPDIR.
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/planted_files.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

constexpr uid_t kNobody = 65534;

// Makes `folder` with a symlink at `name` to DIR/victim, which holds
// kPrecious; returns the victim's path.
std::string plant_victim_link(const TempDir& dir, const std::string& folder,
                              const std::string& name) {
  REQUIRE(std::filesystem::create_directory(folder));
  const std::string victim = dir.file("victim");
  write_text(victim, kPrecious);
  REQUIRE(::symlink(victim.c_str(), (folder + "/" + name).c_str()) == 0);
  return victim;
}

// `runner run` that works without perf events and without results files.
std::vector<std::string> run_argv(const std::string& folder,
                                  const std::string& fifo_dir,
                                  const std::vector<std::string>& command) {
  return runner_argv("run", folder, fifo_dir,
                     {"--allow-no-profile", "--allow-empty"}, command);
}

// Runs perf_map_planter MODE ARGS under the runner; removes what it planted
// at /tmp/perf-<pid>.map afterwards.
class PlanterRun {
 public:
  PlanterRun(const TempDir& dir, const std::string& folder,
             const std::vector<std::string>& mode_args) {
    const std::string pid_file = dir.file("planter.pid");
    std::vector<std::string> command = {binary("PERF_MAP_PLANTER_BIN"),
                                        pid_file};
    command.insert(command.end(), mode_args.begin(), mode_args.end());
    result = run_process(run_argv(folder, dir.path(), command), {}, "", 120);
    pid = std::atoi(read_text(pid_file).c_str());
  }
  ~PlanterRun() {
    if (pid > 0) ::unlink(planted().c_str());
  }
  PlanterRun(const PlanterRun&) = delete;
  PlanterRun& operator=(const PlanterRun&) = delete;

  std::string planted() const {
    return "/tmp/perf-" + std::to_string(pid) + ".map";
  }
  std::string copy_in(const std::string& folder) const {
    return folder + "/perf-" + std::to_string(pid) + ".map";
  }

  ProcessResult result;
  int pid = 0;
};

// Names created in `dir` while it is watched.
class CreationWatch {
 public:
  explicit CreationWatch(const std::string& dir)
      : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ >= 0) ::inotify_add_watch(fd_, dir.c_str(), IN_CREATE);
  }
  ~CreationWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  CreationWatch(const CreationWatch&) = delete;
  CreationWatch& operator=(const CreationWatch&) = delete;

  bool ok() const { return fd_ >= 0; }
  std::vector<std::string> names() {
    std::vector<std::string> out;
    alignas(inotify_event) char buf[1 << 16];
    ssize_t n;
    while ((n = ::read(fd_, buf, sizeof(buf))) > 0) {
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
        if (ev->len > 0) out.emplace_back(ev->name);
        off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
    return out;
  }

 private:
  int fd_;
};

bool any_starts_with(const std::vector<std::string>& names,
                     const std::string& prefix) {
  for (const auto& n : names)
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

// TMPDIR for this process and so for the runner it starts (for a
// PlanterRun, which passes no variables of its own), restored at the end.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (old_)
      ::setenv("TMPDIR", old_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

 private:
  std::optional<std::string> old_;
};

// A tmpfs of `size` mounted at `path` while it lives (root only).
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& path, const std::string& size) : path_(path) {
    std::filesystem::create_directory(path);
    const std::string options = "size=" + size + ",mode=0755";
    mounted_ = ::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                       options.c_str()) == 0;
    error_ = mounted_ ? 0 : errno;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  bool mounted() const { return mounted_; }
  int error() const { return error_; }

 private:
  std::string path_;
  bool mounted_ = false;
  int error_ = 0;
};

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a symlink planted at runner.log: its target is left untouched") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    const std::string victim = plant_victim_link(dir, folder, "runner.log");

    auto r = run_process(
        run_argv(folder, dir.path(), {binary("SPINNER_BIN"), "10"}));
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(read_text(victim) == kPrecious);
    CHECK(is_regular_not_link(folder + "/runner.log"));
    CHECK(read_text(folder + "/runner.log").find("profile folder") !=
          std::string::npos);
  }

  TEST_CASE(
      "a symlink planted at perf.pipedata: its target is left "
      "untouched") {
    if (perf_events_refused() != 0)
      RUNNER_SKIP_CASE("perf_event_open is refused: no perf.pipedata written");
    TempDir dir;
    const std::string folder = dir.file("profile");
    const std::string victim = plant_victim_link(dir, folder, "perf.pipedata");

    auto r = run_process(
        run_argv(folder, dir.path(), {binary("SPINNER_BIN"), "50"}));
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(read_text(victim) == kPrecious);
    CHECK(is_regular_not_link(folder + "/perf.pipedata"));
    CHECK(read_text(folder + "/perf.pipedata").rfind("PERFILE2", 0) == 0);
  }

  TEST_CASE("a world-writable profile folder with content is refused") {
    TempDir dir;
    const std::string folder = dir.file("shared");
    REQUIRE(std::filesystem::create_directory(folder));
    REQUIRE(::chmod(folder.c_str(), 0777) == 0);
    write_text(folder + "/planted", "x");

    auto r = run_process(
        run_argv(folder, dir.path(), {binary("SPINNER_BIN"), "10"}));
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(folder) != std::string::npos);
    CHECK(r.err.find("writable by group or others") != std::string::npos);
    CHECK(list_dir(folder) == std::vector<std::string>{"planted"});
    struct stat st {};
    REQUIRE(::stat(folder.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0777);  // left as it was
  }

  TEST_CASE("an empty world-writable folder of ours is tightened and used") {
    TempDir dir;
    const std::string folder = dir.file("mine");
    REQUIRE(std::filesystem::create_directory(folder));
    REQUIRE(::chmod(folder.c_str(), 0777) == 0);

    auto r = run_process(
        run_argv(folder, dir.path(), {binary("SPINNER_BIN"), "10"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    struct stat st {};
    REQUIRE(::stat(folder.c_str(), &st) == 0);
    CHECK((st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
    CHECK(file_exists(folder + "/runner.log"));
  }

  TEST_CASE("a profile folder owned by another user is refused") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to chown a folder to nobody");
    TempDir dir;
    const std::string folder = dir.file("theirs");
    REQUIRE(std::filesystem::create_directory(folder));
    REQUIRE(::chown(folder.c_str(), kNobody, kNobody) == 0);

    auto r = run_process(
        run_argv(folder, dir.path(), {binary("SPINNER_BIN"), "10"}));
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(folder + ": owned by uid 65534") != std::string::npos);
    CHECK(list_dir(folder).empty());
  }

  TEST_CASE("a profile folder that is a symlink is refused") {
    TempDir dir;
    const std::string real = dir.file("real");
    const std::string link = dir.file("link");
    REQUIRE(std::filesystem::create_directory(real));
    REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);

    auto r =
        run_process(run_argv(link, dir.path(), {binary("SPINNER_BIN"), "10"}));
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("symbolic link") != std::string::npos);
    CHECK(list_dir(real).empty());
  }

  TEST_CASE("the benchmark's own perf map is copied into the folder") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    PlanterRun run(dir, folder, {"regular"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    REQUIRE(run.pid > 0);
    CHECK(read_text(run.copy_in(folder)) == "1000 10 planted_jit_function\n");
  }

  TEST_CASE("a FIFO at /tmp/perf-<pid>.map does not hang the runner") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    PlanterRun run(dir, folder, {"fifo"});
    INFO(run.result.err);
    REQUIRE(run.pid > 0);
    REQUIRE_FALSE(run.result.timed_out);
    CHECK(run.result.err.find(run.planted() + ": a FIFO") != std::string::npos);
    CHECK_FALSE(file_exists(run.copy_in(folder)));
    CHECK(file_exists(folder + "/perf.metadata"));
  }

  TEST_CASE("a symlink at /tmp/perf-<pid>.map is not followed") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    const std::string secret = dir.file("secret");
    write_text(secret, "secret content\n");
    ::chmod(secret.c_str(), 0600);
    PlanterRun run(dir, folder, {"symlink", secret});
    INFO(run.result.err);
    REQUIRE(run.pid > 0);
    REQUIRE_FALSE(run.result.timed_out);
    CHECK(run.result.err.find(run.planted() + ": is a symbolic link") !=
          std::string::npos);
    CHECK_FALSE(file_exists(run.copy_in(folder)));
  }

  TEST_CASE("a perf map owned by another user is not copied") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root for the benchmark to chown its perf map");
    TempDir dir;
    const std::string folder = dir.file("profile");
    PlanterRun run(dir, folder, {"foreign"});
    INFO(run.result.err);
    REQUIRE(run.pid > 0);
    REQUIRE(run.result.exit_code == 0);
    CHECK(run.result.err.find(run.planted() + ": owned by uid 65534") !=
          std::string::npos);
    CHECK_FALSE(file_exists(run.copy_in(folder)));
  }

  TEST_CASE("runner run puts its temporary files in $TMPDIR") {
    TempDir dir;
    const std::string tmp = dir.file("tmp");
    REQUIRE(std::filesystem::create_directory(tmp));
    CreationWatch watch(tmp);
    REQUIRE(watch.ok());
    ScopedTmpdir tmpdir(tmp);
    PlanterRun run(dir, dir.file("profile"), {"none"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    std::vector<std::string> names = watch.names();
    // The vDSO copy the artifacts are built from.
    CHECK(any_starts_with(names, "runner-vdso."));
    CHECK(list_dir(tmp).empty());  // and removed
  }

  TEST_CASE("runner exec puts its temporary files in $TMPDIR") {
    if (std::getenv("EXEC_HARNESS_BIN") == nullptr)
      RUNNER_SKIP_CASE("exec-harness is not built");
    TempDir dir;
    const std::string tmp = dir.file("tmp");
    REQUIRE(std::filesystem::create_directory(tmp));
    CreationWatch watch(tmp);
    REQUIRE(watch.ok());
    // Passed to the runner only: it replaces any TMPDIR this test inherited.
    auto r = run_process(
        runner_argv(
            "exec", dir.file("profile"), dir.path(),
            {"--allow-no-profile", "--warmup-time", "0", "--max-rounds", "1"},
            {binary("SPINNER_BIN"), "1"}),
        {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN"), "TMPDIR=" + tmp});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The targets handed to exec-harness on its stdin.
    CHECK(any_starts_with(watch.names(), "runner-exec-targets."));
    CHECK(list_dir(tmp).empty());
  }

  TEST_CASE("artifacts lost to a full disk are warned about and fail the run") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("needs root to mount a small tmpfs");
    TempDir dir;
    SmallTmpfs disk(dir.file("disk"), "4m");
    if (!disk.mounted())
      RUNNER_SKIP_CASE(std::string("cannot mount a tmpfs here: ") +
                       std::strerror(disk.error()));
    const std::string folder = dir.file("disk") + "/profile";
    // The benchmark fills the disk before it exits, leaving a little room:
    // the small files fit, the per-module artifacts do not.
    PlanterRun run(dir, folder, {"fill", dir.file("disk"), "48"});
    INFO(run.result.err);
    REQUIRE_FALSE(run.result.timed_out);
    CHECK(run.result.exit_code != 0);
    CHECK(run.result.err.find("warning: artifact not written for /") !=
          std::string::npos);
    CHECK(run.result.err.find("No space left on device") != std::string::npos);
    CHECK(run.result.err.find("could not be written") != std::string::npos);
    // What fit is kept; no temporary file is left behind.
    CHECK(file_exists(folder + "/ExecutionTimestamps.msgpack"));
    for (const auto& name : list_dir(folder))
      CHECK_MESSAGE(name.find(".tmp.") == std::string::npos, name);
  }

  TEST_CASE("report refuses a perf.metadata that links to /dev/zero") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    REQUIRE(std::filesystem::create_directory(folder));
    REQUIRE(::symlink("/dev/zero", (folder + "/perf.metadata").c_str()) == 0);
    // Under a 1 GiB address-space limit: reading /dev/zero must not take
    // the machine's memory before the test can tell.
    auto r = run_process({"/bin/sh", "-c", "ulimit -v 1048576; exec \"$@\"",
                          "sh", binary("RUNNER_BIN"), "report", folder},
                         {}, "", 60);
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.err.find("perf.metadata: is a symbolic link") != std::string::npos);
  }

  TEST_CASE("report on a folder whose perf.pipedata is a FIFO does not hang") {
    TempDir dir;
    const std::string folder = dir.file("profile");
    REQUIRE(std::filesystem::create_directory(folder));
    REQUIRE(::mkfifo((folder + "/perf.pipedata").c_str(), 0644) == 0);
    auto r = run_process({binary("RUNNER_BIN"), "report", folder}, {}, "", 60);
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.err.find(folder + "/perf.pipedata: not a regular file") !=
          std::string::npos);
  }

  TEST_CASE("report --inline on a module that is now a FIFO does not hang") {
    if (perf_events_refused() != 0)
      RUNNER_SKIP_CASE("perf_event_open is refused: no samples to report");
    if (std::getenv("EXEC_HARNESS_BIN") == nullptr)
      RUNNER_SKIP_CASE("exec-harness is not built");
    TempDir dir;
    // A copy of the program, replaced by a FIFO after the run.
    const std::string program = dir.file("inline_spinner");
    std::filesystem::copy_file(binary("INLINE_SPINNER_BIN"), program);
    const std::string folder = dir.file("profile");
    auto r =
        run_process(runner_argv("exec", folder, dir.path(),
                                {"--warmup-time", "0", "--max-rounds", "2"},
                                {program, "200"}),
                    {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(::unlink(program.c_str()) == 0);
    REQUIRE(::mkfifo(program.c_str(), 0644) == 0);

    auto report = run_process({binary("RUNNER_BIN"), "report", "--inline",
                               "--format", "perf-script", folder},
                              {}, "", 60);
    INFO(report.err);
    CHECK_FALSE(report.timed_out);
  }
}
