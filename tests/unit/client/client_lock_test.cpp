// The C client across processes: the flock on the ctl FIFO serialises
// request/reply pairs of different processes, and a reply left unread by a
// dead client is drained before the handshake.
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
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
#include "tests/support/fifo_peer.hpp"
#include "tests/support/temp_dir.hpp"

namespace fifo = runner::fifo;
using runner::base::UniqueFd;
using runner::testing::ClientEnv;
using runner::testing::RunningServer;
using runner::testing::TempDir;

namespace {

// A minimal runner that answers every command and never discards anything
// (so that what is tested is the client's own drain).
class FakeRunner {
 public:
  FakeRunner()
      : ctl_path_(dir_.file("ctl.fifo")), ack_path_(dir_.file("ack.fifo")) {
    REQUIRE(::mkfifo(ctl_path_.c_str(), 0600) == 0);
    REQUIRE(::mkfifo(ack_path_.c_str(), 0600) == 0);
    ctl_ = UniqueFd(::open(ctl_path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    ack_ = UniqueFd(::open(ack_path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(ctl_.valid());
    REQUIRE(ack_.valid());
  }
  ~FakeRunner() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void put_reply(const fifo::Command& c) {
    auto bytes = fifo::encode_frame(c);
    REQUIRE(::write(ack_.get(), bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size()));
  }
  void start() {
    thread_ = std::thread([this] { serve(); });
  }
  const std::string& ctl_path() const { return ctl_path_; }
  const std::string& ack_path() const { return ack_path_; }

 private:
  void serve() {
    fifo::FrameDecoder decoder;
    uint8_t buf[4096];
    while (!stop_) {
      pollfd p{ctl_.get(), POLLIN, 0};
      if (::poll(&p, 1, 20) != 1) continue;
      ssize_t n = ::read(ctl_.get(), buf, sizeof(buf));
      if (n <= 0) continue;
      decoder.feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
      while (auto f = decoder.next()) {
        auto c = fifo::decode_payload(*f);
        if (!c) continue;
        if (std::holds_alternative<fifo::GetIntegrationMode>(*c))
          put_reply(fifo::IntegrationModeResponse{});
        else
          put_reply(fifo::Ack{});
      }
    }
  }
  TempDir dir_;
  std::string ctl_path_, ack_path_;
  UniqueFd ctl_, ack_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("C client: 8 processes x 200 commands, every reply matched") {
    RunningServer running;
    ClientEnv env(running.options().ctl_path, running.options().ack_path);
    constexpr int kProcesses = 8, kCommands = 200;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
      pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        InstrumentHooks* h = instrument_hooks_init();
        if (!instrument_hooks_is_instrumented(h)) ::_exit(10);
        int failed = 0;
        for (int i = 0; i < kCommands; ++i) {
          failed += instrument_hooks_add_marker(
                        h, p, MARKER_TYPE_SAMPLE_START,
                        static_cast<uint64_t>(p * 1000 + i)) != 0;
        }
        instrument_hooks_deinit(h);
        ::_exit(failed == 0 ? 0 : 11);
      }
      children.push_back(pid);
    }
    int not_instrumented = 0, with_failures = 0;
    for (pid_t child : children) {
      int status = 0;
      REQUIRE(::waitpid(child, &status, 0) == child);
      REQUIRE(WIFEXITED(status));
      not_instrumented += WEXITSTATUS(status) == 10;
      with_failures += WEXITSTATUS(status) == 11;
    }
    CHECK(not_instrumented == 0);
    CHECK(with_failures == 0);
    auto data = running.stop();
    CHECK(data.markers.size() == kProcesses * kCommands);
    CHECK(data.counters.commands == kProcesses * (kCommands + 2));
  }

  TEST_CASE("C client: a handle inherited through fork is serialised too") {
    // Forked children share the parent's open file descriptions, on which
    // flock excludes no one. While the server runs a hook (before the Ack,
    // so the requester still holds the lock), no other request may arrive.
    std::string ctl_path;
    std::atomic<int> overlaps{0};
    auto check_alone = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      UniqueFd ctl(::open(ctl_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
      int unread = 0;
      if (ctl.valid() && ::ioctl(ctl.get(), FIONREAD, &unread) == 0 &&
          unread > 0)
        ++overlaps;
    };
    fifo::ServerHooks hooks;
    hooks.on_start = check_alone;
    hooks.on_stop = check_alone;
    RunningServer running(std::move(hooks));
    ctl_path = running.options().ctl_path;
    ClientEnv env(running.options().ctl_path, running.options().ack_path);
    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(instrument_hooks_is_instrumented(h));
    constexpr int kChildren = 3, kWindows = 20;
    auto windows = [h] {
      int failed = 0;
      for (int i = 0; i < kWindows; ++i) {
        failed += instrument_hooks_start_benchmark(h) != 0;
        failed += instrument_hooks_stop_benchmark(h) != 0;
      }
      return failed;
    };
    std::vector<pid_t> children;
    for (int c = 0; c < kChildren; ++c) {
      pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) ::_exit(windows() == 0 ? 0 : 11);
      children.push_back(pid);
    }
    CHECK(windows() == 0);
    int failed_children = 0;
    for (pid_t child : children) {
      int status = 0;
      REQUIRE(::waitpid(child, &status, 0) == child);
      failed_children += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(failed_children == 0);
    instrument_hooks_deinit(h);
    running.stop();
    CHECK(overlaps.load() == 0);
  }

  TEST_CASE("C client: an Ack left unread by a dead client is drained") {
    FakeRunner runner;
    runner.put_reply(fifo::Ack{});  // what a dead client never read
    runner.start();
    ClientEnv env(runner.ctl_path(), runner.ack_path());
    InstrumentHooks* h = instrument_hooks_init();
    CHECK(instrument_hooks_is_instrumented(h));
    CHECK(instrument_hooks_start_benchmark(h) == 0);
    instrument_hooks_deinit(h);
  }

  TEST_CASE("C client: waits while another process holds the FIFO lock") {
    std::atomic<bool> released{false};
    std::atomic<bool> started_while_locked{false};
    fifo::ServerHooks hooks;
    hooks.on_start = [&] { started_while_locked = !released.load(); };
    RunningServer running(std::move(hooks));
    ClientEnv env(running.options().ctl_path, running.options().ack_path);
    InstrumentHooks* h = instrument_hooks_init();
    REQUIRE(instrument_hooks_is_instrumented(h));
    // Another open file description of the FIFO (as another process has).
    UniqueFd other(::open(running.options().ctl_path.c_str(),
                          O_RDWR | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(other.valid());
    REQUIRE(::flock(other.get(), LOCK_EX) == 0);
    std::thread holder([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      released = true;
      ::flock(other.get(), LOCK_UN);
    });
    CHECK(instrument_hooks_start_benchmark(h) == 0);
    holder.join();
    CHECK_FALSE(started_while_locked.load());
    instrument_hooks_deinit(h);
  }
}
