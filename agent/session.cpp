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
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/finalize.hpp"
#include "agent/results_check.hpp"
#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/log.hpp"
#include "fifo/fifo.hpp"
#include "profiler/probe.hpp"
#include "profiler/proc_maps.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

constexpr const char* kLog = "agent";

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

// Waits for the child while the io_context serves the FIFO; forwards
// SIGINT/SIGTERM/SIGHUP to the benchmark.
class ChildWatcher {
 public:
  ChildWatcher(boost::asio::io_context& io, base::ChildProcess& child)
      : io_(io),
        child_(child),
        signals_(io, SIGINT, SIGTERM, SIGHUP),
        timer_(io) {}

  void start() {
    wait_signal();
    int pidfd = child_.pidfd() >= 0 ? ::dup(child_.pidfd()) : -1;
    if (pidfd >= 0) {
      pidfd_.emplace(io_, pidfd);
      pidfd_->async_wait(
          boost::asio::posix::stream_descriptor::wait_read,
          [this](const boost::system::error_code&) { io_.stop(); });
    } else {
      poll();
    }
  }

  int forwarded_signal() const { return forwarded_; }

 private:
  void wait_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      forwarded_ = sig;
      RUNNER_LOG(kLog, kWarning)
          << "received " << ::sigabbrev_np(sig) << ", forwarding it to the "
          << "benchmark; the runner will write what it has";
      (void)child_.send_signal(sig);
      wait_signal();
    });
  }

  void poll() {
    timer_.expires_after(std::chrono::milliseconds(20));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      if (::kill(child_.pid(), 0) != 0) {
        io_.stop();
        return;
      }
      // A zombie still answers kill(0): peek with waitid(WNOWAIT).
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(child_.pid()), &info,
                   WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid != 0) {
        io_.stop();
        return;
      }
      poll();
    });
  }

  boost::asio::io_context& io_;
  base::ChildProcess& child_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer timer_;
  std::optional<boost::asio::posix::stream_descriptor> pidfd_;
  int forwarded_ = 0;
};

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

  // ---- unprofiled run ------------------------------------------------------
  if (!options.profile) {
    spawn.env = benchmark_environment(folder, nullptr, true);
    auto child = base::ChildProcess::spawn(spawn);
    if (!child) {
      std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                   child.error().what().c_str());
      return 127;
    }
    boost::asio::io_context io;
    ChildWatcher watcher(io, *child);
    watcher.start();
    io.run();
    auto status = child->wait();
    int code = status ? status->shell_code() : 1;
    if (status && !status->success())
      std::fprintf(stderr, "runner: the benchmark %s\n",
                   status->describe().c_str());
    int check = check_results(folder, options.allow_empty, std::cerr);
    base::close_log_file();
    std::fprintf(stderr, "runner: profile folder: %s\n", folder.c_str());
    return code != 0 ? code : check;
  }

  // ---- FIFO server
  // -----------------------------------------------------------
  boost::asio::io_context io;
  fifo::ServerOptions fifo_options;
  bool default_paths = options.fifo_dir.empty();
  if (!default_paths) {
    fifo_options.ctl_path = options.fifo_dir + "/runner.ctl.fifo";
    fifo_options.ack_path = options.fifo_dir + "/runner.ack.fifo";
    fifo_options.lock_path = options.fifo_dir + "/runner.fifo.lock";
  }
  std::unique_ptr<profiler::Sampler> sampler;
  std::vector<profiler::ProcSnapshot> snapshots;
  fifo::ServerHooks hooks;
  hooks.on_start = [&sampler] {
    if (!sampler) return;
    if (auto st = sampler->enable(); !st)
      RUNNER_LOG(kLog, kError) << "enabling sampling: " << st.error().what();
  };
  hooks.on_stop = [&sampler] {
    if (!sampler) return;
    if (auto st = sampler->disable(); !st)
      RUNNER_LOG(kLog, kError) << "disabling sampling: " << st.error().what();
  };
  hooks.on_new_pid = [&snapshots](int32_t pid) {
    auto snapshot = profiler::snapshot_proc_maps(pid);
    if (!snapshot) {
      RUNNER_LOG(kLog, kWarning) << "cannot snapshot /proc/" << pid
                                 << "/maps: " << snapshot.error().what();
      return;
    }
    snapshots.push_back(std::move(*snapshot));
  };
  auto server = fifo::Server::create(io, fifo_options, hooks);
  if (!server) {
    std::fprintf(stderr, "runner: %s\n", server.error().what().c_str());
    return 1;
  }

  // ---- benchmark, started suspended so the events are opened first ----------
  spawn.env = benchmark_environment(folder, &fifo_options, default_paths);
  spawn.suspended = true;
  auto child = base::ChildProcess::spawn(spawn);
  if (!child) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 child.error().what().c_str());
    return 127;
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
  (*server)->start();
  if (auto st = child->release(); !st) {
    std::fprintf(stderr, "runner: cannot start the benchmark: %s\n",
                 st.error().what().c_str());
    if (sampler) (void)sampler->finish();
    ::unlink(pipedata.c_str());
    return 127;
  }

  ChildWatcher watcher(io, *child);
  watcher.start();
  io.run();
  auto status = child->wait();
  int exit_code = status ? status->shell_code() : 1;
  if (status && !status->success())
    std::fprintf(stderr, "runner: the benchmark %s\n",
                 status->describe().c_str());

  // Commands already written before the benchmark exited still get answered
  // and recorded.
  (*server)->drain();
  io.restart();
  io.poll();  // writes the replies drain() queued
  fifo::RunData run = (*server)->take_data();
  (void)(*server)->close();

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
