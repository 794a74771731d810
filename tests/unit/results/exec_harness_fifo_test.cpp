// exec-harness against a real fifo::Server on temp FIFO paths: what the
// runner receives (docs/protocol.md): SetIntegration, StartBenchmark before the
// warmup, RoundStart/RoundEnd per measured round, StopBenchmark,
// CurrentBenchmark{own pid, uri}.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "fifo/fifo.hpp"
#include "tests/support/temp_dir.hpp"

namespace fifo = runner::fifo;

namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace
using runner::testing::TempDir;

TEST_SUITE("results") {
  TEST_CASE("exec-harness under a runner FIFO server: markers and benchmark") {
    const char* bin = std::getenv("EXEC_HARNESS_BIN");
    REQUIRE(bin != nullptr);
    TempDir dir;
    fifo::ServerOptions options{dir.file("ctl.fifo"), dir.file("ack.fifo"),
                                dir.file("fifo.lock")};
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    auto server = fifo::Server::create(io, options, {});
    REQUIRE_MESSAGE(server, server.error().what());
    (*server)->start();
    std::thread thread([&io] { io.run(); });

    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("RUNNER_CTL_FIFO=" + options.ctl_path);
    env.push_back("RUNNER_ACK_FIFO=" + options.ack_path);
    env.push_back("CODSPEED_PROFILE_FOLDER=" + dir.file("profile"));
    runner::base::SpawnOptions spawn;
    spawn.argv = {bin,  "--warmup-time", "20ms", "--max-rounds", "4",
                  "--", "sleep",         "0.005"};
    spawn.env = env;
    const uint64_t spawned_at = monotonic_ns();
    auto child = runner::base::ChildProcess::spawn(spawn);
    REQUIRE(child);
    const int pid = child->pid();
    auto status = child->wait();
    const uint64_t reaped_at = monotonic_ns();
    guard.reset();
    io.stop();
    thread.join();
    REQUIRE(status);
    CHECK(status->success());
    (*server)->drain();
    fifo::RunData data = (*server)->take_data();

    REQUIRE(data.integration);
    CHECK(data.integration->first == "exec-harness");
    CHECK(data.integration->second == "1.3.0");
    REQUIRE(data.uri_by_ts.size() == 1);
    CHECK(data.uri_by_ts[0].second == "exec_harness::sleep 0.005");
    CHECK(data.bench_pids == std::vector<int32_t>{pid});
    // SampleStart, 4 x (RoundStart, RoundEnd), SampleEnd.
    REQUIRE(data.markers.size() == 10);
    CHECK(data.markers.front().type == fifo::MarkerType::kSampleStart);
    CHECK(data.markers.back().type == fifo::MarkerType::kSampleEnd);
    // Markers are taken on CLOCK_MONOTONIC by the harness while it lives.
    CHECK(data.markers.front().timestamp >= spawned_at);
    CHECK(data.markers.back().timestamp <= reaped_at);
    uint64_t previous = data.markers.front().timestamp;
    for (size_t i = 1; i <= 8; ++i) {
      const auto& m = data.markers[i];
      CHECK(m.type == (i % 2 == 1 ? fifo::MarkerType::kRoundStart
                                  : fifo::MarkerType::kRoundEnd));
      CHECK(m.timestamp >= previous);  // rounds after the window opened
      // A round is timed from before the spawn: it covers the whole
      // `sleep 0.005`.
      if (i % 2 == 0) CHECK(m.timestamp - previous >= 5'000'000);
      previous = m.timestamp;
    }
    CHECK(data.markers.back().timestamp >= previous);
    // The warmup ran inside the window: the first round starts >= 20 ms in.
    CHECK(data.markers[1].timestamp - data.markers[0].timestamp >= 20'000'000);
    CHECK(data.counters.malformed_frames == 0);
    auto results = runner::base::read_file(
        dir.file("profile/results/" + std::to_string(pid) + ".json"));
    CHECK(results);
    CHECK((*server)->close());
  }
}
