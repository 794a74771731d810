// End-to-end tests of `runner report`: our unwinding + symbolization from
// the profile folder alone, against `perf script` (libdw unwinding from the
// binaries on disk) on the same perf.pipedata.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;

namespace {

std::vector<std::string> runner_run(const std::string& folder,
                                    const std::string& fifo_dir,
                                    std::vector<std::string> command) {
  return runner_argv("run", folder, fifo_dir, {}, command);
}

// Whether a frame line is an inlined function: perf 6.1 prints "(inlined)"
// in place of the dso, other versions after the name.
bool is_inlined(const PerfFrame& f) {
  return f.dso == "inlined" || f.sym.ends_with("(inlined)");
}

// A frame's function name without perf's "+0x.." offset or "(inlined)".
std::string bare_name(const PerfFrame& f) {
  std::string name = f.sym;
  if (name.ends_with("(inlined)")) name.resize(name.size() - 9);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  size_t plus = name.rfind("+0x");
  if (plus != std::string::npos) name.resize(plus);
  return name;
}

// perf's names vs ours: drop offsets, "(inlined)" frames and clone suffixes;
// unresolved frames of either side are "[unknown]"; a vdso frame is
// "[vdso]" whatever name the vdso's symbols give it (perf versions name it
// __vdso_clock_gettime, clock_gettime or [unknown]).
// `plt_ips`: addresses perf named "name@plt" in the same recording; they
// are "[plt]" on both sides (ours names every PLT section's entries,
// .plt.got's too, where perf 6.1 may print an offset).
std::vector<std::string> normalized_stack(
    const PerfSample& s, const std::set<uint64_t>* plt_ips = nullptr) {
  std::vector<std::string> names;
  for (const auto& f : s.frames) {
    if (is_inlined(f)) continue;
    std::string name = bare_name(f);
    if (plt_ips != nullptr && plt_ips->count(f.ip) != 0) name = "[plt]";
    if (name.empty() || name == "[unknown]") name = "[unknown]";
    if (f.dso.find("vdso") != std::string::npos ||
        name.rfind("__vdso_", 0) == 0)
      name = "[vdso]";
    // PLT stubs have no ELF symbol: perf and .symbols.map both synthesize
    // "memcpy@plt" (symbols/plt.cpp); _init stays here for profiles of
    // runners before that, whose zero-size _init covered the PLT.
    if (name.ends_with("@plt") || name == "_init") name = "[plt]";
    names.push_back(name);
  }
  // Trailing unknown frames past the last known one are unwinder noise
  // (perf and ours may stop one frame apart at the end of the stack).
  while (!names.empty() && names.back() == "[unknown]") names.pop_back();
  return names;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ";") + s;
  return out;
}

struct Agreement {
  size_t matched = 0, agree = 0;
  // The same over the samples of processes not exempted from exactness.
  size_t strict_matched = 0, strict_agree = 0;
  // perf stopped early and ours continues the same frames further.
  size_t perf_prefix = 0;
  std::vector<std::string> disagreements;
};

Agreement compare(const std::vector<PerfSample>& perf,
                  const std::vector<PerfSample>& ours,
                  const std::set<std::string>& exempt_comms) {
  std::map<std::pair<int, uint64_t>, const PerfSample*> by_key;
  for (const auto& s : ours) by_key[{s.tid, s.time_ns}] = &s;
  Agreement a;
  for (const auto& p : perf) {
    auto it = by_key.find({p.tid, p.time_ns});
    if (it == by_key.end()) continue;
    ++a.matched;
    const bool strict = exempt_comms.count(p.comm) == 0;
    a.strict_matched += strict;
    auto ps = normalized_stack(p), os = normalized_stack(*it->second);
    if (ps == os) {
      ++a.agree;
      a.strict_agree += strict;
    } else if (!ps.empty() && ps.size() < os.size() &&
               std::equal(ps.begin(), ps.end(), os.begin())) {
      ++a.perf_prefix;
    } else if (a.disagreements.size() < 15) {
      a.disagreements.push_back("t=" + std::to_string(p.time_ns) +
                                "\n  perf: " + join(ps) +
                                "\n  ours: " + join(os));
    }
  }
  return a;
}

