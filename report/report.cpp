// The report pipeline: read (perf.pipedata records) -> unwind (Unwinder) ->
// symbolize (Symbolizer) -> attribute (Attribution: windows, rounds,
// tracked pids) -> outputs (output.hpp), then the terminal summary.
#include "report/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "base/base.hpp"
#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "report/attribution.hpp"
#include "report/output.hpp"
#include "report/profile_folder.hpp"
#include "report/symbolizer.hpp"
#include "report/unwind_pool.hpp"
#include "report/unwinder.hpp"

namespace runner::report {
namespace {
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

// By default one unwinding thread per CPU: the reading and main threads
// wait on each other and on the pool often enough to share the CPUs.
unsigned report_threads(unsigned requested) {
  if (requested != 0) return requested;
  return std::clamp(std::thread::hardware_concurrency() + 1, 2u,
                    kMaxReportThreads);
}

// The outputs of each format, in the order they are finished and named on
// the terminal.
std::vector<std::unique_ptr<Output>> make_outputs(const ReportOptions& options,
                                                  const ReportDir& dir,
                                                  std::ostream& out,
                                                  Symbolizer& symbolizer) {
  std::vector<std::unique_ptr<Output>> outputs;
  switch (options.format) {
    case ReportOptions::Format::kDefault:
      outputs.push_back(make_summary_json_output(dir));
      outputs.push_back(make_folded_output(dir));
      outputs.push_back(make_flamegraph_output(dir));
      break;
    case ReportOptions::Format::kPerfScript:
      outputs.push_back(make_perf_script_output(out, symbolizer));
      break;
    case ReportOptions::Format::kSpeedscope:
      outputs.push_back(make_speedscope_output(dir));
      break;
  }
  return outputs;
}

// One report: its stages, and what flows between them. The per-sample
// format (perf-script) hands every sample read to its output, in time
// order within each round, without attribution; the others attribute
// samples to benchmarks and hand each benchmark over once all are read.
class Pipeline {
 public:
  // A pipeline without outputs (add them before read()).
  Pipeline(const ReportOptions& options, ProfileFolder& folder)
      : options_(options),
        folder_(folder),
        per_sample_(options.format == ReportOptions::Format::kPerfScript),
        unwinder_(folder),
        symbolizer_(folder, options.demangle, options.inline_frames),
        attribution_(folder) {
    totals_.folder = options.folder;
    const unsigned threads = report_threads(options.threads);
    // The reading thread, threads - 1 unwinding ones, and this one.
    if (threads > 1) pool_ = std::make_unique<UnwindPool>(folder, threads - 1);
  }

  // The outputs of options.format (the report directory is made first
  // unless they print per sample).
  void add_format_outputs(std::ostream& out) {
    if (!per_sample_) dir_ = make_report_dir();
    outputs_ = make_outputs(options_, dir_, out, symbolizer_);
  }
  void add_output(std::unique_ptr<Output> output) {
    outputs_.push_back(std::move(output));
  }

  bool per_sample() const { return per_sample_; }
  void read();
  void deliver();
  void print_summary(std::ostream& out) const;
  ReportResult conclude(std::ostream& out, std::ostream& err);

 private:
  // perf-script: a sample of the current round, already unwound (the stack
  // copies are not kept).
  struct Pending {
    perfdata::SampleRecord sample;  // without its vectors
    UnwoundStack stack;
  };
  // perf-script: the COMMs and FORKs of the current round (SideBand) are
  // applied in time order between the samples (a thread forked just after
  // an exec takes the new name, not the one in force when the round ends).
  void apply(const SideBand& event);
  // Samples per batch, and records read into one batch at most.
  static constexpr size_t kBatchSize = 128;
  static constexpr size_t kMaxBatchRecords = 4096;

