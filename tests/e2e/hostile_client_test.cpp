// End-to-end: the real `runner run` against hostile, dead and concurrent
// FIFO clients (tests/e2e/programs/fifo_clients.cpp) and the real
// bench_example. A bad client may cost its own commands, never another
// client's and never the run.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::testing::binary;
using runner::testing::file_exists;
using runner::testing::ProcessResult;
using runner::testing::read_json_file;
using runner::testing::read_msgpack_file;
using runner::testing::run_process;
using runner::testing::runner_argv;
using runner::testing::TempDir;

namespace {

// `runner run` of `fifo_clients ACTS [-- PROGRAM...]`.
ProcessResult run_clients(const TempDir& dir, const std::string& acts,
                          const std::vector<std::string>& program = {},
                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> command = {binary("FIFO_CLIENTS_BIN"), acts};
  if (!program.empty()) {
    command.push_back("--");
    command.insert(command.end(), program.begin(), program.end());
  }
  return run_process(
      runner_argv("run", dir.file("profile"), dir.path(), extra, command));
}

std::vector<std::string> example() {
  return {binary("EXAMPLE_BIN"), "--rounds", "1", "--scale", "0.2"};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

nlohmann::json fifo_counters(const TempDir& dir) {
  auto meta = read_json_file(dir.file("profile/perf.metadata"));
  return meta["runner"]["fifo"];
}

// The three benchmarks of bench_example reached the runner.
void check_example_announced(const TempDir& dir, const ProcessResult& r) {
  CHECK(r.err.find("not instrumented") == std::string::npos);
  auto ts = read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
  CHECK(ts["uri_by_ts"].size() == 3);
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("ff ff ff ff on the ctl FIFO costs the next benchmark nothing") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "ff", example());
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    check_example_announced(dir, r);
    auto fifo = fifo_counters(dir);
    CHECK(fifo["oversized_frames"] == 1);
    CHECK(fifo["resyncs"] >= 1);
    CHECK(fifo["discarded_bytes"] >= 4);
  }

  TEST_CASE("frames cut short by dead writers do not swallow the next one") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "cut-header,cut-payload", example());
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    check_example_announced(dir, r);
    auto fifo = fifo_counters(dir);
    CHECK(fifo["truncated_frames"] == 2);
    // The cut AddMarker was not completed with the next client's bytes
    // (its timestamp would be the next frame's first 8 bytes).
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    for (const auto& marker : ts["markers"])
      for (const auto& [name, value] : marker.items())
        CHECK(value.get<uint64_t>() != 0x80000000cull);
  }

  TEST_CASE("a dead client's unread Ack does not desync the next benchmark") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "no-read", example());
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    check_example_announced(dir, r);
  }

  TEST_CASE("a dead client's flood of unread replies costs it alone") {
    // 200 000 requests whose 8-byte Acks nobody reads: more than the ack
    // FIFO and the runner's reply queue hold, so replies are dropped too.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "flood:200000", example());
    INFO(r.out, r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
    check_example_announced(dir, r);
    auto fifo = fifo_counters(dir);
    CHECK(fifo["dropped_replies"] > 0);
  }

  TEST_CASE("a dead client's backlog still being answered costs it alone") {
    // 2000 requests, fewer Acks than the ack FIFO holds: none is dropped,
    // and the runner may still be answering them when the next benchmark
    // drains the FIFO and starts its handshake.
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "flood:2000", example());
    INFO(r.out, r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
    check_example_announced(dir, r);
    auto fifo = fifo_counters(dir);
    CHECK(fifo["dropped_replies"] == 0);
    CHECK(fifo["commands"] >= 2000);
  }

  TEST_CASE("8 processes x 200 commands: every reply matched") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "stress:8:200", {}, {"--allow-empty"});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("0 of 8 processes failed") != std::string::npos);
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    CHECK(ts["markers"].size() == 8 * 198);
    std::set<std::string> uris;
    for (const auto& entry : ts["uri_by_ts"])
      uris.insert(entry[1].get<std::string>());
    CHECK(uris.size() == 8);
    auto fifo = fifo_counters(dir);
    CHECK(fifo["commands"] == 8 * (2 + 200));
    CHECK(fifo["resyncs"] == 0);
    CHECK(fifo["dropped_replies"] == 0);
    CHECK(fifo["write_errors"] == 0);
  }

  TEST_CASE("8 concurrent bench_example under one runner: 24 announced") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "parallel:8", example());
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(count(r.err, "not instrumented") == 0);
    auto ts =
        read_msgpack_file(dir.file("profile/ExecutionTimestamps.msgpack"));
    CHECK(ts["uri_by_ts"].size() == 24);
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    CHECK(meta["runner"]["announced_pids"].size() == 8);
  }

  TEST_CASE("benchmarks that never reached the runner fail the run") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "results-only");
    INFO(r.out, r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("none was announced to the runner") != std::string::npos);
    // Garbage and no benchmark at all: a client tried and did not get through.
    TempDir garbage;
    auto g = run_clients(garbage, "ff", {}, {"--allow-empty"});
    INFO(g.out, g.err);
    CHECK(g.exit_code == 1);
    CHECK(g.err.find("a client wrote to the FIFO") != std::string::npos);
    // --allow-no-profile accepts it, still saying so.
    TempDir allowed;
    auto a = run_clients(allowed, "results-only", {}, {"--allow-no-profile"});
    INFO(a.out, a.err);
    CHECK(a.exit_code == 0);
    CHECK(a.err.find("none was announced to the runner") != std::string::npos);
  }

  TEST_CASE("60 000 announced pids: warnings capped, every pid recorded") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "pids:60000", {}, {"--allow-empty"});
    INFO(r.out, r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
    CHECK(count(r.err, "cannot snapshot /proc/") <= 6);
    CHECK(r.err.find("for 59995 more announced pid(s)") != std::string::npos);
    auto meta = read_json_file(dir.file("profile/perf.metadata"));
    CHECK(meta["runner"]["announced_pids"].size() == 60000);
  }

  TEST_CASE("perf.metadata carries every FIFO server counter") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    auto r = run_clients(dir, "ff", example());
    INFO(r.out, r.err);
    REQUIRE(file_exists(dir.file("profile/perf.metadata")));
    auto fifo = fifo_counters(dir);
    for (const char* key :
         {"commands", "malformed_frames", "oversized_frames",
          "unexpected_commands", "rejected_versions", "duplicate_starts",
          "unmatched_stops", "dropped_replies", "write_errors", "resyncs",
          "discarded_bytes", "truncated_frames", "stale_reply_bytes"}) {
      CAPTURE(key);
      CHECK(fifo.contains(key));
      CHECK(fifo[key].is_number_unsigned());
    }
  }
}
