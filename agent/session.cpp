#include "agent/session.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <unordered_set>

#include "agent/first_contact.hpp"
#include "agent/instrumentation_check.hpp"
#include "agent/language_env.hpp"
#include "agent/progress_line.hpp"
#include "agent/results_check.hpp"
#include "finalize/finalize.hpp"
#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

constexpr const char* kLog = "agent";

// PATH with the node shim's directory first.
void put_node_shim_first(const NodeShim& shim, LanguageSupport& added) {
  for (std::string& entry : added.env)
    if (entry.rfind("PATH=", 0) == 0) {
      entry = "PATH=" + shim.dir() + ":" + entry.substr(5);
      added.changes.push_back("node on PATH runs " + shim.real_node() + " " +
                              kNodeShimFlags);
      return;
    }
}

std::vector<std::string> benchmark_environment(const std::string& folder,
                                               const fifo::ServerOptions* fifo,
                                               bool default_paths,
                                               bool language_support,
                                               const NodeShim* node_shim) {
  std::vector<std::string> env;
  auto skip = [](const std::string& entry) {
    for (const char* key :
         {"CODSPEED_ENV=", "CODSPEED_RUNNER_MODE=", "CODSPEED_PROFILE_FOLDER=",
          "RUNNER_CTL_FIFO=", "RUNNER_ACK_FIFO=", "RUNNER_FIFO_LOCK="}) {
      if (entry.rfind(key, 0) == 0) return true;
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!skip(*e)) env.emplace_back(*e);
  }
  env.push_back("CODSPEED_ENV=runner");
  env.push_back("CODSPEED_RUNNER_MODE=walltime");
  env.push_back("CODSPEED_PROFILE_FOLDER=" + folder);
  if (std::getenv("PYTHONHASHSEED") == nullptr)
    env.push_back("PYTHONHASHSEED=0");
  if (std::getenv("ARCH") == nullptr) env.push_back("ARCH=x86_64");
  if (fifo != nullptr && !default_paths) {
    for (const auto& [key, value] : fifo::client_environment(*fifo))
      env.push_back(key + "=" + value);
  }
  if (!language_support) return env;
  LanguageSupport added = add_language_support(std::move(env));
  if (node_shim != nullptr) put_node_shim_first(*node_shim, added);
  if (std::string line = language_support_line(added.changes); !line.empty())
    std::fprintf(stderr, "%s\n", line.c_str());
  return std::move(added.env);
}

// --compress: how much the zstd stream saved.
void print_compression(const profiler::SamplerStats& stats) {
  if (stats.compress_level == 0) return;
  const double mib = 1024.0 * 1024.0;
  const double in = static_cast<double>(stats.uncompressed_bytes);
  const double out = static_cast<double>(stats.compressed_bytes);
  std::fprintf(stderr,
               "runner: perf.pipedata: %.1f MiB of records in %.2f MiB (zstd "
               "level %d, %.1fx)\n",
               in / mib, out / mib, stats.compress_level,
               out > 0 ? in / out : 0.0);
}

// DWARF mode: how much of the stack copies was written (cut to the
// program's stack) and what reached the initial stack area, which is never
// written, so that neither argv nor the environment reaches the folder.
void print_blanking(const profiler::SamplerStats& stats,
                    const profiler::SamplerOptions& options) {
  if (options.call_graph != profiler::CallGraphMode::kDwarf) return;
  const profiler::BlankingStats& b = stats.blanking;
  const double kib = 1024.0;
  std::fprintf(stderr,
               "runner: stack copies: %.1f KiB written of %.1f KiB asked for "
               "(cut to the stack used); %" PRIu64 " of %" PRIu64
               " samples reached the initial stack (argv, environment), "
               "%.1f KiB left out; %" PRIu64
               " without a stack (process not readable)\n",
               static_cast<double>(b.kept_bytes) / kib,
               static_cast<double>(b.kept_bytes + b.cut_bytes) / kib,
               b.samples_blanked, stats.samples,
               static_cast<double>(b.bytes_blanked) / kib, b.stacks_dropped);
  if (b.samples_dropped > 0) {
    RUNNER_LOG(kLog, kWarning)
        << b.samples_dropped
        << " samples were not written: their stack copy could not be found";
  }
}

