#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include "base/unique_fd.hpp"
#include "fifo/fifo.hpp"
#include "instrument_hooks.h"
#include "instrument_hooks.hpp"
#include "tests/support/fifo_peer.hpp"
#include "tests/support/temp_dir.hpp"

namespace fifo = runner::fifo;
using runner::testing::ClientEnv;
using runner::testing::RunningServer;
using runner::testing::TempDir;

namespace {

// Watches files for opens, reads and writes (inotify), to tell whether a
// process touched them at all.
class OpenWatch {
 public:
  explicit OpenWatch(const std::vector<std::string>& paths)
      : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    REQUIRE(fd_.get() >= 0);
    for (const std::string& path : paths)
      REQUIRE(::inotify_add_watch(fd_.get(), path.c_str(),
                                  IN_OPEN | IN_ACCESS | IN_MODIFY) >= 0);
  }
  // Events queued since the last call.
  size_t take_events() {
    size_t events = 0;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    while ((n = ::read(fd_.get(), buf, sizeof(buf))) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        ++events;
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    return events;
  }

 private:
  runner::base::UniqueFd fd_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("C client: handshake, integration, window, markers, benchmark") {
    std::vector<int32_t> new_pids;
    fifo::ServerHooks hooks;
    hooks.on_new_pid = [&](int32_t pid) { new_pids.push_back(pid); };
    RunningServer running(std::move(hooks));
    ClientEnv env(running.options());

    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(h != nullptr);
    REQUIRE(instrument_hooks_is_instrumented(h));
    CHECK(instrument_hooks_set_integration(h, "codspeed-cpp", "2.3.0") == 0);
    uint64_t t0 = instrument_hooks_current_timestamp();
    CHECK(instrument_hooks_start_benchmark(h) == 0);
    int32_t pid = static_cast<int32_t>(::getpid());
    CHECK(instrument_hooks_add_marker(h, pid, MARKER_TYPE_BENCHMARK_START,
                                      t0 + 1) == 0);
    CHECK(instrument_hooks_add_marker(h, pid, MARKER_TYPE_BENCHMARK_END,
                                      t0 + 2) == 0);
    CHECK(instrument_hooks_add_marker(h, pid, 7, t0 + 3) == 2);
    CHECK(instrument_hooks_stop_benchmark(h) == 0);
    CHECK(instrument_hooks_set_executed_benchmark(h, pid,
                                                  "bench.cpp::BM_x[8]") == 0);
    CHECK(instrument_hooks_executed_benchmark(h, pid, "bench.cpp::BM_y") == 0);
    CHECK(instrument_hooks_set_executed_benchmark(h, pid, nullptr) == 1);
    instrument_hooks_deinit(h);

    fifo::RunData data = running.stop();
    // SetVersion(2) then GetIntegrationMode, then the calls above.
    CHECK(data.protocol_version == std::optional<uint64_t>(2));
    CHECK(data.counters.commands == 2 + 7);
    CHECK(data.counters.malformed_frames == 0);
    REQUIRE(data.integration.has_value());
    CHECK(data.integration->first == "codspeed-cpp");
    CHECK(data.integration->second == "2.3.0");
    REQUIRE(data.markers.size() == 4);
    CHECK(data.markers[0].type == fifo::MarkerType::kSampleStart);
    CHECK(data.markers[0].timestamp >= t0);
    CHECK(data.markers[1] ==
          fifo::Marker{fifo::MarkerType::kRoundStart, t0 + 1});
    CHECK(data.markers[2] == fifo::Marker{fifo::MarkerType::kRoundEnd, t0 + 2});
    CHECK(data.markers[3].type == fifo::MarkerType::kSampleEnd);
    REQUIRE(data.uri_by_ts.size() == 2);
    CHECK(data.uri_by_ts[0].second == "bench.cpp::BM_x[8]");
    CHECK(data.uri_by_ts[1].second == "bench.cpp::BM_y");
    CHECK(data.bench_pids == std::vector<int32_t>{pid});
    CHECK(new_pids == std::vector<int32_t>{pid});
  }

  TEST_CASE("C client: no FIFOs means not instrumented and silent no-ops") {
    TempDir dir;
    fifo::ServerOptions missing{dir.file("none.ctl"), dir.file("none.ack"), ""};
    ClientEnv env(missing);
    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(h != nullptr);
    // The client creates nothing where the FIFOs should be.
    CHECK(std::filesystem::is_empty(dir.path()));
    CHECK_FALSE(instrument_hooks_is_instrumented(h));
    CHECK(instrument_hooks_set_integration(h, "x", "1") == 0);
    CHECK(instrument_hooks_start_benchmark(h) == 0);
    CHECK(instrument_hooks_add_marker(h, 1, MARKER_TYPE_SAMPLE_START, 5) == 0);
    CHECK(instrument_hooks_add_marker(h, 1, 4, 5) == 2);
    CHECK(instrument_hooks_stop_benchmark(h) == 0);
    CHECK(instrument_hooks_set_executed_benchmark(h, 1, "u") == 0);
    instrument_hooks_deinit(h);
    // NULL handles are tolerated.
    CHECK_FALSE(instrument_hooks_is_instrumented(nullptr));
    CHECK(instrument_hooks_start_benchmark(nullptr) == 0);
    instrument_hooks_deinit(nullptr);
  }

  TEST_CASE("C client: stale FIFOs nobody holds are rejected at once") {
    TempDir dir;
    fifo::ServerOptions stale{dir.file("stale.ctl"), dir.file("stale.ack"), ""};
    REQUIRE(::mkfifo(stale.ctl_path.c_str(), 0600) == 0);
    REQUIRE(::mkfifo(stale.ack_path.c_str(), 0600) == 0);
    ClientEnv env(stale);
    OpenWatch watch({stale.ctl_path, stale.ack_path});
    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(h != nullptr);
    CHECK_FALSE(instrument_hooks_is_instrumented(h));
    CHECK(instrument_hooks_start_benchmark(h) == 0);
    instrument_hooks_deinit(h);
    // No handshake was attempted: neither FIFO was even opened (an open
    // without a reader fails, and a failed open is no event).
    CHECK(watch.take_events() == 0);
    // The watch does see an open of the ack FIFO.
    runner::base::UniqueFd ack(
        ::open(stale.ack_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(ack.get() >= 0);
    CHECK(watch.take_events() >= 1);
  }

  TEST_CASE("C client: a held ctl FIFO without a runner times out once") {
    // A reader exists (another process keeps the FIFO open) but no runner
    // answers: one 1 s ack timeout, then not instrumented.
    TempDir dir;
    fifo::ServerOptions deaf{dir.file("deaf.ctl"), dir.file("deaf.ack"), ""};
    REQUIRE(::mkfifo(deaf.ctl_path.c_str(), 0600) == 0);
    REQUIRE(::mkfifo(deaf.ack_path.c_str(), 0600) == 0);
    int holder = ::open(deaf.ctl_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(holder >= 0);
    ClientEnv env(deaf);
    auto start = std::chrono::steady_clock::now();
    InstrumentHooks* h = instrument_hooks_init();
    double elapsed = seconds_since(start);
    // What the client wrote: the SetVersion request alone, never repeated
    // and not followed by GetIntegrationMode (one timeout, then it gave up).
    std::vector<uint8_t> written(4096);
    const ssize_t n = ::read(holder, written.data(), written.size());
    ::close(holder);
    REQUIRE(h != nullptr);
    CHECK_FALSE(instrument_hooks_is_instrumented(h));
    REQUIRE(n > 0);
    written.resize(static_cast<size_t>(n));
    CHECK(written == fifo::encode_frame(fifo::SetVersion{2}));
    // It did wait for the Ack (a lower bound: a slow machine only waits
    // longer).
    CHECK(elapsed >= 0.9);
    instrument_hooks_deinit(h);
  }

  TEST_CASE("C client: 4 threads x 50 markers through one handle") {
    RunningServer running;
    ClientEnv env(running.options());
    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(instrument_hooks_is_instrumented(h));
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 50; ++i) {
          if (instrument_hooks_add_marker(h, t, MARKER_TYPE_BENCHMARK_START,
                                          static_cast<uint64_t>(t * 100 + i)) !=
              0)
            ++failures;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    instrument_hooks_deinit(h);
    fifo::RunData data = running.stop();
    CHECK(failures.load() == 0);
    CHECK(data.markers.size() == 200);
    CHECK(data.counters.malformed_frames == 0);
  }

  TEST_CASE("C client: a URI larger than the pipe buffer") {
    RunningServer running;
    ClientEnv env(running.options());
    runner::client::InstrumentHooks hooks;
    REQUIRE(hooks.instrumented());
    std::string uri(150 * 1024, 'v');
    CHECK(hooks.set_executed_benchmark(4, uri));
    CHECK(hooks.start_benchmark());
    fifo::RunData data = running.stop();
    REQUIRE(data.uri_by_ts.size() == 1);
    CHECK(data.uri_by_ts[0].second == uri);
    CHECK(data.markers.size() == 1);
  }

  TEST_CASE("C client: two handles in one process share the FIFOs safely") {
    RunningServer running;
    ClientEnv env(running.options());
    InstrumentHooks* a = instrument_hooks_init();
    InstrumentHooks* b = instrument_hooks_init();
    REQUIRE(instrument_hooks_is_instrumented(a));
    REQUIRE(instrument_hooks_is_instrumented(b));
    std::atomic<int> failures{0};
    std::thread ta([&] {
      for (int i = 0; i < 50; ++i)
        if (instrument_hooks_add_marker(a, 1, MARKER_TYPE_SAMPLE_START, 1) != 0)
          ++failures;
    });
    std::thread tb([&] {
      for (int i = 0; i < 50; ++i)
        if (instrument_hooks_set_executed_benchmark(b, 2, "u") != 0) ++failures;
    });
    ta.join();
    tb.join();
    instrument_hooks_deinit(a);
    instrument_hooks_deinit(b);
    fifo::RunData data = running.stop();
    CHECK(failures.load() == 0);
    CHECK(data.markers.size() == 50);
    CHECK(data.uri_by_ts.size() == 50);
  }

  TEST_CASE("C++ wrapper: RAII handle, moves, calls") {
    RunningServer running;
    ClientEnv env(running.options());
    {
      runner::client::InstrumentHooks hooks;
      REQUIRE(hooks.instrumented());
      runner::client::InstrumentHooks moved(std::move(hooks));
      CHECK(moved.instrumented());
      CHECK(moved.set_integration("wrapper", "0.1.0"));
      CHECK(moved.start_benchmark());
      CHECK(moved.add_marker(3, MARKER_TYPE_BENCHMARK_START,
                             runner::client::InstrumentHooks::now()));
      CHECK_FALSE(moved.add_marker(3, 9, 0));
      CHECK(moved.stop_benchmark());
      CHECK(moved.set_executed_benchmark(3, "wrapper::bench"));
    }
    fifo::RunData data = running.stop();
    REQUIRE(data.integration.has_value());
    CHECK(data.integration->first == "wrapper");
    CHECK(data.markers.size() == 3);
    CHECK(data.uri_by_ts.size() == 1);
  }

  TEST_CASE("current_timestamp is CLOCK_MONOTONIC in ns") {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t before = static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
                      static_cast<uint64_t>(ts.tv_nsec);
    uint64_t now = instrument_hooks_current_timestamp();
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t after = static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
                     static_cast<uint64_t>(ts.tv_nsec);
    CHECK(before <= now);
    CHECK(now <= after);
  }
}
