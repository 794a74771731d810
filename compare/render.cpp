// render_text and render_markdown: the comparison as people read it. Times
// are per iteration in human units with 3 significant digits, changes in
// percent with one decimal. Names, URIs, folders, reasons and warnings come
// from benchmarks and stored runs (hostile ones too): both outputs replace
// invalid UTF-8, control characters and bidirectional controls; the text
// elides names wider than kNameColumns in the middle; the markdown shows
// each of them as a code span, where GitHub recognises no markup, HTML,
// autolink, @mention or #reference.
#include "compare/render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::compare {
namespace {

using format::BenchmarkComparison;
using format::CompareReport;
using format::Verdict;

// Names and functions wider than this (in terminal columns) are shortened
// in the middle in the text: first half, "…", last half.
constexpr size_t kNameColumns = 60;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026
constexpr std::string_view kPlusMinus = "\xC2\xB1";     // U+00B1

// ---- numbers ----------------------------------------------------------------

std::string printf_string(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), spec, value);
  return buffer;
}

// Decimals that show `v` (> 0) with 3 significant digits once rounded.
int decimals_for(double v) {
  const int power = static_cast<int>(std::floor(std::log10(v)));
  int decimals = std::max(0, 2 - power);
  const double scale = std::pow(10.0, decimals);
  if (std::round(v * scale) / scale >= std::pow(10.0, power + 1))
    decimals = std::max(0, decimals - 1);
  return std::min(decimals, 12);
}

// "812 ns", "1.23 µs", "45.6 ms", "1.00 s", "1234 s"; "n/a" when unknown.
std::string format_time(std::optional<double> ns) {
  if (!ns || !std::isfinite(*ns) || *ns < 0) return "n/a";
  if (*ns == 0) return "0 ns";
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {1, "ns"}, {1e3, "\xC2\xB5s"}, {1e6, "ms"}, {1e9, "s"}};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && *ns >= kUnits[unit + 1].scale) ++unit;
  double v = *ns / kUnits[unit].scale;
  int decimals = decimals_for(v);
  const double scale = std::pow(10.0, decimals);
  if (std::round(v * scale) / scale >= 1000 && unit + 1 < std::size(kUnits)) {
    v = *ns / kUnits[++unit].scale;  // 999.7 ns -> 1.00 µs
    decimals = decimals_for(v);
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f %s", decimals, v,
                kUnits[unit].name);
  return buffer;
}

// "812 instr", "1.23 k instr", "45.6 M instr", "1.00 G instr"; "n/a"
// when unknown.
std::string format_count(std::optional<double> n) {
  if (!n || !std::isfinite(*n) || *n < 0) return "n/a";
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e9, "G "}, {1e6, "M "}, {1e3, "k "}};
  char buffer[64];
  for (const auto& [scale, prefix] : kPrefixes) {
    if (*n < scale * 0.9995) continue;
    std::snprintf(buffer, sizeof(buffer), "%.*f %sinstr",
                  decimals_for(*n / scale), *n / scale, prefix);
    return buffer;
  }
  std::snprintf(buffer, sizeof(buffer), "%.0f instr", *n);
  return buffer;
}

// A side's value per iteration in the metric's unit.
std::string format_value(std::optional<double> v, format::Metric metric) {
  return metric == format::Metric::kInstructions ? format_count(v)
                                                 : format_time(v);
}

// The value (fraction, or points when already x100) with a sign and one
// decimal: "+10.2", "-0.4", "+0.0".
std::string signed_one_decimal(double v) {
  std::string digits = printf_string("%.1f", std::fabs(v));
  const bool negative = v < 0 && digits != "0.0";
  return (negative ? "-" : "+") + digits;
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  return signed_one_decimal(fraction * 100) + "%";
}

// "+10.2% [+9.1%, +11.3%]", "+10.2%" without an interval, "n/a".
std::string format_change(const BenchmarkComparison& b) {
  if (!b.change) return "n/a";
  std::string out = format_percent(*b.change);
  if (b.ci_low && b.ci_high)
    out += " [" + format_percent(*b.ci_low) + ", " +
           format_percent(*b.ci_high) + "]";
  return out;
}