// "cpu 3 4.1%, cpu 5 0.2%": the share of each CPU's samples the kernel
// lost, for the CPUs that lost any (most first, at most kShown of them).
std::string lost_by_cpu(const profiler::SamplerStats& stats) {
  constexpr size_t kShown = 8;
  std::vector<profiler::CpuSamples> lossy;
  for (const profiler::CpuSamples& cpu : stats.per_cpu)
    if (cpu.lost_samples > 0) lossy.push_back(cpu);
  auto share = [](const profiler::CpuSamples& cpu) {
    return static_cast<double>(cpu.lost_samples) /
           static_cast<double>(cpu.lost_samples + cpu.samples);
  };
  std::stable_sort(
      lossy.begin(), lossy.end(),
      [&](const auto& a, const auto& b) { return share(a) > share(b); });
  std::string out;
  for (size_t i = 0; i < lossy.size() && i < kShown; ++i) {
    char text[64];
    std::snprintf(text, sizeof(text), "%scpu %d %.1f%%", i > 0 ? ", " : "",
                  lossy[i].cpu, 100.0 * share(lossy[i]));
    out += text;
  }
  if (lossy.size() > kShown)
    out += ", " + std::to_string(lossy.size() - kShown) + " more CPUs";
  return out.empty() ? "no CPU named" : "lost " + out;
}

void print_sampler_summary(const profiler::SamplerStats& stats,
                           const profiler::SamplerOptions& options) {
  std::string mode = options.call_graph == profiler::CallGraphMode::kDwarf
                         ? "dwarf," + std::to_string(options.stack_size)
                         : "fp";
  std::fprintf(stderr,
               "runner: sampled with %s at %u Hz, call graph %s: %" PRIu64
               " samples, %" PRIu64 " lost, %.1f MiB written\n",
               stats.event_name.c_str(), options.frequency, mode.c_str(),
               stats.samples, stats.lost_samples,
               static_cast<double>(stats.bytes_written) / (1024.0 * 1024.0));
  print_blanking(stats, options);
  print_compression(stats);
  if (stats.lost_samples > 0 || stats.lost_records > 0) {
    RUNNER_LOG(kLog, kWarning)
        << stats.lost_samples << " samples were lost in " << stats.lost_records
        << " PERF_RECORD_LOST records (" << lost_by_cpu(stats)
        << "): raise --mmap-size or lower --freq";
  }
  if (stats.write_failed) {
    RUNNER_LOG(kLog, kError)
        << "perf.pipedata is incomplete: " << stats.write_error;
  }
}

// What the runner itself cost while the benchmark ran: its CPU time as a
// share of one core over the sampling period (getrusage).
void print_own_cpu(uint64_t cpu_ns, uint64_t wall_ns,
                   const profiler::SamplerStats& stats) {
  if (wall_ns == 0) return;
  std::fprintf(
      stderr,
      "runner: its own CPU while sampling: %.1f ms, %.2f%% of one "
      "core over %.2f s (%u drain thread%s %.1f ms, nice %d)\n",
      static_cast<double>(cpu_ns) / 1e6,
      100.0 * static_cast<double>(cpu_ns) / static_cast<double>(wall_ns),
      static_cast<double>(wall_ns) / 1e9, stats.drain_threads,
      stats.drain_threads == 1 ? "" : "s",
      static_cast<double>(stats.drain_cpu_ns) / 1e6, stats.drain_nice);
}

// Before the run: when this machine cannot hold the requested rate (the
// drain's estimated CPU, the ring buffers under the locked-memory limit),
// say so and what to lower (profiler/capacity.hpp; `runner doctor` says the
// same).
void warn_capacity(const profiler::SamplerOptions& options) {
  const profiler::MachineLimits limits = profiler::machine_limits();
  const profiler::CapacityEstimate estimate =
      profiler::estimate_capacity(options, limits);
  for (const auto& warning :
       profiler::capacity_warnings(estimate, options, limits))
    RUNNER_LOG(kLog, kWarning) << warning;
}

std::vector<std::string> result_uris(const ResultsFiles& results) {
  std::vector<std::string> uris;
  if (auto rows = select_results(results, true)) {
    for (const auto& row : *rows) uris.push_back(row.uri);
  }
  return uris;
}

}  // namespace

