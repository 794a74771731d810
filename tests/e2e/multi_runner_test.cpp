// End-to-end tests of several runners on one machine and of a squatted lock
// path with the real binary on CodSpeed's fixed paths
// /tmp/runner.{ctl,ack}.fifo and the lock /tmp/runner.fifo.lock: these
// paths are the product's, not test files, so the cases below refuse to run
// when something already sits there (a runner outside the test lock).
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/shared_dir.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::file_exists;
using runner::testing::ProcessResult;
using runner::testing::read_json_file;
using runner::testing::read_msgpack_file;
using runner::testing::run_process;
using runner::testing::TempDir;

namespace {

constexpr const char* kCtl = "/tmp/runner.ctl.fifo";
constexpr const char* kAck = "/tmp/runner.ack.fifo";
constexpr const char* kLock = "/tmp/runner.fifo.lock";
constexpr uid_t kNobody = 65534;

bool exists_nofollow(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0;
}

// Whether this process may give a child a mount namespace (directly, or in
// a user namespace of its own), probed in a throwaway child.
bool namespaces_allowed() {
  pid_t pid = ::fork();
  if (pid == 0) {
    bool ok = ::unshare(CLONE_NEWNS) == 0 ||
              ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string nobody_name() {
  struct passwd* pw = ::getpwuid(kNobody);
  return pw != nullptr ? pw->pw_name : "";
}

// True when some process holds the fixed lock file's lock (a runner is on
// the fixed paths).
bool lock_held_now() {
  runner::base::UniqueFd fd(::open(kLock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  return ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

// Why the fixed paths cannot be used by this test now ("" when they can).
std::string fixed_paths_busy() {
  for (const char* path : {kCtl, kAck, kLock}) {
    if (exists_nofollow(path))
      return std::string(path) + " exists (a runner outside the test lock?)";
  }
  return "";
}

// `runner run` on the default (fixed) paths: no --fifo-dir.
std::vector<std::string> run_fixed(const std::string& folder,
                                   const std::vector<std::string>& extra,
                                   const std::vector<std::string>& command) {
  std::vector<std::string> argv = {binary("RUNNER_BIN"), "run",
                                   "--profile-folder", folder};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// sh: touch DIR/<me>, wait (at most 20 s) for DIR/<other>, then exec the
// benchmark: both runners are up, with their FIFOs served, at once.
std::vector<std::string> after_barrier(const std::string& dir,
                                       const std::string& me,
                                       const std::string& other,
                                       std::vector<std::string> command) {
  std::vector<std::string> argv = {
      "sh",
      "-c",
      "touch \"$1/$2\"; i=0; while [ ! -e \"$1/$3\" ] && [ $i -lt 2000 ]; "
      "do sleep 0.01; i=$((i+1)); done; shift 3; exec \"$@\"",
      "sh",
      dir,
      me,
      other};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> uris_of(const std::string& folder) {
  auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
  std::vector<std::string> uris;
  for (const auto& e : ts["uri_by_ts"]) uris.push_back(e[1]);
  return uris;
}

// Pids of the samples in the folder (runner report --format perf-script).
std::set<int> sample_pids(const std::string& folder) {
  auto r = run_process(
      {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::set<int> pids;
  for (const auto& s : runner::testing::parse_perf_script(r.out))
    pids.insert(s.pid);
  return pids;
}

// One profiled run's own benchmarks, samples and results: everything in
// `folder` comes from this run's processes, and nothing from `other`.
void check_own_run(const std::string& folder, const ProcessResult& r,
                   const std::string& uri_prefix, const std::string& other) {
  INFO(folder, r.err);
  REQUIRE(r.exit_code == 0);
  auto uris = uris_of(folder);
  REQUIRE_FALSE(uris.empty());
  for (const auto& uri : uris) CHECK(uri.rfind(uri_prefix, 0) == 0);
  auto meta = read_json_file(folder + "/perf.metadata");
  auto other_meta = read_json_file(other + "/perf.metadata");
  CHECK(meta["runner"]["samples"].get<uint64_t>() > 0);
  std::set<int> announced, other_announced;
  for (const auto& p : meta["runner"]["announced_pids"])
    announced.insert(p.get<int>());
  for (const auto& p : other_meta["runner"]["announced_pids"])
    other_announced.insert(p.get<int>());
  REQUIRE_FALSE(announced.empty());
  for (int pid : announced) CHECK(other_announced.count(pid) == 0);
  // The results file is named after an announced pid of this run.
  auto results = runner::testing::list_dir(folder + "/results");
  REQUIRE(results.size() == 1);
  CHECK(announced.count(std::stoi(results[0])) == 1);
  // Samples: this run's announced pids are sampled, the other run's never.
  auto pids = sample_pids(folder);
  bool sampled_announced = false;
  for (int pid : announced) sampled_announced |= pids.count(pid) == 1;
  CHECK(sampled_announced);
  for (int pid : other_announced) CHECK(pids.count(pid) == 0);
}

// The runners' private FIFO directories under `tmpdir` are all gone.
void check_no_private_dirs(const std::string& tmpdir) {
  for (const auto& name : runner::testing::list_dir(tmpdir))
    CHECK_MESSAGE(name.rfind("runner-fifos.", 0) != 0, (tmpdir + "/" + name));
}

// Plants `path` owned by nobody: a regular file, or a symlink to `target`.
void plant_as_nobody(const char* path, const std::string& symlink_target) {
  if (symlink_target.empty()) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::fchown(fd, kNobody, kNobody) == 0);
    ::close(fd);
  } else {
    REQUIRE(::symlink(symlink_target.c_str(), path) == 0);
    REQUIRE(::lchown(path, kNobody, kNobody) == 0);
  }
}

// Runs `probe` in a child switched to nobody; true when it returns true.
template <typename Probe>
bool as_nobody(Probe probe) {
  pid_t pid = ::fork();
  if (pid == 0) {
    bool ok = ::setgroups(0, nullptr) == 0 &&
              ::setresgid(kNobody, kNobody, kNobody) == 0 &&
              ::setresuid(kNobody, kNobody, kNobody) == 0 && probe();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Copies a built binary into `dir` (mode 0755) and returns its new path.
std::string copy_binary(const char* var, const std::string& dir) {
  const std::string from = binary(var);
  const std::string to = dir + "/" + from.substr(from.rfind('/') + 1);
  std::filesystem::copy_file(from, to);
  std::filesystem::permissions(to, std::filesystem::perms(0755));
  return to;
}

// The binaries copied where nobody can run them, a home nobody owns, and a
// way to run the runner as nobody there.
struct NobodyTools {
  runner::testing::SharedDir dir;
  std::string bin = dir.path() + "/bin", home = dir.path() + "/home";
  std::string runner, example, mp_bench, child_prog;
  std::string skip;  // why nobody cannot run them here ("" when it can)

  NobodyTools() {
    if (dir.path().empty()) {
      skip = dir.why();
      return;
    }
    if (!as_nobody([&] { return ::access(dir.path().c_str(), X_OK) == 0; })) {
      skip = "nobody cannot reach " + dir.path();
      return;
    }
    std::filesystem::create_directory(bin);
    std::filesystem::create_directory(home);
    std::filesystem::permissions(bin, std::filesystem::perms(0755));
    REQUIRE(::chown(home.c_str(), kNobody, kNobody) == 0);
    runner = copy_binary("RUNNER_BIN", bin);
    example = copy_binary("EXAMPLE_BIN", bin);
    mp_bench = copy_binary("MP_BENCH_BIN", bin);
    child_prog = copy_binary("CHILD_PROG_BIN", bin);
  }

  // `runner ARGS...` as nobody, with TMPDIR and HOME in its home, started
  // in `cwd` (default: this process's).
  ProcessResult run(const std::vector<std::string>& args,
                    const std::string& cwd = "") const {
    std::vector<std::string> argv = {
        "setpriv", "--reuid=65534",  "--regid=65534", "--clear-groups",
        "env",     "TMPDIR=" + home, "HOME=" + home,  runner};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, {}, cwd);
  }
};

// Runs argv as nobody where neither a mount namespace nor a user namespace
// may be made: in a user namespace of ours (uids 0..65534 mapped onto
// themselves) whose max_user_namespaces is 0, switched to nobody. Stdout
// and stderr go to files of `dir` (writable by nobody).
ProcessResult run_without_namespaces(const std::vector<std::string>& argv,
                                     const std::string& dir,
                                     const std::string& tag,
                                     int timeout_s = 120) {
  const std::string out = dir + "/" + tag + ".out";
  const std::string err = dir + "/" + tag + ".err";
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int to_parent[2], to_child[2];
  REQUIRE(::pipe(to_parent) == 0);
  REQUIRE(::pipe(to_child) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    char byte = 0;
    if (::unshare(CLONE_NEWUSER) != 0) _exit(120);
    if (::write(to_parent[1], &byte, 1) != 1) _exit(121);
    if (::read(to_child[0], &byte, 1) != 1) _exit(122);  // maps written
    int limit = ::open("/proc/sys/user/max_user_namespaces", O_WRONLY);
    if (limit < 0 || ::write(limit, "0\n", 2) != 2) _exit(123);
    ::close(limit);
    if (::setgroups(0, nullptr) != 0 ||
        ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0)
      _exit(124);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(125);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execv(args[0], args.data());
    _exit(126);
  }
  char byte = 0;
  REQUIRE(::read(to_parent[0], &byte, 1) == 1);
  for (const char* map : {"uid_map", "gid_map"}) {
    std::string path = "/proc/" + std::to_string(pid) + "/" + map;
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "0 0 65535\n", 10) == 10);
    ::close(fd);
  }
  REQUIRE(::write(to_child[1], &byte, 1) == 1);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]})
    ::close(fd);
  ProcessResult result;
  int status = 0;
  for (int i = 0; i < timeout_s * 100; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (i + 1 == timeout_s * 100) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = runner::base::read_file(out).value_or("");
  result.err = runner::base::read_file(err).value_or("");
  return result;
}

// Removes what the test planted, whatever the runner did with it.
struct Unplant {
  const char* path;
  ~Unplant() { ::unlink(path); }
};

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("two runners at once on the fixed FIFO paths") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (!namespaces_allowed())
      RUNNER_SKIP_CASE(
          "no mount namespace here (not root, no user namespaces): "
          "runners take turns on the fixed paths");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    TempDir dir;
    const std::string a = dir.file("a"), b = dir.file("b");
    ProcessResult ra, rb;
    std::thread ta([&] {
      ra = run_process(
          run_fixed(a, {},
                    after_barrier(dir.path(), "a.up", "b.up",
                                  {binary("MP_BENCH_BIN"),
                                   binary("CHILD_PROG_BIN"), "200"})),
          {"TMPDIR=" + dir.path()});
    });
    std::thread tb([&] {
      rb = run_process(
          run_fixed(b, {},
                    after_barrier(dir.path(), "b.up", "a.up",
                                  {binary("EXAMPLE_BIN"), "--rounds", "2"})),
          {"TMPDIR=" + dir.path()});
    });
    ta.join();
    tb.join();
    check_own_run(a, ra, "tests/e2e/programs/", b);
    check_own_run(b, rb, "integrations/examples/bench_example.cpp::", a);
    check_no_private_dirs(dir.path());
    // The last runner out removed the placeholders it bound over; no lock.
    // A runner started meanwhile outside the test (it holds the lock now)
    // owns whatever lies there.
    if (lock_held_now()) {
      MESSAGE(
          "SKIP the fixed paths after the run: a runner outside the "
          "test holds "
          << kLock);
    } else {
      CHECK_FALSE(exists_nofollow(kCtl));
      CHECK_FALSE(exists_nofollow(kAck));
      CHECK_FALSE(exists_nofollow(kLock));
    }
  }

  TEST_CASE("a lock file squatted by another user names its owner") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to plant a file owned by nobody");
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    TempDir dir;
    plant_as_nobody(kLock, "");
    Unplant unplant{kLock};
    const std::vector<std::string> bench = {binary("EXAMPLE_BIN"), "--rounds",
                                            "1"};
    // The shared paths under the lock: refused, naming who squats it.
    auto shared =
        run_process(run_fixed(dir.file("p1"), {"--shared-fifos"}, bench));
    INFO(shared.err);
    CHECK(shared.exit_code == 1);
    CHECK(shared.err.find("owned by uid 65534") != std::string::npos);
    if (!nobody_name().empty())
      CHECK(shared.err.find("(" + nobody_name() + ")") != std::string::npos);
    CHECK(shared.err.find("--fifo-dir") != std::string::npos);
    // A run with its own FIFO directory is not blocked.
    auto own_dir =
        run_process({binary("RUNNER_BIN"), "run", "--profile-folder",
                     dir.file("p2"), "--fifo-dir", dir.path(), "--shared-fifos",
                     "--", bench[0], bench[1], bench[2]});
    INFO(own_dir.err);
    CHECK(own_dir.exit_code == 0);
    // Nor is a run whose benchmark gets its own mount namespace (the lock
    // only guards the shared paths).
    if (!namespaces_allowed())
      RUNNER_SKIP_CASE("no mount namespace here for the last step");
    auto isolated = run_process(run_fixed(dir.file("p3"), {}, bench));
    INFO(isolated.err);
    CHECK(isolated.exit_code == 0);
    CHECK(uris_of(dir.file("p3")).size() == 3);
    struct stat st {};
    REQUIRE(::lstat(kLock, &st) == 0);  // left alone: it is not ours
    CHECK(st.st_uid == kNobody);
  }

  TEST_CASE("a symlink planted at the lock path by another user") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to plant a symlink owned by nobody");
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    TempDir dir;
    // The symlink points at a root-only file that must stay untouched.
    const std::string victim = dir.file("victim");
    {
      int fd = ::open(victim.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      REQUIRE(fd >= 0);
      REQUIRE(::write(fd, "secret\n", 7) == 7);
      ::close(fd);
    }
    const std::vector<std::string> bench = {binary("EXAMPLE_BIN"), "--rounds",
                                            "1"};
    // Namespace mode: the lock path is not even looked at.
    plant_as_nobody(kLock, victim);
    Unplant unplant{kLock};
    auto isolated = run_process(run_fixed(dir.file("p1"), {}, bench));
    INFO(isolated.err);
    CHECK(isolated.exit_code == 0);
    // Shared paths: root removes the symlink, saying whose it was.
    auto shared =
        run_process(run_fixed(dir.file("p2"), {"--shared-fifos"}, bench));
    INFO(shared.err);
    CHECK(shared.exit_code == 0);
    CHECK(shared.err.find("removed a symlink planted at the lock path") !=
          std::string::npos);
    CHECK(shared.err.find("by uid 65534") != std::string::npos);
    if (!nobody_name().empty())
      CHECK(shared.err.find("(" + nobody_name() + ")") != std::string::npos);
    struct stat st {};
    REQUIRE(::stat(victim.c_str(), &st) == 0);
    CHECK(st.st_size == 7);
    CHECK(st.st_uid == 0);
    CHECK_FALSE(exists_nofollow(kLock));
  }

  TEST_CASE("symlinks planted at the fixed FIFO paths are not bind targets") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to plant symlinks owned by nobody");
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    TempDir dir;
    const std::string victim = dir.file("victim");
    {
      int fd = ::open(victim.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      REQUIRE(fd >= 0);
      ::close(fd);
    }
    plant_as_nobody(kCtl, victim);
    Unplant unplant_ctl{kCtl};
    plant_as_nobody(kAck, victim);
    Unplant unplant_ack{kAck};
    auto r = run_process(
        run_fixed(dir.file("p"), {}, {binary("EXAMPLE_BIN"), "--rounds", "1"}));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(uris_of(dir.file("p")).size() == 3);
    CHECK(r.err.find("removed a symlink planted at /tmp/runner.ctl.fifo by "
                     "uid 65534") != std::string::npos);
    struct stat st {};
    REQUIRE(::lstat(victim.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(st.st_size == 0);
  }

  TEST_CASE("an unprivileged runner started where it cannot reach by path") {
    // make test from a checkout in a 0700 directory: nobody's working
    // directory is one whose path it may not search. The benchmark, in its
    // own mount namespace, keeps that directory as it would without one.
    if (::geteuid() != 0) RUNNER_SKIP_CASE("needs root to switch to nobody");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    if (!as_nobody([] { return runner::testing::perf_events_refused() == 0; }))
      RUNNER_SKIP_CASE("nobody may not open perf events here");
    if (!as_nobody([] { return ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0; }))
      RUNNER_SKIP_CASE("unprivileged user namespaces are disabled here");
    NobodyTools tools;
    if (!tools.skip.empty()) RUNNER_SKIP_CASE(tools.skip);
    const std::string locked = tools.dir.path() + "/locked";
    const std::string cwd = locked + "/cwd";
    REQUIRE(::mkdir(locked.c_str(), 0700) == 0);
    REQUIRE(::mkdir(cwd.c_str(), 0755) == 0);
    REQUIRE(::chown(cwd.c_str(), kNobody, kNobody) == 0);
    const std::string folder = tools.home + "/p";
    auto r = tools.run(
        {"run", "--profile-folder", folder, "--", "/bin/sh", "-c",
         ": > ran_here; exec \"$1\" --rounds 1", tools.home, tools.example},
        cwd);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("own mount namespace") == std::string::npos);
    // (Its getcwd() fails there, as the path is not searchable.)
    CHECK(file_exists(cwd + "/ran_here"));
    CHECK(uris_of(folder).size() == 3);
  }

  TEST_CASE("two unprivileged runners at once, each in a user namespace") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("needs root to switch to nobody");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    if (!as_nobody([] { return runner::testing::perf_events_refused() == 0; }))
      RUNNER_SKIP_CASE("nobody may not open perf events here");
    if (!as_nobody([] { return ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0; }))
      RUNNER_SKIP_CASE(
          "unprivileged user namespaces are disabled: runners of ordinary "
          "users take turns under the lock");
    NobodyTools tools;
    if (!tools.skip.empty()) RUNNER_SKIP_CASE(tools.skip);
    const std::string& home = tools.home;
    auto as_nobody_run = [&](const std::string& folder,
                             std::vector<std::string> command) {
      std::vector<std::string> args = {"run", "--profile-folder", folder, "--"};
      args.insert(args.end(), command.begin(), command.end());
      return tools.run(args);
    };
    const std::string a = home + "/a", b = home + "/b";
    ProcessResult ra, rb;
    std::thread ta([&] {
      ra = as_nobody_run(
          a, after_barrier(home, "a.up", "b.up",
                           {tools.mp_bench, tools.child_prog, "200"}));
    });
    std::thread tb([&] {
      rb = as_nobody_run(b, after_barrier(home, "b.up", "a.up",
                                          {tools.example, "--rounds", "2"}));
    });
    ta.join();
    tb.join();
    check_own_run(a, ra, "tests/e2e/programs/", b);
    check_own_run(b, rb, "integrations/examples/bench_example.cpp::", a);
    check_no_private_dirs(home);
    CHECK(ra.err.find("own mount namespace") == std::string::npos);
    CHECK(rb.err.find("own mount namespace") == std::string::npos);
    CHECK_FALSE(exists_nofollow(kCtl));
    CHECK_FALSE(exists_nofollow(kAck));
    CHECK_FALSE(exists_nofollow(kLock));
  }

  TEST_CASE("as an ordinary user, another user's symlink at the lock path") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("needs root to switch to nobody");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    if (!as_nobody([] { return runner::testing::perf_events_refused() == 0; }))
      RUNNER_SKIP_CASE("nobody may not open perf events here");
    NobodyTools tools;
    if (!tools.skip.empty()) RUNNER_SKIP_CASE(tools.skip);
    // Planted by root: nobody may not remove it from the sticky /tmp.
    REQUIRE(::symlink(tools.home.c_str(), kLock) == 0);
    Unplant unplant{kLock};
    auto shared =
        tools.run({"run", "--shared-fifos", "--profile-folder",
                   tools.home + "/p1", "--", tools.example, "--rounds", "1"});
    INFO(shared.err);
    CHECK(shared.exit_code == 1);
    CHECK(shared.err.find("a symlink planted by uid 0") != std::string::npos);
    CHECK(shared.err.find("--fifo-dir") != std::string::npos);
    struct stat st {};
    CHECK(::lstat(kLock, &st) == 0);
    // Its own FIFO directory: not blocked.
    auto own_dir = tools.run({"run", "--shared-fifos", "--fifo-dir", tools.home,
                              "--profile-folder", tools.home + "/p2", "--",
                              tools.example, "--rounds", "1"});
    INFO(own_dir.err);
    CHECK(own_dir.exit_code == 0);
  }

  TEST_CASE(
      "without namespaces: the shared paths under the lock, holder named") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to make a user namespace without them");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    if (!as_nobody([] { return runner::testing::perf_events_refused() == 0; }))
      RUNNER_SKIP_CASE("nobody may not open perf events here");
    NobodyTools tools;
    if (!tools.skip.empty()) RUNNER_SKIP_CASE(tools.skip);
    const std::string& home = tools.home;
    // A: nobody without namespaces falls back to the shared paths and holds
    // the lock until the test releases its benchmark.
    ProcessResult ra;
    std::thread ta([&] {
      ra = run_without_namespaces(
          {"/usr/bin/env", "TMPDIR=" + home, tools.runner, "run",
           "--profile-folder", home + "/a", "--", "/bin/sh", "-c",
           "touch \"$0/a.up\"; i=0; while [ ! -e \"$0/release\" ] && "
           "[ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; exec \"$1\" "
           "--rounds 1",
           home, tools.example},
          home, "a");
    });
    for (int i = 0; i < 3000 && !file_exists(home + "/a.up"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(file_exists(home + "/a.up"));
    const std::vector<std::string> bench = {binary("EXAMPLE_BIN"), "--rounds",
                                            "1"};
    // B: root on the shared paths too: refused, naming A's pid and user.
    TempDir dir;
    auto rb = run_process(run_fixed(dir.file("b"), {"--shared-fifos"}, bench));
    // C: root with its own mount namespace runs meanwhile, over A's FIFOs.
    auto rc = run_process(run_fixed(dir.file("c"), {}, bench));
    runner::base::UniqueFd release(::open(
        (home + "/release").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    ta.join();
    INFO("A: ", ra.err);
    INFO("B: ", rb.err);
    INFO("C: ", rc.err);
    CHECK(ra.exit_code == 0);
    CHECK(ra.err.find("cannot have its own mount namespace") !=
          std::string::npos);
    CHECK(ra.err.find("under the lock /tmp/runner.fifo.lock") !=
          std::string::npos);
    CHECK(uris_of(home + "/a").size() == 3);
    check_no_private_dirs(home);  // even the one made before falling back
    CHECK(rb.exit_code == 1);
    CHECK(rb.err.find("another runner (pid ") != std::string::npos);
    CHECK(rb.err.find("uid 65534") != std::string::npos);
    CHECK(rc.exit_code == 0);
    CHECK(uris_of(dir.file("c")).size() == 3);
    CHECK_FALSE(exists_nofollow(kCtl));
    CHECK_FALSE(exists_nofollow(kAck));
    CHECK_FALSE(exists_nofollow(kLock));
  }

  TEST_CASE("a TMPDIR that names no directory keeps the private FIFOs") {
    // Like every other temporary file, the private FIFO directory goes to
    // /tmp when TMPDIR names no directory; a stray TMPDIR must not put the
    // run on the shared paths under the lock.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    if (!namespaces_allowed())
      RUNNER_SKIP_CASE("no mount namespace here: no private FIFOs to keep");
    if (auto busy = fixed_paths_busy(); !busy.empty()) RUNNER_SKIP_CASE(busy);
    TempDir dir;
    auto r = run_process(
        run_fixed(dir.file("p"), {}, {binary("EXAMPLE_BIN"), "--rounds", "1"}),
        {"TMPDIR=" + dir.file("missing")});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("cannot have its own mount namespace") ==
          std::string::npos);
    CHECK(uris_of(dir.file("p")).size() == 3);
    CHECK_FALSE(exists_nofollow(kLock));
  }
}
