// One profiled run of a benchmark command, in phases:
//   prepare   profile folder (and runner.log), subreaper, FIFO server (in the
//             benchmark's own mount namespace when possible)
//   launch    the benchmark, spawned suspended so that the sampler's events
//             are open before it runs; the watcher forwards signals to it
//   sample    the io_context serves the FIFO (sampling enabled inside the
//             benchmark windows) until the benchmark exits; then the FIFO is
//             drained and the sampler finished
//   finalize  the results are read once: the instrumentation check, the
//             artifacts (finalize/finalize.hpp) and the results table use them
//   report    `--report`: the report of the profile folder
//   (upload would come after report)
// The Session owns everything a run holds (io_context, FIFOs, sampler,
// watcher, child, what was collected) and releases it in reverse order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

// Asio: specific headers only, <utility> first (Boost 1.74 + GCC 12).
#include <utility>

#include <boost/asio/io_context.hpp>

#include "agent/child_watcher.hpp"
#include "agent/node_shim.hpp"
#include "agent/progress_line.hpp"
#include "agent/run_options.hpp"
#include "base/base.hpp"
#include "fifo/fifo.hpp"
#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "profiler/profiler.hpp"

namespace runner::agent {

// ./runner-profile.<local time>: where a run writes without
// --profile-folder.
std::string default_profile_folder();

class Session {
 public:
  // The prepare phase (the FIFO server only when profiling). Errors are
  // one-line messages for "runner: ...".
  // The session is pinned in memory (the FIFO hooks and the watcher refer
  // to it), hence the unique_ptr.
  static base::Result<std::unique_ptr<Session>> create(
      const RunOptions& options);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // The other phases; returns the exit code for the runner process.
  int run();

 private:
  // The FIFO server and where its FIFOs live. Members are destroyed in
  // reverse order: the server removes its FIFOs before the private
  // directory goes.
  struct Fifos {
    std::unique_ptr<fifo::IsolatedFifos> isolated;
    std::optional<base::MountNamespace> mount_namespace;
    std::unique_ptr<fifo::Server> server;
    fifo::ServerOptions options;
    bool default_paths = true;  // the benchmark sees the fixed paths
  };
  // Errors of one kind logged per run when a client can repeat them.
  static constexpr uint64_t kMaxLoggedErrors = 10;
  static constexpr uint64_t kMaxSnapshotWarnings = 5;

  explicit Session(const RunOptions& options);

  // prepare
  base::Status prepare_folder();
  base::Status prepare_fifos();
  base::Status serve_isolated_fifos();
  fifo::ServerHooks fifo_hooks();
  // launch (nullopt: the benchmark runs; else the exit code)
  std::optional<int> launch();
  std::optional<int> spawn_benchmark();
  std::optional<int> start_sampler();
  void start_counters();
  void open_counter_window();
  void close_counter_window();
  void start_progress();
  // sample
  int sample();
  void stop_fifo_server();
  void finish_sampler();
  // finalize
  int finalize(int exit_code);
  base::Status write_artifacts();
  base::Status write_counters();
  int explain_no_protocol(int exit_code);
  void remove_created_folder();
  // report
  void report();
  int close(int exit_code);
  // `--no-profile`: launch without FIFO or sampler, wait, check results.
  int run_unprofiled();
  // The node shim of language support (node_shim_), when a node is on PATH.
  void make_node_shim();

  // Members are destroyed bottom-up: the child before its watcher, the FIFO
  // server before the sampler its hooks use, all before the io_context.
  RunOptions options_;
  std::string folder_;
  // The runner made the folder (it did not exist); it removed it again.
  bool created_folder_ = false, folder_removed_ = false;
  base::SpawnOptions spawn_;
  boost::asio::io_context io_;
  std::unique_ptr<profiler::Sampler> sampler_;
  // The benchmark's counting events (runner.counters.json), read at each
  // window's start and stop; counted_ collects the windows and the losses.
  std::optional<profiler::Counters> counters_;
  std::optional<profiler::CounterSnapshot> window_start_;
  bool window_lost_ = false;  // the open window's start read failed
  format::RunCounters counted_;
  std::vector<perfdata::ProcSnapshot> snapshots_;
  // A client can send start/stop and announce pids without bound: their
  // errors are capped.
  base::LogLimiter enable_errors_{kMaxLoggedErrors};
  base::LogLimiter disable_errors_{kMaxLoggedErrors};
  base::LogLimiter snapshot_errors_{kMaxSnapshotWarnings};
  Fifos fifos_;
  std::optional<ChildWatcher> watcher_;
  std::optional<base::ChildProcess> child_;
  // The progress line's timer runs on io_; rounds_ counts StartBenchmark.
  std::unique_ptr<ProgressLine> progress_;
  // The benchmark's `node` (language support): see node_shim.hpp.
  std::unique_ptr<NodeShim> node_shim_;
  uint64_t rounds_ = 0;
  // What the run collected.
  fifo::RunData run_;
  std::optional<profiler::SamplerStats> sampler_stats_;
  // The sampler's side-band records, for finalize's mapping replay.
  std::optional<format::perf::SideBandRecords> side_band_;
  // Nothing reached the FIFO and no results were written (first_contact.hpp).
  bool no_protocol_ = false;
  // The runner's own CPU time and the clock when sampling started (the run
  // summary gives what the runner cost while the benchmark ran).
  uint64_t sampling_cpu_start_ns_ = 0, sampling_wall_start_ns_ = 0;
  // CLOCK_REALTIME ns when the session was made: files the benchmark's
  // runtimes left are those modified since (finalize's clean-up).
  uint64_t created_realtime_ns_ = 0;
};

// Session::create + Session::run, printing a failed prepare phase.
int run_session(const RunOptions& options);

}  // namespace runner::agent