std::string default_profile_folder() {
  time_t now = ::time(nullptr);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::string base =
      std::string(format::ProfileLayout::kDefaultFolderPrefix) + stamp;
  std::string name = base;
  for (int i = 1; std::filesystem::exists(name); ++i)
    name = base + "." + std::to_string(i);
  return name;
}

int run_session(const RunOptions& options) {
  auto session = Session::create(options);
  if (!session) {
    std::fprintf(stderr, "runner: %s\n", session.error().what().c_str());
    return 1;
  }
  return (*session)->run();
}

Session::Session(const RunOptions& options) : options_(options) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  created_realtime_ns_ = static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u +
                         static_cast<uint64_t>(now.tv_nsec);
}

Session::~Session() = default;

// ---- prepare ----------------------------------------------------------------

base::Result<std::unique_ptr<Session>> Session::create(
    const RunOptions& options) {
  std::unique_ptr<Session> session(new Session(options));
  RUNNER_RETURN_IF_ERROR(session->prepare_folder(),
                         "cannot use the profile folder");
  if (options.profile) {
    if (auto st = session->prepare_fifos(); !st) return std::move(st).error();
  }
  return session;
}

base::Status Session::prepare_folder() {
  folder_ = options_.profile_folder.empty() ? default_profile_folder()
                                            : options_.profile_folder;
  std::error_code exists_ec;
  created_folder_ =
      std::filesystem::symlink_status(folder_, exists_ec).type() ==
      std::filesystem::file_type::not_found;
  if (auto st = base::prepare_private_directory(folder_); !st) return st;
  std::error_code ec;
  folder_ = std::filesystem::absolute(folder_, ec).lexically_normal().string();
  if (!folder_.empty() && folder_.back() == '/') folder_.pop_back();
  if (auto st = base::set_log_file(folder_ + "/runner.log"); !st)
    RUNNER_LOG(kLog, kWarning) << "no runner.log: " << st.error().what();
  RUNNER_LOG(kLog, kDebug) << "profile folder " << folder_;

  spawn_.argv = options_.command;
  spawn_.stdin_fd = options_.stdin_fd;
  // The benchmark dies with the runner (even a SIGKILLed one), and what it
  // leaves behind is re-parented to the runner, which kills it at the end.
  spawn_.parent_death_signal = SIGKILL;
  if (auto st = base::become_child_subreaper(); !st)
    RUNNER_LOG(kLog, kWarning)
        << st.error().what()
        << ": processes the benchmark leaves behind may outlive the run";
  return {};
}

// `--fifo-dir`: FIFOs there; `--shared-fifos` or no namespaces allowed: the
// fixed paths under the global lock; otherwise private FIFOs at the fixed
// paths in the benchmark's own mount namespace.
base::Status Session::prepare_fifos() {
  if (!options_.fifo_dir.empty()) {
    fifos_.default_paths = false;
    fifos_.options.ctl_path = options_.fifo_dir + "/runner.ctl.fifo";
    fifos_.options.ack_path = options_.fifo_dir + "/runner.ack.fifo";
    fifos_.options.lock_path = options_.fifo_dir + "/runner.fifo.lock";
  } else if (!options_.shared_fifos) {
    auto isolated = serve_isolated_fifos();
    if (isolated) return {};
    RUNNER_LOG(kLog, kWarning)
        << "the benchmark cannot have its own mount namespace ("
        << isolated.error().what() << "): serving the shared paths "
        << fifo::kDefaultCtlPath << " and " << fifo::kDefaultAckPath
        << " under the lock " << fifo::kDefaultLockPath
        << ", one runner at a time";
    fifos_.server.reset();  // removes its FIFOs before the directory goes
    fifos_ = Fifos{};
  }
  auto server = fifo::Server::create(io_, fifos_.options, fifo_hooks());
  if (!server) return std::move(server).error();
  fifos_.server = std::move(*server);
  return {};
}

