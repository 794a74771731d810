// The text and markdown of a comparison: structure (one markdown line per
// benchmark in the report's order, the table in the details, aligned text
// columns), hostile names escaped, human units; and the markdown as GitHub
// renders it (cmark-gfm, GitHub's own implementation) is one list item per
// benchmark and one table with the right rows.
#include "compare/render.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "format/format.hpp"
#include "tests/support/compare_sample.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner;
using compare::render_markdown;
using compare::render_text;
using format::BenchmarkComparison;
using format::CompareReport;
using format::Verdict;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of the markdown's benchmark table (in the details): from its
// header to the first line not starting with '|'.
std::vector<std::string> table_lines(const std::string& markdown) {
  std::vector<std::string> table;
  for (const std::string& line : lines_of(markdown)) {
    if (table.empty() && !line.starts_with("| benchmark |")) continue;
    if (!line.starts_with("|")) break;
    table.push_back(line);
  }
  return table;
}

// The one-line summaries: the lines starting with "- " before the first
// <details>.
std::vector<std::string> summary_lines(const std::string& markdown) {
  std::vector<std::string> out;
  for (const std::string& line :
       lines_of(markdown.substr(0, markdown.find("<details>"))))
    if (line.starts_with("- ")) out.push_back(line);
  return out;
}

// Cell separators of a table line as GFM splits it: every '|' that does not
// follow a backslash (even one inside a code span, even after "\\").
size_t unescaped_pipes(const std::string& line) {
  size_t pipes = 0;
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++pipes;
  return pipes;
}

// `html` without its <code>...</code> elements.
std::string outside_code(std::string html) {
  for (size_t at; (at = html.find("<code>")) != std::string::npos;)
    html.erase(at, html.find("</code>", at) + 7 - at);
  return html;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

BenchmarkComparison named(std::string name, Verdict verdict,
                          std::optional<double> median_ns) {
  BenchmarkComparison b;
  b.uri = "bench.cpp::" + name;
  b.name = std::move(name);
  b.verdict = verdict;
  b.base.median_ns = median_ns;
  b.head.median_ns = median_ns;
  return b;
}

// A name that tries every way out of a table cell and into markup.
const std::string kHostile =
    "a|b <script>x</script> *s* _u_ [l](u) `c` $m$ ~t~ #h \\| &amp;\n| x | y |"
    "\x1b[31m\xFF";
// A name that tries to notify people, link somewhere, reference an issue
// or show as another name (U+202E reverses what follows it).
const std::string kMentions =
    "@octocat @org/team #123 GH-7 www.evil.example https://evil.example/x "
    "mail@evil.example ``code`` \xE2\x80\xAE"
    "fed";

}  // namespace

