// base::MountNamespace (+ the SpawnOptions namespace hook) and
// fifo::IsolatedFifos on real files, FIFOs and namespaces in temp dirs: the
// "fixed paths" here are files of the test directory, never /tmp's.
#include "fifo/isolated_fifos.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/mount_namespace.hpp"
#include "fifo/fifo_files.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::base::BindMount;
using runner::base::ChildProcess;
using runner::base::MountNamespace;
using runner::base::SpawnOptions;
using runner::fifo::IsolatedFifos;
using runner::fifo::ServerOptions;
using runner::testing::TempDir;

namespace {

void write_text(const std::string& path, const std::string& text) {
  REQUIRE(runner::base::write_file_atomic(path, text));
}

std::string read_text(const std::string& path) {
  auto text = runner::base::read_file(path);
  REQUIRE(text.has_value());
  return *text;
}

// Why namespaces cannot be tested here ("" when they can).
std::string namespaces_refused() {
  auto ns = MountNamespace::create({});
  return ns ? "" : "no mount namespace here: " + ns.error().what();
}

// Runs `sh -c script` in `ns` with stdout to `out`; returns its exit code.
int run_in(const MountNamespace& ns, const std::string& script,
           const std::string& out) {
  SpawnOptions opts;
  opts.argv = {"sh", "-c", script};
  runner::base::UniqueFd fd(
      ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  opts.stdout_fd = fd.get();
  opts.mount_namespace_fd = ns.mount_fd();
  opts.user_namespace_fd = ns.user_fd();
  auto child = ChildProcess::spawn(opts);
  REQUIRE(child);
  auto status = child->wait();
  REQUIRE(status);
  return status->shell_code();
}

ServerOptions shared_paths(const TempDir& dir) {
  ServerOptions shared;
  shared.ctl_path = dir.file("ctl");
  shared.ack_path = dir.file("ack");
  shared.lock_path = dir.file("lock");
  return shared;
}

bool same_file(const std::string& path, const struct stat& expected) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && st.st_dev == expected.st_dev &&
         st.st_ino == expected.st_ino;
}

}  // namespace

