// Text and markdown of `runner history` (see history.hpp).
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "history/history.hpp"

namespace runner::history {
namespace {

// "812 ns", "1.23 µs", "45.6 ms", "2.31 s".
std::string time_text(double ns) {
  const char* unit = "ns";
  double v = ns;
  for (const char* next : {"µs", "ms", "s"}) {
    if (std::fabs(v) < 1000) break;
    v /= 1000;
    unit = next;
  }
  char text[48];
  std::snprintf(text, sizeof text, v < 10 ? "%.3g %s" : "%.4g %s", v, unit);
  return text;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", fraction * 100);
  return text;
}

// What the store said, safe for a terminal and a markdown table cell:
// control bytes as '?', and (in markdown) '`' and '|' as '\''.
std::string clean(std::string text, bool markdown = false) {
  for (char& c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
    if (markdown && (c == '`' || c == '|')) c = '\'';
  }
  return text;
}

std::string short_commit(const std::string& commit) {
  return commit.substr(0, 12);
}

// "+10.2% [+8.9%, +11.5%] at 3f2a9c1b7d0e (run 41 of 60), regression".
std::string change_text(const History& h, const Series& s, const Change& c) {
  const size_t run = s.points.at(c.step.start).run;
  std::string text = percent(c.step.change) + " [" + percent(c.step.low) +
                     ", " + percent(c.step.high) + "] at " +
                     clean(short_commit(h.runs.at(run).commit)) + " (run " +
                     std::to_string(run + 1) + " of " +
                     std::to_string(h.runs.size()) + ")";
  if (!c.verdict.empty()) text += ", " + c.verdict;
  return text;
}

size_t change_count(const History& h) {
  size_t n = 0;
  for (const Series& s : h.series) n += s.changes.size();
  return n;
}

std::string headline(const History& h) {
  std::string text = "History of " + clean(h.owner + "/" + h.repository) +
                     " '" + clean(h.branch) + "' from " + clean(h.store) +
                     ": " + std::to_string(h.runs.size()) + " runs";
  if (!h.runs.empty())
    text += " (" + h.runs.front().created_at.substr(0, 10) + " to " +
            h.runs.back().created_at.substr(0, 10) + ")";
  if (h.metric != "wall") text += ", " + h.metric + " per iteration";
  text += ", " + std::to_string(h.series.size()) + " benchmarks, " +
          std::to_string(change_count(h)) + " change points";
  if (h.skipped_records > 0)
    text += ", " + std::to_string(h.skipped_records) + " records skipped";
  return text;
}

// "1.23 M instr" for counts.
std::string count_text(double n) {
  const char* unit = "";
  double v = n;
  for (const char* next : {"k", "M", "G"}) {
    if (std::fabs(v) < 1000) break;
    v /= 1000;
    unit = next;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.3g %sinstr", v, unit);
  return text;
}

std::string latest_value(const History& h, const Series& s) {
  if (s.points.empty()) return "-";
  const double v = s.points.back().value;
  return h.metric == "instructions" ? count_text(v) : time_text(v);
}

// A link the summary may show: http(s), and nothing that ends or escapes
// a markdown link.
bool safe_url(const std::string& url) {
  if (!url.starts_with("https://") && !url.starts_with("http://")) return false;
  for (const char c : url)
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("()[]<>\"'`\\").find(c) != std::string_view::npos)
      return false;
  return url.size() <= 2000;
}

}  // namespace

void write_text(const History& h, std::ostream& out) {
  out << headline(h) << "\n";
  for (const Series& s : h.series) {
    out << "  " << clean(s.name) << ": " << latest_value(h, s) << " ("
        << s.points.size() << " runs), ";
    out << (s.changes.empty()
                ? std::string("no change point")
                : "latest change " + change_text(h, s, s.changes.back()))
        << "\n";
  }
  for (const Series& s : h.series)
    for (const Change& c : s.changes) {
      out << "change: " << clean(s.uri) << " " << change_text(h, s, c) << "\n";
      if (!c.diff_link.empty())
        out << "  differential flamegraph: " << clean(c.diff_link) << "\n";
    }
  for (const std::string& w : h.warnings)
    out << "warning: " << clean(w) << "\n";
}

void write_markdown(const History& h, std::ostream& out) {
  out << "### " << headline(h) << "\n\n";
  out << "| Benchmark | Latest | Runs | Latest change |\n";
  out << "|---|---:|---:|---|\n";
  for (const Series& s : h.series) {
    out << "| `" << clean(s.uri, true) << "` | " << latest_value(h, s) << " | "
        << s.points.size() << " | ";
    if (s.changes.empty())
      out << "none";
    else
      out << clean(change_text(h, s, s.changes.back()), true);
    out << " |\n";
  }
  if (!h.runs.empty() && safe_url(h.runs.back().ci_run_url))
    out << "\nNewest run: [" << clean(short_commit(h.runs.back().commit), true)
        << "](" << h.runs.back().ci_run_url << ")\n";
  for (const std::string& w : h.warnings)
    out << "\n> warning: " << clean(w, true) << "\n";
}

}  // namespace runner::history
