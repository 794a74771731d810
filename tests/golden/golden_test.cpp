// The golden corpus (tests/golden/README.md): the real `runner report`, in
// every output format, on a copy of each committed profile folder of
// tests/golden/folders/ must print and write exactly the committed files of
// tests/golden/expected/<folder>/<variant>/ (stdout, stderr, exit-code and
// the report/ directory it writes), byte for byte. A mismatch prints a
// unified diff. UPDATE_GOLDEN=1 rewrites the expected files in the source
// tree instead (review them in the diff before committing).
//
// The report runs in a temporary directory on a copy named `profile`, so the
// checkout is never written and no path of this machine reaches the output.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/unique_fd.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using runner::testing::TempDir;

namespace {

struct Variant {
  const char* name;
  std::vector<std::string> args;
};

// Every output format and every option that changes the output, except
// --inline: it reads the original ELF files at the paths recorded on the
// recording machine, so its output depends on the machine.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> kVariants = {
      {"summary", {}},
      {"no-demangle", {"--no-demangle"}},
      {"top-3", {"--top", "3"}},
      {"perf-script", {"--format", "perf-script"}},
      {"speedscope", {"--format", "speedscope"}},
  };
  return kVariants;
}

std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value != nullptr, name << " is not set (run through meson)");
  return value;
}

fs::path golden_dir() { return fs::absolute(env_or_fail("GOLDEN_DIR")); }

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  REQUIRE_MESSAGE(out.good(), "cannot write " << path.string());
}

int open_output(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  REQUIRE_MESSAGE(fd >= 0, "cannot create " << path.string());
  return fd;
}

// Runs argv in `cwd` with stdout and stderr into files; the exit status in
// shell convention, or -1 when it could not be started.
int run(const std::vector<std::string>& argv, const fs::path& cwd,
        const fs::path& out_path, const fs::path& err_path) {
  runner::base::UniqueFd out(open_output(out_path));
  runner::base::UniqueFd err(open_output(err_path));
  runner::base::UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  runner::base::SpawnOptions options;
  options.argv = argv;
  options.cwd = cwd.string();
  options.stdin_fd = null.get();
  options.stdout_fd = out.get();
  options.stderr_fd = err.get();
  auto child = runner::base::ChildProcess::spawn(options);
  if (!child) return -1;
  auto status = child->wait();
  return status ? status->shell_code() : -1;
}

// The relative paths of the regular files under `dir`, sorted; anything else
// (a link, a FIFO) is listed with a "?" so that it cannot compare equal.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_directory()) continue;
    std::string rel = fs::relative(entry.path(), dir).string();
    files.insert(entry.is_regular_file() && !entry.is_symlink() ? rel
                                                                : rel + "?");
  }
  return files;
}

// `diff -u` of two files (at most kMaxLines lines of it), or where they
// first differ when diff cannot run.
std::string unified_diff(const fs::path& expected, const fs::path& actual,
                         const std::string& name, const fs::path& scratch) {
  constexpr size_t kMaxLines = 80;
  const fs::path out = scratch / "diff.out", err = scratch / "diff.err";
  fs::remove(out);
  fs::remove(err);
  int code = run({"diff", "-u", "--label", "expected/" + name, "--label",
                  "actual/" + name, expected.string(), actual.string()},
                 scratch, out, err);
  std::string text = read_bytes(out);
  if (code != 1 || text.empty()) {
    const std::string a = read_bytes(expected), b = read_bytes(actual);
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    return "(diff -u unavailable) " + name + ": " + std::to_string(a.size()) +
           " vs " + std::to_string(b.size()) + " bytes, first difference at " +
           std::to_string(at) + "\n";
  }
  std::istringstream lines(text);
  std::string line, shown;
  size_t count = 0;
  while (std::getline(lines, line)) {
    if (++count > kMaxLines) {
      shown += "... (diff truncated)\n";
      break;
    }
    shown += line + "\n";
  }
  return shown;
}

