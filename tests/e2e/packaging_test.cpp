// The install paths and the Makefile's promises, on the real files of the
// repository: one version (meson's project version) in debian/changelog,
// `runner --version` and the man pages;
// the Makefile's build packages are debian/control's Build-Depends; `make
// deps`, `make test-deps` and `make deb` install only what is missing, as
// root directly, through sudo otherwise, and without sudo print the
// apt-get command to run as root and fail (apt-get, sudo, id and dpkg-query
// are stand-ins on a PATH of their own); `make deb` installs the build
// dependencies only; `make demo` builds only what it runs; `make install`
// puts what a user needs under DESTDIR.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace runner::testing;

namespace {

std::string source_root() { return binary("SOURCE_ROOT"); }

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::set<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

// The absolute path of a program of the test machine's PATH.
std::string which(const std::string& name) {
  auto r = run_process({"/bin/sh", "-c", "command -v " + name});
  REQUIRE_MESSAGE(r.exit_code == 0, (name + " is not installed"));
  return r.out.substr(0, r.out.find('\n'));
}

// A variable of the Makefile, as make expands it.
std::string make_variable(const std::string& name) {
  auto r = run_process(
      {which("make"), "-s", "--no-print-directory", "-C", source_root(),
       "--eval=print-it: ; @echo $(" + name + ")", "print-it"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return r.out;
}

// debian/control's Build-Depends, package names only.
std::set<std::string> build_depends() {
  std::istringstream in(file_text(source_root() + "/debian/control"));
  std::string field, line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("Build-Depends:", 0) == 0) {
      inside = true;
      field += line.substr(14);
    } else if (inside && !line.empty() && line[0] == ' ') {
      field += line;
    } else {
      inside = false;
    }
  }
  std::set<std::string> names;
  std::istringstream items(field);
  for (std::string item; std::getline(items, item, ',');) {
    std::istringstream name(item);
    std::string n;
    if (name >> n) names.insert(n);
  }
  return names;
}

void write_executable(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
}

// A PATH holding only what the Makefile's install step runs: stand-ins for
// id (FAKE_UID), dpkg-query (FAKE_INSTALLED lists what is installed),
// apt-get (logs to FAKE_LOG) and, when with_sudo, sudo (logs and runs);
// the real grep and env.
std::string fake_path(const TempDir& dir, bool with_sudo) {
  const std::string bin = dir.file(with_sudo ? "sudo-bin" : "bin");
  if (fs::exists(bin)) return bin;
  fs::create_directories(bin);
  write_executable(bin + "/id", "#!/bin/sh\necho \"$FAKE_UID\"\n");
  write_executable(bin + "/dpkg-query", R"sh(#!/bin/sh
for p; do :; done
case " $FAKE_INSTALLED " in
  *" $p "*) printf 'install ok installed' ;;
  *) exit 1 ;;
esac
)sh");
  write_executable(bin + "/apt-get",
                   "#!/bin/sh\necho \"apt-get $*\" >> \"$FAKE_LOG\"\n");
  if (with_sudo)
    write_executable(bin + "/sudo",
                     "#!/bin/sh\necho \"sudo $1\" >> \"$FAKE_LOG\"\n"
                     "exec \"$@\"\n");
  fs::create_symlink(which("grep"), bin + "/grep");
  fs::create_symlink(which("env"), bin + "/env");
  return bin;
}

struct MakeRun {
  ProcessResult result;
  std::string log;  // what sudo and apt-get were asked
};

MakeRun run_make(const TempDir& dir, const std::vector<std::string>& args,
                 const std::string& uid, bool with_sudo,
                 const std::string& installed) {
  std::vector<std::string> argv = {which("make"), "--no-print-directory", "-C",
                                   source_root()};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir.file(with_sudo ? "sudo.log" : "log");
  MakeRun run;
  run.result =
      run_process(argv, {"PATH=" + fake_path(dir, with_sudo), "FAKE_UID=" + uid,
                         "FAKE_INSTALLED=" + installed, "FAKE_LOG=" + log});
  run.log = file_text(log);
  return run;
}

// The apt-get command the Makefile tells a user without sudo to run.
std::string printed_command(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex("apt-get install -y [^\n]*")))
    return "";
  return m[0];
}

