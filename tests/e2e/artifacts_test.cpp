// End-to-end tests of the per-ELF artifacts and perf.metadata (mapping
// tracking, /proc backfill, dedup, load biases), cross-checked with perf.
#include <unistd.h>

#include <map>
#include <set>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

std::vector<std::string> runner_run(const std::string& folder,
                                    const std::string& fifo_dir,
                                    std::vector<std::string> extra,
                                    std::vector<std::string> command) {
  return runner_argv("run", folder, fifo_dir, extra, command);
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string key_for(const nlohmann::json& meta, const std::string& path) {
  for (const auto& [key, p] : meta["path_key_to_path"].items())
    if (p == path) return key;
  return "";
}

struct Sym {
  uint64_t addr, size;
  std::string name;
};

std::vector<Sym> read_symbols_map(const std::string& file) {
  std::vector<Sym> syms;
  auto text = runner::base::read_file(file);
  REQUIRE(text);
  size_t pos = 0;
  while (pos < text->size()) {
    size_t eol = text->find('\n', pos);
    std::string line = text->substr(pos, eol - pos);
    pos = eol == std::string::npos ? text->size() : eol + 1;
    size_t a = line.find(' '), b = line.find(' ', a + 1);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    syms.push_back({std::stoull(line.substr(0, a), nullptr, 16),
                    std::stoull(line.substr(a + 1, b - a - 1), nullptr, 16),
                    line.substr(b + 1)});
  }
  return syms;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("example: artifacts per unique ELF, load bias matches perf") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(runner_run(folder, dir.path(), {},
                                    {binary("EXAMPLE_BIN"), "--rounds", "2"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto meta = read_json_file(folder + "/perf.metadata");
    const auto& keys = meta["path_key_to_path"];
    std::set<std::string> basenames, paths;
    for (const auto& [key, path] : keys.items()) {
      std::string p = path.get<std::string>();
      CHECK_MESSAGE(paths.insert(p).second, "path listed twice: ", p);
      basenames.insert(basename_of(p));
      // <index>__<basename>
      CHECK(key.find("__" + basename_of(p)) != std::string::npos);
      CHECK(file_exists(folder + "/" + key + ".symbols.map"));
      CHECK(file_exists(folder + "/" + key + ".unwind_data"));
    }
    for (const char* expected : {"bench_example", "libc.so.6", "libstdc++.so.6",
                                 "ld-linux-x86-64.so.2"}) {
      // libstdc++'s MMAP2 path is the real file (libstdc++.so.6.0.30).
      size_t found = 0;
      for (const auto& b : basenames) found += b.rfind(expected, 0) == 0;
      CHECK_MESSAGE(found == 1, expected);
    }

    // The hot function: symbol address + load bias covers the IPs perf
    // attributes to it.
    const std::string exe_key = key_for(meta, binary("EXAMPLE_BIN"));
    REQUIRE_FALSE(exe_key.empty());
    Sym fib{0, 0, ""};
    for (const auto& s :
         read_symbols_map(folder + "/" + exe_key + ".symbols.map"))
      if (s.name.find("3fibEj") != std::string::npos) fib = s;
    REQUIRE(fib.size > 0);
    // -G: no call chains, so perf prints absolute sample IPs.
    auto script = perf_script(folder + "/perf.pipedata", {"-G"});
    auto samples = parse_perf_script(script.out);
    size_t checked = 0;
    for (const auto& s : samples) {
      // Exactly fib: "bench_fib", its caller, also contains "fib".
      if (s.frames.empty() || s.frames[0].sym != "(anonymous namespace)::fib")
        continue;
      auto pid_entries =
          meta["mapped_process_module_symbols"][std::to_string(s.pid)];
      uint64_t bias = 0;
      bool found = false;
      for (const auto& e : pid_entries)
        if (e["perf_map_key"] == exe_key) {
          bias = e["load_bias"].get<uint64_t>();
          found = true;
        }
      REQUIRE(found);
      uint64_t ip = s.frames[0].ip;
      CHECK(ip >= fib.addr + bias);
      CHECK(ip < fib.addr + bias + fib.size);
      ++checked;
    }
    CHECK(checked >= 10);
    // Unwind entries: base_avma = base_svma + bias and avma range covers ip.
    auto unwind = meta["mapped_process_unwind_data_by_pid"];
    REQUIRE(unwind.size() >= 1);
    for (const auto& [pid, entries] : unwind.items()) {
      for (const auto& e : entries) {
        CHECK(e["avma_range"]["start"].get<uint64_t>() <
              e["avma_range"]["end"].get<uint64_t>());
        CHECK(e.contains("base_avma"));
      }
    }
  }

  TEST_CASE(
      "20 processes of one binary: one artifact pair, 20 per-pid entries") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_run(folder, dir.path(), {},
                   {binary("MANY_PROCS_BIN"), binary("SPINNER_BIN"), "20"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto meta = read_json_file(folder + "/perf.metadata");
    std::vector<std::string> spinner_keys;
    for (const auto& [key, path] : meta["path_key_to_path"].items())
      if (path == binary("SPINNER_BIN")) spinner_keys.push_back(key);
    REQUIRE(spinner_keys.size() == 1);
    const std::string key = spinner_keys[0];
    size_t files = 0;
    for (const auto& name : list_dir(folder))
      if (name.rfind(key + ".", 0) == 0) ++files;
    CHECK(files == 2);
    size_t pids = 0;
    for (const auto& [pid, entries] :
         meta["mapped_process_module_symbols"].items())
      for (const auto& e : entries)
        if (e["perf_map_key"] == key) ++pids;
    CHECK(pids == 20);
  }

  TEST_CASE(
      "--no-tracking-event: an exec'd process gets its mappings from /proc") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_run(folder, dir.path(), {"--no-tracking-event"},
                   {binary("MP_BENCH_BIN"), binary("CHILD_PROG_BIN"), "200"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto meta = read_json_file(folder + "/perf.metadata");
    const std::string child_key = key_for(meta, binary("CHILD_PROG_BIN"));
    REQUIRE_FALSE(child_key.empty());
    CHECK(meta["runner"]["backfilled_mappings"].get<uint64_t>() > 0);
    CHECK(meta["runner"]["tracking_event"] == false);
    // The child announced its pid; that pid has the child's module.
    auto ts = read_msgpack_file(folder + "/ExecutionTimestamps.msgpack");
    bool child_has_module = false;
    for (const auto& [pid, entries] :
         meta["mapped_process_module_symbols"].items())
      for (const auto& e : entries)
        if (e["perf_map_key"] == child_key) child_has_module = true;
    CHECK(child_has_module);
    // Without the tracking event, perf.pipedata has no MMAP2 for child_prog:
    // only the snapshot can have provided it.
    auto script =
        perf_script(folder + "/perf.pipedata", {"--show-mmap-events"});
    CHECK(script.out.find(binary("CHILD_PROG_BIN")) == std::string::npos);
  }

  TEST_CASE("two runs of the same benchmark give identical keys") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    nlohmann::json first;
    for (int run = 0; run < 2; ++run) {
      const std::string folder = dir.file("p" + std::to_string(run));
      auto r = run_process(runner_run(
          folder, dir.path(), {},
          {binary("EXAMPLE_BIN"), "--rounds", "1", "--only", "sort"}));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      auto meta = read_json_file(folder + "/perf.metadata");
      if (run == 0)
        first = meta["path_key_to_path"];
      else
        CHECK(meta["path_key_to_path"] == first);
    }
  }

  TEST_CASE("finalize cache: a second run reuses every file's artifacts") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.file("xdg")};
    std::vector<nlohmann::json> metas;
    std::vector<std::string> errs;
    for (const std::string name : {"first", "second", "uncached"}) {
      const std::string folder = dir.file(name);
      std::vector<std::string> extra;
      if (name == "uncached") extra.push_back("--no-cache");
      auto r = run_process(runner_run(folder, dir.path(), extra,
                                      {binary("EXAMPLE_BIN"), "--rounds", "1",
                                       "--only", "sort"}),
                           env);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      metas.push_back(read_json_file(folder + "/perf.metadata"));
      errs.push_back(r.err);
    }
    CHECK(file_exists(dir.file("xdg") + "/runner/finalize"));
    // "runner: finalize: N files, M from cache, ..."
    auto hits = [](const std::string& err) {
      size_t at = err.find("runner: finalize: ");
      REQUIRE(at != std::string::npos);
      size_t files = std::stoul(err.substr(at + 18));
      size_t comma = err.find(", ", at);
      size_t cached = std::stoul(err.substr(comma + 2));
      CHECK(err.find(" from cache, ", comma) != std::string::npos);
      return std::make_pair(files, cached);
    };
    auto [files0, cached0] = hits(errs[0]);
    auto [files1, cached1] = hits(errs[1]);
    auto [files2, cached2] = hits(errs[2]);
    CHECK(cached0 == 0);
    CHECK(files1 == files0);
    // Every real file has a build-id here; only the vDSO copy is not cached.
    CHECK(cached1 + 1 >= files1);
    CHECK(cached1 > 0);
    CHECK(cached2 == 0);
    // Pids, timestamps and load biases differ between runs; the keys, the
    // debug info, the per-file errors and the artifacts' bytes do not.
    for (size_t run : {1u, 2u}) {
      const nlohmann::json &a = metas[0], &b = metas[run];
      CHECK(b["path_key_to_path"] == a["path_key_to_path"]);
      CHECK(b["debug_info"] == a["debug_info"]);
      CHECK(b["runner"]["module_errors"] == a["runner"]["module_errors"]);
      for (const auto& [key, path] : a["path_key_to_path"].items()) {
        INFO(key);
        for (const char* suffix : {".symbols.map", ".unwind_data"}) {
          const std::string x = dir.file("first") + "/" + key + suffix;
          const std::string y =
              dir.file(run == 1 ? "second" : "uncached") + "/" + key + suffix;
          CHECK(file_exists(x) == file_exists(y));
          if (file_exists(x) && file_exists(y))
            CHECK(*runner::base::read_file(x) == *runner::base::read_file(y));
        }
      }
    }
    CHECK_FALSE(metas[1]["debug_info"].empty());
  }
}