TEST_CASE("markdown: one summary line, one line per benchmark, the table") {
  const CompareReport report = testing::sample_compare_report();
  const std::string md = render_markdown(report);
  CHECK(md.starts_with(
      "**runner compare: regression**: 1 regression, 1 improvement, 2 "
      "unchanged, 1 "
      "inconclusive (Mann\xE2\x80\x93Whitney U and Welch's t, Holm, alpha "
      "0.05, threshold 5%); 1 added, 1 removed\n\n- **regression** "));
  // What changed, by how much, how sure, where the time went: parse_value
  // took 22.5% of 1.36 ms in head and 12% of 1.234 ms in base, 157.92 µs
  // more, 125% of the 126 µs change (the other functions took less).
  const auto lines = summary_lines(md);
  REQUIRE(lines.size() == report.benchmarks.size());
  CHECK(lines[0] ==
        "- **regression** `parse | json (\xC3\xBCn\xC3\xAF"
        "code, \xE6\x97\xA5\xE6\x9C\xAC)`: +10.2% [+9.1%, +11.3%] "
        "(1.23 ms \xE2\x86\x92 1.36 ms), p = 0.0012 (Holm); most of it in "
        "`json::parse_value(char const*&)` (+158 \xC2\xB5s per iteration, "
        "125% of the change)");
  CHECK(
      lines[1].starts_with("- improvement `` sort <1000> *fast* `x` ``: "
                           "-15.3% [-17.1%, -13.5%] (812 ns \xE2\x86\x92 "
                           "688 ns), p = 0.0001 (Holm)"));
  // An unchanged benchmark: its equivalence, no function (none moved it).
  CHECK(lines[2].ends_with(
      "+0.8% [-0.4%, +2.1%] (1.00 \xC2\xB5s \xE2\x86\x92 1.01 \xC2\xB5s), "
      "the whole 95% CI within \xC2\xB1"
      "5%"));
  CHECK(lines[4] == "- inconclusive `startup`: 3 rounds in base, need 6");
  const auto table = table_lines(md);
  REQUIRE(table.size() == 2 + report.benchmarks.size());
  CHECK(table[0] == "| benchmark | base | head | change [95% CI] | verdict |");
  for (const std::string& line : table) CHECK(unescaped_pipes(line) == 6);
  // In the report's order (the caller sorts): regression first.
  CHECK(table[2].find("**regression**") != std::string::npos);
  CHECK(table[3].find("| improvement |") != std::string::npos);
  CHECK(table[6].find("| inconclusive |") != std::string::npos);
  CHECK(table[2].starts_with("| `parse \\| json (\xC3\xBCn"));
  CHECK(table[2].find("| +10.2% [+9.1%, +11.3%] |") != std::string::npos);
  // Everything else is collapsed, each <details> closed.
  CHECK(count(md, "<details>") == 4);
  CHECK(count(md, "</details>") == 4);
  CHECK(md.find("emoji") == std::string::npos);
  CHECK(md.find("| `json::parse_value(char const*&)` | 12.0% | 22.5% | "
                "+10.5 pts |") != std::string::npos);
  CHECK(md.find("p = 0.0012 after Holm (0.0004 before)") != std::string::npos);
  CHECK(md.find("- differential flamegraph: `parse_json.diff.svg`") !=
        std::string::npos);
  CHECK(md.find("run-to-run spread up to 3.1%: a threshold above that avoids "
                "false alarms") != std::string::npos);
}

TEST_CASE("markdown: a hostile name stays inside its cell") {
  CompareReport report;
  report.benchmarks = {named(kHostile, Verdict::kRegression, 5.0),
                       named("plain", Verdict::kUnchanged, 6.0)};
  report.added = {{kHostile, kHostile}};
  report.warnings = {kHostile};
  const std::string md = render_markdown(report);
  const auto table = table_lines(md);
  REQUIRE(table.size() == 4);
  // Its line: the name one code span, on one line.
  const auto lines = summary_lines(md);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "- **regression** ``a|b <script>x</script> *s* _u_ [l](u) `c` $m$ ~t~ "
        "#h \\| &amp; | x | y |\xEF\xBF\xBD[31m\xEF\xBF\xBD``");
  CHECK(unescaped_pipes(table[2]) == 6);
  // A code span fenced by two backticks ("`c`" is inside), '|' escaped.
  CHECK(table[2] ==
        "| ``a\\|b <script>x</script> *s* _u_ [l](u) `c` $m$ ~t~ #h \\\\| "
        "&amp; \\| x \\| y \\|\xEF\xBF\xBD[31m\xEF\xBF\xBD`` | 5.00 ns | "
        "5.00 ns | n/a | **regression** |");
  CHECK(md.find('\x1b') == std::string::npos);
  // The name is text inside code spans only (cmark-gfm below renders it).
  CHECK(md.find("- added: ``a|b <script>") != std::string::npos);
  CHECK(md.find("- ``a|b <script>") != std::string::npos);  // the warning
}

