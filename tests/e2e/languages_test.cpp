// Complete stacks for JIT and interpreted code: `runner exec` on
// CPU-bound programs of our own in Node, CPython 3.12/3.13 and Java
// (tests/e2e/programs/languages/), with no flags of the user's: the runner
// switches on perf maps, jitdumps and frame pointers itself
// (agent/language_env.hpp). From `runner report --format perf-script`, over
// the samples of the program's busiest thread:
//   - at most 5% have an unknown leaf,
//   - at least 90% carry a frame with one of the program's own functions,
//   - at least 85% reach its `main` function,
// in DWARF mode (the default) and in frame-pointer mode (CPython: when the
// interpreter keeps frame pointers). An interpreter the machine lacks skips
// its case only. Java's main method stays interpreted, and the JVM's perf
// map names every interpreted frame "Interpreter" (for perf too): its stacks
// reach main when they reach the launcher's JavaMain, which calls it.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/runtimes.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

namespace fs = std::filesystem;

std::string languages_dir() { return std::string(RUNNER_LANGUAGES_DIR); }

struct Metrics {
  size_t samples = 0, unknown_leaf = 0, own = 0, main = 0;
  double pct(size_t n) const { return samples ? 100.0 * n / samples : 0; }
};

// A frame the symbolizer could not name: "[unknown]", or module+0xoffset.
bool unknown_frame(const PerfFrame& f) {
  static const std::regex kOffset(R"(^[^ ]+\+0x[0-9a-f]+$)");
  return f.sym.empty() || f.sym == "[unknown]" ||
         std::regex_match(f.sym, kOffset);
}

// Over the samples of the busiest thread (the program's; a runtime's
// compiler and GC threads run none of its functions).
Metrics measure(const std::vector<PerfSample>& samples, const std::regex& own,
                const std::regex& main) {
  std::map<int, size_t> per_tid;
  for (const auto& s : samples) ++per_tid[s.tid];
  int busiest = 0;
  size_t most = 0;
  for (const auto& [tid, n] : per_tid)
    if (n > most) most = n, busiest = tid;
  Metrics m;
  for (const auto& s : samples) {
    if (s.tid != busiest || s.frames.empty()) continue;
    ++m.samples;
    if (unknown_frame(s.frames.front())) ++m.unknown_leaf;
    bool has_own = false, has_main = false;
    for (const auto& f : s.frames) {
      has_own |= std::regex_search(f.sym, own);
      has_main |= std::regex_search(f.sym, main);
    }
    m.own += has_own;
    m.main += has_main;
  }
  return m;
}

struct Language {
  std::string name;
  std::vector<std::string> command;  // the program, without its duration
  std::regex own, main;
  // How long the program runs: long enough that the runtime's start (before
  // the program's first function) is a small part of its samples.
  std::string seconds = "1.5";
};

// The runtimes leave /tmp/perf-<pid>.map and /tmp/jit-<pid>.dump behind
// (the runner copies them, never deletes what a process wrote): the test
// removes those of the pids its profile names.
void remove_runtime_files(const std::string& folder) {
  for (const std::string& name : list_dir(folder)) {
    if (name.rfind("perf-", 0) != 0 || !name.ends_with(".map")) continue;
    const std::string pid = name.substr(5, name.size() - 9);
    std::remove(("/tmp/" + name).c_str());
    std::remove(("/tmp/jit-" + pid + ".dump").c_str());
  }
}