// Every difference between the expected and the actual tree: a file in one
// only, or different bytes (with a unified diff).
std::vector<std::string> compare_trees(const fs::path& expected,
                                       const fs::path& actual,
                                       const fs::path& scratch) {
  std::vector<std::string> problems;
  const auto want = files_under(expected), got = files_under(actual);
  if (want.empty())
    problems.push_back("no expected files in " + expected.string());
  for (const auto& name : want)
    if (!got.count(name)) problems.push_back("missing: " + name);
  for (const auto& name : got) {
    if (!want.count(name)) {
      problems.push_back("unexpected: " + name);
    } else if (read_bytes(expected / name) != read_bytes(actual / name)) {
      problems.push_back(
          "differs: " + name + "\n" +
          unified_diff(expected / name, actual / name, name, scratch));
    }
  }
  return problems;
}

// Runs `runner report ARGS profile` on a fresh copy of `folder` inside
// `work` and collects its outputs under `work`/actual.
fs::path report_outputs(const fs::path& folder, const Variant& variant,
                        const fs::path& work) {
  const fs::path copy = work / "profile", actual = work / "actual";
  fs::copy(folder, copy, fs::copy_options::recursive);
  fs::create_directories(actual);
  // Absolute: the report runs in `work`.
  std::vector<std::string> argv = {
      fs::absolute(env_or_fail("RUNNER_BIN")).string(), "report"};
  argv.insert(argv.end(), variant.args.begin(), variant.args.end());
  argv.push_back("profile");
  int code = run(argv, work, actual / "stdout", actual / "stderr");
  REQUIRE_MESSAGE(code >= 0, "cannot run " << argv[0]);
  write_bytes(actual / "exit-code", std::to_string(code) + "\n");
  if (fs::exists(copy / "report"))
    fs::rename(copy / "report", actual / "report");
  return actual;
}