TEST_CASE("markdown: names, folders, reasons and warnings are code spans") {
  CompareReport report;
  report.base.folders = {kMentions, "plain"};
  report.head.command = kMentions;
  report.benchmarks = {named(kMentions, Verdict::kInconclusive, 5.0)};
  report.benchmarks[0].reason = kMentions;
  report.benchmarks[0].diff_flamegraph = kMentions;
  report.benchmarks[0].top_functions = {{kMentions, 0.5, 0.25}};
  report.added = {{kMentions, kMentions}};
  report.noise = {{"base", kMentions, kMentions, {1, 2}, 0.1}};
  report.warnings = {kMentions};
  const std::string md = render_markdown(report);
  // Outside the code spans (between backtick fences) nothing of the name.
  std::string outside;
  for (size_t at = 0; at < md.size();) {
    if (md[at] != '`') {
      outside += md[at++];
      continue;
    }
    const size_t fence = md.find_first_not_of('`', at) - at;
    const std::string ticks(fence, '`');
    size_t end = md.find(ticks, at + fence);
    while (end != std::string::npos && end + fence < md.size() &&
           md[end + fence] == '`')
      end = md.find(ticks, md.find_first_not_of('`', end));
    REQUIRE(end != std::string::npos);
    at = end + fence;
  }
  for (const char* part : {"@", "#1", "GH-", "www.", "http", "evil", "fed"})
    CHECK_MESSAGE(outside.find(part) == std::string::npos, part, outside);
  // U+202E never reaches the document; ``code`` gets a longer fence.
  CHECK(md.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(md.find("```@octocat @org/team #123 GH-7 www.evil.example "
                "https://evil.example/x mail@evil.example ``code`` "
                "\xEF\xBF\xBD"
                "fed```") != std::string::npos);
  CHECK(md.find("Base: ```@octocat") != std::string::npos);
  CHECK(md.find("``` + `plain`; head: ```@octocat") != std::string::npos);
}

TEST_CASE("markdown: reasons worded by the runner stay text") {
  CompareReport report;
  report.benchmarks = {named("a", Verdict::kUnchanged, 1.0),
                       named("b", Verdict::kInconclusive, 1.0),
                       named("c", Verdict::kInconclusive, 1.0),
                       named("d", Verdict::kInconclusive, 1.0)};
  report.benchmarks[0].reason = "p = 0.41 >= 0.05";
  report.benchmarks[1].reason = "see www.example.com";
  report.benchmarks[2].reason = "ask @octocat";
  report.benchmarks[3].reason = "see http://x/y";
  const std::string md = render_markdown(report);
  CHECK(md.find("**`a`**: unchanged, p = 0.41 &gt;= 0.05\n") !=
        std::string::npos);
  CHECK(md.find("**`b`**: inconclusive, `see www.example.com`\n") !=
        std::string::npos);
  CHECK(md.find("**`c`**: inconclusive, `ask @octocat`\n") !=
        std::string::npos);
  CHECK(md.find("**`d`**: inconclusive, `see http://x/y`\n") !=
        std::string::npos);
}

TEST_CASE("an inconclusive row says what the data could have detected") {
  CompareReport report;
  report.benchmarks = {named("wide", Verdict::kInconclusive, 1.0)};
  BenchmarkComparison& b = report.benchmarks[0];
  b.change = 0.204;
  b.ci_low = -0.101;
  b.ci_high = 0.425;
  b.detectable_change = 0.376;
  b.reason =
      "95% interval [-10.1%, +42.5%] reaches beyond \xC2\xB1"
      "5%: this data detects changes of about \xC2\xB1"
      "37.6% or "
      "more; more rounds or --paired narrow it";
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() > 3);
  CHECK(lines[3].ends_with("+20.4% [-10.1%, +42.5%]  -  inconclusive: " +
                           b.reason));
  // The markdown keeps the runner's wording as text (brackets escaped).
  const std::string md = render_markdown(report);
  CHECK(md.find("**`wide`**: inconclusive, 95% interval \\[-10.1%, "
                "+42.5%\\] reaches beyond \xC2\xB1"
                "5%: this data detects changes of about \xC2\xB1"
                "37.6% or "
                "more; more rounds or --paired narrow it\n") !=
        std::string::npos);
  CHECK(md.find("- change: +20.4% [-10.1%, +42.5%]; this data detects "
                "changes of about \xC2\xB1"
                "37.6% or more\n") != std::string::npos);
  // Its one line says it could be either, and what this data detects.
  CHECK(md.find("\n- inconclusive `wide`: +20.4% [-10.1%, +42.5%] (1.00 ns "
                "\xE2\x86\x92 1.00 ns), the 95% CI reaches beyond \xC2\xB1"
                "5%: could be either; this data detects about \xC2\xB1"
                "37.6% or more\n") != std::string::npos);
  CHECK(md.find("<code>") == std::string::npos);
}

