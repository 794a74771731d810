// What `runner compare` takes from report/: each benchmark's stacks of a
// profile folder (load_benchmark_stacks, against the golden corpus's
// .folded files), the functions whose self share changed most
// (self_share_changes, exact shares on hand-made stacks) and the
// differential flamegraph (render_diff_flamegraph), parsed by a real XML
// parser (python3's xml.etree) to read every frame's fill and hover text.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "report/output.hpp"
#include "report/report.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using runner::format::FunctionShareChange;
using runner::report::FoldedStack;
using runner::testing::TempDir;

namespace {

// ---- the SVG through python3's XML parser -----------------------------------

// Prints "name<TAB>fill<TAB>width<TAB>title" per frame group, then
// "LEGEND<TAB>text" per text of the legend row and "TITLE<TAB>text"; exits 1 on
// a parse error.
constexpr const char* kFramesScript = R"PY(
import sys, xml.etree.ElementTree as E
ns = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
texts = root.findall(ns + 'text')
print('TITLE\t' + texts[0].text)
for g in root.iter(ns + 'g'):
    if g.get('class') != 'f': continue
    r = g.find(ns + 'rect')
    print('\t'.join([g.get('data-n'), r.get('fill'), r.get('width'),
                     g.find(ns + 'title').text]))
for t in texts:
    if t.get('y') == '66': print('LEGEND\t' + (t.text or ''))
)PY";

struct Frame {
  std::string fill, title;
  double width = 0;
};
struct ParsedSvg {
  bool parsed = false;
  std::string error, title;
  std::multimap<std::string, Frame> frames;  // by name
  std::vector<std::string> legend;
};

// Runs `argv` with stdout and stderr to files; its exit code (-1 when it
// could not run) and its output.
int run(const std::vector<std::string>& argv, const TempDir& dir,
        std::string& out) {
  const std::string out_path = dir.file("stdout");
  FILE* file = std::fopen(out_path.c_str(), "w");
  REQUIRE(file != nullptr);
  runner::base::SpawnOptions opts;
  opts.argv = argv;
  opts.stdout_fd = fileno(file);
  opts.stderr_fd = fileno(file);
  auto child = runner::base::ChildProcess::spawn(opts);
  std::fclose(file);
  if (!child) return -1;
  auto status = child->wait();
  out = runner::base::read_file(out_path).value_or("");
  return status ? status->shell_code() : -1;
}

ParsedSvg parse_svg(const std::string& svg) {
  TempDir dir;
  REQUIRE(runner::base::write_file_atomic(dir.file("g.svg"), svg));
  REQUIRE(
      runner::base::write_file_atomic(dir.file("frames.py"), kFramesScript));
  std::string out;
  const int code =
      run({"python3", dir.file("frames.py"), dir.file("g.svg")}, dir, out);
  ParsedSvg result;
  result.parsed = code == 0;
  result.error = out;
  std::istringstream lines(out);
  for (std::string line; code == 0 && std::getline(lines, line);) {
    const size_t tab = line.find('\t');
    const std::string first = line.substr(0, tab), rest = line.substr(tab + 1);
    if (first == "TITLE") {
      result.title = rest;
    } else if (first == "LEGEND") {
      result.legend.push_back(rest);
    } else {
      const size_t tab2 = rest.find('\t'), tab3 = rest.find('\t', tab2 + 1);
      result.frames.emplace(
          first, Frame{rest.substr(0, tab2), rest.substr(tab3 + 1),
                       std::stod(rest.substr(tab2 + 1, tab3 - tab2 - 1))});
    }
  }
  return result;
}

bool have_python3() {
  const char* path = std::getenv("PATH");
  return bool(runner::base::find_executable("python3", path ? path : ""));
}

struct Rgb {
  int r = -1, g = -1, b = -1;
};
Rgb parse_rgb(const std::string& fill) {
  Rgb c;
  std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &c.r, &c.g, &c.b);
  return c;
}

const Frame& only(const ParsedSvg& svg, const std::string& name) {
  REQUIRE_MESSAGE(svg.frames.count(name) == 1,
                  name << " drawn " << svg.frames.count(name) << " times");
  return svg.frames.find(name)->second;
}

// ---- the golden corpus
// --------------------------------------------------------

const std::string kGolden = RUNNER_GOLDEN_DIR;

}  // namespace