std::vector<std::string> folder_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(golden_dir() / "folders"))
    if (entry.is_directory()) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool updating() {
  const char* update = std::getenv("UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE(
      "every report format of every golden folder equals its expected "
      "files") {
    const auto names = folder_names();
    REQUIRE_MESSAGE(!names.empty(),
                    "no folder in " << golden_dir() / "folders");
    size_t compared = 0;
    for (const auto& name : names) {
      for (const Variant& variant : variants()) {
        const std::string variant_name = variant.name;
        CAPTURE(name);
        CAPTURE(variant_name);
        TempDir work;
        REQUIRE(!work.path().empty());
        const fs::path actual = report_outputs(golden_dir() / "folders" / name,
                                               variant, work.path());
        const fs::path expected =
            golden_dir() / "expected" / name / variant.name;
        if (updating()) {
          fs::remove_all(expected);
          fs::create_directories(expected.parent_path());
          fs::copy(actual, expected, fs::copy_options::recursive);
          MESSAGE("UPDATE_GOLDEN=1: rewrote " << expected.string());
          continue;
        }
        const auto problems = compare_trees(expected, actual, work.path());
        for (const auto& problem : problems)
          FAIL_CHECK(name << " / " << variant_name << ": " << problem);
        compared += problems.empty();
      }
    }
    if (!updating()) CHECK(compared == names.size() * variants().size());
  }

  TEST_CASE(
      "the report's threads change nothing: every format of every golden "
      "folder equals its expected files with 1 thread and with 5") {
    const auto names = folder_names();
    REQUIRE(!names.empty());
    size_t compared = 0;
    for (const auto& name : names) {
      for (Variant variant : variants()) {
        for (const char* threads : {"1", "5"}) {
          CAPTURE(name);
          CAPTURE(variant.name);
          CAPTURE(threads);
          Variant threaded = variant;
          threaded.args.insert(threaded.args.end(), {"--threads", threads});
          TempDir work;
          REQUIRE(!work.path().empty());
          const fs::path actual = report_outputs(
              golden_dir() / "folders" / name, threaded, work.path());
          const auto problems =
              compare_trees(golden_dir() / "expected" / name / variant.name,
                            actual, work.path());
          for (const auto& problem : problems)
            FAIL_CHECK(name << " / " << variant.name << " / --threads "
                            << threads << ": " << problem);
          compared += problems.empty();
        }
      }
    }
    CHECK(compared == names.size() * variants().size() * 2);
  }

  TEST_CASE("no expected files without a golden folder") {
    const auto names = folder_names();
    const std::set<std::string> folders(names.begin(), names.end());
    for (const auto& entry :
         fs::directory_iterator(golden_dir() / "expected")) {
      CHECK_MESSAGE(folders.count(entry.path().filename()),
                    "expected/" << entry.path().filename().string()
                                << " has no folder in folders/");
      for (const auto& variant : fs::directory_iterator(entry.path())) {
        const std::string v = variant.path().filename();
        CHECK_MESSAGE(
            std::any_of(variants().begin(), variants().end(),
                        [&](const Variant& x) { return v == x.name; }),
            "expected/" << entry.path().filename().string() << "/" << v
                        << " is not a variant of the test");
      }
    }
  }

  TEST_CASE("each expected .folded file lists each stack once") {
    size_t files = 0;
    for (const auto& entry :
         fs::recursive_directory_iterator(golden_dir() / "expected")) {
      if (entry.path().extension() != ".folded") continue;
      ++files;
      std::istringstream lines(read_bytes(entry.path()));
      std::set<std::string> stacks;
      std::string line;
      while (std::getline(lines, line)) {
        const std::string stack = line.substr(0, line.rfind(' '));
        CHECK_MESSAGE(stacks.insert(stack).second,
                      entry.path().string() << " lists twice: " << stack);
      }
    }
    CHECK(files > 0);
  }

  TEST_CASE("the comparison fails on an altered, a missing or an extra file") {
    const auto names = folder_names();
    REQUIRE(!names.empty());
    const Variant& variant = variants().front();
    TempDir work, altered;
    REQUIRE(!work.path().empty());
    REQUIRE(!altered.path().empty());
    const fs::path actual = report_outputs(golden_dir() / "folders" / names[0],
                                           variant, work.path());
    const fs::path expected = fs::path(altered.path()) / "expected";
    fs::copy(golden_dir() / "expected" / names[0] / variant.name, expected,
             fs::copy_options::recursive);
    // Untouched, the copy matches (the checks below are not vacuous).
    REQUIRE(compare_trees(expected, actual, work.path()).empty());

    // One byte of stdout changed, summary.json gone, a stray file added.
    std::string out = read_bytes(expected / "stdout");
    const size_t digit = out.find_first_of("0123456789");
    REQUIRE(digit != std::string::npos);
    out[digit] = out[digit] == '9' ? '8' : static_cast<char>(out[digit] + 1);
    write_bytes(expected / "stdout", out);
    REQUIRE(fs::remove(expected / "report" / "summary.json"));
    write_bytes(expected / "report" / "stray.folded", "main 1\n");

    const auto problems = compare_trees(expected, actual, work.path());
    REQUIRE(problems.size() == 3);
    CHECK(problems[0] == "missing: report/stray.folded");
    CHECK(problems[1] == "unexpected: report/summary.json");
    CHECK(problems[2].rfind("differs: stdout\n", 0) == 0);
    // The diff names both sides and shows the changed line from each.
    const std::string& diff = problems[2];
    CHECK(diff.find("--- expected/stdout") != std::string::npos);
    CHECK(diff.find("+++ actual/stdout") != std::string::npos);
    const size_t eol = out.find('\n', digit);
    const size_t bol = out.rfind('\n', digit);
    const std::string changed =
        out.substr(bol == std::string::npos ? 0 : bol + 1,
                   (eol == std::string::npos ? out.size() : eol) -
                       (bol == std::string::npos ? 0 : bol + 1));
    CHECK(diff.find("\n-" + changed + "\n") != std::string::npos);
  }
}