// A share of samples: "12.0%".
std::string format_share(double share) {
  return std::isfinite(share) ? printf_string("%.1f%%", share * 100) : "n/a";
}

// A change of share in percentage points: "+10.5 pts".
std::string format_points(const format::FunctionShareChange& f) {
  const double points = (f.head_share - f.base_share) * 100;
  return std::isfinite(points) ? signed_one_decimal(points) + " pts" : "n/a";
}

// alpha, p-values: "0.05", "0.0012", "3.4e-07".
// Below kSmallestP (a p-value the normal tail rounds to 0): "<1e-300".
constexpr double kSmallestP = 1e-300;
std::string format_p(double p) {
  return p < kSmallestP ? "<1e-300" : printf_string("%.2g", p);
}
// "p = 0.0012", "p < 1e-300".
std::string p_phrase(double p) {
  return p < kSmallestP ? "p < 1e-300" : "p = " + format_p(p);
}
// A fraction as a plain percentage: "5%", "2.5%".
std::string format_plain_percent(double fraction) {
  return printf_string("%g", fraction * 100) + "%";
}

// ---- text safety ------------------------------------------------------------

// Terminal columns of a code point: 0 for combining marks and zero-width
// characters, 2 for East Asian wide ones and emoji, else 1.
size_t columns(char32_t c) {
  if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) ||
      (c >= 0xFE00 && c <= 0xFE0F))
    return 0;
  const bool wide =
      (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1FAFF) ||
      (c >= 0x20000 && c <= 0x3FFFD);
  return wide ? 2 : 1;
}

// The printable pieces of `s`: each code point, invalid bytes, control and
// bidirectional characters as U+FFFD (tab and line breaks as a space).
struct Piece {
  std::string_view bytes;
  size_t columns;
};

std::vector<Piece> printable_pieces(std::string_view s) {
  std::vector<Piece> pieces;
  for (size_t at = 0; at < s.size();) {
    const base::CodePoint cp = base::decode_utf8(s, at);
    const size_t length = cp.length == 0 ? 1 : cp.length;
    if (cp.value == '\t' || cp.value == '\n' || cp.value == '\r')
      pieces.push_back({" ", 1});
    else if (cp.length == 0 || base::is_control_character(cp.value) ||
             base::is_bidi_control(cp.value))
      pieces.push_back({base::kReplacementCharacter, 1});
    else
      pieces.push_back({s.substr(at, length), columns(cp.value)});
    at += length;
  }
  return pieces;
}

std::string join(const std::vector<Piece>& pieces, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out.append(pieces[i].bytes);
  return out;
}

// `s` made printable, shortened in the middle to at most `width` columns.
std::string printable(std::string_view s, size_t width = SIZE_MAX) {
  const std::vector<Piece> pieces = printable_pieces(s);
  size_t total = 0;
  for (const Piece& p : pieces) total += p.columns;
  if (total <= width) return join(pieces, 0, pieces.size());
  size_t head = 0, head_columns = 0;
  while (head < pieces.size() &&
         head_columns + pieces[head].columns <= (width - 1) / 2)
    head_columns += pieces[head++].columns;
  size_t tail = pieces.size(), tail_columns = 0;
  while (tail > head &&
         head_columns + tail_columns + pieces[tail - 1].columns + 1 <= width)
    tail_columns += pieces[--tail].columns;
  return join(pieces, 0, head) + std::string(kEllipsis) +
         join(pieces, tail, pieces.size());
}

size_t display_width(std::string_view s) {
  size_t total = 0;
  for (const Piece& p : printable_pieces(s)) total += p.columns;
  return total;
}

// Where a code span goes: in a table cell, '|' ends the cell even inside
// one unless it is escaped (GitHub takes the backslash out again).
enum class Md { kText, kCell };