  ReportDir make_report_dir();
  // read: records into `batch` until it holds kBatchSize samples to unwind
  // (or kMaxBatchRecords records); false once the file is read (or broke).
  bool fill_batch(perfdata::PipedataReader& reader, UnwindBatch& batch);
  void add_record(const perfdata::PipedataReader& reader, UnwindBatch& batch);
  // Whether a sample is unwound at all (the per-sample output shows every
  // one; the others only those of a benchmark window and a tracked pid).
  bool accept(const perfdata::SampleRecord& sample, Attribution::Target* target,
              UnwindBatch& batch) const;
  void add_job(const perfdata::SampleRecord& sample,
               const perfdata::PipedataReader& reader, UnwindBatch& batch);
  // The stages after unwinding, on the main thread, for one unwound batch.
  void take_batch(UnwindBatch& batch);
  // symbolize -> attribute (or, per sample, keep for the round).
  void on_unwound(const perfdata::SampleRecord& sample,
                  const Attribution::Target& target, UnwoundStack stack);
  void flush_round();

  const ReportOptions& options_;
  ProfileFolder& folder_;
  const bool per_sample_;
  Unwinder unwinder_;                 // with one thread
  std::unique_ptr<UnwindPool> pool_;  // with more
  perfdata::Record record_;           // the reading side's, reused
  Symbolizer symbolizer_;
  Attribution attribution_;
  ReportDir dir_;
  std::vector<std::unique_ptr<Output>> outputs_;
  ReportTotals totals_;
  std::vector<std::string> errors_;  // each names its file and errno
  std::unordered_map<uint32_t, std::string> comm_by_tid_;
  std::vector<Pending> pending_;
  std::vector<SideBand> side_band_;
  // What the terminal summary shows of each benchmark.
  std::vector<BenchmarkSummary> summaries_;
  std::vector<std::vector<FunctionCount>> top_self_;
};

ReportDir Pipeline::make_report_dir() {
  ReportDir dir{options_.out_dir.empty()
                    ? format::ProfileLayout(options_.folder).report_dir()
                    : options_.out_dir,
                true};
  if (auto st = base::make_directories(dir.path); !st) {
    errors_.push_back("cannot create " + dir.path + ": " + st.error().what());
    dir.created = false;
  }
  return dir;
}

// read -> unwind -> the rest, in file order: on this thread alone, or with
// a reading thread and the pool's unwinding threads.
void Pipeline::read() {
  auto reader = perfdata::PipedataReader::open(
      format::ProfileLayout(options_.folder).pipedata());
  if (!reader) {
    folder_.warn("perf.pipedata: " + reader.error().what());
    return;
  }
  if (!pool_) {
    UnwindBatch batch;
    for (bool more = true; more;) {
      batch.clear();
      more = fill_batch(*reader, batch);
      unwind_jobs(unwinder_, batch);
      take_batch(batch);
    }
  } else {
    std::thread reading([&] {
      for (bool more = true; more;) {
        std::unique_ptr<UnwindBatch> batch = pool_->make_batch();
        more = fill_batch(*reader, *batch);
        pool_->submit(std::move(batch));
      }
      pool_->close();
    });
    while (std::unique_ptr<UnwindBatch> batch = pool_->take()) {
      take_batch(*batch);
      pool_->recycle(std::move(batch));
    }
    reading.join();
  }
  flush_round();
}

// Every record through one Record whose vectors are reused; stack copies
// stay where the reader mapped them.
bool Pipeline::fill_batch(perfdata::PipedataReader& reader,
                          UnwindBatch& batch) {
  for (size_t n = 0; n < kMaxBatchRecords && batch.job_count < kBatchSize;
       ++n) {
    auto next = reader.next_into(record_, /*copy_stack=*/false);
    if (!next) {
      batch.read_error = next.error().what();
      return false;
    }
    if (!*next) return false;
    add_record(reader, batch);
  }
  return true;
}

void Pipeline::add_record(const perfdata::PipedataReader& reader,
                          UnwindBatch& batch) {
  const perfdata::Record& record = record_;
  using Kind = BatchItem::Kind;
  switch (record.kind) {
    case perfdata::RecordKind::kFinishedRound:
      batch.items.push_back(BatchItem{Kind::kRoundEnd, {}, {}, 0, 0});
      break;
    // Thread names matter only to the per-sample output.
    case perfdata::RecordKind::kComm:
      if (per_sample_)
        batch.items.push_back(
            BatchItem{Kind::kSideBand,
                      {},
                      SideBand{record.comm.sample_id.time, record.comm.tid, 0,
                               false, record.comm.comm},
                      0,
                      0});
      break;
    case perfdata::RecordKind::kTask:
      if (per_sample_ && !record.task.is_exit)
        batch.items.push_back(BatchItem{
            Kind::kSideBand,
            {},
            SideBand{
                record.task.time, record.task.tid, record.task.ptid, true, {}},
            0,
            0});
      break;
    case perfdata::RecordKind::kLost:
      batch.items.push_back(BatchItem{
          Kind::kLost, {}, {}, record.lost.sample_id.time, record.lost.lost});
      break;
    case perfdata::RecordKind::kSample: {
      ++batch.samples_read;
      Attribution::Target target;
      if (!accept(record.sample, &target, batch)) break;
      batch.items.push_back(BatchItem{Kind::kSample, target, {}, 0, 0});
      add_job(record.sample, reader, batch);
      break;
    }
    default:
      break;
  }
}

bool Pipeline::accept(const perfdata::SampleRecord& sample,
                      Attribution::Target* target, UnwindBatch& batch) const {
  if (per_sample_) return true;
  *target = attribution_.target(sample);
  if (target->verdict == Attribution::Verdict::kOutsideWindows) {
    ++batch.outside_windows;
    return false;
  }
  if (target->verdict == Attribution::Verdict::kUntrackedPid) {
    ++batch.filtered_pids;
    return false;
  }
  return true;
}

// The sample and its stack copy where the reader mapped it (or a copy when
// the reader reuses its buffer).
void Pipeline::add_job(const perfdata::SampleRecord& sample,
                       const perfdata::PipedataReader& reader,
                       UnwindBatch& batch) {
  if (batch.job_count == batch.jobs.size()) batch.jobs.emplace_back();
  UnwindJob& job = batch.jobs[batch.job_count++];
  job.sample = sample;
  job.owner = reader.last_stack_owner();
  if (job.owner) {
    job.stack = reader.last_stack();
  } else {
    job.stack_copy.assign(reader.last_stack().begin(),
                          reader.last_stack().end());
    job.stack = job.stack_copy;
  }
}

void Pipeline::take_batch(UnwindBatch& batch) {
  totals_.samples_read += batch.samples_read;
  totals_.outside_windows += batch.outside_windows;
  totals_.filtered_pids += batch.filtered_pids;
  size_t job = 0;
  for (const BatchItem& item : batch.items) {
    switch (item.kind) {
      case BatchItem::Kind::kSample: {
        UnwindJob& unwound = batch.jobs[job++];
        on_unwound(unwound.sample, item.target, std::move(unwound.result));
        break;
      }
      case BatchItem::Kind::kSideBand:
        side_band_.push_back(item.side_band);
        break;
      case BatchItem::Kind::kRoundEnd:
        flush_round();
        break;
      case BatchItem::Kind::kLost:
        totals_.lost += item.lost;
        attribution_.add_lost(item.time, item.lost);
        break;
    }
  }
  if (!batch.read_error.empty())
    folder_.warn("perf.pipedata is truncated or corrupt (" + batch.read_error +
                 "); reporting the " + std::to_string(totals_.samples_read) +
                 " samples read before it");
}

void Pipeline::on_unwound(const perfdata::SampleRecord& sample,
                          const Attribution::Target& target,
                          UnwoundStack stack) {
  if (per_sample_) {
    // Handed over at the end of the round, in time order, once the round's
    // COMM/FORK records (from other CPUs' buffers) are known.
    pending_.push_back(Pending{without_vectors(sample), std::move(stack)});
    return;
  }
  std::vector<uint32_t> ids;
  ids.reserve(stack.addrs.size());
  // Root first, leaf last (inlined functions after their caller).
  for (size_t i = stack.addrs.size(); i-- > 0;) {
    auto frames = symbolizer_.resolve_frames(static_cast<int32_t>(sample.pid),
                                             stack.addrs[i], stack.exact_pc(i),
                                             sample.time);
    ids.insert(ids.end(), frames.rbegin(), frames.rend());
  }
  attribution_.add(target, ids, stack);
  ++totals_.samples_shown;
}

void Pipeline::apply(const SideBand& event) {
  if (!event.is_fork) {
    comm_by_tid_[event.tid] = event.comm;
    return;
  }
  // A new thread or process starts with its parent's name.
  auto parent = comm_by_tid_.find(event.parent_tid);
  if (parent != comm_by_tid_.end())
    comm_by_tid_.insert_or_assign(event.tid, parent->second);
}

void Pipeline::flush_round() {
  static const std::string kDefaultEvent = "cpu-clock";
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Pending& a, const Pending& b) {
                     return a.sample.time < b.sample.time;
                   });
  std::stable_sort(
      side_band_.begin(), side_band_.end(),
      [](const SideBand& a, const SideBand& b) { return a.time < b.time; });
  auto next_event = side_band_.begin();
  for (const Pending& entry : pending_) {
    const perfdata::SampleRecord& sample = entry.sample;
    // The names in force at the sample's time.
    for (; next_event != side_band_.end() && next_event->time <= sample.time;
         ++next_event)
      apply(*next_event);
    auto comm = comm_by_tid_.find(sample.tid);
    if (comm == comm_by_tid_.end()) comm = comm_by_tid_.find(sample.pid);
    // No name (or an empty one, which the importers would not read): ":tid".
    const bool named = comm != comm_by_tid_.end() && !comm->second.empty();
    const std::string unknown =
        named ? std::string() : ":" + std::to_string(sample.tid);
    const SampleView view{
        sample, named ? std::string_view(comm->second) : unknown,
        sample.attr != nullptr && !sample.attr->name.empty() ? sample.attr->name
                                                             : kDefaultEvent,
        entry.stack};
    for (auto& output : outputs_) output->add_sample(view);
    ++totals_.samples_shown;
  }
  for (; next_event != side_band_.end(); ++next_event) apply(*next_event);
  side_band_.clear();
  pending_.clear();
}