TEST_CASE("markdown: code spans keep edge spaces and backticks") {
  CompareReport report;
  report.warnings = {"`", " x ", "``a`", "   ", "|"};
  const std::string md = render_markdown(report);
  CHECK(md.find("\n- `` ` ``\n") != std::string::npos);
  CHECK(md.find("\n- `  x  `\n") != std::string::npos);
  CHECK(md.find("\n- ``` ``a` ```\n") != std::string::npos);
  CHECK(md.find("\n- `   `\n") != std::string::npos);
  CHECK(md.find("\n- `|`\n") != std::string::npos);  // not in a table
}

TEST_CASE("text: header, aligned columns, sections") {
  const CompareReport report = testing::sample_compare_report();
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() > 10);
  CHECK(lines[0] ==
        "base runner-profile.base-1 + runner-profile.base-2 vs head "
        "runner-profile.head (Mann\xE2\x80\x93Whitney U and Welch's t, Holm, "
        "alpha 0.05, threshold 5%)");
  CHECK(lines[1].empty());
  CHECK(lines[2].starts_with("benchmark "));
  // Columns line up: "change" starts at the same place on every row (in
  // characters; the names here are one column per character but for 日本).
  const size_t at = lines[2].find("change [95% CI]");
  CHECK(lines[4].find("-15.3% [-17.1%, -13.5%]") == at);
  CHECK(lines[5].find("+0.8% [-0.4%, +2.1%]") == at + 2);  // "µ" is 2 bytes
  CHECK(lines[3].ends_with("regression"));
  CHECK(lines[7].ends_with("inconclusive: 3 rounds in base, need 6"));
  // The long name is shortened in the middle to 60 columns.
  CHECK(lines[6].starts_with(
      "BM_HashTable/insert/1048576/r\xE2\x80\xA6:8/iterations:1000/"
      "manual_time   2.50 s"));
  const std::string text = render_text(report);
  CHECK(text.find("\nverdict regression: 1 regression, 1 improvement, 2 "
                  "unchanged, 1 "
                  "inconclusive; 1 added, 1 removed\n") != std::string::npos);
  CHECK(text.find("\nadded (only in head):\n  new_bench  "
                  "bench_new.cpp::new_bench\n") != std::string::npos);
  CHECK(text.find("  run-to-run spread up to 3.1%: a threshold above that "
                  "avoids false alarms (now 5%)\n") != std::string::npos);
  CHECK(text.find("\nwhere the time went: fib_20 (fib_20.diff.svg)\n") !=
        std::string::npos);
  CHECK(
      text.ends_with("\nwarnings:\n  head: results/4242.json: benchmark "
                     "'bench_old.cpp::broken' has 0 rounds: left out\n"));
  for (const std::string& line : lines) CHECK_FALSE(line.ends_with(" "));
}

