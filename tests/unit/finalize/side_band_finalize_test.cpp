// finalize's mapping replay: from the side-band records the sampler kept
// while it wrote perf.pipedata, or, when they are incomplete (the log's
// memory cap, a failed write), from the file. A real sampled run of a shell
// that forks and execs; both ways give the same perf.metadata mappings, and
// runner.log says which one was used.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/base.hpp"
#include "base/child_process.hpp"
#include "finalize/finalize.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::finalize {
namespace {

using runner::testing::TempDir;

struct Sampled {
  int32_t pid = 0;
  profiler::SamplerStats stats;
  format::perf::SideBandRecords side_band;
};

Sampled sample_shell(const std::string& pipedata) {
  Sampled out;
  base::SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; "
                "/bin/true; /bin/true"};
  spawn.suspended = true;
  auto child = base::ChildProcess::spawn(spawn);
  REQUIRE_MESSAGE(child, child.error().what());
  out.pid = child->pid();
  profiler::SamplerOptions options;
  auto sampler = profiler::Sampler::create(child->pid(), options, pipedata);
  REQUIRE_MESSAGE(sampler, sampler.error().what());
  REQUIRE((*sampler)->enable());
  REQUIRE(child->release());
  REQUIRE(child->wait());
  auto stats = (*sampler)->finish();
  REQUIRE(stats);
  out.stats = *stats;
  out.side_band = (*sampler)->take_side_band();
  return out;
}

// finalize_profile on a copy of the run; returns perf.metadata's runner
// section and runner.log.
std::pair<nlohmann::json, std::string> finalize_with(
    const TempDir& dir, const std::string& name, const std::string& pipedata,
    const Sampled& run, std::optional<format::perf::SideBandRecords> kept) {
  const std::string folder = dir.file(name);
  REQUIRE(base::make_directories(folder));
  auto bytes = base::read_file(pipedata);
  REQUIRE(bytes);
  REQUIRE(base::write_file_atomic(folder + "/perf.pipedata", *bytes));
  REQUIRE(base::set_log_file(folder + "/runner.log"));
  FinalizeInput input;
  input.folder = folder;
  input.run.integration = {"exec-harness", "1"};
  input.run.bench_pids = {run.pid};
  input.sampler_stats = run.stats;
  input.side_band = std::move(kept);
  input.profiled = true;
  input.use_cache = false;
  CHECK(finalize_profile(std::move(input)));
  base::close_log_file();
  auto meta = base::read_file(folder + "/perf.metadata");
  REQUIRE(meta);
  return {nlohmann::json::parse(*meta)["runner"],
          base::read_file(folder + "/runner.log").value_or("")};
}

}  // namespace

TEST_CASE("finalize replays the sampler's side-band records, else the file") {
  RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
  TempDir dir;
  const std::string pipedata = dir.file("perf.pipedata");
  const Sampled run = sample_shell(pipedata);
  REQUIRE(run.side_band.usable());
  const auto [from_log, log_text] =
      finalize_with(dir, "log", pipedata, run, run.side_band);
  CHECK(log_text.find("replaying the sampler's side-band records") !=
        std::string::npos);
  CHECK(log_text.find("reading perf.pipedata") == std::string::npos);
  format::perf::SideBandRecords overflowed;
  overflowed.incomplete = "the side-band records passed 64 MiB";
  const auto [from_file, file_text] =
      finalize_with(dir, "file", pipedata, run, overflowed);
  CHECK(file_text.find("reading perf.pipedata (the side-band records passed "
                       "64 MiB)") != std::string::npos);
  const auto [without, without_text] =
      finalize_with(dir, "none", pipedata, run, std::nullopt);
  CHECK(without_text.find("reading perf.pipedata (no side-band records)") !=
        std::string::npos);
  // The same processes and mappings either way.
  REQUIRE(from_log.contains("tracked_pids"));
  CHECK(from_log["tracked_pids"].size() >= 3);  // the shell, two /bin/true
  for (const char* key : {"tracked_pids", "skipped_mappings",
                          "backfilled_mappings", "unsampled_pids_forgotten"}) {
    INFO(key);
    CHECK(from_log[key] == from_file[key]);
    CHECK(from_log[key] == without[key]);
  }
}

}  // namespace runner::finalize
