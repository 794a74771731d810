#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include "base/unique_fd.hpp"
#include "fifo/fifo.hpp"
#include "tests/support/fifo_peer.hpp"
#include "tests/support/temp_dir.hpp"

namespace fifo = runner::fifo;
using runner::testing::TempDir;
using Client = runner::testing::FifoPeer;
using runner::testing::RunningServer;
using runner::testing::temp_fifo_options;

namespace {

using Bytes = std::vector<uint8_t>;

uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

const fifo::Command kAck = fifo::Ack{};
const fifo::Command kErr = fifo::Err{};

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}
bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_SUITE("fifo") {
  TEST_CASE("server: handshake and a benchmark land in RunData") {
    RunningServer running;
    Client client(running.options());
    CHECK(client.request(fifo::SetVersion{2}) == kAck);
    CHECK(client.request(fifo::GetIntegrationMode{}) ==
          fifo::Command(
              fifo::IntegrationModeResponse{fifo::IntegrationMode::kWalltime}));
    CHECK(client.request(fifo::SetIntegration{"codspeed-cpp", "2.3.0"}) ==
          kAck);
    uint64_t before = now_ns();
    CHECK(client.request(fifo::StartBenchmark{}) == kAck);
    CHECK(client.request(
              fifo::AddMarker{77, {fifo::MarkerType::kRoundStart, 5}}) == kAck);
    CHECK(client.request(
              fifo::AddMarker{77, {fifo::MarkerType::kRoundEnd, 6}}) == kAck);
    CHECK(client.request(fifo::StopBenchmark{}) == kAck);
    CHECK(client.request(fifo::CurrentBenchmark{77, "bench.cpp::BM_a"}) ==
          kAck);
    CHECK(client.request(fifo::SetIntegration{"codspeed-cpp", "2.4.0"}) ==
          kAck);
    CHECK(client.request(fifo::PingPerf{}) == kAck);
    uint64_t after = now_ns();

    fifo::RunData data = running.stop();
    CHECK(data.protocol_version == std::optional<uint64_t>(2));
    REQUIRE(data.integration.has_value());
    CHECK(data.integration->first == "codspeed-cpp");
    CHECK(data.integration->second == "2.4.0");  // last wins
    REQUIRE(data.markers.size() == 4);
    CHECK(data.markers[0].type == fifo::MarkerType::kSampleStart);
    CHECK(data.markers[0].timestamp >= before);
    CHECK(data.markers[1] == fifo::Marker{fifo::MarkerType::kRoundStart, 5});
    CHECK(data.markers[2] == fifo::Marker{fifo::MarkerType::kRoundEnd, 6});
    CHECK(data.markers[3].type == fifo::MarkerType::kSampleEnd);
    CHECK(data.markers[3].timestamp >= data.markers[0].timestamp);
    REQUIRE(data.uri_by_ts.size() == 1);
    CHECK(data.uri_by_ts[0].second == "bench.cpp::BM_a");
    CHECK(data.uri_by_ts[0].first >= data.markers[3].timestamp);
    CHECK(data.uri_by_ts[0].first <= after);
    CHECK(data.bench_pids == std::vector<int32_t>{77});
    CHECK(data.counters.commands == 10);
    CHECK(data.counters.malformed_frames == 0);
    CHECK_FALSE(data.sampling);
  }

  TEST_CASE("server: garbage gets no reply and the stream stays in sync") {
    // Like the CodSpeed runner's unparseable frames: no reply (the client
    // times out); the decoder resynchronises on the next frame.
    RunningServer running;
    Client client(running.options());
    Bytes bad_utf8 = fifo::encode_payload(fifo::CurrentBenchmark{1, "x"});
    bad_utf8.back() = 0xff;
    Bytes trailing = fifo::encode_payload(fifo::StartBenchmark{});
    trailing.push_back(1);
    std::vector<Bytes> garbage = {{0x63, 0, 0, 0},     // unknown tag 99
                                  {8, 0, 0, 0, 2, 0},  // truncated SetVersion
                                  bad_utf8,
                                  {},  // empty frame
                                  trailing};
    for (const Bytes& payload : garbage) {
      client.send_payload(payload);
      CHECK(client.request(fifo::SetVersion{2}) == kAck);
    }
    // Runner -> client commands sent by a client are parsed: Err.
    CHECK(client.request(fifo::Ack{}) == kErr);
    CHECK(client.request(fifo::Err{}) == kErr);
    CHECK(client.request(fifo::IntegrationModeResponse{}) == kErr);
    CHECK(client.request(fifo::CurrentBenchmark{9, "ok"}) == kAck);
    CHECK_FALSE(client.receive(100).has_value());

    fifo::RunData data = running.stop();
    CHECK(data.counters.malformed_frames == 5);
    CHECK(data.counters.resyncs == 5);
    CHECK(data.counters.unexpected_commands == 3);
    CHECK(data.counters.commands == 9);
    CHECK(data.uri_by_ts.size() == 1);
  }

  TEST_CASE("server: an impossible length is skipped, not its body") {
    RunningServer running;
    Client client(running.options());
    uint32_t big = 2u << 20;
    Bytes frame = {static_cast<uint8_t>(big), static_cast<uint8_t>(big >> 8),
                   static_cast<uint8_t>(big >> 16),
                   static_cast<uint8_t>(big >> 24)};
    client.send_bytes(frame);
    // The old decoder skipped the next 2 MiB: this request was swallowed.
    CHECK(client.request(fifo::SetVersion{1}) == kAck);
    CHECK_FALSE(client.receive(200).has_value());  // nothing else queued
    fifo::RunData data = running.stop();
    CHECK(data.counters.oversized_frames == 1);
    CHECK(data.counters.commands == 1);
    CHECK(data.protocol_version == std::optional<uint64_t>(1));
  }

  TEST_CASE("server: a frame larger than the pipe buffer arrives whole") {
    RunningServer running;
    Client client(running.options());
    std::string uri(200 * 1024, 'u');
    uri += "::end";
    CHECK(client.request(fifo::CurrentBenchmark{3, uri}) == kAck);
    CHECK(client.request(fifo::StartBenchmark{}) == kAck);
    fifo::RunData data = running.stop();
    REQUIRE(data.uri_by_ts.size() == 1);
    CHECK(data.uri_by_ts[0].second == uri);
    CHECK(data.markers.size() == 1);
  }

  TEST_CASE("server: versions, duplicate starts and unmatched stops") {
    RunningServer running;
    Client client(running.options());
    CHECK(client.request(fifo::SetVersion{3}) == kErr);
    CHECK(client.request(fifo::SetVersion{0}) == kErr);
    CHECK(client.request(fifo::SetVersion{1}) == kAck);
    CHECK(client.request(fifo::SetVersion{2}) == kAck);
    CHECK(client.request(fifo::StopBenchmark{}) == kAck);
    CHECK(client.request(fifo::StartBenchmark{}) == kAck);
    CHECK(client.request(fifo::StartBenchmark{}) == kAck);
    CHECK(client.request(fifo::StopBenchmark{}) == kAck);
    CHECK(client.request(fifo::StopBenchmark{}) == kAck);
    CHECK(client.request(fifo::StartBenchmark{}) == kAck);
    fifo::RunData data = running.stop();
    CHECK(data.counters.rejected_versions == 2);
    CHECK(data.protocol_version == std::optional<uint64_t>(2));
    CHECK(data.counters.duplicate_starts == 1);
    CHECK(data.counters.unmatched_stops == 2);
    REQUIRE(data.markers.size() == 3);
    CHECK(data.markers[0].type == fifo::MarkerType::kSampleStart);
    CHECK(data.markers[1].type == fifo::MarkerType::kSampleEnd);
    CHECK(data.markers[2].type == fifo::MarkerType::kSampleStart);
    CHECK(data.sampling);
  }

  TEST_CASE("server: hooks run before the Ack is written") {
    std::mutex mutex;
    std::vector<std::string> events;
    std::atomic<uint64_t> start_hook_done{0}, stop_hook_done{0};
    auto record = [&](std::string e) {
      std::lock_guard lock(mutex);
      events.push_back(std::move(e));
    };
    fifo::ServerHooks hooks;
    hooks.on_start = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      record("start-hook");
      start_hook_done = now_ns();
    };
    hooks.on_stop = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      record("stop-hook");
      stop_hook_done = now_ns();
    };
    hooks.on_new_pid = [&](int32_t pid) {
      record("pid " + std::to_string(pid));
    };
    RunningServer running(std::move(hooks));
    Client client(running.options());

    uint64_t sent = now_ns();
    client.send(fifo::StartBenchmark{});
    CHECK(client.receive() == kAck);
    uint64_t acked = now_ns();
    record("start-ack");
    CHECK(acked - sent >= 50'000'000u);
    CHECK(start_hook_done.load() != 0);
    CHECK(start_hook_done.load() <= acked);

    client.send(fifo::StopBenchmark{});
    CHECK(client.receive() == kAck);
    record("stop-ack");
    CHECK(client.request(fifo::CurrentBenchmark{11, "a"}) == kAck);
    record("bench-ack");
    CHECK(client.request(fifo::CurrentBenchmark{11, "b"}) == kAck);
    CHECK(client.request(fifo::CurrentBenchmark{12, "c"}) == kAck);
    record("end");

    fifo::RunData data = running.stop();
    std::vector<std::string> expected = {"start-hook", "start-ack", "stop-hook",
                                         "stop-ack",   "pid 11",    "bench-ack",
                                         "pid 12",     "end"};
    CHECK(events == expected);
    REQUIRE(data.markers.size() == 2);
    // The hook ran before the SampleStart/SampleEnd timestamps.
    CHECK(data.markers[0].timestamp >= start_hook_done.load());
    CHECK(data.markers[1].timestamp >= stop_hook_done.load());
    CHECK(data.bench_pids == std::vector<int32_t>{11, 12});
    CHECK(data.uri_by_ts.size() == 3);
  }

  TEST_CASE("server: 8 threads x 200 serialized requests, none lost") {
    // The ack FIFO is shared, so like the real client each request+reply
    // pair holds a process-wide mutex; what is tested is that the server
    // answers every command exactly once, in order, and records all of them.
    RunningServer running;
    constexpr int kThreads = 8, kPerThread = 200;
    std::mutex request_mutex;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Client client(running.options());
        for (int i = 0; i < kPerThread; ++i) {
          fifo::AddMarker marker{t,
                                 {fifo::MarkerType::kRoundStart,
                                  static_cast<uint64_t>(t * 1000 + i)}};
          std::lock_guard lock(request_mutex);
          client.send(marker);
          auto reply = client.receive();
          if (!reply || !(*reply == kAck)) ++failures;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    fifo::RunData data = running.stop();
    CHECK(failures.load() == 0);
    CHECK(data.counters.commands == kThreads * kPerThread);
    REQUIRE(data.markers.size() == kThreads * kPerThread);
    std::set<uint64_t> seen;
    for (const auto& m : data.markers) seen.insert(m.timestamp);
    CHECK(seen.size() == kThreads * kPerThread);
    CHECK(*seen.begin() == 0);
    CHECK(*seen.rbegin() == (kThreads - 1) * 1000 + kPerThread - 1);
  }

  TEST_CASE("server: a pipelined burst gets one ordered reply per frame") {
    RunningServer running;
    Client client(running.options());
    constexpr int kCount = 1000;
    Bytes burst;
    for (int i = 0; i < kCount; ++i) {
      fifo::Command c =
          (i % 10 == 9)
              ? fifo::Command(fifo::GetIntegrationMode{})
              : fifo::Command(fifo::AddMarker{
                    1,
                    {fifo::MarkerType::kRoundEnd, static_cast<uint64_t>(i)}});
      Bytes frame = fifo::encode_frame(c);
      burst.insert(burst.end(), frame.begin(), frame.end());
    }
    client.send_bytes(burst);
    int acks = 0, modes = 0;
    for (int i = 0; i < kCount; ++i) {
      auto reply = client.receive();
      REQUIRE(reply.has_value());
      if (i % 10 == 9) {
        CHECK(std::holds_alternative<fifo::IntegrationModeResponse>(*reply));
        ++modes;
      } else {
        CHECK(*reply == kAck);
        ++acks;
      }
    }
    CHECK_FALSE(client.receive(100).has_value());
    fifo::RunData data = running.stop();
    CHECK(acks == 900);
    CHECK(modes == 100);
    CHECK(data.markers.size() == 900);
  }

  TEST_CASE("server: drain() processes frames left in the ctl FIFO") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE(created.has_value());
    auto& server = **created;
    Client client(options);
    client.send(fifo::StartBenchmark{});
    client.send(fifo::CurrentBenchmark{5, "late"});
    // Half a frame stays pending; it is not lost, just incomplete.
    client.send_bytes({4, 0, 0});
    CHECK(server.drain() == 2);
    CHECK(server.data().uri_by_ts.size() == 1);
    CHECK(server.data().sampling);
    io.poll();  // flushes the queued replies
    CHECK(client.receive(1000) == kAck);
    CHECK(client.receive(1000) == kAck);
    CHECK(server.close().has_value());
  }

  TEST_CASE("server: close() removes the files and is idempotent") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE(created.has_value());
    CHECK(is_fifo(options.ctl_path));
    CHECK(is_fifo(options.ack_path));
    CHECK(read_text(options.lock_path) == std::to_string(::getpid()) + "\n");
    struct stat st {};
    REQUIRE(::stat(options.ctl_path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_uid == ::geteuid());
    CHECK((*created)->close().has_value());
    CHECK_FALSE(exists(options.ctl_path));
    CHECK_FALSE(exists(options.ack_path));
    CHECK_FALSE(exists(options.lock_path));
    CHECK((*created)->close().has_value());
    created->reset();  // destructor after close: no error, nothing left
    CHECK_FALSE(exists(options.ctl_path));
  }

  TEST_CASE("server: close() leaves files that were replaced by someone else") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE(created.has_value());
    REQUIRE(::unlink(options.ctl_path.c_str()) == 0);
    REQUIRE(::mkfifo(options.ctl_path.c_str(), 0600) == 0);  // not ours
    CHECK((*created)->close().has_value());
    CHECK(is_fifo(options.ctl_path));
    CHECK_FALSE(exists(options.ack_path));
  }

  TEST_CASE("server: a lock held by a live process refuses a second runner") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int fd = ::open(options.lock_path.c_str(), O_RDWR | O_CREAT, 0600);
      if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
      std::string pid = std::to_string(::getpid()) + "\n";
      if (::write(fd, pid.data(), pid.size()) < 0) ::_exit(1);
      if (::write(ready[1], "x", 1) != 1) ::_exit(1);
      ::pause();
      ::_exit(0);
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);

    boost::asio::io_context io;
    auto refused = fifo::Server::create(io, options, {});
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    REQUIRE_FALSE(refused.has_value());
    std::string message = refused.error().what();
    CHECK(message.find("another runner (pid " + std::to_string(child) +
                       ") is using " + options.ctl_path +
                       "; wait for it to finish") != std::string::npos);
    CHECK_FALSE(exists(options.ctl_path));  // nothing created

    // Same process, second server: also refused while the first lives.
    auto first = fifo::Server::create(io, options, {});
    REQUIRE(first.has_value());
    auto second = fifo::Server::create(io, options, {});
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().what().find("another runner (pid " +
                                     std::to_string(::getpid()) + ")") !=
          std::string::npos);
    CHECK(is_fifo(options.ctl_path));  // the first runner's files survive
    CHECK(is_fifo(options.ack_path));
    // After it closes, a new one can start.
    CHECK((*first)->close().has_value());
    auto third = fifo::Server::create(io, options, {});
    CHECK(third.has_value());
  }

  TEST_CASE("server: a stale lock file of a dead process is taken over") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    pid_t dead = ::fork();
    REQUIRE(dead >= 0);
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    {
      std::ofstream out(options.lock_path);
      out << dead << "\n";
    }
    REQUIRE(::mkfifo(options.ctl_path.c_str(), 0600) == 0);  // stale FIFO too
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE_MESSAGE(created.has_value(), created.error().what());
    CHECK(read_text(options.lock_path) == std::to_string(::getpid()) + "\n");
    CHECK(is_fifo(options.ctl_path));
  }

  TEST_CASE("server: symlinks planted at the paths are not followed") {
    TempDir dir;
    auto options = temp_fifo_options(dir);
    std::string victim = dir.file("victim");
    std::string lock_victim = dir.file("lock-victim");
    {
      std::ofstream(victim) << "precious";
      std::ofstream(lock_victim) << "also precious";
    }
    REQUIRE(::symlink(victim.c_str(), options.ctl_path.c_str()) == 0);
    REQUIRE(::symlink(victim.c_str(), options.ack_path.c_str()) == 0);
    REQUIRE(::symlink(lock_victim.c_str(), options.lock_path.c_str()) == 0);
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE_MESSAGE(created.has_value(), created.error().what());
    CHECK(is_fifo(options.ctl_path));
    CHECK(is_fifo(options.ack_path));
    struct stat st {};
    REQUIRE(::lstat(options.lock_path.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(read_text(victim) == "precious");
    CHECK(read_text(lock_victim) == "also precious");
    REQUIRE(::lstat(victim.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((*created)->close().has_value());
    CHECK(read_text(victim) == "precious");
  }

  TEST_CASE("server: a missing directory gives a clear error") {
    TempDir dir;
    fifo::ServerOptions options{dir.file("no/ctl"), dir.file("no/ack"),
                                dir.file("lock")};
    boost::asio::io_context io;
    auto created = fifo::Server::create(io, options, {});
    REQUIRE_FALSE(created.has_value());
    CHECK(created.error().what().find("ctl FIFO " + options.ctl_path) !=
          std::string::npos);
    CHECK_FALSE(exists(options.lock_path));  // lock released and removed
  }

  TEST_CASE("options: environment contract") {
    fifo::ServerOptions defaults;
    CHECK(fifo::client_environment(defaults).empty());
    fifo::ServerOptions custom{"/x/ctl", "/x/ack", "/x/lock"};
    auto env = fifo::client_environment(custom);
    REQUIRE(env.size() == 3);
    CHECK(env[0] ==
          std::pair<std::string, std::string>{"RUNNER_CTL_FIFO", "/x/ctl"});
    CHECK(env[1] ==
          std::pair<std::string, std::string>{"RUNNER_ACK_FIFO", "/x/ack"});
    CHECK(env[2] ==
          std::pair<std::string, std::string>{"RUNNER_FIFO_LOCK", "/x/lock"});

    ::setenv("RUNNER_CTL_FIFO", "/y/ctl", 1);
    ::setenv("RUNNER_FIFO_LOCK", "", 1);
    auto from_env = fifo::server_options_from_env();
    ::unsetenv("RUNNER_CTL_FIFO");
    ::unsetenv("RUNNER_FIFO_LOCK");
    CHECK(from_env.ctl_path == "/y/ctl");
    CHECK(from_env.ack_path == fifo::kDefaultAckPath);
    CHECK(from_env.lock_path == fifo::kDefaultLockPath);
  }
}
