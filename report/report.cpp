#include "report/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "perfdata/perfdata.hpp"
#include "report/flamegraph.hpp"
#include "report/profile_folder.hpp"
#include "report/stack.hpp"

namespace runner::report {
namespace {

struct StackHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return h;
  }
};

// Stack counts of one benchmark (or of its harness part): grows with the
// number of distinct stacks, not with samples.
using StackCounts =
    std::unordered_map<std::vector<uint32_t>, uint64_t, StackHash>;

struct Bench {
  std::string name, uri;
  StackCounts proper, harness;
  BenchmarkSummary summary;
};

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  if (out.size() > 100) out.resize(100);
  return out;
}

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f",
                whole == 0 ? 0.0
                           : 100.0 * static_cast<double>(part) /
                                 static_cast<double>(whole));
  return buf;
}

// The functions with the most samples (self: as the leaf; else: anywhere in
// the stack), by display name like the folded stacks and the flamegraph: one
// name from two modules (e.g. the same JIT function in the perf maps of two
// processes) is one entry. Ties go by the name's first frame id (the order
// in which the report first met them).
std::vector<std::pair<std::string, uint64_t>> top_functions(
    const StackCounts& stacks, const Symbolizer& symbolizer, bool self,
    size_t limit) {
  struct Count {
    uint64_t samples = 0;
    uint32_t first_id = UINT32_MAX;
  };
  std::map<std::string_view, Count> counts;
  auto add = [&](uint32_t id, uint64_t n) {
    Count& c = counts[symbolizer.frame(id).name];
    c.samples += n;
    c.first_id = std::min(c.first_id, id);
  };
  for (const auto& [stack, n] : stacks) {
    if (stack.empty()) continue;
    if (self) {
      add(stack.back(), n);
    } else {
      std::map<std::string_view, uint32_t> seen;  // name -> its smallest id
      for (uint32_t id : stack) {
        auto [it, added] = seen.emplace(symbolizer.frame(id).name, id);
        if (!added) it->second = std::min(it->second, id);
      }
      for (const auto& [name, id] : seen) add(id, n);
    }
  }
  std::vector<std::pair<std::string_view, Count>> sorted(counts.begin(),
                                                         counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.samples != b.second.samples
               ? a.second.samples > b.second.samples
               : a.second.first_id < b.second.first_id;
  });
  if (sorted.size() > limit) sorted.resize(limit);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& [name, c] : sorted)
    out.emplace_back(std::string(name), c.samples);
  return out;
}

// Folded stacks sorted by frame names, one line per distinct name sequence
// (stacks of different frames with equal names, e.g. the same JIT function
// from two processes' perf maps, are summed).
std::vector<FoldedStack> folded(const StackCounts& stacks,
                                const Symbolizer& symbolizer) {
  std::map<std::vector<std::string>, uint64_t> merged;
  for (const auto& [stack, n] : stacks) {
    std::vector<std::string> frames;
    frames.reserve(stack.size());
    for (uint32_t id : stack) frames.push_back(symbolizer.frame(id).name);
    merged[std::move(frames)] += n;
  }
  std::vector<FoldedStack> out;
  out.reserve(merged.size());
  for (auto& [frames, n] : merged) out.push_back(FoldedStack{frames, n});
  return out;
}

std::string folded_text(const std::vector<FoldedStack>& stacks) {
  std::string text;
  for (const auto& s : stacks) {
    for (size_t i = 0; i < s.frames.size(); ++i) {
      if (i) text += ';';
      // ';' separates frames: keep it out of names.
      for (char c : s.frames[i]) text += c == ';' ? ':' : c;
    }
    text += ' ' + std::to_string(s.count) + '\n';
  }
  return text;
}

// "cannot write <path>: <cause>", naming `path` once whatever the error
// already says.
std::string write_error(const std::string& path, const base::Error& error) {
  std::string cause = error.what();
  if (cause.starts_with(path + ": ")) cause.erase(0, path.size() + 2);
  return "cannot write " + path + ": " + cause;
}