TEST_CASE("text: times in human units with 3 significant digits") {
  CompareReport report;
  for (double ns : {0.0, 0.5, 12.345, 999.4, 999.7, 1234.0, 99'960.0, 4.2e6,
                    1.2e9, 1.234e12})
    report.benchmarks.push_back(named("b", Verdict::kUnchanged, ns));
  report.benchmarks.push_back(named("none", Verdict::kInconclusive, {}));
  const auto lines = lines_of(render_text(report));
  const std::vector<std::string> expected = {"0 ns",
                                             "0.500 ns",
                                             "12.3 ns",
                                             "999 ns",
                                             "1.00 \xC2\xB5s",
                                             "1.23 \xC2\xB5s",
                                             "100 \xC2\xB5s",
                                             "4.20 ms",
                                             "1.20 s",
                                             "1234 s",
                                             "n/a"};
  REQUIRE(lines.size() >= 3 + expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK_MESSAGE(
        lines[3 + i].find("  " + expected[i] + "  ") != std::string::npos,
        lines[3 + i], " wants ", expected[i]);
}

TEST_CASE("text: hostile names are printable and elided; no benchmark") {
  CompareReport report;
  report.benchmarks = {named(kHostile, Verdict::kImprovement, 1.0)};
  report.benchmarks[0].change = -0.0004;
  const std::string text = render_text(report);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("\xFF") == std::string::npos);
  CHECK(count(text, "\n") == 6);  // header, blank, 2 rows, blank, counts
  CHECK(text.find("+0.0%") != std::string::npos);  // never "-0.0%"

  const std::string empty = render_text(CompareReport{});
  CHECK(empty.find("\nno benchmark on both sides\n") != std::string::npos);
  CHECK(render_markdown(CompareReport{}).find("No benchmark on both sides.") !=
        std::string::npos);
}