// `s` shown literally in the markdown, as a code span: printable (see
// printable_pieces), fenced by one backtick more than its longest run of
// them, padded with a space when it starts or ends with a backtick or a
// space (the padding is not shown). Empty for an empty `s`.
std::string md_code(std::string_view s, Md where = Md::kText) {
  const std::string text = printable(s);
  if (text.empty()) return "";
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool spaces_only = text.find_first_not_of(' ') == std::string::npos;
  const bool pad = !spaces_only && (text.front() == '`' || text.back() == '`' ||
                                    text.front() == ' ' || text.back() == ' ');
  std::string out = fence + (pad ? " " : "");
  for (char c : text) {
    if (c == '|' && where == Md::kCell) out += '\\';
    out += c;
  }
  return out + (pad ? " " : "") + fence;
}

// Text the runner words itself (a verdict's reason) as it is when it is
// made only of characters that make no markup, link or reference
// (lower-case letters, digits, spaces, U+00B1 and . , ; : % + = ( ) < > / -
// ' [ ], the brackets escaped), without "www." or "://"; else as a code
// span.
std::string md_text(std::string_view s) {
  static constexpr std::string_view kPlain = " .,;:%+=()<>/-'[]";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (s.substr(i, kPlusMinus.size()) == kPlusMinus) {
      out += kPlusMinus;
      ++i;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (kPlain.find(c) == std::string_view::npos) {
      return md_code(s);
    } else {
      out += c == '<'   ? "&lt;"
             : c == '>' ? "&gt;"
             : c == '[' ? "\\["
             : c == ']' ? "\\]"
                        : std::string(1, c);
    }
  }
  if (s.find("www.") != std::string_view::npos ||
      s.find("://") != std::string_view::npos)
    return md_code(s);
  return out;
}

// ---- wording shared by both outputs -----------------------------------------

// What people call the tests, corrections and sources, in the order of
// their enums (format/compare_report.hpp).
constexpr std::string_view kTestTitles[] = {
    "no test", "Mann\xE2\x80\x93Whitney U", "Welch's t", "Wilcoxon signed-rank",
    "median test on quartiles"};
constexpr std::string_view kCorrectionTitles[] = {
    "Holm", "Benjamini\xE2\x80\x93Hochberg", "no correction"};
constexpr std::string_view kSourceTitles[] = {
    "per-round times", "round markers", "summary stats", "paired rounds",
    "one value per run"};
// What --metric compares, in words (absent for wall, the default).
constexpr std::string_view kMetricTitles[] = {"", "CPU time per iteration",
                                              "instructions per iteration"};

template <typename E, size_t N>
std::string_view title_of(const std::string_view (&titles)[N], E value) {
  const auto index = static_cast<size_t>(value);
  return index < N ? titles[index] : "?";
}

// "Mann–Whitney U and Welch's t, Holm, alpha 0.05, threshold 5%": the
// tests that ran (in a fixed order), then the settings.
std::string method_line(const CompareReport& report) {
  std::string tests;
  for (auto test :
       {format::CompareTest::kMannWhitneyU, format::CompareTest::kWelchT,
        format::CompareTest::kWilcoxonSignedRank,
        format::CompareTest::kMedianQuartiles}) {
    const bool used = std::any_of(
        report.benchmarks.begin(), report.benchmarks.end(),
        [&](const BenchmarkComparison& b) { return b.test == test; });
    if (used)
      tests += (tests.empty() ? "" : " and ") +
               std::string(title_of(kTestTitles, test));
  }
  const format::CompareSettings& s = report.settings;
  std::string out = tests.empty() ? "" : tests + ", ";
  if (s.metric != format::Metric::kWall)
    out += std::string(title_of(kMetricTitles, s.metric)) + ", ";
  if (s.paired) out += "paired, ";
  return out + std::string(title_of(kCorrectionTitles, s.correction)) +
         ", alpha " + format_p(s.alpha) + ", threshold " +
         format_plain_percent(s.threshold);
}

// "1 regression, 0 improvements, 3 unchanged" (+ ", 1 inconclusive").
std::string counts_line(const CompareReport& report) {
  auto count = [&](Verdict v) {
    return std::count_if(
        report.benchmarks.begin(), report.benchmarks.end(),
        [&](const BenchmarkComparison& b) { return b.verdict == v; });
  };
  const auto regressions = count(Verdict::kRegression);
  const auto improvements = count(Verdict::kImprovement);
  std::string out = std::to_string(regressions) +
                    (regressions == 1 ? " regression, " : " regressions, ") +
                    std::to_string(improvements) +
                    (improvements == 1 ? " improvement, " : " improvements, ") +
                    std::to_string(count(Verdict::kUnchanged)) + " unchanged";
  if (const auto n = count(Verdict::kInconclusive); n > 0)
    out += ", " + std::to_string(n) + " inconclusive";
  return out;
}

