// report: offline analysis of a profile folder, from the folder alone (as a
// backend would, without the original binaries). A pipeline (report.cpp):
//
//   read: perf.pipedata ──PipedataReader──> samples
//   unwind: Unwinder (.unwind_data CFI: cfi, dwarf_expr, arch_x86_64;
//     per-pid ranges of perf.metadata) ──> return addresses; on a pool of
//     threads (unwind_pool), in batches handed back in file order, each
//     stack copy read where the reader mapped it
//   (the stages below run on the reading thread, in file order)
//   symbolize: Symbolizer (.symbols.map + load biases, perf-<pid>.map)
//     ──> frame names
//   attribute: Attribution (ExecutionTimestamps windows, rounds, tracked
//     pids) ──> per-benchmark stack counts
//   outputs (output.hpp, one interface): summary.json, <name>.folded,
//     <name>.svg | perf-script to stdout | profile.speedscope.json, in
//     <folder>/report/; then the terminal summary.
//
// ProfileFolder owns every artifact it loads (lazily, once per key);
// Attribution owns the aggregation, which grows with distinct stacks, not
// with samples.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "report/flamegraph.hpp"

namespace runner::report {

struct ReportOptions {
  std::string folder;
  // Where the default format's files go; "" : <folder>/report.
  std::string out_dir;
  bool demangle = true;
  // Expand inlined functions through the DWARF of the original ELF files
  // (or their separate debug files) when they are on disk and match the
  // profiled ones; other modules are warned about and kept per function.
  bool inline_frames = false;
  // kDefault: summary.json, .folded and .svg per benchmark + the terminal
  // summary; kPerfScript: every sample as `perf script` prints it, to the
  // output stream; kSpeedscope: profile.speedscope.json + the terminal
  // summary.
  enum class Format { kDefault, kPerfScript, kSpeedscope };
  Format format = Format::kDefault;
  unsigned top = 10;
  // 1: everything on the calling thread. N > 1: a reading thread, N - 1
  // unwinding threads, and the calling thread (symbolize, attribute, write,
  // in file order). 0: N = CPUs + 1 (one unwinding thread per CPU).
  unsigned threads = 0;
};
inline constexpr unsigned kMaxReportThreads = 256;

struct BenchmarkSummary {
  std::string name;
  uint64_t samples = 0, harness_samples = 0, lost = 0;
  // How each sample's stack ended: reached its root, cut by the end of the
  // stack copy, or stopped at code it could not walk; and how many needed
  // the frame-pointer fallback (DWARF mode, code without CFI).
  uint64_t unwound_full = 0, truncated = 0, unknown = 0;
  uint64_t frame_pointer = 0;
};

struct ReportResult {
  // 0 when something could be reported and every output was written; 1
  // when nothing could be reported or an output could not be written
  // (write_errors names each file and errno).
  int exit_code = 0;
  uint64_t samples_read = 0, samples_shown = 0;
  uint64_t outside_windows = 0, filtered_pids = 0;
  std::vector<BenchmarkSummary> benchmarks;
  std::vector<std::string> warnings;
  std::vector<std::string> write_errors;
};

base::Result<ReportResult> run_report(const ReportOptions& options,
                                      std::ostream& out, std::ostream& err);

// The newest `runner-profile.*` directory under `dir` holding perf.pipedata
// or perf.metadata.
base::Result<std::string> find_newest_profile_folder(const std::string& dir);

// For `runner compare`: each benchmark's stacks of a profile folder (the
// same attribution and symbolization as the report, nothing written), in
// the order of the timestamps; a benchmark without samples has no stacks.
// Warnings (the report's) are appended. A folder without perf.pipedata (only
// results/, say) is an Error "no profile in <folder> (no perf.pipedata)"; one
// that cannot be opened, "no profile: <why>".
struct BenchmarkStacks {
  std::string uri, name;
  std::vector<FoldedStack> stacks;  // in the benchmark's rounds
};
base::Result<std::vector<BenchmarkStacks>> load_benchmark_stacks(
    const std::string& folder, std::vector<std::string>& warnings);

// What a differential flamegraph says beside the stacks.
struct DiffContext {
  // The benchmark's verdict and change, appended to the title ("" for
  // none).
  std::string headline;
  // HEAD's time per iteration / BASE's, when both are known: frames are
  // then coloured by the change of their time per iteration (a frame's
  // share of its side times that side's time, in points of BASE's time)
  // rather than of their share.
  std::optional<double> time_ratio;
};

// A differential flamegraph, drawn as render_flamegraph draws (same search
// and zoom): the stacks of both sides in one tree, so that frames that
// exist only in BASE (code that disappeared) are drawn too; a frame's
// width is proportional to the mean of its shares in BASE and HEAD (its
// samples / all samples of the side; each side weighs the same). Its
// colour is its change: delta = head share × time_ratio - base share
// (time_ratio 1 when unknown, i.e. the change of share). Stacks may repeat
// (several folders pooled): equal stacks are summed. Fill: grey
// rgb(221,221,221) when |delta| < 0.05 points, else the mix of that grey
// and rgb(235,50,50) (grew) or rgb(60,110,235) (shrank) in proportion
// |delta| / the largest |delta| of the frames drawn. Hover: the shares,
// the difference and the samples of each side. A legend row shows the
// scale; the title is `title` + " (HEAD against BASE)" and the headline.
std::string render_diff_flamegraph(const std::string& title,
                                   const std::vector<FoldedStack>& base,
                                   const std::vector<FoldedStack>& head,
                                   const DiffContext& context = {});

// The `top` functions whose self-time share (samples with the function as
// the leaf / all samples of the side) changed most, by |change|, largest
// first; ties by name.
std::vector<format::FunctionShareChange> self_share_changes(
    const std::vector<FoldedStack>& base, const std::vector<FoldedStack>& head,
    size_t top);

}  // namespace runner::report
