// The live progress line of a run on a terminal: elapsed time, benchmark
// windows (StartBenchmark: an integration's rounds or benchmarks), samples, MB
// written, samples lost and the latest benchmark, redrawn in place on stderr at
// most kRedrawsPerSecond times a second once the run is a second old. It is
// erased when a benchmark window of a second or more closes (an integration's
// window per benchmark: it prints its result then; the short windows of rounds
// leave it) and comes back with the next window or after a quiet second; log
// messages erase it before they are written; stop() erases it for good. Nothing
// is drawn when stderr is not a terminal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

// Asio: specific headers only, <utility> first (Boost 1.74 + GCC 12).
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace runner::agent {

// What the line shows, read at each redraw.
struct ProgressCounts {
  uint64_t elapsed_ns = 0;
  uint64_t rounds = 0;  // StartBenchmark windows so far ("windows")
  uint64_t samples = 0, bytes_written = 0, lost_samples = 0;
  uint64_t benchmarks = 0;  // distinct benchmarks announced (CurrentBenchmark)
  std::string benchmark;    // the latest one announced
  bool sampling = false;    // inside a benchmark window
};

// The line, at most `width` columns (0: no limit); control characters of
// the benchmark's name are shown as '?'.
std::string format_progress(const ProgressCounts& counts, size_t width);

class ProgressLine {
 public:
  static constexpr int kRedrawsPerSecond = 4;
  static constexpr uint64_t kFirstDrawNs = 1'000'000'000;
  static constexpr uint64_t kQuietNs = 1'000'000'000;

  // `read` runs on the io_context's thread; it must be thread-safe against
  // whatever else updates what it reads (the sampler's drain thread).
  ProgressLine(boost::asio::io_context& io,
               std::function<ProgressCounts()> read);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Starts the redraws when stderr is a terminal (TERM is not "dumb").
  void start();
  // A benchmark window opened, closed: after a long window the line goes
  // until the next window or a quiet second.
  void window_opened();
  void window_closed();
  // Erases the line; nothing is drawn after.
  void stop();

 private:
  void schedule();
  void redraw();

  boost::asio::steady_timer timer_;
  std::function<ProgressCounts()> read_;
  bool running_ = false, shown_ = false;
  uint64_t opened_ns_ = 0;  // when the last window opened
  uint64_t closed_ns_ = 0;  // when the line was erased at a window's end
};

}  // namespace runner::agent