TEST_SUITE("fifo") {
  TEST_CASE("a child in the namespace sees the source at the target") {
    if (auto why = namespaces_refused(); !why.empty()) RUNNER_SKIP_CASE(why);
    TempDir dir;
    write_text(dir.file("inside"), "inside\n");
    write_text(dir.file("target"), "outside\n");
    auto ns =
        MountNamespace::create({{dir.file("inside"), dir.file("target")}});
    REQUIRE_MESSAGE(ns, ns.error().what());
    // The child keeps the caller's working directory (setns resets it).
    char cwd[4096];
    REQUIRE(::getcwd(cwd, sizeof(cwd)) != nullptr);
    REQUIRE(::chdir(dir.path().c_str()) == 0);
    int code = run_in(*ns, "pwd; cat target", dir.file("out"));
    REQUIRE(::chdir(cwd) == 0);
    CHECK(code == 0);
    CHECK(read_text(dir.file("out")) == dir.path() + "\ninside\n");
    CHECK(read_text(dir.file("target")) == "outside\n");  // not here
  }

  TEST_CASE("a symlink target is refused, never followed") {
    if (auto why = namespaces_refused(); !why.empty()) RUNNER_SKIP_CASE(why);
    TempDir dir;
    write_text(dir.file("inside"), "inside\n");
    write_text(dir.file("victim"), "victim\n");
    REQUIRE(::symlink(dir.file("victim").c_str(), dir.file("link").c_str()) ==
            0);
    auto ns = MountNamespace::create({{dir.file("inside"), dir.file("link")}});
    REQUIRE_FALSE(ns);
    CHECK(ns.error().what().find(dir.file("link") + " is a symlink") !=
          std::string::npos);
  }

  TEST_CASE("placeholders are shared, and removed by the last runner out") {
    TempDir dir;
    ServerOptions shared = shared_paths(dir);
    auto a = IsolatedFifos::create(shared);
    REQUIRE_MESSAGE(a, a.error().what());
    struct stat ctl {};
    REQUIRE(::lstat(shared.ctl_path.c_str(), &ctl) == 0);
    CHECK(S_ISFIFO(ctl.st_mode));
    CHECK((ctl.st_mode & 07777) == runner::fifo::kPlaceholderMode);
    auto b = IsolatedFifos::create(shared);
    REQUIRE_MESSAGE(b, b.error().what());
    CHECK(same_file(shared.ctl_path, ctl));  // the same placeholder
    CHECK((*a)->directory() != (*b)->directory());
    struct stat dir_st {};
    REQUIRE(::stat((*a)->directory().c_str(), &dir_st) == 0);
    CHECK((dir_st.st_mode & 07777) == 0700);
    runner::base::UniqueFd exclusive;
    CHECK(runner::fifo::in_use_as_bind_target(shared.ctl_path, ctl, exclusive));
    const std::string a_dir = (*a)->directory();
    a->reset();
    CHECK(same_file(shared.ctl_path, ctl));  // b still binds over it
    b->reset();
    struct stat st {};
    CHECK(::lstat(shared.ctl_path.c_str(), &st) != 0);
    CHECK(::lstat(shared.ack_path.c_str(), &st) != 0);
    CHECK(::lstat(a_dir.c_str(), &st) != 0);  // private directory removed
  }

  TEST_CASE("a shared-path server leaves a FIFO another runner binds over") {
    TempDir dir;
    ServerOptions shared = shared_paths(dir);
    REQUIRE(::mkfifo(shared.ctl_path.c_str(), 0600) == 0);  // a stale FIFO
    struct stat ctl {};
    REQUIRE(::lstat(shared.ctl_path.c_str(), &ctl) == 0);
    auto isolated = IsolatedFifos::create(shared);
    REQUIRE_MESSAGE(isolated, isolated.error().what());
    CHECK(same_file(shared.ctl_path, ctl));  // used as it is
    auto files = runner::fifo::FifoFiles::create(shared);
    REQUIRE_FALSE(files);
    CHECK(files.error().what().find("binds over it") != std::string::npos);
    CHECK(same_file(shared.ctl_path, ctl));  // not unlinked
    isolated->reset();
    CHECK(same_file(shared.ctl_path, ctl));  // not a placeholder: it stays
    auto after = runner::fifo::FifoFiles::create(shared);
    CHECK_MESSAGE(after, after.error().what());  // nobody binds over it now
  }

  TEST_CASE("a client in the namespace writes to the fixed path, we read it") {
    if (auto why = namespaces_refused(); !why.empty()) RUNNER_SKIP_CASE(why);
    TempDir dir;
    ServerOptions shared = shared_paths(dir);
    auto isolated = IsolatedFifos::create(shared);
    REQUIRE_MESSAGE(isolated, isolated.error().what());
    auto files =
        runner::fifo::FifoFiles::create((*isolated)->private_options());
    REQUIRE_MESSAGE(files, files.error().what());
    auto ns = (*isolated)->make_namespace();
    REQUIRE_MESSAGE(ns, ns.error().what());
    CHECK(run_in(*ns, "printf hello > '" + shared.ctl_path + "'",
                 dir.file("out")) == 0);
    runner::base::UniqueFd ctl = (*files)->take_ctl_fd();
    char buf[16] = {};
    CHECK(::read(ctl.get(), buf, sizeof(buf)) == 5);
    CHECK(std::string(buf) == "hello");
    // Outside the namespace the fixed path is still the placeholder.
    struct stat st {};
    REQUIRE(::lstat(shared.ctl_path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == runner::fifo::kPlaceholderMode);
  }
}

namespace {

// A private directory as a runner leaves it: runner-fifos.XXXXXX (0700)
// with its server's FIFOs and lock, made by a child process that holds the
// lock until it is killed (kill_it) or the test ends.
class RunnerDir {
 public:
  RunnerDir(const TempDir& parent, bool kill_it) {
    std::string tmpl = parent.file("runner-fifos.XXXXXX");
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ServerOptions options;
      options.ctl_path = path + "/runner.ctl.fifo";
      options.ack_path = path + "/runner.ack.fifo";
      options.lock_path = path + "/runner.fifo.lock";
      auto files = runner::fifo::FifoFiles::create(options);
      char ok = files ? 1 : 0;
      (void)!::write(ready[1], &ok, 1);
      ::pause();
      _exit(0);
    }
    ::close(ready[1]);
    char ok = 0;
    REQUIRE(::read(ready[0], &ok, 1) == 1);
    ::close(ready[0]);
    REQUIRE(ok == 1);
    if (kill_it) stop();
  }
  ~RunnerDir() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string path;

 private:
  pid_t pid_ = -1;
};

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void age(const std::string& path, int seconds) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

}  // namespace

TEST_CASE("fifo: private directories of killed runners are removed") {
  TempDir dir;
  RunnerDir killed(dir, /*kill_it=*/true);
  RunnerDir running(dir, /*kill_it=*/false);
  // Killed during setup, before its server made the lock: old, or new.
  const std::string unlocked_old = dir.file("runner-fifos.oldnol");
  const std::string unlocked_new = dir.file("runner-fifos.newnol");
  REQUIRE(::mkdir(unlocked_old.c_str(), 0700) == 0);
  REQUIRE(::mkdir(unlocked_new.c_str(), 0700) == 0);
  age(unlocked_old, 3600);
  // Not ours to remove: open to others, a symlink to an orphan, something
  // that is no runner's directory.
  RunnerDir open_to_others(dir, /*kill_it=*/true);
  REQUIRE(::chmod(open_to_others.path.c_str(), 0755) == 0);
  TempDir elsewhere;
  RunnerDir linked(elsewhere, /*kill_it=*/true);
  const std::string link = dir.file("runner-fifos.linkxx");
  REQUIRE(::symlink(linked.path.c_str(), link.c_str()) == 0);
  const std::string with_subdir = dir.file("runner-fifos.subdir");
  REQUIRE(::mkdir(with_subdir.c_str(), 0700) == 0);
  REQUIRE(::mkdir((with_subdir + "/keep").c_str(), 0700) == 0);
  age(with_subdir, 3600);

  runner::fifo::remove_orphaned_directories(dir.path());
  CHECK_FALSE(exists(killed.path));
  CHECK_FALSE(exists(unlocked_old));
  CHECK(exists(running.path + "/runner.fifo.lock"));
  CHECK(exists(running.path + "/runner.ctl.fifo"));
  CHECK(exists(unlocked_new));
  CHECK(exists(open_to_others.path + "/runner.fifo.lock"));
  CHECK(exists(link));
  CHECK(exists(linked.path + "/runner.fifo.lock"));
  CHECK(exists(with_subdir + "/keep"));
}