// The overall verdict (compare.json's "verdict"): "regression", ...
std::string overall_name(const CompareReport& report) {
  return std::string(
      format::verdict_name(format::overall_verdict(report.benchmarks)));
}

// "1 added, 2 removed", "" when none.
std::string added_removed_line(const CompareReport& report) {
  std::string out;
  if (!report.added.empty())
    out += std::to_string(report.added.size()) + " added";
  if (!report.removed.empty())
    out += (out.empty() ? "" : ", ") + std::to_string(report.removed.size()) +
           " removed";
  return out;
}

// What a side was: its folders joined by " + ", or its command.
std::string side_description(const format::CompareSide& side) {
  if (!side.command.empty()) return "'" + side.command + "'";
  std::string out;
  for (const std::string& folder : side.folders)
    out += (out.empty() ? "" : " + ") + folder;
  return out.empty() ? "(nothing)" : out;
}

// The same in the markdown, each folder or the command a code span.
std::string md_side_description(const format::CompareSide& side) {
  if (!side.command.empty()) return md_code(side.command);
  std::string out;
  for (const std::string& folder : side.folders)
    out += (out.empty() ? "" : " + ") + md_code(folder);
  return out.empty() ? "(nothing)" : out;
}

std::string display_name(const std::string& name, const std::string& uri) {
  return !name.empty() ? name : !uri.empty() ? uri : "(unnamed)";
}

// The time shown for a side, from the estimator the change comes from: the
// mean under Welch's t, else the median (else the mean).
std::optional<double> shown_time(const BenchmarkComparison& b,
                                 const format::CompareSideStats& s) {
  if (b.test == format::CompareTest::kWelchT && s.mean_ns) return s.mean_ns;
  return s.median_ns ? s.median_ns : s.mean_ns;
}

double largest_spread(const CompareReport& report) {
  double spread = 0;
  for (const format::NoiseEntry& n : report.noise)
    if (std::isfinite(n.spread)) spread = std::max(spread, n.spread);
  return spread;
}

// The advice of the noise report, one sentence.
std::string noise_advice(const CompareReport& report) {
  return "run-to-run spread up to " +
         printf_string("%.1f", largest_spread(report) * 100) +
         "%: a threshold above that avoids false alarms (now " +
         format_plain_percent(report.settings.threshold) + ")";
}

// Whether a tested row took its run-to-run noise from the store's
// history, and whether one has it not estimated (said once per report).
bool any_history(const CompareReport& report) {
  return std::any_of(report.benchmarks.begin(), report.benchmarks.end(),
                     [](const BenchmarkComparison& b) {
                       return b.p_value && b.runs && b.runs->history_runs > 0;
                     });
}
bool any_noise_unknown(const CompareReport& report) {
  return std::any_of(report.benchmarks.begin(), report.benchmarks.end(),
                     [](const BenchmarkComparison& b) {
                       return b.p_value &&
                              b.noise == format::NoiseSource::kNotEstimated;
                     });
}
constexpr const char* kNoiseUnknown =
    "run-to-run noise not estimated (one run per side and no store "
    "history): a rerun can differ by more than the intervals show; compare "
    "several runs per side (--base/--head) or take the base from --store";
constexpr const char* kNoiseFromHistory =
    "run-to-run noise from the store's history: ";

std::string medians_list(const format::NoiseEntry& n) {
  std::string out;
  for (double m : n.medians_ns)
    out += (out.empty() ? "" : ", ") + format_time(m);
  return out;
}

// ---- text -------------------------------------------------------------------

enum class Align { kLeft, kRight };

