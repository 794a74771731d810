#include "agent/session.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

// Asio: specific headers only, <utility> first (Boost 1.74 + GCC 12).
#include <boost/asio/io_context.hpp>

#include "agent/child_watcher.hpp"
#include "agent/finalize.hpp"
#include "agent/instrumentation_check.hpp"
#include "agent/results_check.hpp"
#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/log.hpp"
#include "base/log_limiter.hpp"
#include "base/mount_namespace.hpp"
#include "base/process_tree.hpp"
#include "fifo/fifo.hpp"
#include "perfdata/perfdata.hpp"
#include "profiler/probe.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

constexpr const char* kLog = "agent";
// Errors of one kind logged per run when outside input can repeat them.
constexpr uint64_t kMaxLoggedErrors = 10;

std::string default_profile_folder() {
  time_t now = ::time(nullptr);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::string base = std::string("runner-profile.") + stamp;
  std::string name = base;
  for (int i = 1; std::filesystem::exists(name); ++i)
    name = base + "." + std::to_string(i);
  return name;
}

std::vector<std::string> benchmark_environment(const std::string& folder,
                                               const fifo::ServerOptions* fifo,
                                               bool default_paths) {
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
  if (std::getenv("PYTHON_PERF_JIT_SUPPORT") == nullptr)
    env.push_back("PYTHON_PERF_JIT_SUPPORT=1");
  if (std::getenv("ARCH") == nullptr) env.push_back("ARCH=x86_64");
  if (fifo != nullptr && !default_paths) {
    for (const auto& [key, value] : fifo::client_environment(*fifo))
      env.push_back(key + "=" + value);
  }
  return env;
}

// The FIFO server and where its FIFOs live. Members are destroyed in reverse
// order: the server removes its FIFOs before the private directory goes.
struct FifoSetup {
  std::unique_ptr<fifo::IsolatedFifos> isolated;
  std::optional<base::MountNamespace> mount_namespace;
  std::unique_ptr<fifo::Server> server;
  fifo::ServerOptions options;
  bool default_paths = true;  // the benchmark sees the fixed paths
};

// Several runners at once: the benchmark gets its own mount namespace in
// which our private FIFOs sit at the fixed paths. Fails when namespaces are
// not allowed here (unprivileged, no user namespaces).
base::Status serve_isolated(boost::asio::io_context& io,
                            const fifo::ServerHooks& hooks, FifoSetup& out) {
  RUNNER_ASSIGN_OR_RETURN(out.isolated,
                          fifo::IsolatedFifos::create(fifo::ServerOptions{}),
                          "private FIFOs");
  RUNNER_ASSIGN_OR_RETURN(
      out.server,
      fifo::Server::create(io, out.isolated->private_options(), hooks),
      "in " + out.isolated->directory());
  RUNNER_ASSIGN_OR_RETURN(base::MountNamespace ns,
                          out.isolated->make_namespace(), "mount namespace");
  RUNNER_LOG(kLog, kDebug)
      << "FIFOs in " << out.isolated->directory()
      << ", bound over the fixed paths in the benchmark's mount namespace"
      << (ns.uses_user_namespace() ? " (in a user namespace)" : "");
  out.mount_namespace = std::move(ns);
  out.options = out.isolated->private_options();
  return {};
}

base::Result<FifoSetup> serve_fifos(boost::asio::io_context& io,
                                    const RunOptions& options,
                                    const fifo::ServerHooks& hooks) {
  FifoSetup setup;
  if (!options.fifo_dir.empty()) {
    setup.default_paths = false;
    setup.options.ctl_path = options.fifo_dir + "/runner.ctl.fifo";
    setup.options.ack_path = options.fifo_dir + "/runner.ack.fifo";
    setup.options.lock_path = options.fifo_dir + "/runner.fifo.lock";
  } else if (!options.shared_fifos) {
    auto isolated = serve_isolated(io, hooks, setup);
    if (isolated) return setup;
    RUNNER_LOG(kLog, kWarning)
        << "the benchmark cannot have its own mount namespace ("
        << isolated.error().what() << "): serving the shared paths "
        << fifo::kDefaultCtlPath << " and " << fifo::kDefaultAckPath
        << " under the lock " << fifo::kDefaultLockPath
        << ", one runner at a time";
    setup.server.reset();  // removes its FIFOs before the directory goes
    setup = FifoSetup{};
  }
  auto server = fifo::Server::create(io, setup.options, hooks);
  if (!server) return std::move(server).error();
  setup.server = std::move(*server);
  return setup;
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
  if (stats.lost_samples > 0 || stats.lost_records > 0) {
    RUNNER_LOG(kLog, kWarning)
        << stats.lost_samples << " samples were lost in " << stats.lost_records
        << " PERF_RECORD_LOST records: raise --mmap-size or lower --freq";
  }
  if (stats.write_failed) {
    RUNNER_LOG(kLog, kError)
        << "perf.pipedata is incomplete: " << stats.write_error;
  }
}

}  // namespace

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