// The prefix the build folder was set up with.
std::string build_prefix(const std::string& build) {
  auto r = run_process({which("meson"), "introspect", build, "--buildoptions"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const auto& o : nlohmann::json::parse(r.out))
    if (o["name"] == "prefix") return o["value"].get<std::string>();
  FAIL("no prefix in the build options");
  return "";
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("one version: meson's, debian/changelog's and the man page's") {
    const std::string version = binary("RUNNER_PROJECT_VERSION");
    std::istringstream changelog(
        file_text(source_root() + "/debian/changelog"));
    std::string first;
    std::getline(changelog, first);
    std::smatch m;
    REQUIRE(std::regex_search(
        first, m, std::regex(R"(^runner \(([^()-]+)(-[0-9]+)?\))")));
    CHECK(m[1] == version);
    auto printed = run_process({binary("RUNNER_BIN"), "--version"});
    CHECK(printed.out == "runner " + version + "\n");
    for (const char* page :
         {"/packaging/runner.1", "/packaging/exec-harness.1"})
      CHECK_MESSAGE(contains(file_text(source_root() + page),
                             "\"runner " + version + "\""),
                    page);
  }

  TEST_CASE("the Makefile builds with debian/control's Build-Depends") {
    std::set<std::string> wanted = build_depends();
    REQUIRE(wanted.count("debhelper-compat") == 1);
    wanted.erase("debhelper-compat");
    CHECK(words(make_variable("BUILD_PACKAGES")) == wanted);
    // What only the tests need is not a build dependency.
    const std::set<std::string> tests = words(make_variable("TEST_PACKAGES"));
    for (const char* p : {"chromium", "clang-tidy", "clang", "linux-perf"}) {
      CHECK_MESSAGE(tests.count(p) == 1, p);
      CHECK_MESSAGE(wanted.count(p) == 0, p);
    }
  }

  TEST_CASE("missing packages, not root, no sudo: the command to run as root") {
    TempDir dir;
    auto run = run_make(dir, {"deps", "BUILD_PACKAGES=libfoo-dev bar"}, "1000",
                        false, "bar");
    INFO(run.result.out, run.result.err);
    CHECK(run.result.exit_code != 0);
    CHECK(printed_command(run.result.err) ==
          "apt-get install -y --no-install-recommends libfoo-dev");
    CHECK(contains(run.result.err, "as root"));
    CHECK(run.log.empty());  // nothing was tried
  }

  TEST_CASE("nothing missing: no sudo, no apt-get") {
    TempDir dir;
    auto run = run_make(dir, {"deps", "BUILD_PACKAGES=libfoo-dev bar"}, "1000",
                        false, "libfoo-dev bar");
    INFO(run.result.out, run.result.err);
    CHECK(run.result.exit_code == 0);
    CHECK(run.log.empty());
  }

  TEST_CASE("missing packages: through sudo when not root, directly as root") {
    TempDir dir;
    auto user = run_make(dir, {"deps", "BUILD_PACKAGES=libfoo-dev bar"}, "1000",
                         true, "bar");
    INFO(user.result.out, user.result.err);
    CHECK(user.result.exit_code == 0);
    CHECK(contains(user.log, "sudo apt-get\napt-get update -qq\n"));
    CHECK(contains(user.log,
                   "sudo env\napt-get install -y -qq --no-install-recommends "
                   "libfoo-dev\n"));
    auto root = run_make(dir, {"deps", "BUILD_PACKAGES=libfoo-dev bar"}, "0",
                         false, "bar");
    INFO(root.result.out, root.result.err);
    CHECK(root.result.exit_code == 0);
    CHECK(root.log ==
          "apt-get update -qq\n"
          "apt-get install -y -qq --no-install-recommends libfoo-dev\n");
  }

  TEST_CASE("make test asks for everything at once; make deb for the build") {
    TempDir dir;
    const std::set<std::string> build = words(make_variable("BUILD_PACKAGES"));
    auto test = run_make(dir, {"test"}, "1000", false, "");
    INFO(test.result.err);
    CHECK(test.result.exit_code != 0);
    const std::set<std::string> for_test =
        words(printed_command(test.result.err));
    for (const char* p : {"chromium", "clang-tidy", "libdw-dev", "meson"})
      CHECK_MESSAGE(for_test.count(p) == 1, p);

    // The CI install (runner-install: make deb DEB_LINT=no).
    auto deb = run_make(dir, {"deb", "DEB_LINT=no"}, "1000", false, "");
    INFO(deb.result.err);
    CHECK(deb.result.exit_code != 0);
    std::set<std::string> for_deb = words(printed_command(deb.result.err));
    for (const char* w :
         {"apt-get", "install", "-y", "--no-install-recommends"})
      for_deb.erase(w);
    std::set<std::string> wanted = build;
    wanted.insert({"debhelper", "dpkg-dev"});
    CHECK(for_deb == wanted);
    CHECK(test.log.empty());
    CHECK(deb.log.empty());
  }

  TEST_CASE("make demo builds only the runner and the example") {
    const std::string build = binary("BUILD_ROOT");
    auto r = run_process({which("make"), "--no-print-directory", "-n", "-C",
                          source_root(), "demo", "BUILD=" + build});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ninja -C " + build +
                              " agent/runner "
                              "integrations/examples/bench_example\n"));
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      CHECK_MESSAGE(line != "ninja -C " + build, "a build of every target");
  }

  TEST_CASE("make install: what a user needs, under DESTDIR") {
    TempDir dir;
    const std::string build = binary("BUILD_ROOT");
    const std::string prefix = build_prefix(build);
    const std::string dest = dir.file("dest");
    // BUILD_PACKAGES= : the build is there, nothing to install.
    auto r =
        run_process({which("make"), "--no-print-directory", "-C", source_root(),
                     "install", "BUILD=" + build, "PREFIX=" + prefix,
                     "DESTDIR=" + dest, "BUILD_PACKAGES="},
                    {}, "", 300);
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    const std::string root = dest + prefix;
    for (const char* f :
         {"/bin/runner", "/bin/exec-harness", "/share/man/man1/runner.1",
          "/share/man/man1/exec-harness.1",
          "/include/runner/instrument_hooks.h",
          "/include/runner/instrument_hooks.hpp"})
      CHECK_MESSAGE(fs::is_regular_file(root + f), f);
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.path().filename() == "libinstrument_hooks.a" ||
          e.path().filename() == "runner-instrument-hooks.pc")
        found.push_back(e.path().filename());
    std::sort(found.begin(), found.end());
    CHECK(found == std::vector<std::string>{"libinstrument_hooks.a",
                                            "runner-instrument-hooks.pc"});
    auto version = run_process({root + "/bin/runner", "--version"});
    CHECK(version.out == "runner " + binary("RUNNER_PROJECT_VERSION") + "\n");
  }
}
