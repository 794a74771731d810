#include "agent/progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/base.hpp"

namespace runner::agent {
namespace {

size_t terminal_width() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_col == 0)
    return 80;
  return size.ws_col;
}

bool stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 &&
         !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

// The benchmark's name as printable text: no escape sequence reaches the
// terminal.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

// Cut to `width` bytes, not inside a UTF-8 sequence (a wide character only
// makes the line shorter than the terminal).
void truncate_to(std::string& line, size_t width) {
  if (width == 0 || line.size() <= width) return;
  size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80)
    --end;
  line.resize(end);
}

}  // namespace

std::string format_progress(const ProgressCounts& c, size_t width) {
  char head[200];
  std::snprintf(head, sizeof(head),
                "runner: %.1f s, %llu windows, %llu samples, %.1f MB written, "
                "%llu lost",
                static_cast<double>(c.elapsed_ns) / 1e9,
                static_cast<unsigned long long>(c.rounds),
                static_cast<unsigned long long>(c.samples),
                static_cast<double>(c.bytes_written) / 1e6,
                static_cast<unsigned long long>(c.lost_samples));
  std::string line = head;
  if (c.benchmarks == 0) {
    line += ", no benchmark yet";
  } else {
    line += ", benchmark " + std::to_string(c.benchmarks) + ": " +
            printable(c.benchmark);
  }
  truncate_to(line, width);
  return line;
}

ProgressLine::ProgressLine(boost::asio::io_context& io,
                           std::function<ProgressCounts()> read)
    : timer_(io), read_(std::move(read)) {}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::start() {
  if (running_ || !stderr_is_terminal()) return;
  running_ = true;
  schedule();
}

void ProgressLine::window_opened() { opened_ns_ = base::monotonic_ns(); }

void ProgressLine::window_closed() {
  const uint64_t now = base::monotonic_ns();
  if (now - opened_ns_ < kQuietNs) return;  // a round
  closed_ns_ = now;
  if (shown_) base::set_status_line("");
  shown_ = false;
}

void ProgressLine::stop() {
  if (!running_) return;
  running_ = false;
  timer_.cancel();
  if (shown_) base::set_status_line("");
  shown_ = false;
}

void ProgressLine::schedule() {
  timer_.expires_after(std::chrono::milliseconds(1000 / kRedrawsPerSecond));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !running_) return;
    redraw();
    schedule();
  });
}

void ProgressLine::redraw() {
  const ProgressCounts counts = read_();
  if (counts.elapsed_ns < kFirstDrawNs) return;
  const bool quiet =
      closed_ns_ == 0 || base::monotonic_ns() - closed_ns_ >= kQuietNs;
  if (!counts.sampling && !quiet) return;
  // One column short of the width: the cursor never wraps to a new line.
  base::set_status_line(format_progress(counts, terminal_width() - 1));
  shown_ = true;
}

}  // namespace runner::agent