const Window* find_window(const std::vector<Window>& windows, uint64_t time,
                          size_t* index) {
  for (size_t i = 0; i < windows.size(); ++i) {
    if (time >= windows[i].start && time <= windows[i].end) {
      *index = i;
      return &windows[i];
    }
  }
  return nullptr;
}

bool in_rounds(const Window& w, uint64_t time) {
  for (const auto& [start, end] : w.rounds)
    if (time >= start && time <= end) return true;
  return false;
}

// The scalar fields of a sample (what printing needs), without copying its
// callchain, registers and stack.
perfdata::SampleRecord without_vectors(const perfdata::SampleRecord& sample) {
  perfdata::SampleRecord out;
  out.id = sample.id;
  out.ip = sample.ip;
  out.pid = sample.pid;
  out.tid = sample.tid;
  out.time = sample.time;
  out.cpu = sample.cpu;
  out.period = sample.period;
  out.misc = sample.misc;
  out.attr = sample.attr;
  return out;
}

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

// `perf script`'s default layout for our samples: "%16s %6u/%-6u
// %5lu.%09lu: event:" then "\t%16lx name (dso)" per frame. Hand-formatted
// into one buffer written out in large blocks: this runs for every frame of
// every sample.
class PerfScriptPrinter {
 public:
  PerfScriptPrinter(std::ostream& out, Symbolizer& symbolizer)
      : out_(out), symbolizer_(symbolizer) {}
  ~PerfScriptPrinter() { flush(); }

  void print(const perfdata::SampleRecord& sample, const std::string& comm,
             const std::string& event, const UnwoundStack& stack) {
    if (comm.size() < 16) buffer_.append(16 - comm.size(), ' ');
    buffer_ += comm;
    buffer_ += ' ';
    append_uint(buffer_, sample.pid, 6);
    buffer_ += '/';
    append_uint(buffer_, sample.tid, 6, /*left_align=*/true);  // %-6u
    buffer_ += ' ';
    append_uint(buffer_, sample.time / 1000000000u, 5);
    buffer_ += '.';
    append_uint(buffer_, sample.time % 1000000000u, 9, false, '0');
    buffer_ += ": ";
    buffer_ += event;
    buffer_ += ":\n";
    for (size_t i = 0; i < stack.addrs.size(); ++i) {
      const uint64_t addr = stack.addrs[i];
      char line[19];  // "\t%16lx "
      line[0] = '\t';
      int pos = 17;
      line[18] = ' ';
      uint64_t v = addr;
      do {
        line[pos--] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
      } while (v != 0 && pos > 0);
      while (pos > 0) line[pos--] = ' ';
      // Inlined functions (--inline) first, at the same address; like perf,
      // they carry " (inlined)" instead of the dso.
      for (uint32_t id : symbolizer_.resolve_frames(
               static_cast<int32_t>(sample.pid), addr, stack.exact_pc(i))) {
        buffer_.append(line, sizeof(line));
        buffer_ += frame_text(id);
      }
    }
    buffer_ += '\n';
    if (buffer_.size() >= kFlushBytes) flush();
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  static constexpr size_t kFlushBytes = 256 << 10;

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

base::Result<std::string> find_newest_profile_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string best;
  fs::file_time_type best_time;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("runner-profile.", 0) != 0 || !entry.is_directory(ec))
      continue;
    if (!fs::exists(entry.path() / "perf.pipedata", ec) &&
        !fs::exists(entry.path() / "perf.metadata", ec))
      continue;
    auto t = fs::last_write_time(entry.path(), ec);
    if (best.empty() || t > best_time) {
      best = entry.path().string();
      best_time = t;
    }
  }
  if (best.empty())
    return base::Error("no runner-profile.* folder in " + dir +
                       " (give the folder as an argument)");
  return best;
}

