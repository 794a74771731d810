// history_page OUT RUNS BENCHMARKS [--demo]: a synthetic History of RUNS runs x
// BENCHMARKS benchmarks for the browser test and bench of the history page
// (history_test.js, bench/history/page_open.js). Writes OUT/index.html
// (write_page), OUT/history.json (write_json, what the test checks the page
// against) and the files the page links to: each fetched run's report
// folder (runs/<id>/) and each change point's compare folder with its diff
// flamegraph (compare/<n>/), placeholders only.
//
// The series: a level per benchmark (from ns to s), 2% noise, steps of
// +10% (every third benchmark) or -5% then +8% (the next), the rest flat;
// every other run's point has its 95% interval; benchmark 2 misses the
// first three runs. Every fourth run has a report, the others a CI URL.
// Hostile strings from the store: "</script>" and <img onerror> in the
// store, repository, a warning, benchmark 1's URI and run 1's commit; run 5's
// CI URL and the diff link of benchmark 1's first change are javascript:
// URLs; run 9's CI URL and the compare link of its second change name a
// host without a scheme (//evil.example/...); run 12's report leaves the
// output folder (../../..). Benchmark 4's compare folders have URL
// specials in their names ("4 #?%-0").
// --demo: none of those, plain names (the README's screenshot,
// tests/browser/history_screenshot.js).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "history/history.hpp"

