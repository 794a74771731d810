// Both ends of the CodSpeed FIFO protocol for tests, on temp paths:
// RunningServer (a real fifo::Server whose io_context runs in a thread),
// FifoPeer (a client speaking the protocol by hand on raw FIFO fds,
// independent of the C client library) and ClientEnv (points the C client
// at temp FIFO paths for the life of the object).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include "base/unique_fd.hpp"
#include "fifo/fifo.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::testing {

inline fifo::ServerOptions temp_fifo_options(const TempDir& dir) {
  return {dir.file("ctl.fifo"), dir.file("ack.fifo"), dir.file("fifo.lock")};
}

// A fifo::Server on temp paths whose io_context runs in its own thread.
class RunningServer {
 public:
  explicit RunningServer(fifo::ServerHooks hooks = {})
      : options_(temp_fifo_options(dir_)), guard_(io_.get_executor()) {
    auto created = fifo::Server::create(io_, options_, std::move(hooks));
    REQUIRE_MESSAGE(created.has_value(), created.error().what());
    server_ = std::move(*created);
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~RunningServer() { stop(); }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  fifo::RunData stop() {
    if (thread_.joinable()) {
      guard_.reset();
      io_.stop();
      thread_.join();
    }
    return server_->take_data();
  }

  const fifo::ServerOptions& options() const { return options_; }
  fifo::Server& server() { return *server_; }

 private:
  TempDir dir_;
  fifo::ServerOptions options_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      guard_;
  std::unique_ptr<fifo::Server> server_;
  std::thread thread_;
};

// Points the C client library at the given FIFO paths for the life of the
// object.
class ClientEnv {
 public:
  ClientEnv(const std::string& ctl, const std::string& ack) {
    ::setenv("RUNNER_CTL_FIFO", ctl.c_str(), 1);
    ::setenv("RUNNER_ACK_FIFO", ack.c_str(), 1);
  }
  explicit ClientEnv(const fifo::ServerOptions& options)
      : ClientEnv(options.ctl_path, options.ack_path) {}
  ~ClientEnv() {
    ::unsetenv("RUNNER_CTL_FIFO");
    ::unsetenv("RUNNER_ACK_FIFO");
  }
  ClientEnv(const ClientEnv&) = delete;
  ClientEnv& operator=(const ClientEnv&) = delete;
};

// Bytes queued unread in a FIFO.
inline int unread_bytes(int fd) {
  int n = 0;
  REQUIRE(::ioctl(fd, FIONREAD, &n) == 0);
  return n;
}

// A client on the ctl/ack FIFOs of `options`, both opened O_RDWR|O_NONBLOCK
// (so that opening never blocks and the FIFOs never see EOF).
class FifoPeer {
 public:
  using Bytes = std::vector<uint8_t>;

  explicit FifoPeer(const fifo::ServerOptions& options)
      : ctl_(::open(options.ctl_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)),
        ack_(
            ::open(options.ack_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) {
    REQUIRE(ctl_.valid());
    REQUIRE(ack_.valid());
  }

  // Writes all of `bytes`, in as many writes as the FIFO takes.
  void send_bytes(const Bytes& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(ctl_.get(), bytes.data() + done, bytes.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      REQUIRE((n < 0 && errno == EAGAIN));
      pollfd p{ctl_.get(), POLLOUT, 0};
      REQUIRE(::poll(&p, 1, 5000) == 1);
    }
  }
  void send(const fifo::Command& command) {
    send_bytes(fifo::encode_frame(command));
  }
  // A frame with `payload` as is, its length prefixed.
  void send_payload(const Bytes& payload) {
    auto len = static_cast<uint32_t>(payload.size());
    Bytes frame = {static_cast<uint8_t>(len), static_cast<uint8_t>(len >> 8),
                   static_cast<uint8_t>(len >> 16),
                   static_cast<uint8_t>(len >> 24)};
    frame.insert(frame.end(), payload.begin(), payload.end());
    send_bytes(frame);
  }

  // One write() of all of `bytes`, then waits until the server has read
  // everything.
  void write_consumed(const Bytes& bytes) {
    REQUIRE(::write(ctl_.get(), bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size()));
    for (int i = 0; i < 5000 && unread_bytes(ctl_.get()) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(unread_bytes(ctl_.get()) == 0);
  }
  // Waits until `bytes` of replies sit unread in the ack FIFO.
  void wait_replies(int bytes) {
    for (int i = 0; i < 5000 && unread_bytes(ack_.get()) < bytes; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(unread_bytes(ack_.get()) >= bytes);
  }

  // Reads exactly one reply frame; nullopt on timeout.
  std::optional<fifo::Command> receive(int timeout_ms = 5000) {
    Bytes header(4);
    if (!read_exact(header, timeout_ms)) return std::nullopt;
    uint32_t len = header[0] | header[1] << 8 | header[2] << 16 |
                   static_cast<uint32_t>(header[3]) << 24;
    REQUIRE(len <= 64);
    Bytes payload(len);
    if (!read_exact(payload, timeout_ms)) return std::nullopt;
    auto decoded = fifo::decode_payload(payload);
    REQUIRE(decoded.has_value());
    return *decoded;
  }

  // Sends `command` and requires a reply.
  fifo::Command request(const fifo::Command& command) {
    send(command);
    auto reply = receive();
    REQUIRE(reply.has_value());
    return *reply;
  }

 private:
  bool read_exact(Bytes& out, int timeout_ms) {
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::read(ack_.get(), out.data() + done, out.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      pollfd p{ack_.get(), POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) != 1) return false;
    }
    return true;
  }

  base::UniqueFd ctl_;
  base::UniqueFd ack_;
};

}  // namespace runner::testing