base::Result<ReportResult> run_report(const ReportOptions& options,
                                      std::ostream& out, std::ostream& err) {
  RUNNER_ASSIGN_OR_RETURN(ProfileFolder folder,
                          ProfileFolder::open(options.folder), "report");
  ReportResult result;
  const bool perf_script = options.format == ReportOptions::Format::kPerfScript;
  Unwinder unwinder(folder);
  Symbolizer symbolizer(folder, options.demangle, options.inline_frames);
  std::vector<Bench> benches;
  std::map<std::string, size_t> bench_by_name;
  std::vector<size_t> bench_of_window;
  for (const Window& w : folder.windows()) {
    auto [it, added] = bench_by_name.emplace(w.name, benches.size());
    if (added) {
      benches.push_back(Bench{});
      benches.back().name = w.name;
      benches.back().uri = w.uri;
      benches.back().summary.name = w.name;
    }
    bench_of_window.push_back(it->second);
  }

  std::unordered_map<uint32_t, std::string> comm_by_tid;
  uint64_t lost_total = 0;
  // perf-script: this round's samples, already unwound (the stack copies
  // are not kept), printed in time order at the end of the round.
  struct Pending {
    perfdata::SampleRecord sample;  // without its vectors
    UnwoundStack stack;
  };
  std::vector<Pending> pending;
  PerfScriptPrinter printer(out, symbolizer);
  auto flush_round = [&] {
    std::stable_sort(pending.begin(), pending.end(),
                     [](const Pending& a, const Pending& b) {
                       return a.sample.time < b.sample.time;
                     });
    for (const Pending& entry : pending) {
      const perfdata::SampleRecord& sample = entry.sample;
      auto comm = comm_by_tid.find(sample.tid);
      if (comm == comm_by_tid.end()) comm = comm_by_tid.find(sample.pid);
      static const std::string kDefaultEvent = "cpu-clock";
      const std::string& event =
          sample.attr != nullptr && !sample.attr->name.empty()
              ? sample.attr->name
              : kDefaultEvent;
      if (comm != comm_by_tid.end())
        printer.print(sample, comm->second, event, entry.stack);
      else
        printer.print(sample, ":" + std::to_string(sample.tid), event,
                      entry.stack);
      ++result.samples_shown;
    }
    pending.clear();
  };
  auto reader =
      perfdata::PipedataReader::open(options.folder + "/perf.pipedata");
  if (!reader) {
    folder.warnings().push_back("perf.pipedata: " + reader.error().what());
  } else {
    // One Record for the whole file: its vectors are reused, and stack
    // copies are unwound straight from the reader's buffer.
    perfdata::Record record;
    while (true) {
      auto next = reader->next_into(record, /*copy_stack=*/false);
      if (!next) {
        folder.warnings().push_back("perf.pipedata is truncated or corrupt (" +
                                    next.error().what() + "); reporting the " +
                                    std::to_string(result.samples_read) +
                                    " samples read before it");
        break;
      }
      if (!*next) break;
      if (record.kind == perfdata::RecordKind::kFinishedRound) {
        flush_round();
        continue;
      }
      if (record.kind == perfdata::RecordKind::kComm) {
        comm_by_tid[record.comm.tid] = record.comm.comm;
        continue;
      }
      if (record.kind == perfdata::RecordKind::kTask && !record.task.is_exit) {
        // A new thread or process starts with its parent's name.
        auto parent = comm_by_tid.find(record.task.ptid);
        if (parent != comm_by_tid.end())
          comm_by_tid.emplace(record.task.tid, parent->second);
        continue;
      }
      if (record.kind == perfdata::RecordKind::kLost) {
        lost_total += record.lost.lost;
        size_t index = 0;
        if (find_window(folder.windows(), record.lost.sample_id.time, &index))
          benches[bench_of_window[index]].summary.lost += record.lost.lost;
        continue;
      }
      if (record.kind != perfdata::RecordKind::kSample) continue;
      const perfdata::SampleRecord& sample = record.sample;
      ++result.samples_read;
      if (perf_script) {
        // Printed at the end of the round, in time order, once the
        // round's COMM/FORK records (from other CPUs' buffers) are known.
        Pending entry;
        entry.stack = unwinder.unwind(sample, reader->last_stack());
        entry.sample = without_vectors(sample);
        pending.push_back(std::move(entry));
        continue;
      }
      size_t index = 0;
      const Window* window = find_window(folder.windows(), sample.time, &index);
      if (window == nullptr) {
        ++result.outside_windows;
        continue;
      }
      if (folder.filter_pids() &&
          folder.tracked_pids().count(static_cast<int32_t>(sample.pid)) == 0) {
        ++result.filtered_pids;
        continue;
      }
      Bench& bench = benches[bench_of_window[index]];
      UnwoundStack stack = unwinder.unwind(sample, reader->last_stack());
      std::vector<uint32_t> ids;
      ids.reserve(stack.addrs.size());
      // Root first, leaf last (inlined functions after their caller).
      for (size_t i = stack.addrs.size(); i-- > 0;) {
        auto frames =
            symbolizer.resolve_frames(static_cast<int32_t>(sample.pid),
                                      stack.addrs[i], stack.exact_pc(i));
        ids.insert(ids.end(), frames.rbegin(), frames.rend());
      }
      bool proper = window->rounds.empty() || in_rounds(*window, sample.time);
      (proper ? bench.proper : bench.harness)[ids] += 1;
      (proper ? bench.summary.samples : bench.summary.harness_samples) += 1;
      switch (stack.end) {
        case StackEnd::kComplete:
          ++bench.summary.unwound_full;
          break;
        case StackEnd::kTruncated:
          ++bench.summary.truncated;
          break;
        case StackEnd::kUnknown:
          ++bench.summary.unknown;
          break;
      }
      ++result.samples_shown;
    }
  }

  flush_round();
  printer.flush();

  // Outputs that could not be written (each names its file and errno):
  // the report then fails.
  std::vector<std::string> write_errors;
  if (!perf_script) {
    const std::string report_dir = options.folder + "/report";
    bool can_write = true;
    if (auto st = base::make_directories(report_dir); !st) {
      write_errors.push_back("cannot create " + report_dir + ": " +
                             st.error().what());
      can_write = false;
    }
    nlohmann::ordered_json summary = nlohmann::ordered_json::object();
    summary["folder"] = options.folder;
    summary["samples_read"] = result.samples_read;
    summary["samples_shown"] = result.samples_shown;
    summary["outside_windows"] = result.outside_windows;
    summary["filtered_pids"] = result.filtered_pids;
    summary["lost_samples"] = lost_total;
    summary["benchmarks"] = nlohmann::ordered_json::array();
    // Each benchmark's functions with the most samples as the leaf: in
    // summary.json and on the terminal.
    std::vector<std::vector<std::pair<std::string, uint64_t>>> top_self;
    for (const Bench& bench : benches)
      top_self.push_back(
          top_functions(bench.proper, symbolizer, true, options.top));
    for (size_t b = 0; b < benches.size(); ++b) {
      Bench& bench = benches[b];
      std::string base = std::to_string(b) + "_" + sanitize(bench.name);
      auto js = nlohmann::ordered_json::object();
      js["name"] = bench.name;
      js["uri"] = bench.uri;
      js["samples"] = bench.summary.samples;
      js["harness_samples"] = bench.summary.harness_samples;
      js["lost"] = bench.summary.lost;
      js["unwound"] = {{"full", bench.summary.unwound_full},
                       {"truncated", bench.summary.truncated},
                       {"unknown", bench.summary.unknown}};
      for (bool self : {true, false}) {
        auto list = nlohmann::ordered_json::array();
        const auto top =
            self ? top_self[b]
                 : top_functions(bench.proper, symbolizer, false, options.top);
        for (const auto& [name, n] : top) {
          list.push_back(
              {{"function", name},
               {"samples", n},
               {"percent", std::stod(percent(n, bench.summary.samples))}});
        }
        js[self ? "top_self" : "top_total"] = std::move(list);
      }
      if (can_write) {
        for (bool proper : {true, false}) {
          const StackCounts& stacks = proper ? bench.proper : bench.harness;
          if (stacks.empty()) continue;
          std::string stem = base + (proper ? "" : ".harness");
          auto folded_stacks = folded(stacks, symbolizer);
          const std::string folded_path = report_dir + "/" + stem + ".folded";
          if (auto st = base::write_file_atomic(folded_path,
                                                folded_text(folded_stacks));
              !st)
            write_errors.push_back(write_error(folded_path, st.error()));
          const std::string svg_path = report_dir + "/" + stem + ".svg";
          if (auto st = base::write_file_atomic(
                  svg_path,
                  render_flamegraph(bench.name + (proper ? "" : " (harness)"),
                                    folded_stacks));
              !st)
            write_errors.push_back(write_error(svg_path, st.error()));
          js[proper ? "folded" : "harness_folded"] = stem + ".folded";
          js[proper ? "flamegraph" : "harness_flamegraph"] = stem + ".svg";
        }
      }
      summary["benchmarks"].push_back(std::move(js));
      result.benchmarks.push_back(bench.summary);
    }
    summary["warnings"] = folder.warnings();
    if (can_write) {
      // Names and URIs come from the profile folder and may not be valid
      // UTF-8: invalid bytes are written as U+FFFD (the replacement
      // character) instead of aborting the dump.
      const std::string summary_path = report_dir + "/summary.json";
      if (auto st = base::write_file_atomic(
              summary_path,
              summary.dump(2, ' ', false,
                           nlohmann::ordered_json::error_handler_t::replace) +
                  "\n");
          !st)
        write_errors.push_back(write_error(summary_path, st.error()));
    }

    // Terminal summary.
    for (size_t b = 0; b < benches.size(); ++b) {
      const auto& s = benches[b].summary;
      out << "\n" << benches[b].name << ": " << s.samples << " samples";
      if (s.harness_samples > 0)
        out << " (+" << s.harness_samples << " in the harness)";
      if (s.lost > 0) out << ", " << s.lost << " lost";
      out << "; unwound " << s.unwound_full << " fully, " << s.truncated
          << " truncated, " << s.unknown << " at unknown code\n";
      for (const auto& [name, n] : top_self[b]) {
        char line[32];
        std::snprintf(line, sizeof(line), "  %6s%%  ",
                      percent(n, s.samples).c_str());
        out << line << name << "\n";
      }
    }
    if (result.outside_windows > 0 || result.filtered_pids > 0)
      out << "\n(" << result.outside_windows
          << " samples outside benchmark windows, " << result.filtered_pids
          << " of untracked processes: not shown)\n";
    if (result.samples_shown > 0 && write_errors.empty())
      out << "\nReport: " << report_dir
          << "/ (summary.json, *.folded, *.svg)\n";
  }
  errno = 0;
  if (!out.flush()) {
    const int code = errno;
    write_errors.push_back(
        std::string("cannot write the report to standard output") +
        (code != 0 ? std::string(": ") + std::strerror(code) : ""));
  }

  for (const auto& w : folder.warnings())
    err << "runner report: warning: " << w << "\n";
  result.warnings = folder.warnings();
  for (const auto& e : write_errors)
    err << "runner report: error: " << e << "\n";
  result.write_errors = write_errors;
  if (!write_errors.empty()) result.exit_code = 1;
  if (result.samples_shown == 0) {
    err << "runner report: nothing to report in " << options.folder
        << (result.samples_read == 0 ? ": no samples"
                                     : ": no sample in a benchmark window")
        << "\n";
    result.exit_code = 1;
  }
  return result;
}

}  // namespace runner::report