// Where perf's stack is a strict prefix of ours, the sample counts as
// agreeing on every frame perf has: perf's libdw unwinder stops in function
// epilogues (between `pop %rbp` and `ret` the CFI still points at a save
// slot below the stack pointer, which ours reads as "already restored"),
// and perf 6.1 keeps a forked parent's mappings on a child that exec'd and
// stops early there (at __libc_start_call_main): the samples of such
// programs (`exempt_comms`) need not agree exactly; at least 95% of all the
// others must.
void check_oracle(const std::string& folder,
                  const std::set<std::string>& exempt_comms = {}) {
  auto perf = perf_script(folder + "/perf.pipedata");
  auto perf_samples = parse_perf_script(perf.out);
  auto ours = run_process(
      {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
  INFO(ours.err);
  REQUIRE(ours.exit_code == 0);
  auto our_samples = parse_perf_script(ours.out);
  REQUIRE(perf_samples.size() >= 20);
  CHECK(our_samples.size() == perf_samples.size());
  Agreement a = compare(perf_samples, our_samples, exempt_comms);
  std::string listing;
  for (const auto& d : a.disagreements) listing += d + "\n";
  INFO("disagreeing samples (first 15):\n", listing);
  CHECK(a.matched == perf_samples.size());
  CHECK_MESSAGE((a.agree + a.perf_prefix) * 100 >= a.matched * 99, a.agree,
                " of ", a.matched, " samples agree exactly, ", a.perf_prefix,
                " more where perf's stack is a prefix of ours");
  REQUIRE(a.strict_matched >= 20);
  CHECK_MESSAGE(a.strict_agree * 100 >= a.strict_matched * 95, a.strict_agree,
                " of ", a.strict_matched,
                " samples (outside exempted programs) agree exactly");
  MESSAGE(a.agree, " of ", a.matched, " samples agree exactly (",
          a.strict_agree, " of ", a.strict_matched, " outside ",
          exempt_comms.size(), " exempted programs), ", a.perf_prefix,
          " more where perf's stack is a prefix of ours");

  // Top-10 self-time functions: the same set from both.
  std::set<uint64_t> plt_ips;
  for (const auto& s : perf_samples)
    for (const auto& f : s.frames)
      if (bare_name(f).ends_with("@plt")) plt_ips.insert(f.ip);
  auto top = [&plt_ips](const std::vector<PerfSample>& samples) {
    std::map<std::string, size_t> self;
    for (const auto& s : samples) {
      auto names = normalized_stack(s, &plt_ips);
      if (!names.empty()) ++self[names[0]];
    }
    std::vector<std::pair<size_t, std::string>> sorted;
    for (const auto& [name, n] : self) sorted.push_back({n, name});
    std::sort(sorted.rbegin(), sorted.rend());
    std::set<std::string> names;
    // Keep ties at the cut-off out of the comparison.
    size_t cutoff = sorted.size() > 10 ? sorted[10].first : 0;
    for (size_t i = 0; i < sorted.size() && i < 10; ++i)
      if (sorted[i].first > cutoff) names.insert(sorted[i].second);
    return names;
  };
  const auto perf_top = top(perf_samples), our_top = top(our_samples);
  std::string sets = "perf:";
  for (const auto& n : perf_top) sets += " [" + n + "]";
  sets += "\nours:";
  for (const auto& n : our_top) sets += " [" + n + "]";
  CHECK_MESSAGE(perf_top == our_top, sets);
}

// --inline comparison: the frames of one module (`dso`), each callchain
// address as its group of frames (the lines sharing its ip: inlined
// functions innermost first, then the function itself), "(inlined)" kept.
// perf 6.1 prints a containing function as inlined, without its dso, when
// its DWARF name differs from its symbol name (glibc's
// __libc_start_main_impl vs __libc_start_main@@GLIBC_2.34): such groups
// have no dso and are left out with every other module's.
std::vector<std::string> module_frames(const PerfSample& s,
                                       const std::string& dso) {
  std::vector<std::string> names;
  size_t i = 0;
  while (i < s.frames.size()) {
    size_t end = i;
    while (end < s.frames.size() && s.frames[end].ip == s.frames[i].ip) ++end;
    std::string group_dso;
    for (size_t k = i; k < end; ++k)
      if (!is_inlined(s.frames[k])) group_dso = s.frames[k].dso;
    if (group_dso == dso) {
      for (size_t k = i; k < end; ++k) {
        const PerfFrame& f = s.frames[k];
        names.push_back(bare_name(f) + (is_inlined(f) ? " (inlined)" : ""));
      }
    }
    i = end;
  }
  return names;
}

// Inlined frames anywhere in a perf-script listing.
size_t inlined_frames(const std::vector<PerfSample>& samples) {
  size_t n = 0;
  for (const auto& s : samples)
    for (const auto& f : s.frames) n += is_inlined(f);
  return n;
}

std::string runner_exec_inline(const TempDir& dir, const std::string& program) {
  auto r = run_process(runner_argv("exec", dir.file("profile"), dir.path(),
                                   {"--warmup-time", "0", "--max-rounds", "2"},
                                   {program, "250"}),
                       {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir.file("profile");
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("report agrees with perf script on the example benchmark") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(runner_run(folder, dir.path(),
                                    {binary("EXAMPLE_BIN"), "--rounds", "3"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    check_oracle(folder);

    // Default output: files per benchmark and a terminal summary.
    auto summary = run_process({binary("RUNNER_BIN"), "report", folder});
    INFO(summary.err);
    REQUIRE(summary.exit_code == 0);
    CHECK(summary.out.find("fib") != std::string::npos);
    CHECK(summary.out.find("%") != std::string::npos);
    auto files = list_dir(folder + "/report");
    size_t svgs = 0, folded = 0;
    for (const auto& f : files) {
      if (f.size() > 4 && f.substr(f.size() - 4) == ".svg") {
        ++svgs;
        auto svg = runner::base::read_file(folder + "/report/" + f);
        REQUIRE(svg);
        CHECK(svg->find("<svg") != std::string::npos);
        CHECK(svg->find("<script") != std::string::npos);
      }
      if (f.size() > 7 && f.substr(f.size() - 7) == ".folded") ++folded;
    }
    CHECK(svgs >= 3);
    CHECK(folded >= 3);
    auto js = read_json_file(folder + "/report/summary.json");
    CHECK(js.dump().find("fib") != std::string::npos);
  }

  TEST_CASE("report agrees with perf script on a multi-process benchmark") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_run(folder, dir.path(),
                   {binary("MP_BENCH_BIN"), binary("CHILD_PROG_BIN"), "300"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // child_prog is exec'd by a forked child of the profiled parent.
    check_oracle(folder, {"child_prog"});
  }

  TEST_CASE(
      "report --inline: inlined frames marked, agreeing with perf script "
      "--inline; a replaced or removed program is not expanded") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    // A copy, so that it can be removed and replaced afterwards.
    const std::string program = dir.file("inline_spinner");
    std::filesystem::copy_file(binary("INLINE_SPINNER_BIN"), program);
    const std::string folder = runner_exec_inline(dir, program);

    auto ours = run_process({binary("RUNNER_BIN"), "report", "--inline",
                             "--format", "perf-script", folder});
    INFO(ours.err);
    REQUIRE(ours.exit_code == 0);
    CHECK(ours.err.find(program) == std::string::npos);  // no warning on it
    auto our_samples = parse_perf_script(ours.out);
    size_t our_program_samples = 0, mix_inlined = 0;
    for (const auto& s : our_samples) {
      if (s.comm != "inline_spinner") continue;
      ++our_program_samples;
      if (join(module_frames(s, program))
              .find("e2e_inline::mix (inlined);e2e_inline::step "
                    "(inlined);e2e_inline::spin_inlined") != std::string::npos)
        ++mix_inlined;
    }
    REQUIRE(our_program_samples >= 50);
    // Most samples are in mix(), inlined two deep.
    CHECK(mix_inlined * 2 >= our_program_samples);

    // The oracle, perf script --inline, compared frame by frame in the
    // program's own frames (made now: it reads the program on disk). A perf
    // that shows no inlined frame at all cannot serve as the oracle.
    auto perf = perf_script(folder + "/perf.pipedata", {"--inline"});
    auto perf_samples = parse_perf_script(perf.out);
    const bool perf_inlines = inlined_frames(perf_samples) > 0;
    std::map<std::pair<int, uint64_t>, const PerfSample*> by_key;
    for (const auto& s : our_samples) by_key[{s.tid, s.time_ns}] = &s;
    size_t matched = 0, agree = 0, perf_prefix = 0;
    std::string listing;
    size_t listed = 0;
    for (const auto& p : perf_samples) {
      if (p.comm != "inline_spinner") continue;
      auto it = by_key.find({p.tid, p.time_ns});
      if (it == by_key.end()) continue;
      ++matched;
      auto ps = module_frames(p, program);
      auto os = module_frames(*it->second, program);
      if (ps == os) {
        ++agree;
      } else if (!ps.empty() && ps.size() < os.size() &&
                 std::equal(ps.begin(), ps.end(), os.begin())) {
        // perf 6.1 stops early in a child that a profiled parent forked
        // and that exec'd (see check_oracle): it agrees on what it has.
        ++perf_prefix;
      } else if (listed++ < 15) {
        listing += "t=" + std::to_string(p.time_ns) + "\n  perf: " + join(ps) +
                   "\n  ours: " + join(os) + "\n";
      }
    }

    // Without --inline: one frame per address, nothing marked.
    auto plain = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    REQUIRE(plain.exit_code == 0);
    CHECK(inlined_frames(parse_perf_script(plain.out)) == 0);

    // The folded stacks and the summary keep the marker.
    auto summary =
        run_process({binary("RUNNER_BIN"), "report", "--inline", folder});
    INFO(summary.err);
    REQUIRE(summary.exit_code == 0);
    CHECK(summary.out.find("e2e_inline::mix (inlined)") != std::string::npos);
    bool folded_marker = false;
    for (const auto& f : list_dir(folder + "/report")) {
      if (!f.ends_with(".folded")) continue;
      auto text = runner::base::read_file(folder + "/report/" + f);
      REQUIRE(text);
      if (text->find("e2e_inline::spin_inlined;e2e_inline::step "
                     "(inlined);e2e_inline::mix (inlined)") !=
          std::string::npos)
        folded_marker = true;
    }
    CHECK(folded_marker);

    // The program replaced by another file, then removed: still a report,
    // with a warning, and its frames are not expanded.
    auto no_inlined_program_frames = [&](const std::string& out) {
      for (const auto& s : parse_perf_script(out))
        for (const auto& f : s.frames)
          if (is_inlined(f) && bare_name(f).rfind("e2e_inline::", 0) == 0)
            return false;
      return true;
    };
    std::filesystem::remove(program);
    std::filesystem::copy_file(binary("SPINNER_BIN"), program);
    auto replaced = run_process({binary("RUNNER_BIN"), "report", "--inline",
                                 "--format", "perf-script", folder});
    INFO(replaced.err);
    CHECK(replaced.exit_code == 0);
    CHECK(replaced.err.find("--inline: " + program + ": a different file") !=
          std::string::npos);
    CHECK(no_inlined_program_frames(replaced.out));
    CHECK(replaced.out.find("e2e_inline::spin_inlined") != std::string::npos);

    std::filesystem::remove(program);
    auto removed = run_process({binary("RUNNER_BIN"), "report", "--inline",
                                "--format", "perf-script", folder});
    INFO(removed.err);
    CHECK(removed.exit_code == 0);
    CHECK(removed.err.find("--inline: " + program + ": missing") !=
          std::string::npos);
    CHECK(no_inlined_program_frames(removed.out));
    CHECK(removed.out.find("e2e_inline::spin_inlined") != std::string::npos);
    auto removed_summary =
        run_process({binary("RUNNER_BIN"), "report", "--inline", folder});
    CHECK(removed_summary.exit_code == 0);
    CHECK(removed_summary.out.find("spin_inlined") != std::string::npos);

    // Last, as it may end the case: the comparison with perf.
    if (!perf_inlines)
      RUNNER_SKIP_CASE(
          "the installed perf's `perf script --inline` shows no inlined "
          "frame (no addr2line/libdw inline support): comparison with perf "
          "not made");
    INFO("disagreeing samples (first 15):\n", listing);
    MESSAGE(agree, " of ", matched,
            " inline_spinner samples agree with perf script --inline, ",
            perf_prefix, " more where perf's stack is a prefix of ours; ",
            mix_inlined, " of ", our_program_samples,
            " in mix() inlined two deep");
    REQUIRE(matched >= 50);
    CHECK_MESSAGE((agree + perf_prefix) * 100 >= matched * 95, agree, " of ",
                  matched, " inline_spinner samples agree, ", perf_prefix,
                  " more where perf's stack is a prefix of ours");
  }

  TEST_CASE(
      "report works from a copy of the folder, without the binaries' paths") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_run(folder, dir.path(),
                   {binary("EXAMPLE_BIN"), "--rounds", "2", "--only", "fib"}));
    REQUIRE(r.exit_code == 0);
    const std::string copy = dir.file("copied");
    std::filesystem::copy(folder, copy,
                          std::filesystem::copy_options::recursive);
    auto rep = run_process({binary("RUNNER_BIN"), "report", copy});
    INFO(rep.err);
    CHECK(rep.exit_code == 0);
    CHECK(rep.out.find("fib") != std::string::npos);
  }

  TEST_CASE(
      "the report's threads change nothing on a profile of many batches: "
      "perf-script and summary outputs are byte-identical with 1, 2 and 4, "
      "also from a compressed perf.pipedata") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_argv("exec", folder, dir.path(),
                    {"-F", "10000", "--warmup-time", "0", "--max-rounds", "2"},
                    {binary("INLINE_SPINNER_BIN"), "300"}),
        {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::map<std::string, std::string> script, summary;
    for (const char* threads : {"1", "2", "4"}) {
      auto out = run_process({binary("RUNNER_BIN"), "report", "--threads",
                              threads, "--format", "perf-script", folder});
      INFO(out.err);
      REQUIRE(out.exit_code == 0);
      script[threads] = out.out;
      auto sum = run_process(
          {binary("RUNNER_BIN"), "report", "--threads", threads, folder});
      REQUIRE(sum.exit_code == 0);
      auto json = runner::base::read_file(folder + "/report/summary.json");
      REQUIRE(json);
      summary[threads] = sum.out + *json;
    }
    // Many batches of 128 samples, so their order is exercised.
    const size_t samples = parse_perf_script(script["1"]).size();
    CHECK(samples > 8 * 128);
    CHECK(script["2"] == script["1"]);
    CHECK(script["4"] == script["1"]);
    CHECK(summary["2"] == summary["1"]);
    CHECK(summary["4"] == summary["1"]);

    // Compressed (--compress): the stack copies lie in the reader's
    // decompression buffer, which it reuses: the pool gets copies.
    const std::string compressed = dir.file("compressed");
    r = run_process(runner_argv("exec", compressed, dir.path(),
                                {"-F", "10000", "--compress", "--warmup-time",
                                 "0", "--max-rounds", "2"},
                                {binary("INLINE_SPINNER_BIN"), "300"}),
                    {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto one = run_process({binary("RUNNER_BIN"), "report", "--threads", "1",
                            "--format", "perf-script", compressed});
    auto four = run_process({binary("RUNNER_BIN"), "report", "--threads", "4",
                             "--format", "perf-script", compressed});
    REQUIRE(one.exit_code == 0);
    REQUIRE(four.exit_code == 0);
    CHECK(parse_perf_script(one.out).size() > 8 * 128);
    CHECK(four.out == one.out);
  }

  TEST_CASE("report on bad input shows what it can") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(
        runner_run(folder, dir.path(),
                   {binary("EXAMPLE_BIN"), "--rounds", "2", "--only", "fib"}));
    REQUIRE(r.exit_code == 0);

    // Truncated perf.pipedata (cut in the middle).
    const std::string cut = dir.file("cut");
    std::filesystem::copy(folder, cut,
                          std::filesystem::copy_options::recursive);
    auto size = std::filesystem::file_size(cut + "/perf.pipedata");
    std::filesystem::resize_file(cut + "/perf.pipedata", size / 2 + 3);
    auto rep = run_process({binary("RUNNER_BIN"), "report", cut});
    CHECK(rep.exit_code == 0);
    CHECK(rep.err.find("trunc") != std::string::npos);

    // Missing unwind data and symbols for every module.
    const std::string bare = dir.file("bare");
    std::filesystem::copy(folder, bare,
                          std::filesystem::copy_options::recursive);
    for (const auto& name : list_dir(bare)) {
      if (name.find(".unwind_data") != std::string::npos ||
          name.find(".symbols.map") != std::string::npos)
        std::filesystem::remove(bare + "/" + name);
    }
    auto rep2 = run_process({binary("RUNNER_BIN"), "report", bare});
    CHECK(rep2.exit_code == 0);
    CHECK_FALSE(rep2.err.empty());

    // Corrupt unwind data.
    const std::string corrupt = dir.file("corrupt");
    std::filesystem::copy(folder, corrupt,
                          std::filesystem::copy_options::recursive);
    for (const auto& name : list_dir(corrupt))
      if (name.find(".unwind_data") != std::string::npos)
        REQUIRE(runner::base::write_file_atomic(
            corrupt + "/" + name, std::string_view("\x03garbage")));
    auto rep3 = run_process({binary("RUNNER_BIN"), "report", corrupt});
    CHECK(rep3.exit_code == 0);

    // A folder with no samples at all.
    const std::string empty = dir.file("empty");
    auto e =
        run_process({binary("RUNNER_BIN"), "run", "--profile-folder", empty,
                     "--fifo-dir", dir.path(), "--allow-empty", "--", "true"});
    REQUIRE(e.exit_code == 0);
    auto rep4 = run_process({binary("RUNNER_BIN"), "report", empty});
    CHECK(rep4.exit_code != 0);
    CHECK_FALSE(rep4.err.empty());
  }
}
