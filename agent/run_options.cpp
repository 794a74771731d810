#include "agent/run_options.hpp"

#include <algorithm>
#include <cstdlib>

namespace runner::agent {

base::Result<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return base::Error("empty size");
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos, 10);
  } catch (...) {
    return base::Error("invalid size '" + text + "'");
  }
  std::string unit = text.substr(pos);
  uint64_t mult = 1;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB")
    mult = 1024;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    mult = 1024 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    mult = 1024ull << 20;
  else
    return base::Error("invalid size unit in '" + text + "'");
  return static_cast<uint64_t>(value) * mult;
}

base::Status parse_profile_options(const ParsedArgs& args, RunOptions& out,
                                   const std::string& command_name) {
  const std::string prefix = "runner " + command_name + ": ";
  if (auto v = args.get("profile-folder")) out.profile_folder = *v;
  if (auto v = args.get("freq")) {
    char* end = nullptr;
    unsigned long freq = std::strtoul(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || freq == 0 || freq > 100000)
      return base::Error(prefix + "--freq must be a number of Hz in 1..100000");
    out.sampler.frequency = static_cast<uint32_t>(freq);
  }
  if (auto v = args.get("call-graph")) {
    if (*v == "fp") {
      out.sampler.call_graph = profiler::CallGraphMode::kFramePointer;
    } else if (v->rfind("dwarf", 0) == 0) {
      out.sampler.call_graph = profiler::CallGraphMode::kDwarf;
      if (v->size() > 5) {
        if ((*v)[5] != ',')
          return base::Error(prefix +
                             "--call-graph must be dwarf[,SIZE] or fp");
        auto size = parse_size(v->substr(6));
        if (!size)
          return base::Error(prefix +
                             "--call-graph: " + size.error().message());
        out.sampler.stack_size =
            static_cast<uint32_t>(std::min<uint64_t>(*size, UINT32_MAX));
      }
    } else {
      return base::Error(prefix + "--call-graph must be dwarf[,SIZE] or fp");
    }
  }
  if (auto v = args.get("event")) out.sampler.event = *v;
  if (auto v = args.get("mmap-size")) {
    auto size = parse_size(*v);
    if (!size)
      return base::Error(prefix + "--mmap-size: " + size.error().message());
    out.sampler.mmap_size = *size;
  }
  out.sampler.tracking_event = !args.has("no-tracking-event");
  out.profile = !args.has("no-profile");
  out.allow_no_profile = args.has("allow-no-profile");
  out.allow_empty = args.has("allow-empty");
  out.report = args.has("report");
  if (auto v = args.get("fifo-dir")) out.fifo_dir = *v;
  out.shared_fifos = args.has("shared-fifos");
  if (auto v = args.get("kill-after")) {
    char* end = nullptr;
    double seconds = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !(seconds >= 0) || seconds > 3600)
      return base::Error(prefix +
                         "--kill-after must be a number of seconds in 0..3600");
    out.kill_after =
        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
  }
  if (out.profile) {
    auto valid = profiler::validate_options(out.sampler);
    if (!valid) return base::Error(prefix + valid.error().message());
  }
  return {};
}

}  // namespace runner::agent