// Several runners at once: the benchmark gets its own mount namespace in
// which our private FIFOs sit at the fixed paths. Fails when namespaces are
// not allowed here (unprivileged, no user namespaces).
base::Status Session::serve_isolated_fifos() {
  RUNNER_ASSIGN_OR_RETURN(fifos_.isolated,
                          fifo::IsolatedFifos::create(fifo::ServerOptions{}),
                          "private FIFOs");
  RUNNER_ASSIGN_OR_RETURN(
      fifos_.server,
      fifo::Server::create(io_, fifos_.isolated->private_options(),
                           fifo_hooks()),
      "in " + fifos_.isolated->directory());
  RUNNER_ASSIGN_OR_RETURN(base::MountNamespace ns,
                          fifos_.isolated->make_namespace(), "mount namespace");
  RUNNER_LOG(kLog, kDebug)
      << "FIFOs in " << fifos_.isolated->directory()
      << ", bound over the fixed paths in the benchmark's mount namespace"
      << (ns.uses_user_namespace() ? " (in a user namespace)" : "");
  fifos_.mount_namespace = std::move(ns);
  fifos_.options = fifos_.isolated->private_options();
  return {};
}

// Benchmark windows enable and disable the sampler; an announced pid gets
// its /proc/<pid>/maps snapshotted while it is alive.
fifo::ServerHooks Session::fifo_hooks() {
  fifo::ServerHooks hooks;
  hooks.on_start = [this] {
    ++rounds_;
    if (progress_) progress_->window_opened();
    open_counter_window();
    if (!sampler_) return;
    if (auto st = sampler_->enable(); !st && enable_errors_.admit())
      RUNNER_LOG(kLog, kError) << "enabling sampling: " << st.error().what()
                               << enable_errors_.note();
  };
  hooks.on_stop = [this] {
    if (progress_) progress_->window_closed();
    close_counter_window();
    if (!sampler_) return;
    if (auto st = sampler_->disable(); !st && disable_errors_.admit())
      RUNNER_LOG(kLog, kError) << "disabling sampling: " << st.error().what()
                               << disable_errors_.note();
  };
  hooks.on_new_pid = [this](int32_t pid) {
    auto snapshot = perfdata::snapshot_proc_maps(pid);
    if (!snapshot) {
      if (snapshot_errors_.admit())
        RUNNER_LOG(kLog, kWarning) << "cannot snapshot /proc/" << pid
                                   << "/maps: " << snapshot.error().what();
      return;
    }
    snapshots_.push_back(std::move(*snapshot));
  };
  return hooks;
}

// ---- run: the phases after prepare ------------------------------------------

int Session::run() {
  if (!options_.profile) return run_unprofiled();
  if (auto stopped = launch()) return *stopped;
  int exit_code = sample();
  exit_code = finalize(exit_code);
  if (options_.report && !folder_removed_) report();
  // An upload phase would go here, after the profile folder is complete.
  return close(exit_code);
}

void Session::make_node_shim() {
  const char* path = std::getenv("PATH");
  if (!options_.language_support || path == nullptr) return;
  auto shim = NodeShim::create(path);
  if (!shim) {
    RUNNER_LOG(kLog, kWarning) << "node on PATH: " << shim.error().what()
                               << " (NODE_OPTIONS still applies)";
    return;
  }
  node_shim_ = std::move(*shim);
}

int Session::run_unprofiled() {
  make_node_shim();
  spawn_.env = benchmark_environment(
      folder_, nullptr, true, options_.language_support, node_shim_.get());
  if (auto stopped = spawn_benchmark()) return *stopped;
  int code = watcher_->wait(*child_).exit_code();
  int check =
      check_results(load_results(folder_, options_.allow_empty), std::cerr);
  base::close_log_file();
  std::fprintf(stderr, "runner: profile folder: %s\n", folder_.c_str());
  return code != 0 ? code : check;
}

// ---- launch -----------------------------------------------------------------

// The benchmark starts suspended, so the sampler's events are open before it
// runs; the FIFO server starts reading just before it is released.
std::optional<int> Session::launch() {
  if (fifos_.mount_namespace) {
    spawn_.mount_namespace_fd = fifos_.mount_namespace->mount_fd();
    spawn_.user_namespace_fd = fifos_.mount_namespace->user_fd();
  }
  make_node_shim();
  spawn_.env =
      benchmark_environment(folder_, &fifos_.options, fifos_.default_paths,
                            options_.language_support, node_shim_.get());
  spawn_.suspended = true;
  if (auto stopped = spawn_benchmark()) return stopped;
  if (auto stopped = start_sampler()) return stopped;
  start_counters();
  fifos_.server->start();
  if (auto st = child_->release(); !st) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 st.error().what().c_str());
    if (sampler_) (void)sampler_->finish();
    ::unlink(format::ProfileLayout(folder_).pipedata().c_str());
    return base::spawn_error_exit_code(st.error());
  }
  start_progress();
  return std::nullopt;
}