// Rows of cells as aligned columns, two spaces apart, no trailing spaces.
std::string columns_text(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<Align>& align,
                         const std::string& indent) {
  std::vector<size_t> widths(align.size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - display_width(row[i]), ' ');
      if (i > 0) line += "  ";
      line += align[i] == Align::kRight ? pad + row[i] : row[i] + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string text_table(const CompareReport& report) {
  std::vector<std::vector<std::string>> rows = {
      {"benchmark", "base", "head",
       "change [" + format_plain_percent(report.settings.confidence) + " CI]",
       "p", "verdict"}};
  for (const BenchmarkComparison& b : report.benchmarks) {
    std::string verdict(format::verdict_name(b.verdict));
    if (b.verdict == Verdict::kInconclusive && !b.reason.empty())
      verdict += ": " + printable(b.reason);
    rows.push_back({printable(display_name(b.name, b.uri), kNameColumns),
                    format_value(shown_time(b, b.base), report.settings.metric),
                    format_value(shown_time(b, b.head), report.settings.metric),
                    format_change(b), b.p_value ? format_p(*b.p_value) : "-",
                    verdict});
  }
  return columns_text(rows,
                      {Align::kLeft, Align::kRight, Align::kRight, Align::kLeft,
                       Align::kRight, Align::kLeft},
                      "");
}

std::string text_refs(const char* title,
                      const std::vector<format::BenchmarkRef>& refs) {
  if (refs.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const format::BenchmarkRef& r : refs)
    rows.push_back({printable(display_name(r.name, r.uri), kNameColumns),
                    printable(r.uri)});
  return std::string(title) + "\n" +
         columns_text(rows, {Align::kLeft, Align::kLeft}, "  ");
}

std::string text_noise(const CompareReport& report) {
  if (report.noise.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const format::NoiseEntry& n : report.noise)
    rows.push_back({printable(n.side),
                    printable(display_name(n.name, n.uri), kNameColumns),
                    "spread " + printf_string("%.1f%%", n.spread * 100),
                    "medians " + medians_list(n)});
  return "\nrun-to-run noise (several folders on one side):\n" +
         columns_text(rows,
                      {Align::kLeft, Align::kLeft, Align::kRight, Align::kLeft},
                      "  ") +
         "  " + noise_advice(report) + "\n";
}

std::string text_functions(const BenchmarkComparison& b) {
  std::string out = "\nwhere the time went: " +
                    printable(display_name(b.name, b.uri), kNameColumns);
  if (!b.diff_flamegraph.empty())
    out += " (" + printable(b.diff_flamegraph) + ")";
  std::vector<std::vector<std::string>> rows = {
      {"function", "base", "head", "change"}};
  for (const format::FunctionShareChange& f : b.top_functions)
    rows.push_back({printable(f.function, kNameColumns),
                    format_share(f.base_share), format_share(f.head_share),
                    format_points(f)});
  return out + "\n" +
         columns_text(
             rows, {Align::kLeft, Align::kRight, Align::kRight, Align::kRight},
             "  ");
}

// ---- markdown ---------------------------------------------------------------

std::string md_table(const CompareReport& report) {
  std::string out = "| benchmark | base | head | change [" +
                    format_plain_percent(report.settings.confidence) +
                    " CI] | verdict |\n| :-- | --: | --: | :-- | :-- |\n";
  for (const BenchmarkComparison& b : report.benchmarks) {
    std::string verdict(format::verdict_name(b.verdict));
    if (b.verdict == Verdict::kRegression) verdict = "**" + verdict + "**";
    out += "| " + md_code(display_name(b.name, b.uri), Md::kCell) + " | " +
           format_value(shown_time(b, b.base), report.settings.metric) + " | " +
           format_value(shown_time(b, b.head), report.settings.metric) + " | " +
           format_change(b) + " | " + verdict + " |\n";
  }
  return out;
}

// The time per iteration a function took on a side: its share of the
// samples times the side's time (the estimator's).
struct FunctionTime {
  const format::FunctionShareChange* function = nullptr;
  double delta_ns = 0;  // head's time in it minus base's
};

// Among the top functions, the one whose time per iteration moved most in
// the direction of the change (either way without one).
FunctionTime largest_move(const BenchmarkComparison& b, double base_ns,
                          double head_ns) {
  FunctionTime best;
  for (const format::FunctionShareChange& f : b.top_functions) {
    const double delta = f.head_share * head_ns - f.base_share * base_ns;
    if (!std::isfinite(delta)) continue;
    const bool along =
        !b.change || *b.change == 0 || (*b.change > 0) == (delta > 0);
    if (along && std::abs(delta) > std::abs(best.delta_ns)) best = {&f, delta};
  }
  return best;
}

// Where the time went: "most of it in `f` (+42.1 ms per iteration, 98% of
// the change)" (the share of the change for a regression or an
// improvement), or "" without profiles or times.
std::string md_where(const BenchmarkComparison& b, format::Metric metric) {
  const std::optional<double> base = shown_time(b, b.base);
  const std::optional<double> head = shown_time(b, b.head);
  if (!base || !head) return "";
  const FunctionTime best = largest_move(b, *base, *head);
  if (!best.function) return "";
  std::string out = "most of it in " + md_code(best.function->function) + " (" +
                    (best.delta_ns < 0 ? "-" : "+") +
                    format_value(std::abs(best.delta_ns), metric) +
                    " per iteration";
  const double total = *head - *base;
  if ((b.verdict == Verdict::kRegression ||
       b.verdict == Verdict::kImprovement) &&
      total != 0 && std::isfinite(total))
    out += ", " + printf_string("%.0f%%", best.delta_ns / total * 100) +
           " of the change";
  return out + ")";
}

// How sure the verdict is, in words: the p-value of a regression or an
// improvement, the equivalence of unchanged, the detectable change or the
// reason of inconclusive.
std::string md_how_sure(const BenchmarkComparison& b,
                        const format::CompareSettings& settings) {
  const std::string ci = format_plain_percent(settings.confidence) + " CI";
  const std::string threshold =
      std::string(kPlusMinus) + format_plain_percent(settings.threshold);
  switch (b.verdict) {
    case Verdict::kRegression:
    case Verdict::kImprovement:
      if (!b.p_value) break;
      return p_phrase(*b.p_value) + " (" +
             std::string(title_of(kCorrectionTitles, settings.correction)) +
             ")";
    case Verdict::kUnchanged:
      return "the whole " + ci + " within " + threshold;
    case Verdict::kInconclusive:
      if (!b.change || !b.detectable_change) break;
      return "the " + ci + " reaches beyond " + threshold +
             ": could be either; this data detects about " +
             std::string(kPlusMinus) +
             printf_string("%.1f%%", *b.detectable_change * 100) + " or more";
  }
  return md_text(b.reason);
}

// One line a reviewer acts on: verdict, benchmark, change with its
// interval and both times, how sure, and where the time went.
std::string md_line(const BenchmarkComparison& b,
                    const format::CompareSettings& settings) {
  std::string verdict(format::verdict_name(b.verdict));
  if (b.verdict == Verdict::kRegression) verdict = "**" + verdict + "**";
  std::string said;
  if (b.change)
    said = format_change(b) + " (" +
           format_value(shown_time(b, b.base), settings.metric) +
           " \xE2\x86\x92 " +
           format_value(shown_time(b, b.head), settings.metric) + ")";
  const std::string sure = md_how_sure(b, settings);
  if (!sure.empty()) said += (said.empty() ? "" : ", ") + sure;
  const std::string where =
      b.verdict == Verdict::kUnchanged ? "" : md_where(b, settings.metric);
  if (!where.empty()) said += (said.empty() ? "" : "; ") + where;
  return "- " + verdict + " " + md_code(display_name(b.name, b.uri)) +
         (said.empty() ? "" : ": " + said) + "\n";
}

std::string md_lines(const CompareReport& report) {
  std::string out;
  for (const BenchmarkComparison& b : report.benchmarks)
    out += md_line(b, report.settings);
  return out;
}

std::string md_side(const char* title, const format::CompareSideStats& s,
                    format::Metric metric) {
  const bool runs = s.source == format::SampleSource::kRuns;
  std::string out = std::string("- ") + title + ": median " +
                    format_value(s.median_ns, metric) + ", mean " +
                    format_value(s.mean_ns, metric) + ", stdev " +
                    format_value(s.stdev_ns, metric) + "; " +
                    std::to_string(s.rounds) +
                    (runs ? (s.rounds == 1 ? " run" : " runs")
                          : (s.rounds == 1 ? " round" : " rounds"));
  if (s.folders > 0)
    out += " from " + std::to_string(s.folders) +
           (s.folders == 1 ? " folder" : " folders");
  return out + " (" + std::string(title_of(kSourceTitles, s.source)) + ")\n";
}

std::string md_test(const BenchmarkComparison& b,
                    const format::CompareSettings& settings) {
  std::string out = "- test: " + std::string(title_of(kTestTitles, b.test));
  if (b.p_value) out += ", " + p_phrase(*b.p_value);
  if (b.p_value_raw && settings.correction != format::Correction::kNone)
    out += " after " +
           std::string(title_of(kCorrectionTitles, settings.correction)) +
           " (" + format_p(*b.p_value_raw) + " before)";
  return out + "\n";
}

std::string decided_by(format::NoiseSource noise) {
  if (noise == format::NoiseSource::kRounds)
    return "the rounds' interval is wider and decided";
  if (noise == format::NoiseSource::kHistory)
    return "the stored runs' spread decided";
  return "the runs decided";
}

// The run-level estimate: "- runs: 3 + 3, spread 4.1% (log stdev), run
// level +9.5% [-1.1%, +19.7%], p = 0.071; the runs decided".
std::string md_runs(const BenchmarkComparison& b) {
  if (!b.runs) return "";
  const format::RunLevelStats& r = *b.runs;
  std::string out = "- runs: " + std::to_string(r.base_runs) + " + " +
                    std::to_string(r.head_runs);
  if (r.history_runs > 0)
    out += ", between-run spread from " + std::to_string(r.history_runs) +
           " stored runs";
  out += ", spread " + printf_string("%.1f%%", r.log_stdev * 100) +
         " (stdev of log time), run level " + format_percent(r.change) + " [" +
         format_percent(r.ci_low) + ", " + format_percent(r.ci_high) +
         "], p = " + format_p(r.p_value) + "; " + decided_by(b.noise) + "\n";
  return out;
}

std::string md_functions(const BenchmarkComparison& b) {
  if (b.top_functions.empty()) return "";
  std::string out =
      "\n| function | base share | head share | change |\n"
      "| :-- | --: | --: | --: |\n";
  for (const format::FunctionShareChange& f : b.top_functions)
    out += "| " + md_code(f.function, Md::kCell) + " | " +
           format_share(f.base_share) + " | " + format_share(f.head_share) +
           " | " + format_points(f) + " |\n";
  return out;
}

std::string md_benchmark(const BenchmarkComparison& b,
                         const format::CompareSettings& settings) {
  std::string out = "**" + md_code(display_name(b.name, b.uri)) +
                    "**: " + std::string(format::verdict_name(b.verdict));
  if (!b.reason.empty()) out += ", " + md_text(b.reason);
  out += "\n\n- uri: " + md_code(b.uri) + "\n- change: " + format_change(b);
  if (b.detectable_change)
    out += "; this data detects changes of about " + std::string(kPlusMinus) +
           printf_string("%.1f%%", *b.detectable_change * 100) + " or more";
  out += "\n" + md_test(b, settings) + md_runs(b) +
         md_side("base", b.base, settings.metric) +
         md_side("head", b.head, settings.metric);
  if (!b.diff_flamegraph.empty())
    out += "- differential flamegraph: " + md_code(b.diff_flamegraph) + "\n";
  return out + md_functions(b) + "\n";
}

std::string md_details(const std::string& summary, const std::string& body) {
  const bool blank_end = body.ends_with("\n\n");
  return "\n<details><summary>" + summary + "</summary>\n\n" + body +
         (blank_end ? "" : "\n") + "</details>\n";
}

std::string md_benchmarks(const CompareReport& report) {
  if (report.benchmarks.empty()) return "";
  const format::CompareSettings& s = report.settings;
  std::string body =
      md_table(report) + "\nBase: " + md_side_description(report.base) +
      "; head: " + md_side_description(report.head) + "; " +
      format_plain_percent(s.confidence) + " confidence intervals; at least " +
      std::to_string(s.min_rounds) + " rounds per side.\n\n";
  if (any_history(report))
    body += md_text(kNoiseFromHistory) + md_code(report.history) + ".\n\n";
  for (const BenchmarkComparison& b : report.benchmarks)
    body += md_benchmark(b, s);
  return md_details("Details: table, tests, p-values, rounds, top functions",
                    body);
}

std::string md_refs(const CompareReport& report) {
  std::string body;
  for (const format::BenchmarkRef& r : report.added)
    body += "- added: " + md_code(display_name(r.name, r.uri)) + " (" +
            md_code(r.uri) + ")\n";
  for (const format::BenchmarkRef& r : report.removed)
    body += "- removed: " + md_code(display_name(r.name, r.uri)) + " (" +
            md_code(r.uri) + ")\n";
  if (body.empty()) return "";
  return md_details(
      "Added and removed benchmarks: " + added_removed_line(report), body);
}

std::string md_noise(const CompareReport& report) {
  if (report.noise.empty()) return "";
  std::string body = noise_advice(report) + ".\n\n";
  for (const format::NoiseEntry& n : report.noise)
    body += "- " + md_code(n.side) + ", " +
            md_code(display_name(n.name, n.uri)) + ": spread " +
            printf_string("%.1f%%", n.spread * 100) + ", medians " +
            medians_list(n) + "\n";
  return md_details("Run-to-run noise: spread up to " +
                        printf_string("%.1f%%", largest_spread(report) * 100),
                    body);
}

std::string md_warnings(const CompareReport& report) {
  if (report.warnings.empty()) return "";
  std::string body;
  for (const std::string& w : report.warnings) body += "- " + md_code(w) + "\n";
  return md_details("Warnings: " + std::to_string(report.warnings.size()),
                    body);
}

}  // namespace