// attribute -> outputs: each benchmark once, then finish.
void Pipeline::deliver() {
  if (!per_sample_) {
    for (size_t b = 0; b < attribution_.size(); ++b) {
      const BenchmarkProfile profile =
          attribution_.profile(b, symbolizer_, options_.top);
      for (auto& output : outputs_) output->add_benchmark(profile);
      summaries_.push_back(profile.summary);
      top_self_.push_back(profile.top_self);
    }
  }
  totals_.warnings = folder_.warnings();
  for (auto& output : outputs_) output->finish(totals_, errors_);
}

void Pipeline::print_summary(std::ostream& out) const {
  for (size_t b = 0; b < summaries_.size(); ++b) {
    const BenchmarkSummary& s = summaries_[b];
    out << "\n" << s.name << ": " << s.samples << " samples";
    if (s.harness_samples > 0)
      out << " (+" << s.harness_samples << " in the harness)";
    if (s.lost > 0) out << ", " << s.lost << " lost";
    out << "; unwound " << s.unwound_full << " fully, " << s.truncated
        << " truncated, " << s.unknown << " at unknown code";
    if (s.frame_pointer > 0)
      out << " (" << s.frame_pointer << " through frame pointers of code "
          << "without CFI)";
    out << "\n";
    for (const auto& [name, n] : top_self_[b]) {
      char line[32];
      std::snprintf(line, sizeof(line), "  %6s%%  ",
                    percent(n, s.samples).c_str());
      out << line << name << "\n";
    }
  }
  if (totals_.outside_windows > 0 || totals_.filtered_pids > 0)
    out << "\n(" << totals_.outside_windows
        << " samples outside benchmark windows, " << totals_.filtered_pids
        << " of untracked processes: not shown)\n";
  if (totals_.samples_shown > 0 && errors_.empty()) {
    std::string files;
    for (const auto& output : outputs_)
      files += (files.empty() ? "" : ", ") + output->files();
    out << "\nReport: " << dir_.path << "/ (" << files << ")\n";
  }
}