int run_session(const RunOptions& options) {
  // ---- profile folder ------------------------------------------------------
  std::string folder = options.profile_folder.empty() ? default_profile_folder()
                                                      : options.profile_folder;
  if (auto st = base::prepare_private_directory(folder); !st) {
    std::fprintf(stderr, "runner: cannot use the profile folder: %s\n",
                 st.error().what().c_str());
    return 1;
  }
  std::error_code ec;
  folder = std::filesystem::absolute(folder, ec).lexically_normal().string();
  if (!folder.empty() && folder.back() == '/') folder.pop_back();
  if (auto st = base::set_log_file(folder + "/runner.log"); !st)
    RUNNER_LOG(kLog, kWarning) << "no runner.log: " << st.error().what();
  RUNNER_LOG(kLog, kDebug) << "profile folder " << folder;

  base::SpawnOptions spawn;
  spawn.argv = options.command;
  spawn.stdin_fd = options.stdin_fd;
  // The benchmark dies with the runner (even a SIGKILLed one), and what it
  // leaves behind is re-parented to the runner, which kills it at the end.
  spawn.parent_death_signal = SIGKILL;
  if (auto st = base::become_child_subreaper(); !st)
    RUNNER_LOG(kLog, kWarning)
        << st.error().what()
        << ": processes the benchmark leaves behind may outlive the run";

  // ---- unprofiled run ------------------------------------------------------
  if (!options.profile) {
    spawn.env = benchmark_environment(folder, nullptr, true);
    boost::asio::io_context io;
    ChildWatcher watcher(io, options.kill_after);
    auto child = base::ChildProcess::spawn(spawn);
    if (!child) {
      std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                   child.error().what().c_str());
      return base::spawn_error_exit_code(child.error());
    }
    int code = watcher.wait(*child).exit_code();
    int check = check_results(folder, options.allow_empty, std::cerr);
    base::close_log_file();
    std::fprintf(stderr, "runner: profile folder: %s\n", folder.c_str());
    return code != 0 ? code : check;
  }

  // ---- FIFO server
  // -----------------------------------------------------------
  boost::asio::io_context io;
  std::unique_ptr<profiler::Sampler> sampler;
  std::vector<perfdata::ProcSnapshot> snapshots;
  fifo::ServerHooks hooks;
  // A client can send start/stop without bound: their errors are capped.
  base::LogLimiter enable_errors(kMaxLoggedErrors);
  base::LogLimiter disable_errors(kMaxLoggedErrors);
  hooks.on_start = [&sampler, &enable_errors] {
    if (!sampler) return;
    if (auto st = sampler->enable(); !st && enable_errors.admit())
      RUNNER_LOG(kLog, kError)
          << "enabling sampling: " << st.error().what() << enable_errors.note();
  };
  hooks.on_stop = [&sampler, &disable_errors] {
    if (!sampler) return;
    if (auto st = sampler->disable(); !st && disable_errors.admit())
      RUNNER_LOG(kLog, kError) << "disabling sampling: " << st.error().what()
                               << disable_errors.note();
  };
  // A client may announce any number of pids: the first few failures are
  // logged, the rest only counted (summary after the run).
  constexpr uint64_t kMaxSnapshotWarnings = 5;
  base::LogLimiter snapshot_errors(kMaxSnapshotWarnings);
  hooks.on_new_pid = [&snapshots, &snapshot_errors](int32_t pid) {
    auto snapshot = perfdata::snapshot_proc_maps(pid);
    if (!snapshot) {
      if (snapshot_errors.admit())
        RUNNER_LOG(kLog, kWarning) << "cannot snapshot /proc/" << pid
                                   << "/maps: " << snapshot.error().what();
      return;
    }
    snapshots.push_back(std::move(*snapshot));
  };
  auto fifos = serve_fifos(io, options, hooks);
  if (!fifos) {
    std::fprintf(stderr, "runner: %s\n", fifos.error().what().c_str());
    return 1;
  }
  auto& server = fifos->server;
  if (fifos->mount_namespace) {
    spawn.mount_namespace_fd = fifos->mount_namespace->mount_fd();
    spawn.user_namespace_fd = fifos->mount_namespace->user_fd();
  }

  // ---- benchmark, started suspended so the events are opened first ----------
  spawn.env =
      benchmark_environment(folder, &fifos->options, fifos->default_paths);
  spawn.suspended = true;
  ChildWatcher watcher(io, options.kill_after);
  auto child = base::ChildProcess::spawn(spawn);
  if (!child) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 child.error().what().c_str());
    return base::spawn_error_exit_code(child.error());
  }
  const std::string pipedata = folder + "/perf.pipedata";
  auto created =
      profiler::Sampler::create(child->pid(), options.sampler, pipedata);
  if (!created) {
    if (!options.allow_no_profile) {
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
  } else {
    sampler = std::move(*created);
    RUNNER_LOG(kLog, kDebug) << "sampling event: " << sampler->event_name();
  }
  server->start();
  if (auto st = child->release(); !st) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 st.error().what().c_str());
    if (sampler) (void)sampler->finish();
    ::unlink(pipedata.c_str());
    return base::spawn_error_exit_code(st.error());
  }

  int exit_code = watcher.wait(*child).exit_code();

  // Commands already written before the benchmark exited still get answered
  // and recorded.
  server->drain();
  io.restart();
  io.poll();  // runs what the io_context still has pending
  for (const auto& [what, limiter] :
       {std::pair{"enabling", &enable_errors},
        std::pair{"disabling", &disable_errors}}) {
    if (limiter->suppressed() > 0)
      RUNNER_LOG(kLog, kError)
          << limiter->seen() << " errors " << what << " sampling in all ("
          << limiter->suppressed() << " not logged)";
  }
  fifo::RunData run = server->take_data();
  (void)server->close();
  if (snapshot_errors.suppressed() > 0) {
    RUNNER_LOG(kLog, kWarning)
        << "cannot snapshot /proc/<pid>/maps for "
        << snapshot_errors.suppressed() << " more announced pid(s) ("
        << snapshot_errors.seen() << " in all)";
  }
  // Did the benchmarks that ran reach the runner? (instrumentation_check.hpp)
  std::vector<std::string> result_uris;
  if (auto rows = load_results(folder, true)) {
    for (const auto& row : *rows) result_uris.push_back(row.uri);
  }
  std::optional<std::string> uninstrumented =
      missing_instrumentation(run, result_uris);
  std::vector<std::string> unannounced = unannounced_uris(run, result_uris);

  std::optional<profiler::SamplerStats> sampler_stats;
  if (sampler) {
    auto stats = sampler->finish();
    if (stats) {
      sampler_stats = *stats;
      print_sampler_summary(*stats, options.sampler);
    } else {
      RUNNER_LOG(kLog, kError)
          << "finishing sampling: " << stats.error().what();
    }
    sampler.reset();
  }

  FinalizeInput input;
  input.folder = folder;
  input.run = std::move(run);
  input.sampler_options = options.sampler;
  input.sampler_stats = sampler_stats;
  input.snapshots = std::move(snapshots);
  input.profiled = sampler_stats.has_value();
  if (auto st = finalize_profile(std::move(input)); !st) {
    RUNNER_LOG(kLog, kError) << "writing artifacts: " << st.error().what();
    if (exit_code == 0) exit_code = 1;
  }

  int check = check_results(folder, options.allow_empty, std::cerr);
  if (exit_code == 0) exit_code = check;
  if (uninstrumented) {
    std::fprintf(
        stderr, "runner: %s%s\n", uninstrumented->c_str(),
        options.allow_no_profile ? " (allowed by --allow-no-profile)" : "");
    if (exit_code == 0 && !options.allow_no_profile) exit_code = 1;
  } else if (!unannounced.empty()) {
    RUNNER_LOG(kLog, kWarning)
        << unannounced.size()
        << " benchmark(s) in results/ were never announced to the runner "
           "and have no profile, e.g. "
        << unannounced.front();
  }

  if (options.report) {
    report::ReportOptions report_options;
    report_options.folder = folder;
    auto result = report::run_report(report_options, std::cout, std::cerr);
    if (!result) {
      std::fprintf(stderr, "runner: report: %s\n",
                   result.error().what().c_str());
    }
  }
  std::fprintf(stderr, "runner: profile folder: %s\n", folder.c_str());
  base::close_log_file();
  return exit_code;
}

}  // namespace runner::agent