// The live progress line (progress_line.hpp), read from the FIFO server's
// data (this thread) and the sampler's stats (a locked snapshot).
void Session::start_progress() {
  const uint64_t start_ns = base::monotonic_ns();
  // The distinct URIs announced so far, read incrementally: an interleaved
  // run announces its two benchmarks once per round.
  struct Announced {
    size_t read = 0;
    std::unordered_set<std::string> uris;
  };
  auto announced = std::make_shared<Announced>();
  progress_ = std::make_unique<ProgressLine>(io_, [this, start_ns, announced] {
    ProgressCounts counts;
    counts.elapsed_ns = base::monotonic_ns() - start_ns;
    counts.rounds = rounds_;
    if (sampler_) {
      const profiler::SamplerStats stats = sampler_->stats();
      counts.samples = stats.samples;
      counts.bytes_written = stats.bytes_written;
      counts.lost_samples = stats.lost_samples;
    }
    const fifo::RunData& data = fifos_.server->data();
    for (; announced->read < data.uri_by_ts.size(); ++announced->read)
      announced->uris.insert(data.uri_by_ts[announced->read].second);
    counts.benchmarks = announced->uris.size();
    if (!data.uri_by_ts.empty())
      counts.benchmark = data.uri_by_ts.back().second;
    counts.sampling = data.sampling;
    return counts;
  });
  progress_->start();
}

// The watcher catches the signals from before the benchmark exists.
std::optional<int> Session::spawn_benchmark() {
  watcher_.emplace(io_, options_.kill_after);
  auto child = base::ChildProcess::spawn(spawn_);
  if (!child) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 child.error().what().c_str());
    return base::spawn_error_exit_code(child.error());
  }
  child_.emplace(std::move(*child));
  return std::nullopt;
}

// Without a sampler the benchmark runs only with --allow-no-profile.
std::optional<int> Session::start_sampler() {
  const std::string pipedata = format::ProfileLayout(folder_).pipedata();
  warn_capacity(options_.sampler);
  auto created =
      profiler::Sampler::create(child_->pid(), options_.sampler, pipedata);
  if (created) {
    sampler_ = std::move(*created);
    sampling_cpu_start_ns_ = base::cpu_time_ns(RUSAGE_SELF);
    sampling_wall_start_ns_ = base::monotonic_ns();
    RUNNER_LOG(kLog, kDebug) << "sampling event: " << sampler_->event_name();
    return std::nullopt;
  }
  if (!options_.allow_no_profile) {
    std::fprintf(stderr,
                 "runner: cannot start sampling: %s\n"
                 "runner: the benchmark was not started; use "
                 "--allow-no-profile to run it without profiling\n",
                 created.error().what().c_str());
    return 1;  // ~ChildProcess kills the suspended child
  }
  RUNNER_LOG(kLog, kWarning)
      << "sampling is not possible, running without profiling: "
      << created.error().what();
  ::unlink(pipedata.c_str());
  return std::nullopt;
}

// The benchmark's CPU time (and instructions, cycles where a PMU exists) per
// window. Counters that cannot be opened never fail the run: the file then
// says why they are absent.
void Session::start_counters() {
  auto counters = profiler::Counters::create(child_->pid());
  if (!counters) {
    RUNNER_LOG(kLog, kWarning)
        << "the benchmark's CPU time is not counted (runner.counters.json "
           "has no windows): "
        << counters.error().what();
    counted_.counters.push_back({std::string(format::kTaskClockCounter), false,
                                 false, counters.error().what()});
    return;
  }
  counters_ = std::move(*counters);
  counted_.counters = counters_->info();
  for (const format::CounterInfo& info : counted_.counters) {
    if (!info.counted)
      RUNNER_LOG(kLog, kDebug)
          << info.name << " not counted: " << info.absent_reason;
    else if (info.user_only && info.name != format::kTaskClockCounter)
      RUNNER_LOG(kLog, kWarning)
          << info.name
          << " counts user space only (the kernel refused kernel counting: "
             "kernel.perf_event_paranoid)";
  }
}