// The result, warnings and errors on `err`, and the exit code.
ReportResult Pipeline::conclude(std::ostream& out, std::ostream& err) {
  errno = 0;
  if (!out.flush()) {
    const int code = errno;
    errors_.push_back(
        std::string("cannot write the report to standard output") +
        (code != 0 ? std::string(": ") + std::strerror(code) : ""));
  }
  ReportResult result;
  result.samples_read = totals_.samples_read;
  result.samples_shown = totals_.samples_shown;
  result.outside_windows = totals_.outside_windows;
  result.filtered_pids = totals_.filtered_pids;
  result.benchmarks = summaries_;
  for (const auto& w : folder_.warnings())
    err << "runner report: warning: " << w << "\n";
  result.warnings = folder_.warnings();
  for (const auto& e : errors_) err << "runner report: error: " << e << "\n";
  result.write_errors = errors_;
  if (!errors_.empty()) result.exit_code = 1;
  if (result.samples_shown == 0) {
    err << "runner report: nothing to report in " << options_.folder
        << (result.samples_read == 0 ? ": no samples"
                                     : ": no sample in a benchmark window")
        << "\n";
    result.exit_code = 1;
  }
  return result;
}
}  // namespace

base::Result<std::string> find_newest_profile_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string best;
  fs::file_time_type best_time;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(format::ProfileLayout::kDefaultFolderPrefix) ||
        !entry.is_directory(ec))
      continue;
    const format::ProfileLayout layout(entry.path().string());
    if (!fs::exists(layout.pipedata(), ec) &&
        !fs::exists(layout.metadata(), ec))
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