TEST_CASE("markdown as GitHub renders it (cmark-gfm): lines and table") {
  const char* path = std::getenv("PATH");
  auto tool = base::find_executable("cmark-gfm", path ? path : "");
  if (!tool) RUNNER_SKIP_CASE("cmark-gfm not found (Debian package cmark-gfm)");
  CompareReport report = testing::sample_compare_report();
  report.benchmarks.push_back(named(kHostile, Verdict::kInconclusive, 3.0));
  report.benchmarks.push_back(named(kMentions, Verdict::kInconclusive, 4.0));
  report.warnings.push_back(kMentions);
  testing::TempDir dir;
  REQUIRE(
      base::write_file_atomic(dir.file("compare.md"), render_markdown(report)));
  base::UniqueFd out(::open(dir.file("compare.html").c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(out.get() >= 0);
  // GitHub's extensions for comments; raw HTML kept (<details>).
  base::SpawnOptions options;
  options.argv = {*tool,
                  "--unsafe",
                  "-e",
                  "table",
                  "-e",
                  "strikethrough",
                  "-e",
                  "tagfilter",
                  "-e",
                  "autolink",
                  dir.file("compare.md")};
  options.stdout_fd = out.get();
  auto child = base::ChildProcess::spawn(options);
  REQUIRE_MESSAGE(child, child.error().what());
  auto status = child->wait();
  REQUIRE(status);
  REQUIRE(status->success());
  auto html = base::read_file(dir.file("compare.html"));
  REQUIRE(html);
  // Above the details: one list item per benchmark, each name one code
  // span (the regression's line also names its function).
  const std::string top = html->substr(0, html->find("<details>"));
  CHECK(count(top, "<table>") == 0);
  CHECK(count(top, "<li>") == report.benchmarks.size());
  CHECK(count(top, "<code>") == report.benchmarks.size() + 1);
  CHECK(count(top, "<strong>regression</strong>") == 1);
  CHECK(top.find("<li>inconclusive <code>a|b &lt;script&gt;x&lt;/script&gt; "
                 "*s* _u_ [l](u) `c` $m$ ~t~ #h \\| &amp;amp; | x | y |") !=
        std::string::npos);
  // The table, first in the details: its rows and aligned cells.
  const size_t details = html->find("<details>");
  const std::string table =
      html->substr(details, html->find("</table>", details) - details);
  CHECK(count(table, "<table>") == 1);
  CHECK(count(table, "<tr>") == 1 + report.benchmarks.size());
  CHECK(count(table, "<th ") == 5);
  CHECK(count(table, "<td") == 5 * report.benchmarks.size());
  // The hostile name is shown as its text, nothing else.
  CHECK(
      table.find("<td align=\"left\"><code>a|b &lt;script&gt;x&lt;/script&gt; "
                 "*s* _u_ [l](u) `c` $m$ ~t~ #h \\| &amp;amp; | x | y |") !=
      std::string::npos);
  // No link, and nothing of the names outside <code> (where GitHub makes
  // no @mention or #reference either).
  CHECK(html->find("<a ") == std::string::npos);
  const std::string rest = outside_code(*html);
  for (const char* part : {"@", "#1", "evil", "script", "[l]"})
    CHECK_MESSAGE(rest.find(part) == std::string::npos, part);
  CHECK(count(*html, "<table>") == 3);  // + two top-function tables
  CHECK(count(*html, "<details>") == 4);
}

TEST_CASE("text and markdown: paired mode and other settings") {
  CompareReport report;
  report.base.command = "./bench --old";
  report.head.command = "./bench --new";
  report.settings.paired = true;
  report.settings.correction = format::Correction::kNone;
  report.settings.alpha = 0.01;
  report.settings.threshold = 0.025;
  report.settings.confidence = 0.9;
  report.benchmarks = {named("pair", Verdict::kRegression, 2e6)};
  report.benchmarks[0].test = format::CompareTest::kWilcoxonSignedRank;
  report.benchmarks[0].change = 0.031;
  report.benchmarks[0].p_value = report.benchmarks[0].p_value_raw = 0.004;
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() >= 4);
  CHECK(lines[0] ==
        "base './bench --old' vs head './bench --new' (Wilcoxon signed-rank, "
        "paired, no correction, alpha 0.01, threshold 2.5%)");
  CHECK(lines[2] ==
        "benchmark     base     head  change [90% CI]      p  verdict");
  CHECK(lines[3] ==
        "pair       2.00 ms  2.00 ms  +3.1%            0.004  regression");
  const std::string md = render_markdown(report);
  CHECK(md.find("- test: Wilcoxon signed-rank, p = 0.004\n") !=
        std::string::npos);
  CHECK(md.find("| change [90% CI] |") != std::string::npos);
}

TEST_CASE("text and markdown: the times shown are the estimator's") {
  // Welch's t compares means: the table shows the means beside its change,
  // not the medians; the median test and the rank test show medians.
  CompareReport report;
  report.benchmarks = {named("w", Verdict::kRegression, 4.8e3)};
  BenchmarkComparison& b = report.benchmarks[0];
  b.test = format::CompareTest::kWelchT;
  b.base.mean_ns = 5.2e3;
  b.head.mean_ns = 5.6e3;
  b.head.median_ns = 5.76e3;
  b.change = 0.4 / 5.2;
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() >= 4);
  CHECK(lines[3].find("5.20 µs") != std::string::npos);
  CHECK(lines[3].find("5.60 µs") != std::string::npos);
  CHECK(render_markdown(report).find("| 5.20 µs | 5.60 µs |") !=
        std::string::npos);
  b.test = format::CompareTest::kMedianQuartiles;
  const auto medians = lines_of(render_text(report));
  CHECK(medians[3].find("4.80 µs") != std::string::npos);
  CHECK(medians[3].find("5.76 µs") != std::string::npos);
}

