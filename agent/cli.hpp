// agent: the `runner` command line and orchestration. The only part that
// depends on all the others:
//   fifo::Server (protocol, timestamps) ── hooks ──> profiler::Sampler
//   perfdata::MappingTracker + snapshots ──> symbols::build_artifacts
//   ──> perf.metadata / ExecutionTimestamps.msgpack (agent/artifacts)
//   report::run_report for `runner report` and `runner run --report`.
// main() only calls run_main(), which catches fatal exceptions.
#pragma once

namespace runner::agent {

int run_main(int argc, char** argv);

}  // namespace runner::agent