namespace {
// Keeps each benchmark's stacks, in the order they are handed over (the
// order of the timestamps); writes nothing.
class StacksOutput : public Output {
 public:
  explicit StacksOutput(std::vector<BenchmarkStacks>& into) : into_(into) {}
  void add_benchmark(const BenchmarkProfile& benchmark) override {
    into_.push_back(
        BenchmarkStacks{benchmark.uri, benchmark.name, benchmark.stacks});
  }

 private:
  std::vector<BenchmarkStacks>& into_;
};
}  // namespace

base::Result<std::vector<BenchmarkStacks>> load_benchmark_stacks(
    const std::string& folder, std::vector<std::string>& warnings) {
  RUNNER_ASSIGN_OR_RETURN(ProfileFolder profile, ProfileFolder::open(folder),
                          "no profile");
  std::error_code ec;
  if (!std::filesystem::exists(format::ProfileLayout(folder).pipedata(), ec))
    return base::Error("no profile in " + folder + " (no " +
                       std::string(format::ProfileLayout::kPipedata) + ")");
  ReportOptions options;
  options.folder = folder;
  std::vector<BenchmarkStacks> stacks;
  Pipeline pipeline(options, profile);
  pipeline.add_output(std::make_unique<StacksOutput>(stacks));
  pipeline.read();
  pipeline.deliver();
  warnings.insert(warnings.end(), profile.warnings().begin(),
                  profile.warnings().end());
  return stacks;
}

namespace {

// A folder the runner wrote has perf.pipedata or perf.metadata (a run
// without profiling may have only the latter); any other folder is not one.
base::Status check_profile_folder(const std::string& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return {};  // open() says
  const format::ProfileLayout layout(folder);
  if (std::filesystem::exists(layout.pipedata(), ec) ||
      std::filesystem::exists(layout.metadata(), ec))
    return {};
  return base::Error(folder + " is not a profile folder: no " +
                     std::string(format::ProfileLayout::kPipedata) + " or " +
                     std::string(format::ProfileLayout::kMetadata));
}

}  // namespace

base::Result<ReportResult> run_report(const ReportOptions& options,
                                      std::ostream& out, std::ostream& err) {
  if (auto st = check_profile_folder(options.folder); !st)
    return std::move(st).error();
  RUNNER_ASSIGN_OR_RETURN(ProfileFolder folder,
                          ProfileFolder::open(options.folder), "report");
  Pipeline pipeline(options, folder);
  pipeline.add_format_outputs(out);
  pipeline.read();     // read -> unwind -> symbolize -> attribute
  pipeline.deliver();  // -> outputs
  if (!pipeline.per_sample()) pipeline.print_summary(out);
  return pipeline.conclude(out, err);
}

}  // namespace runner::report
