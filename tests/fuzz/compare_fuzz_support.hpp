// Shared by the targets of `runner compare`'s inputs (compare_results,
// compare_markers): profile folders in the scratch directory, the
// comparison run as `runner compare --format markdown BASE HEAD` runs it,
// and what its markdown must hold whatever the folders say.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

#include "base/fs.hpp"
#include "base/text.hpp"
#include "compare/compare.hpp"
#include "format/format.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace runner::fuzz {

// <scratch>/<name>, created once.
inline std::string compare_folder(const std::string& name) {
  const std::string dir = scratch_dir() + "/" + name;
  std::filesystem::create_directories(dir + "/results");
  return dir;
}

// The results of the bench_example seed (fib, memcpy, sort; 5 rounds of 1
// iteration each, with round arrays, or without them: summary stats only).
inline std::string bench_example_results(bool with_rounds) {
  const std::string path = std::string(RUNNER_FUZZ_SOURCE_DIR) +
                           "/corpus/compare_results/bench_example.json";
  auto text = base::read_file(path);
  if (!text) std::abort();
  auto results = format::read_walltime_results(*text);
  if (!results) std::abort();
  if (!with_rounds)
    for (auto& b : results->benchmarks) {
      b.times_per_round_ns.clear();
      b.iters_per_round.clear();
    }
  return format::write_walltime_results(results->creator, results->benchmarks);
}

// No byte of a stored run may act on the markdown: valid UTF-8 with no
// control character but line feeds and no bidirectional control; every
// table row keeps its cells (GFM splits at each '|' not after a '\').
inline void check_markdown(std::string_view md) {
  if (base::first_invalid_utf8(md) != std::string_view::npos) std::abort();
  for (size_t at = 0; at < md.size();) {
    const base::CodePoint cp = base::decode_utf8(md, at);
    if ((base::is_control_character(cp.value) && cp.value != '\n') ||
        base::is_bidi_control(cp.value))
      std::abort();
    at += cp.length;
  }
  std::istringstream lines{std::string(md)};
  size_t columns = 0;  // of the table being read (by its header)
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("|")) {
      columns = 0;
      continue;
    }
    // The benchmarks' table has 5 columns, the top functions' 4; no other
    // table (nor a row outside one) may appear.
    if (columns == 0)
      columns = line.starts_with("| benchmark |")  ? 5
                : line.starts_with("| function |") ? 4
                                                   : 0;
    if (columns == 0) std::abort();
    size_t pipes = 0;
    for (size_t i = 0; i < line.size(); ++i)
      pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (pipes != columns + 1) std::abort();
  }
}

// `runner compare --format markdown BASE HEAD` (compare folder under
// `out_dir`): an exit of 2 says why on one line; 0 and 1 print markdown
// that check_markdown accepts.
inline void compare_and_check(const std::string& base_folder,
                              const std::string& head_folder,
                              const std::string& out_dir) {
  compare::CompareOptions options;
  options.base = {base_folder};
  options.head = {head_folder};
  options.out_dir = out_dir;
  options.format = compare::OutputFormat::kMarkdown;
  std::ostringstream out, err;
  const int code = compare::run_compare(options, out, err);
  if (code == 2) {
    if (err.str().empty() || !out.str().empty()) std::abort();
    return;
  }
  if (code != 0 && code != 1) std::abort();
  check_markdown(out.str());
}

}  // namespace runner::fuzz