// A window whose start or stop cannot be read is lost: counted, with the
// first error, never listed with wrong counts.
void Session::open_counter_window() {
  if (!counters_) return;
  auto snapshot = counters_->read();
  window_lost_ = !snapshot;
  if (snapshot) {
    window_start_ = *snapshot;
    return;
  }
  window_start_.reset();
  if (counted_.lost_windows++ == 0)
    counted_.lost_reason =
        "reading the counters at a window's start: " + snapshot.error().what();
}

void Session::close_counter_window() {
  if (!counters_ || window_lost_) {
    window_lost_ = false;
    return;
  }
  if (!window_start_) return;
  auto snapshot = counters_->read();
  if (snapshot) {
    counted_.windows.push_back(
        profiler::counter_window(*window_start_, *snapshot));
  } else if (counted_.lost_windows++ == 0) {
    counted_.lost_reason =
        "reading the counters at a window's stop: " + snapshot.error().what();
  }
  window_start_.reset();
}

// ---- sample -----------------------------------------------------------------

// The io_context serves the FIFO (the hooks switch sampling on and off)
// until the benchmark exits; returns the exit code its end calls for.
int Session::sample() {
  int exit_code = watcher_->wait(*child_).exit_code();
  if (progress_) progress_->stop();
  stop_fifo_server();
  finish_sampler();
  return exit_code;
}

// Commands already written before the benchmark exited still get answered
// and recorded.
void Session::stop_fifo_server() {
  fifos_.server->drain();
  io_.restart();
  io_.poll();  // runs what the io_context still has pending
  for (const auto& [what, limiter] :
       {std::pair{"enabling", &enable_errors_},
        std::pair{"disabling", &disable_errors_}}) {
    if (limiter->suppressed() > 0)
      RUNNER_LOG(kLog, kError)
          << limiter->seen() << " errors " << what << " sampling in all ("
          << limiter->suppressed() << " not logged)";
  }
  run_ = fifos_.server->take_data();
  (void)fifos_.server->close();
  std::error_code ec;
  no_protocol_ = !options_.allow_empty && spoke_no_protocol(run_) &&
                 !std::filesystem::exists(
                     format::ProfileLayout(folder_).results_dir(), ec);
  if (snapshot_errors_.suppressed() > 0) {
    RUNNER_LOG(kLog, kWarning)
        << "cannot snapshot /proc/<pid>/maps for "
        << snapshot_errors_.suppressed() << " more announced pid(s) ("
        << snapshot_errors_.seen() << " in all)";
  }
}

void Session::finish_sampler() {
  if (!sampler_) return;
  auto stats = sampler_->finish();
  if (stats && no_protocol_) {
    sampler_stats_ = *stats;  // nothing was sampled: no summary
  } else if (stats) {
    sampler_stats_ = *stats;
    print_sampler_summary(*stats, options_.sampler);
    if (!options_.stack_size_reason.empty())
      std::fprintf(stderr, "runner: %s\n", options_.stack_size_reason.c_str());
    print_own_cpu(base::cpu_time_ns(RUSAGE_SELF) - sampling_cpu_start_ns_,
                  base::monotonic_ns() - sampling_wall_start_ns_, *stats);
  } else {
    RUNNER_LOG(kLog, kError) << "finishing sampling: " << stats.error().what();
  }
  if (stats) side_band_ = sampler_->take_side_band();
  sampler_.reset();
}

// ---- finalize ---------------------------------------------------------------

// The results are read once: which benchmarks reached the runner, then the
// artifacts, then the results table.
int Session::finalize(int exit_code) {
  if (no_protocol_) return explain_no_protocol(exit_code);
  ResultsFiles results = read_results(folder_);
  const std::vector<std::string> uris = result_uris(results);
  // Did the benchmarks that ran reach the runner? (instrumentation_check.hpp)
  std::optional<std::string> uninstrumented =
      missing_instrumentation(run_, uris);
  std::vector<std::string> unannounced = unannounced_uris(run_, uris);

  if (auto st = write_counters(); !st)
    RUNNER_LOG(kLog, kError)
        << "writing " << format::ProfileLayout::kRunCounters << ": "
        << st.error().what();
  if (auto st = write_artifacts(); !st) {
    RUNNER_LOG(kLog, kError) << "writing artifacts: " << st.error().what();
    if (exit_code == 0) exit_code = 1;
  }
  int check =
      check_results(select_results(results, options_.allow_empty), std::cerr);
  if (exit_code == 0) exit_code = check;
  if (uninstrumented) {
    std::fprintf(
        stderr, "runner: %s%s\n", uninstrumented->c_str(),
        options_.allow_no_profile ? " (allowed by --allow-no-profile)" : "");
    if (exit_code == 0 && !options_.allow_no_profile) exit_code = 1;
  } else if (!unannounced.empty()) {
    RUNNER_LOG(kLog, kWarning)
        << unannounced.size()
        << " benchmark(s) in results/ were never announced to the runner "
           "and have no profile, e.g. "
        << unannounced.front();
  }
  return exit_code;
}