TEST_SUITE("report diff") {
  TEST_CASE("self_share_changes: exact shares, by |change| then by name") {
    // Totals are powers of two, so every share and change is exact.
    const std::vector<FoldedStack> base = {
        {{"main", "a"}, 32}, {{"main", "b"}, 64}, {{"main"}, 32}};
    // HEAD pooled from two folders: main;a given twice is summed.
    const std::vector<FoldedStack> head = {{{"main", "a"}, 64},
                                           {{"main", "b"}, 64},
                                           {{"main", "a"}, 64},
                                           {{"main", "c"}, 32},
                                           {{"main"}, 32}};
    // base: a 1/4, b 1/2, main 1/4; head (256): a 1/2, b 1/4, c 1/8,
    // main 1/8. Changes: a +1/4, b -1/4 (tie: a first), c +1/8, main -1/8.
    const std::vector<FunctionShareChange> want = {{"a", 0.25, 0.5},
                                                   {"b", 0.5, 0.25},
                                                   {"c", 0.0, 0.125},
                                                   {"main", 0.25, 0.125}};
    CHECK(runner::report::self_share_changes(base, head, 10) == want);
    CHECK(runner::report::self_share_changes(base, head, 3) ==
          std::vector<FunctionShareChange>(want.begin(), want.begin() + 3));
    CHECK(runner::report::self_share_changes(base, head, 0).empty());
    // A side without samples: every share there is 0.
    const auto no_base = runner::report::self_share_changes({}, head, 1);
    REQUIRE(no_base.size() == 1);
    CHECK(no_base[0] == FunctionShareChange{"a", 0.0, 0.5});
    CHECK(runner::report::self_share_changes({}, {}, 5).empty());
  }

  TEST_CASE("render_diff_flamegraph: well-formed, coloured by share change") {
    if (!have_python3()) RUNNER_SKIP_CASE("python3 not found");
    // base (100): a 50% (a;x), b 30%, c 20%.
    const std::vector<FoldedStack> base = {
        {{"main", "a", "x"}, 50}, {{"main", "b"}, 30}, {{"main", "c"}, 20}};
    // head (200, main;a;x given twice): a 60%, b 10%, c 20%, e 10% (new).
    const std::vector<FoldedStack> head = {{{"main", "a", "x"}, 60},
                                           {{"main", "a", "x"}, 60},
                                           {{"main", "b"}, 20},
                                           {{"main", "c"}, 40},
                                           {{"main", "e"}, 20}};
    const ParsedSvg svg = parse_svg(
        runner::report::render_diff_flamegraph("bench <1>", base, head));
    REQUIRE_MESSAGE(svg.parsed, svg.error);
    CHECK(svg.title.find("bench <1>") != std::string::npos);
    CHECK(svg.title.find("HEAD") != std::string::npos);
    CHECK(svg.title.find("BASE") != std::string::npos);
    CHECK(svg.frames.size() == 7);  // all, main, a, x, b, c, e

    // Largest |change|: b, -20 points: full blue. a, x, e: +10, half red.
    const Rgb shrank = parse_rgb(only(svg, "b").fill);
    CHECK(shrank.b > shrank.r + 100);
    CHECK(only(svg, "b").fill == "rgb(60,110,235)");
    for (const char* grown : {"a", "x", "e"}) {
      const Rgb c = parse_rgb(only(svg, grown).fill);
      CAPTURE(grown);
      CHECK(c.r > c.b + 50);
      CHECK(c.g == c.b);
      // Half way from the neutral (221,221,221) to (235,50,50).
      CHECK(std::abs(c.r - 228) <= 1);
      CHECK(std::abs(c.g - 136) <= 1);
    }
    for (const char* same : {"all", "main", "c"})
      CHECK(only(svg, same).fill == "rgb(221,221,221)");

    CHECK(only(svg, "a").title ==
          "a (base 50.00%, head 60.00%, difference +10.00 pp; samples: base "
          "50, head 120)");
    CHECK(only(svg, "b").title ==
          "b (base 30.00%, head 10.00%, difference -20.00 pp; samples: base "
          "30, head 20)");
    CHECK(only(svg, "c").title ==
          "c (base 20.00%, head 20.00%, difference +0.00 pp; samples: base 20, "
          "head 40)");
    CHECK(only(svg, "e").title ==
          "e (base 0.00%, head 10.00%, difference +10.00 pp; samples: base 0, "
          "head 20)");

    // The legend: what the colours mean and the scale's ends.
    std::string legend;
    for (const auto& t : svg.legend) legend += t + "|";
    CHECK(legend.find("share in HEAD - share in BASE") != std::string::npos);
    CHECK(legend.find("Width: mean share") != std::string::npos);
    CHECK(legend.find("|-20.00 pp|") != std::string::npos);
    CHECK(legend.find("|+20.00 pp|") != std::string::npos);
  }

  TEST_CASE("render_diff_flamegraph: frames of BASE only, mean-share widths") {
    if (!have_python3()) RUNNER_SKIP_CASE("python3 not found");
    // base (100): a 60%, gone 40%; head (200): a 50%, new 50%.
    const std::vector<FoldedStack> base = {{{"main", "a"}, 60},
                                           {{"main", "gone"}, 40}};
    const std::vector<FoldedStack> head = {{{"main", "a"}, 100},
                                           {{"main", "new"}, 100}};
    const ParsedSvg svg =
        parse_svg(runner::report::render_diff_flamegraph("t", base, head));
    REQUIRE_MESSAGE(svg.parsed, svg.error);
    CHECK(svg.frames.size() == 5);  // all, main, a, gone, new
    // Code that disappeared is drawn, blue (-40 points of the largest 50).
    CHECK(only(svg, "gone").title ==
          "gone (base 40.00%, head 0.00%, difference -40.00 pp; samples: "
          "base 40, head 0)");
    const Rgb gone = parse_rgb(only(svg, "gone").fill);
    CHECK(gone.b > gone.r + 100);
    CHECK(only(svg, "new").fill == "rgb(235,50,50)");
    // Widths: the mean of the two shares (a 55%, gone 20%, new 25%).
    const double whole = only(svg, "main").width;
    CHECK(whole > 0);
    CHECK(only(svg, "a").width / whole == doctest::Approx(0.55).epsilon(0.01));
    CHECK(only(svg, "gone").width / whole ==
          doctest::Approx(0.20).epsilon(0.01));
    CHECK(only(svg, "new").width / whole ==
          doctest::Approx(0.25).epsilon(0.01));
  }

  TEST_CASE("render_diff_flamegraph: coloured by time per iteration") {
    if (!have_python3()) RUNNER_SKIP_CASE("python3 not found");
    // The same shares on both sides, HEAD 1.5 times slower per iteration:
    // every frame's time grew (a share would say nothing changed).
    const std::vector<FoldedStack> stacks = {{{"main", "a"}, 50},
                                             {{"main", "b"}, 50}};
    runner::report::DiffContext context;
    context.headline = "regression, +50.0% [+45.0%, +55.0%], p = 0.001";
    context.time_ratio = 1.5;
    const ParsedSvg svg = parse_svg(
        runner::report::render_diff_flamegraph("t", stacks, stacks, context));
    REQUIRE_MESSAGE(svg.parsed, svg.error);
    CHECK(svg.title ==
          "t (HEAD against BASE): regression, +50.0% [+45.0%, +55.0%], "
          "p = 0.001");
    CHECK(only(svg, "main").fill == "rgb(235,50,50)");  // +50 points
    CHECK(only(svg, "a").title ==
          "a (time per iteration in % of BASE's: base 50.00%, head 75.00%, "
          "difference +25.00 pp; shares 50.00% and 50.00%; samples: base 50, "
          "head 50)");
    const Rgb a = parse_rgb(only(svg, "a").fill);
    CHECK(std::abs(a.r - 228) <= 1);  // half way to red
    std::string legend;
    for (const auto& t : svg.legend) legend += t + "|";
    CHECK(legend.find("Colour: time/iteration HEAD - BASE") !=
          std::string::npos);
    CHECK(legend.find("HEAD/BASE 1.500") != std::string::npos);
    // A ratio that is not a ratio (0, NaN) colours by share.
    for (double bad : {0.0, std::nan("")}) {
      context.time_ratio = bad;
      const ParsedSvg plain = parse_svg(
          runner::report::render_diff_flamegraph("t", stacks, stacks, context));
      REQUIRE_MESSAGE(plain.parsed, plain.error);
      CHECK(only(plain, "main").fill == "rgb(221,221,221)");
    }
  }

  TEST_CASE("render_diff_flamegraph: nothing changed, all neutral") {
    if (!have_python3()) RUNNER_SKIP_CASE("python3 not found");
    const std::vector<FoldedStack> stacks = {{{"main", "a"}, 3},
                                             {{"main", "b"}, 1}};
    const ParsedSvg svg =
        parse_svg(runner::report::render_diff_flamegraph("t", stacks, stacks));
    REQUIRE_MESSAGE(svg.parsed, svg.error);
    REQUIRE(svg.frames.size() == 4);
    for (const auto& [name, frame] : svg.frames)
      CHECK(frame.fill == "rgb(221,221,221)");
  }

  TEST_CASE("render_diff_flamegraph: escapes names, survives empty sides") {
    if (!have_python3()) RUNNER_SKIP_CASE("python3 not found");
    const std::vector<FoldedStack> head = {{{"ns::f<A&B>", "\"g\""}, 2}};
    for (const auto& base : {std::vector<FoldedStack>{}, head}) {
      const ParsedSvg svg =
          parse_svg(runner::report::render_diff_flamegraph("<&>", base, head));
      REQUIRE_MESSAGE(svg.parsed, svg.error);
      CHECK(svg.frames.count("ns::f<A&B>") == 1);
      CHECK(svg.frames.count("\"g\"") == 1);
    }
    const ParsedSvg empty =
        parse_svg(runner::report::render_diff_flamegraph("t", head, {}));
    REQUIRE_MESSAGE(empty.parsed, empty.error);
  }

  TEST_CASE("load_benchmark_stacks: the golden folders' .folded stacks") {
    size_t folders = 0, files = 0;
    for (const auto& entry : fs::directory_iterator(kGolden + "/folders")) {
      const std::string name = entry.path().filename().string();
      const fs::path expected =
          fs::path(kGolden) / "expected" / name / "summary" / "report";
      if (!fs::is_directory(expected)) continue;
      CAPTURE(name);
      ++folders;
      // On a copy: nothing may be written into the folder.
      TempDir dir;
      const std::string copy = dir.file(name);
      fs::copy(entry.path(), copy, fs::copy_options::recursive);
      std::vector<std::string> warnings;
      auto loaded = runner::report::load_benchmark_stacks(copy, warnings);
      REQUIRE_MESSAGE(loaded, loaded.error().what());
      CHECK_FALSE(fs::exists(copy + "/report"));
      CHECK_FALSE(loaded->empty());
      if (name == "missing") CHECK_FALSE(warnings.empty());
      for (size_t i = 0; i < loaded->size(); ++i) {
        const auto& bench = (*loaded)[i];
        CHECK_FALSE(bench.uri.empty());
        runner::report::BenchmarkProfile profile;
        profile.index = i;
        profile.name = bench.name;
        const fs::path file =
            expected / (runner::report::benchmark_stem(profile) + ".folded");
        CAPTURE(file);
        CHECK(fs::exists(file) == !bench.stacks.empty());
        if (!fs::exists(file)) continue;
        ++files;
        // The report writes folded_text of its stacks: equal text, equal
        // stacks.
        CHECK(runner::report::folded_text(bench.stacks) ==
              runner::base::read_file(file.string()).value_or("?"));
      }
    }
    CHECK(folders >= 8);
    CHECK(files >= 10);
  }

  TEST_CASE("load_benchmark_stacks: a folder without a profile") {
    TempDir dir;
    // Results only (as any integration writes): no perf.pipedata.
    REQUIRE(runner::base::make_directories(dir.file("results")));
    REQUIRE(runner::base::write_file_atomic(dir.file("results/1.json"), "{}"));
    std::vector<std::string> warnings;
    auto loaded = runner::report::load_benchmark_stacks(dir.path(), warnings);
    REQUIRE_FALSE(loaded);
    CHECK(loaded.error().what() ==
          "no profile in " + dir.path() + " (no perf.pipedata)");
    auto missing =
        runner::report::load_benchmark_stacks(dir.file("absent"), warnings);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().what().starts_with("no profile: "));
    CHECK(missing.error().what().find(dir.file("absent")) != std::string::npos);
  }
}
