// `runner report --format perf-script`: every sample read, in `perf
// script`'s default layout, to standard output.
#include <algorithm>
#include <array>
#include <charconv>

#include "report/output.hpp"
#include "report/symbolizer.hpp"

namespace runner::report {
namespace {

// Appends `value` in decimal, padded with `fill` to `width` (on the left,
// or on the right when `left_align`).
void append_uint(std::string& out, uint64_t value, size_t width,
                 bool left_align = false, char fill = ' ') {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  const size_t pad = n < width ? width - n : 0;
  if (!left_align) out.append(pad, fill);
  while (n > 0) out.push_back(digits[--n]);
  if (left_align) out.append(pad, fill);
}

// A tab, `addr` in lowercase hex right-aligned in 17 columns, a space.
using AddressField = std::array<char, 19>;
void address_field(uint64_t addr, AddressField& line) {
  char digits[16];
  char* end = std::to_chars(digits, digits + sizeof(digits), addr, 16).ptr;
  const auto n = static_cast<size_t>(end - digits);
  line.fill(' ');
  line[0] = '\t';
  std::copy(digits, end, line.end() - 1 - n);
}

// `perf script`'s default layout for our samples, but with the comm
// left-aligned: "%-16s %6u/%-6u %5lu.%09lu: event:" then "\t%16lx name
// (dso)" per frame. Hand-formatted
// into one buffer written out in large blocks: this runs for every frame of
// every sample.
class PerfScriptOutput : public Output {
 public:
  PerfScriptOutput(std::ostream& out, Symbolizer& symbolizer)
      : out_(out), symbolizer_(symbolizer) {}
  ~PerfScriptOutput() override { flush(); }

  void add_sample(const SampleView& view) override {
    append_header(view);
    const UnwoundStack& stack = view.stack;
    for (size_t i = 0; i < stack.addrs.size(); ++i) {
      const uint64_t addr = stack.addrs[i];
      AddressField line;
      address_field(addr, line);
      // Inlined functions (--inline) first, at the same address; like perf,
      // they carry " (inlined)" instead of the dso.
      for (uint32_t id : symbolizer_.resolve_frames(
               static_cast<int32_t>(view.sample.pid), addr, stack.exact_pc(i),
               view.sample.time)) {
        buffer_.append(line.data(), line.size());
        buffer_ += frame_text(id);
      }
    }
    buffer_ += '\n';
    if (buffer_.size() >= kFlushBytes) flush();
  }

  void finish(const ReportTotals& /*totals*/,
              std::vector<std::string>& /*errors*/) override {
    flush();
  }

 private:
  static constexpr size_t kFlushBytes = 256 << 10;

  void append_header(const SampleView& view) {
    const perfdata::SampleRecord& sample = view.sample;
    // Left-aligned: speedscope's and Firefox Profiler's importers take a
    // line starting with a space for no sample header.
    buffer_ += view.comm;
    if (view.comm.size() < 16) buffer_.append(16 - view.comm.size(), ' ');
    buffer_ += ' ';
    append_uint(buffer_, sample.pid, 6);
    buffer_ += '/';
    append_uint(buffer_, sample.tid, 6, /*left_align=*/true);  // %-6u
    buffer_ += ' ';
    append_uint(buffer_, sample.time / 1000000000u, 5);
    buffer_ += '.';
    append_uint(buffer_, sample.time % 1000000000u, 9, false, '0');
    buffer_ += ": ";
    buffer_ += view.event;
    buffer_ += ":\n";
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  // "name (dso)\n", or "name\n" for an inlined frame; built once per frame.
  const std::string& frame_text(uint32_t id) {
    if (id >= frame_text_.size()) frame_text_.resize(id + 1);
    std::string& text = frame_text_[id];
    if (text.empty()) {
      const FrameInfo& frame = symbolizer_.frame(id);
      text = frame.name;
      if (!frame.inlined) {
        text += " (";
        text += frame.dso.empty() ? "[unknown]" : frame.dso;
        text += ')';
      }
      text += '\n';
    }
    return text;
  }

  std::ostream& out_;
  Symbolizer& symbolizer_;
  std::string buffer_;
  std::vector<std::string> frame_text_;
};

}  // namespace

std::unique_ptr<Output> make_perf_script_output(std::ostream& out,
                                                Symbolizer& symbolizer) {
  return std::make_unique<PerfScriptOutput>(out, symbolizer);
}

}  // namespace runner::report