// A program that spoke no benchmark protocol produced no benchmark: say what
// to do instead, remove the folder the runner created for it (only the
// files the runner wrote; anything else keeps it) and fail.
int Session::explain_no_protocol(int exit_code) {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  for (const std::string& line :
       no_protocol_lines(options_.command, cwd, exit_code))
    std::fprintf(stderr, "runner: %s\n", line.c_str());
  if (created_folder_) remove_created_folder();
  return exit_code != 0 ? exit_code : 1;
}

void Session::remove_created_folder() {
  base::close_log_file();
  const format::ProfileLayout layout(folder_);
  for (const std::string& file :
       {layout.pipedata(), layout.execution_timestamps(), layout.run_counters(),
        folder_ + "/runner.log"})
    ::unlink(file.c_str());
  folder_removed_ = ::rmdir(folder_.c_str()) == 0;
  if (!folder_removed_)
    std::fprintf(stderr, "runner: %s is kept: %s\n", folder_.c_str(),
                 std::strerror(errno));
}

// The one call into finalize/finalize.hpp: what the run collected becomes the
// profile folder's artifacts (run_ and snapshots_ are handed over).
base::Status Session::write_artifacts() {
  finalize::FinalizeInput input;
  input.folder = folder_;
  input.run = std::move(run_);
  input.sampler_options = options_.sampler;
  input.sampler_stats = sampler_stats_;
  input.side_band = std::move(side_band_);
  input.snapshots = std::move(snapshots_);
  input.profiled = sampler_stats_.has_value();
  input.use_cache = options_.cache;
  input.run_started_realtime_ns = created_realtime_ns_;
  return finalize::finalize_profile(std::move(input));
}

// runner.counters.json: the windows counted; a window still open when the
// benchmark exited (no StopBenchmark) is lost. Multiplexed counters and
// lost windows are said here too.
base::Status Session::write_counters() {
  if (window_start_ && counted_.lost_windows++ == 0)
    counted_.lost_reason = "the benchmark exited inside a window";
  window_start_.reset();
  uint64_t multiplexed = 0;
  for (const format::CounterWindow& w : counted_.windows)
    if ((w.instructions && w.instructions->multiplexed()) ||
        (w.cycles && w.cycles->multiplexed()) ||
        (w.task_clock && w.task_clock->multiplexed()))
      ++multiplexed;
  if (multiplexed > 0)
    RUNNER_LOG(kLog, kWarning)
        << multiplexed << " of " << counted_.windows.size()
        << " windows have multiplexed counters (counted part of the window "
           "only; runner.counters.json gives enabled and running times)";
  if (counted_.lost_windows > 0)
    RUNNER_LOG(kLog, kWarning)
        << counted_.lost_windows << " benchmark window(s) have no counts in "
        << format::ProfileLayout::kRunCounters << ": " << counted_.lost_reason;
  return base::write_file_atomic(format::ProfileLayout(folder_).run_counters(),
                                 format::write_run_counters(counted_));
}

// ---- report -----------------------------------------------------------------

void Session::report() {
  report::ReportOptions report_options;
  report_options.folder = folder_;
  auto result = report::run_report(report_options, std::cout, std::cerr);
  if (!result) {
    std::fprintf(stderr, "runner: report: %s\n", result.error().what().c_str());
  }
}

int Session::close(int exit_code) {
  if (!folder_removed_)
    std::fprintf(stderr, "runner: profile folder: %s\n", folder_.c_str());
  base::close_log_file();
  return exit_code;
}

}  // namespace runner::agent