namespace {

namespace fs = std::filesystem;
using runner::history::Change;
using runner::history::History;
using runner::history::Point;
using runner::history::Run;
using runner::history::Series;

constexpr uint64_t kStartMs = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr const char* kDemoNames[] = {"test_sort_1k",      "test_parse_json",
                                      "test_render_page",  "test_hash_insert",
                                      "test_compress_64k", "test_regex_match",
                                      "test_resize_image", "test_query_index"};
constexpr const char* kPlaceholderSvg =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\">"
    "<rect width=\"40\" height=\"20\" fill=\"#c33\"/></svg>\n";

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

// A deterministic uniform number in [0, 1) per (a, b).
double noise(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull + b * 0xC2B2AE3D27D4EB4Full + 1;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}

Run make_run(size_t i, const fs::path& out, bool demo) {
  Run r;
  char buf[64];
  std::snprintf(buf, sizeof buf, "run-%04zu", i);
  r.run_id = buf;
  // Distinct 7-digit prefixes: an odd multiplier is a bijection mod 2^28.
  std::snprintf(buf, sizeof buf, "%07x",
                static_cast<unsigned>((i * 0x9E3779B1u) & 0xFFFFFFFu));
  r.commit = buf;
  for (size_t k = 0; r.commit.size() < 40; ++k)
    r.commit += "0123456789abcdef"[static_cast<size_t>(16 * noise(i, 100 + k))];
  if (i == 1 && !demo)
    r.commit = "</script><img src=x onerror=alert('commit')>";
  r.created_unix_ms = kStartMs + i * 3600000ull;
  const time_t t = static_cast<time_t>(r.created_unix_ms / 1000);
  struct tm tm {};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  r.created_at = buf;
  r.ci_run_url = "https://ci.example/runs/" + std::to_string(i);
  if (i == 5 && !demo) {
    r.ci_run_url = "javascript:alert('ci')";
  } else if (i == 9 && !demo) {
    r.ci_run_url = "//evil.example/ci";
  } else if (i == 12 && !demo) {
    r.report_link = "../../../../../etc/";
  } else if (i % 4 == 0) {
    r.report_link = "runs/" + r.run_id + "/";
    write(out / "runs" / r.run_id / "flamegraph.svg", kPlaceholderSvg);
  }
  return r;
}

// The level of benchmark m at run i (steps included), and its step runs.
double level(size_t m, size_t i, size_t runs) {
  double v = 1000.0 * std::pow(10.0, static_cast<double>(m % 7) * 0.9);
  if (m % 3 == 0 && i >= runs / 2) v *= 1.10;
  if (m % 3 == 1 && i >= runs / 3) v *= 0.95;
  if (m % 3 == 1 && i >= 2 * runs / 3) v *= 1.08;
  return v;
}

Change make_change(const Series& s, size_t start, double before, double after,
                   const std::string& folder, const fs::path& out) {
  Change c;
  c.step.start = start;
  c.step.before = before;
  c.step.after = after;
  c.step.change = after / before - 1;
  c.step.low = c.step.change - 0.012;
  c.step.high = c.step.change + 0.012;
  c.step.p_value = 0.001;
  c.verdict = c.step.change > 0 ? "regression" : "improvement";
  c.compare_link = "compare/" + folder + "/";
  c.diff_link = c.compare_link + s.name + ".diff.svg";
  write(out / "compare" / folder / (s.name + ".diff.svg"), kPlaceholderSvg);
  return c;
}

Series make_series(size_t m, const History& h, const fs::path& out, bool demo) {
  Series s;
  s.name = "test_case_" + std::to_string(m);
  if (m == 1) s.name = "test_</script><img src=x onerror=alert('uri')>";
  if (demo) s.name = kDemoNames[m % std::size(kDemoNames)];
  s.uri = "tests/bench_" + std::to_string(m / 10) + ".py::" + s.name;
  const size_t n = h.runs.size();
  for (size_t i = m == 2 ? 3 : 0; i < n; ++i) {
    Point p;
    p.run = i;
    p.value = level(m, i, n) * (1 + 0.02 * (2 * noise(m, i) - 1));
    if (i % 2 == 0) {
      p.low = p.value * (1 - 0.01 - 0.01 * noise(i, m));
      p.high = p.value * (1 + 0.01 + 0.01 * noise(i + 7, m));
    }
    s.points.push_back(p);
  }
  const size_t first = s.points.front().run;  // point index = run - first
  std::vector<size_t> steps;
  if (m % 3 == 0) steps = {n / 2};
  if (m % 3 == 1) steps = {n / 3, 2 * n / 3};
  for (size_t k = 0; k < steps.size(); ++k) {
    const size_t at = steps[k];
    s.changes.push_back(
        make_change(s, at - first, level(m, at - 1, n), level(m, at, n),
                    std::to_string(m) + (m == 4 && !demo ? " #?%-" : "-") +
                        std::to_string(k),
                    out));
  }
  if (m == 1 && !demo) {
    s.changes.front().diff_link = "javascript:alert('diff')";
    s.changes.back().compare_link = "//evil.example/compare/";
  }
  return s;
}

History make_history(size_t runs, size_t benchmarks, const fs::path& out,
                     bool demo) {
  History h;
  h.store = "s3://bucket/prefix</script><script>alert('store')</script>";
  h.owner = "acme";
  h.repository = "<img src=x onerror=alert('repo')>";
  h.branch = "main";
  h.skipped_records = 2;
  h.warnings = {"runs/x.json: not a push </script><img src=x onerror=alert(1)>",
                "line\u2028separator\u2029and paragraph"};
  if (demo) {
    h.store = "s3://acme-benchmarks/widgets";
    h.repository = "widgets";
    h.warnings.clear();
    h.skipped_records = 0;
  }
  for (size_t i = 0; i < runs; ++i) h.runs.push_back(make_run(i, out, demo));
  for (size_t m = 0; m < benchmarks; ++m)
    h.series.push_back(make_series(m, h, out, demo));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const bool demo = argc == 5 && std::string(argv[4]) == "--demo";
  if (argc != 4 && !demo) {
    std::fprintf(stderr, "usage: history_page OUT RUNS BENCHMARKS [--demo]\n");
    return 2;
  }
  try {
    const fs::path out = argv[1];
    const size_t runs = std::stoul(argv[2]), benchmarks = std::stoul(argv[3]);
    if (runs < 12 || benchmarks < 3)
      throw std::runtime_error("at least 12 runs and 3 benchmarks");
    const History h = make_history(runs, benchmarks, out, demo);
    write(out / "history.json", runner::history::write_json(h));
    write(out / "index.html", runner::history::write_page(h));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "history_page: %s\n", e.what());
    return 1;
  }
  return 0;
}