std::string render_text(const CompareReport& report) {
  std::string out = "base " + printable(side_description(report.base)) +
                    " vs head " + printable(side_description(report.head)) +
                    " (" + method_line(report) + ")\n\n";
  out += report.benchmarks.empty() ? "no benchmark on both sides\n"
                                   : text_table(report);
  out += "\nverdict " + overall_name(report) + ": " + counts_line(report);
  if (const std::string more = added_removed_line(report); !more.empty())
    out += "; " + more;
  out += "\n";
  if (!report.added.empty() || !report.removed.empty())
    out += "\n" + text_refs("added (only in head):", report.added) +
           text_refs("removed (only in base):", report.removed);
  out += text_noise(report);
  if (any_history(report))
    out += "\n" + std::string(kNoiseFromHistory) + printable(report.history) +
           "\n";
  if (any_noise_unknown(report))
    out += "\n" + std::string(kNoiseUnknown) + "\n";
  for (const BenchmarkComparison& b : report.benchmarks)
    if (!b.top_functions.empty()) out += text_functions(b);
  if (!report.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const std::string& w : report.warnings)
      out += "  " + printable(w) + "\n";
  }
  return out;
}

std::string render_markdown(const CompareReport& report) {
  std::string out = "**runner compare: " + overall_name(report) +
                    "**: " + counts_line(report) + " (" + method_line(report) +
                    ")";
  if (const std::string more = added_removed_line(report); !more.empty())
    out += "; " + more;
  out += "\n\n";
  if (report.benchmarks.empty())
    out += "No benchmark on both sides.\n";
  else
    out += md_lines(report);
  if (any_noise_unknown(report)) out += "\n" + md_text(kNoiseUnknown) + ".\n";
  return out + md_benchmarks(report) + md_refs(report) + md_noise(report) +
         md_warnings(report);
}

std::string render_headline(const BenchmarkComparison& b) {
  std::string out(format::verdict_name(b.verdict));
  if (!b.change)
    return b.reason.empty() ? out : out + ": " + printable(b.reason);
  out += ", " + format_change(b);
  if (b.p_value) out += ", " + p_phrase(*b.p_value);
  return out;
}

}  // namespace runner::compare