TEST_CASE("markdown: where the time went follows the change's direction") {
  // An improvement from 10 ms to 8 ms: `a` took 0.5 x 10 ms, then 0.3 x
  // 8 ms (2.6 ms less, 130% of the 2 ms change), `b` 2.2 ms less; `c` took
  // 2.8 ms more, the largest move but against the change.
  CompareReport report;
  report.benchmarks = {named("x", Verdict::kImprovement, std::nullopt)};
  BenchmarkComparison& b = report.benchmarks[0];
  b.base.median_ns = 10e6;
  b.head.median_ns = 8e6;
  b.change = -0.2;
  b.p_value = 0.001;
  b.top_functions = {{"c", 0.2, 0.6}, {"a", 0.5, 0.3}, {"b", 0.3, 0.1}};
  const auto lines = summary_lines(render_markdown(report));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "- improvement `x`: -20.0% (10.0 ms \xE2\x86\x92 8.00 ms), p = 0.001 "
        "(Holm); most of it in `a` (-2.60 ms per iteration, 130% of the "
        "change)");
  // Unchanged: no function is blamed.
  b.verdict = Verdict::kUnchanged;
  b.ci_low = -0.01;
  b.ci_high = 0.01;
  b.change = 0.0;
  b.head.median_ns = 10e6;
  const auto same = summary_lines(render_markdown(report));
  REQUIRE(same.size() == 1);
  CHECK(same[0].find("most of it") == std::string::npos);
}

TEST_CASE("text and markdown: a p-value of 0 is shown as below 1e-300") {
  CompareReport report;
  report.benchmarks = {named("tiny", Verdict::kRegression, 1e3)};
  BenchmarkComparison& b = report.benchmarks[0];
  b.change = 0.2;
  b.p_value = b.p_value_raw = 0.0;
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() >= 4);
  CHECK(lines[3].find("  <1e-300  regression") != std::string::npos);
  const auto md = summary_lines(render_markdown(report));
  REQUIRE(md.size() == 1);
  CHECK(md[0].find(", p < 1e-300 (Holm)") != std::string::npos);
}

TEST_CASE("text and markdown: the metric is said, instructions are counts") {
  CompareReport report;
  report.base.folders = {"a", "b"};
  report.head.folders = {"c", "d"};
  report.settings.metric = format::Metric::kInstructions;
  report.benchmarks = {named("i", Verdict::kRegression, 1.234e6)};
  BenchmarkComparison& b = report.benchmarks[0];
  b.test = format::CompareTest::kWelchT;
  b.base.mean_ns = 1.234e6;
  b.head.mean_ns = 2.5e9;
  b.base.source = b.head.source = format::SampleSource::kRuns;
  b.base.rounds = b.head.rounds = 2;
  b.change = 0.2;
  b.p_value = b.p_value_raw = 0.01;
  const auto lines = lines_of(render_text(report));
  REQUIRE(lines.size() >= 4);
  CHECK(lines[0].find("(Welch's t, instructions per iteration, Holm,") !=
        std::string::npos);
  CHECK(lines[3].find("1.23 M instr") != std::string::npos);
  CHECK(lines[3].find("2.50 G instr") != std::string::npos);
  const std::string md = render_markdown(report);
  CHECK(md.find("| 1.23 M instr | 2.50 G instr |") != std::string::npos);
  CHECK(md.find("- base: median 1.23 M instr, mean 1.23 M instr, stdev n/a; "
                "2 runs (one value per run)") != std::string::npos);
  report.settings.metric = format::Metric::kCpu;
  CHECK(lines_of(render_text(report))[0].find(
            "(Welch's t, CPU time per iteration, Holm,") != std::string::npos);
  CHECK(lines_of(render_text(report))[3].find("1.23 ms") != std::string::npos);
  b.base.mean_ns = 812;
  report.settings.metric = format::Metric::kInstructions;
  CHECK(lines_of(render_text(report))[3].find("812 instr") !=
        std::string::npos);
  report.settings.metric = format::Metric::kWall;
  CHECK(lines_of(render_text(report))[0].find("per iteration") ==
        std::string::npos);
}