// Profiles `lang` with `runner exec` in `mode` and checks the three figures
// (`main_min`: the share that must reach main) and that the run's output
// says `said`.
void check_language(const Language& lang, const std::string& mode,
                    double main_min = 85.0, const std::string& said = "") {
  TempDir dir;
  const std::string folder = dir.file("profile");
  std::vector<std::string> command = lang.command;
  command.push_back(lang.seconds);
  auto r = run_process(
      runner_argv(
          "exec", folder, dir.path(),
          {"--warmup-time", "0", "--max-rounds", "1", "--call-graph", mode},
          command),
      {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, dir.path(), 300);
  INFO(lang.name, " ", mode, "\n", r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("runner: language support:") != std::string::npos);
  CHECK(r.err.find(said) != std::string::npos);
  auto report = run_process(
      {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  remove_runtime_files(folder);
  const Metrics m = measure(parse_perf_script(report.out), lang.own, lang.main);
  char line[160];
  std::snprintf(line, sizeof(line),
                "%s --call-graph %s: %zu samples, unknown leaf %.1f%%, own "
                "functions %.1f%%, reach main %.1f%%",
                lang.name.c_str(), mode.c_str(), m.samples,
                m.pct(m.unknown_leaf), m.pct(m.own), m.pct(m.main));
  MESSAGE(line);
  REQUIRE(m.samples >= 200);
  CHECK(m.pct(m.unknown_leaf) <= 5.0);
  CHECK(m.pct(m.own) >= 90.0);
  CHECK(m.pct(m.main) >= main_min);
}

// Frame-pointer mode walks CPython only when the interpreter keeps frame
// pointers (built with -fno-omit-frame-pointer, as Fedora's and Ubuntu
// 24.04's are); perf has the same limit. Otherwise that mode is skipped with
// the reason.
void check_python(const std::string& version) {
  const std::string py = find_runtime("python" + version);
  if (py.empty()) RUNNER_SKIP_CASE("no python" + version + " on this machine");
  const Language lang{
      "python" + version,
      {py, languages_dir() + "/app.py"},
      std::regex(
          R"(py::(parse_document|score_tags|fibonacci|score_document|make_document|main):)"),
      std::regex(R"(py::main:.*app\.py)")};
  check_language(lang, "dwarf");
  auto flags = run_process(
      {py, "-c",
       "import sysconfig; print(sysconfig.get_config_var('CFLAGS'))"});
  if (flags.out.find("-fno-omit-frame-pointer") == std::string::npos) {
    note_skip(lang.name + " --call-graph fp: the interpreter omits frame " +
              "pointers (CFLAGS: " + flags.out.substr(0, flags.out.find('\n')) +
              "), so no frame-pointer unwinder walks it");
    return;
  }
  check_language(lang, "fp");
}

// A program whose work is 20 Python calls deep: with no stack size of the
// user's, the runner copies 32 KiB of stack for CPython, and 95% of the
// samples reach main (with 8 KiB, 3% here).
void check_deep_python(const std::string& version) {
  const std::string py = find_runtime("python" + version);
  if (py.empty()) RUNNER_SKIP_CASE("no python" + version + " on this machine");
  const Language lang{"python" + version + " deep.py",
                      {py, languages_dir() + "/deep.py"},
                      std::regex(R"(py::(digest_records|descend|main):)"),
                      std::regex(R"(py::main:.*deep\.py)")};
  check_language(lang, "dwarf", 95.0,
                 "runner: call graph dwarf,32768: the benchmark runs CPython");
}

// A git project in `dir` with `files` of `source` (paths under it) and its
// installed node_modules, as a user's project with a CodSpeed plugin.
std::string plugin_project(TempDir& dir, const std::string& git,
                           const std::string& source,
                           const std::vector<std::string>& files) {
  const std::string project = dir.file("suite");
  REQUIRE(run_process({git, "init", "-q", project}).exit_code == 0);
  for (const std::string& file : files) {
    const fs::path to = project + "/" + file;
    fs::create_directories(to.parent_path());
    fs::copy_file(source + "/" + file, to);
  }
  fs::create_directory_symlink(source + "/node_modules",
                               project + "/node_modules");
  return project;
}

// One place a jitted body was, from a jitdump: [start, end) from `time`
// until `gone` (its next move).
struct Placement {
  uint64_t start = 0, end = 0, time = 0, gone = UINT64_MAX;
  std::string name;
};

std::vector<Placement> placements_of(const runner::format::JitDump& dump) {
  std::vector<Placement> out;
  for (const auto& code : dump.code) {
    out.push_back({code.code_addr, code.code_addr + code.code_size,
                   code.timestamp, UINT64_MAX, code.name});
    for (const auto& move : code.moves) {
      out.back().gone = move.timestamp;
      out.push_back({move.new_code_addr, move.new_code_addr + code.code_size,
                     move.timestamp, UINT64_MAX, code.name});
    }
  }
  return out;
}

// The oracle: the placement covering `addr` with the latest time at or
// before `time` that was still there, or nullptr.
const Placement* covering(const std::vector<Placement>& all, uint64_t addr,
                          uint64_t time) {
  const Placement* best = nullptr;
  for (const Placement& p : all)
    if (addr >= p.start && addr < p.end && p.time <= time && time < p.gone &&
        (best == nullptr || p.time >= best->time))
      best = &p;
  return best;
}

// Whether a name `runner report` printed is the entry's (perf-script cuts
// nothing, but a name is printed as is, so compare whole).
bool same_name(const std::string& printed, const std::string& entry) {
  return printed == entry;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "languages: Node code at reused addresses is named after the code "
      "there at each sample's time (address oracle from the jitdump)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string node = find_runtime("node");
    if (node.empty()) RUNNER_SKIP_CASE("no node on this machine");
    TempDir dir;
    const std::string folder = dir.file("profile");
    const std::string kept = dir.file("kept.dump");
    auto r = run_process(
        runner_argv("exec", folder, dir.path(),
                    {"--warmup-time", "0", "--max-rounds", "1"},
                    {node, "--perf-prof", "--expose-gc",
                     languages_dir() + "/reuse.js", "2.5", kept}),
        {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, dir.path(), 300);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto bytes = runner::base::read_file(kept);
    REQUIRE(bytes.has_value());
    auto dump = runner::format::read_jitdump(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
    REQUIRE(dump.has_value());
    const std::vector<Placement> all = placements_of(*dump);
    auto report = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    INFO(report.err);
    REQUIRE(report.exit_code == 0);
    remove_runtime_files(folder);
    size_t jit_frames = 0, wrong = 0, at_reused = 0;
    for (const PerfSample& s : parse_perf_script(report.out)) {
      if (s.pid != static_cast<int>(dump->pid)) continue;
      for (size_t i = 0; i < s.frames.size(); ++i) {
        const uint64_t addr = i == 0 ? s.frames[i].ip : s.frames[i].ip - 1;
        const Placement* want = covering(all, addr, s.time_ns);
        if (want == nullptr) continue;
        ++jit_frames;
        // Another body had this address before: the older name is wrong.
        bool reused = false;
        for (const Placement& p : all)
          reused |= addr >= p.start && addr < p.end && p.time < want->time &&
                    p.name != want->name;
        at_reused += reused;
        if (!same_name(s.frames[i].sym, want->name)) {
          if (++wrong <= 10)
            MESSAGE("at 0x", std::hex, addr, std::dec, " t=", s.time_ns, ": ",
                    s.frames[i].sym, " instead of ", want->name);
        }
      }
    }
    MESSAGE(jit_frames, " JIT frames, ", at_reused, " at reused addresses, ",
            wrong, " wrong");
    CHECK(jit_frames >= 200);
    CHECK(at_reused >= 50);
    CHECK(wrong == 0);
  }

  TEST_CASE(
      "languages: CodSpeed's tinybench plugin finds the flags it checks and "
      "leaves nothing in the project folder") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string source = binary("TINYBENCH_DIR");
    if (!file_exists(source + "/node_modules/@codspeed/tinybench-plugin"))
      RUNNER_SKIP_CASE(
          "CodSpeed's tinybench plugin is not installed (make test runs npm "
          "ci in tests/e2e/tinybench)");
    const std::string git = find_runtime("git");
    if (git.empty() || find_runtime("node").empty())
      RUNNER_SKIP_CASE("no git or no node on this machine");
    TempDir dir;
    const std::string suite = plugin_project(dir, git, source, {"bench.mjs"});
    const std::vector<std::string> before = list_dir(suite);
    // `node` by name, from the PATH, as a user runs it; the plugin talks to
    // the runner's FIFOs at their fixed paths (no --fifo-dir).
    auto r = run_process({binary("RUNNER_BIN"), "run", "--profile-folder",
                          dir.file("profile"), "--", "node", "bench.mjs"},
                         {}, suite, 300);
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Collected walltime data for bench.mjs::steady") !=
          std::string::npos);
    CHECK((r.out + r.err).find("missing required flags") == std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
    CHECK(list_dir(suite) == before);
    remove_runtime_files(dir.file("profile"));
  }

  TEST_CASE(
      "languages: CodSpeed's vitest plugin: the benchmarked function names "
      "its samples, no warning, nothing left in the project folder") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string source = binary("VITEST_DIR");
    if (!file_exists(source + "/node_modules/@codspeed/vitest-plugin") ||
        !file_exists(source + "/node_modules/vitest/vitest.mjs"))
      RUNNER_SKIP_CASE(
          "CodSpeed's vitest plugin is not installed (make test runs npm ci "
          "in tests/e2e/vitest)");
    const std::string git = find_runtime("git");
    if (git.empty() || find_runtime("node").empty())
      RUNNER_SKIP_CASE("no git or no node on this machine");
    TempDir dir;
    const std::string suite = plugin_project(
        dir, git, source,
        {"package.json", "vitest.config.mjs", "bench/fibo.bench.mjs"});
    const std::vector<std::string> before = list_dir(suite);
    const std::string folder = dir.file("profile");
    auto r = run_process(
        {binary("RUNNER_BIN"), "run", "--profile-folder", folder, "--", "node",
         "node_modules/vitest/vitest.mjs", "bench", "--run"},
        {}, suite, 300);
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK((r.out + r.err).find("missing required flags") == std::string::npos);
    CHECK(r.err.find("runner: warning") == std::string::npos);
    CHECK(list_dir(suite) == before);
    auto report = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    INFO(report.err);
    REQUIRE(report.exit_code == 0);
    remove_runtime_files(folder);
    // The benchmark's process: the one with the most samples.
    const auto samples = parse_perf_script(report.out);
    std::map<int, size_t> per_pid;
    for (const auto& s : samples) ++per_pid[s.pid];
    int bench_pid = 0;
    size_t most = 0;
    for (const auto& [pid, n] : per_pid)
      if (n > most) most = n, bench_pid = pid;
    size_t in_fibo = 0, total = 0;
    for (const auto& s : samples) {
      if (s.pid != bench_pid) continue;
      ++total;
      in_fibo += std::any_of(s.frames.begin(), s.frames.end(), [](auto& f) {
        return f.sym.find("fibo ") != std::string::npos &&
               f.sym.find("fibo.bench.mjs") != std::string::npos;
      });
    }
    MESSAGE("vitest: ", in_fibo, " of ", total,
            " samples of the benchmark's process under fibo");
    REQUIRE(total >= 100);
    CHECK(in_fibo * 100 >= total * 90);
  }

  TEST_CASE(
      "languages: a normal Node run leaves nothing in the project folder and "
      "warns about no jitdump") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string node = find_runtime("node");
    if (node.empty()) RUNNER_SKIP_CASE("no node on this machine");
    TempDir dir;  // the project folder: the benchmark's working directory
    REQUIRE(runner::base::make_directories(dir.file("project")));
    const std::string project = dir.file("project");
    auto r = run_process(
        runner_argv("exec", dir.file("profile"), dir.path(),
                    {"--warmup-time", "0", "--max-rounds", "1"},
                    {node, "--perf-prof", languages_dir() + "/app.js", "1"}),
        {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, project, 300);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("jitdump(s)") != std::string::npos);  // one was read
    CHECK(r.err.find("ends inside a record") == std::string::npos);
    CHECK(r.err.find("warning") == std::string::npos);
    CHECK(list_dir(project).empty());
    for (const std::string& name : list_dir(project)) MESSAGE("left: ", name);
    remove_runtime_files(dir.file("profile"));
  }

  TEST_CASE("languages: Node names and walks its JavaScript functions") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string node = find_runtime("node");
    if (node.empty()) RUNNER_SKIP_CASE("no node on this machine");
    const Language lang{
        "node",
        {node, languages_dir() + "/app.js"},
        std::regex(
            R"(JS:[~*^+]?(parseDocument|scoreTags|fibonacci|scoreDocument|makeDocument|main) )"),
        std::regex(R"(JS:[~*^+]?main .*app\.js)"),
        "2.5"};
    for (const char* mode : {"dwarf", "fp"}) check_language(lang, mode);
  }

  TEST_CASE("languages: CPython 3.12 names its functions (perf trampolines)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    check_python("3.12");
  }

  TEST_CASE("languages: CPython 3.13 names its functions (jitdump)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    check_python("3.13");
  }

  TEST_CASE("languages: CPython 3.12's deep stacks reach main by default") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    check_deep_python("3.12");
  }

  TEST_CASE("languages: CPython 3.13's deep stacks reach main by default") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    check_deep_python("3.13");
  }

  TEST_CASE(
      "language support: set for the benchmark, the user's values extended, "
      "nothing with --no-language-support") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    for (const bool off : {false, true}) {
      CAPTURE(off);
      TempDir dir;
      std::vector<std::string> extra = {"--warmup-time", "0", "--max-rounds",
                                        "1"};
      if (off) extra.push_back("--no-language-support");
      auto r = run_process(
          runner_argv("exec", dir.file("profile"), dir.path(), extra,
                      {"/bin/sh", "-c", "env > env.txt"}),
          {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN"),
           "NODE_OPTIONS=--max-old-space-size=64", "PYTHONPERFSUPPORT=0"},
          dir.path());
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const std::string env =
          runner::base::read_file(dir.file("env.txt")).value_or("");
      REQUIRE_FALSE(env.empty());
      CHECK((r.err.find("runner: language support:") == std::string::npos) ==
            off);
      CHECK(env.find("PYTHONPERFSUPPORT=0\n") != std::string::npos);
      if (off) {
        // exec-harness adds --perf-basic-prof itself, as CodSpeed's does.
        CHECK(env.find("NODE_OPTIONS=--max-old-space-size=64 "
                       "--perf-basic-prof\n") != std::string::npos);
        CHECK(env.find("JAVA_TOOL_OPTIONS=") == std::string::npos);
        CHECK(env.find("PYTHON_PERF_JIT_SUPPORT=") == std::string::npos);
      } else {
        CHECK(env.find("NODE_OPTIONS=--max-old-space-size=64 "
                       "--perf-basic-prof "
                       "--interpreted-frames-native-stack\n") !=
              std::string::npos);
        CHECK(env.find("JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer") !=
              std::string::npos);
        CHECK(env.find("PYTHON_PERF_JIT_SUPPORT=1\n") != std::string::npos);
      }
    }
  }

  TEST_CASE("languages: Node with --perf-prof (a jitdump with V8's CFI)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string node = find_runtime("node");
    if (node.empty()) RUNNER_SKIP_CASE("no node on this machine");
    const Language lang{
        "node --perf-prof",
        {node, "--perf-prof", languages_dir() + "/app.js"},
        std::regex(
            R"(JS:[~*^+]?(parseDocument|scoreTags|fibonacci|scoreDocument|makeDocument|main) )"),
        std::regex(R"(JS:[~*^+]?main .*app\.js)"),
        "2.5"};
    check_language(lang, "dwarf");
  }

  TEST_CASE("languages: a jitdump cut short or not a jitdump at all") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    for (const std::string kind : {"truncated", "garbage"}) {
      CAPTURE(kind);
      TempDir dir;
      const std::string folder = dir.file("profile");
      auto r = run_process(
          runner_argv("exec", folder, dir.path(),
                      {"--warmup-time", "0", "--max-rounds", "1"},
                      {"/usr/bin/python3",
                       languages_dir() + "/jitdump_writer.py", kind}),
          {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, dir.path());
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      auto meta = read_json_file(folder + "/perf.metadata");
      const auto& errors = meta["runner"]["module_errors"];
      std::string maps;
      for (const std::string& name : list_dir(folder))
        if (name.rfind("perf-", 0) == 0)
          maps += runner::base::read_file(folder + "/" + name).value_or("");
      if (kind == "truncated") {
        CHECK(errors.value("jitdump_truncated", 0) == 1);
        CHECK(r.err.find("ends inside a record") != std::string::npos);
        // The whole record is kept; the one cut short is not.
        CHECK(maps.find("7e0000001000 40 jitted_function\n") !=
              std::string::npos);
        CHECK(maps.find("cut_short") == std::string::npos);
      } else {
        CHECK(errors.value("jitdump_malformed", 0) == 1);
        CHECK(r.err.find("its JIT code stays unnamed") != std::string::npos);
      }
      CHECK(errors.value("not_elf", 0) == 0);  // not taken for an ELF file
    }
  }

  TEST_CASE(
      "stripped binaries: gzip and xz frames never take an import's name") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    {
      // 4 MiB that do not compress: both programs work on all of it.
      std::string data(4 << 20, '\0');
      uint64_t x = 88172645463325252ull;
      for (char& c : data) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        c = static_cast<char>(x);
      }
      REQUIRE(runner::base::write_file_atomic(dir.file("data"), data));
    }
    std::map<std::string, std::string> dso_of;  // program -> its real path
    for (const char* program : {"gzip", "xz"}) {
      const std::string path = find_runtime(program);
      if (path.empty()) RUNNER_SKIP_CASE(std::string("no ") + program);
      dso_of[program] = fs::canonical(path).string();
    }
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_argv("exec", folder, dir.path(),
                    {"--warmup-time", "0", "--max-rounds", "1"},
                    {"/bin/sh", "-c",
                     "gzip -6 -c data >/dev/null && xz -1 -T1 -c data "
                     ">/dev/null"}),
        {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto report = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    REQUIRE(report.exit_code == 0);
    const auto samples = parse_perf_script(report.out);
    for (const auto& [program, dso] : dso_of) {
      CAPTURE(program);
      // Its imports (nm -D --undefined-only), versions cut off.
      auto nm = run_process({"nm", "-D", "--undefined-only", dso});
      REQUIRE(nm.exit_code == 0);
      std::set<std::string> imports;
      std::istringstream lines(nm.out);
      for (std::string line; std::getline(lines, line);) {
        std::string name = line.substr(line.find_last_of(' ') + 1);
        imports.insert(name.substr(0, name.find('@')));
      }
      REQUIRE(imports.count("__cxa_finalize") == 1);
      size_t frames = 0;
      for (const auto& sample : samples)
        for (const auto& f : sample.frames) {
          if (f.dso != dso) continue;
          ++frames;
          CHECK_MESSAGE(imports.count(f.sym) == 0, f.sym);
        }
      CHECK(frames >= 20);
    }
  }

  TEST_CASE("languages: Java names its methods (perf map at exit)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    const std::string java = find_runtime("java");
    const std::string javac = find_runtime("javac");
    if (java.empty() || javac.empty())
      RUNNER_SKIP_CASE("no java and javac on this machine");
    TempDir classes;
    auto built = run_process(
        {javac, "-d", classes.path(), languages_dir() + "/App.java"});
    INFO(built.err);
    REQUIRE(built.exit_code == 0);
    const Language lang{
        "java",
        {java, "-cp", classes.path(), "App"},
        std::regex(
            R"(App[.:]+(parseDocument|scoreTags|fibonacci|scoreDocument|makeDocument|main)\b)"),
        // App.main stays interpreted: the JVM's perf map names its frames
        // "Interpreter" (for perf too); the launcher's JavaMain calls it.
        std::regex(R"(^JavaMain$)"),
        "3"};
    for (const char* mode : {"dwarf", "fp"}) check_language(lang, mode);
  }
}
