#include "fifo/server.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "base/base.hpp"
#include "fifo/codec.hpp"
#include "fifo/fifo_files.hpp"
#include "fifo/frame_decoder.hpp"

namespace runner::fifo {
namespace {

namespace asio = boost::asio;

// Per-kind warnings are logged this many times, then only counted.
constexpr uint64_t kMaxWarnings = 20;

}  // namespace

struct Server::Core : std::enable_shared_from_this<Server::Core> {
  Core(asio::io_context& io, ServerOptions opts, ServerHooks h,
       std::unique_ptr<FifoFiles> f)
      : ctl(io),
        ack(io),
        options(std::move(opts)),
        hooks(std::move(h)),
        files(std::move(f)) {}

  asio::posix::stream_descriptor ctl;
  asio::posix::stream_descriptor ack;
  ServerOptions options;
  ServerHooks hooks;
  std::unique_ptr<FifoFiles> files;
  FrameDecoder decoder;
  std::array<uint8_t, 64 * 1024> read_buffer{};
  bool reading = false;
  bool deaf = false;  // see reply()
  bool closed = false;
  uint64_t warnings = 0;
  RunData data;
  std::unordered_set<int32_t> known_pids;  // == data.bench_pids, for lookup
  // Decoder counters already copied into data.counters.
  uint64_t seen_resyncs = 0, seen_oversized = 0, seen_discarded = 0,
           seen_truncated = 0;

  bool should_warn() {
    if (warnings < kMaxWarnings) {
      ++warnings;
      return true;
    }
    if (warnings++ == kMaxWarnings) {
      RUNNER_LOG("fifo", kWarning)
          << "further FIFO protocol warnings are only counted";
    }
    return false;
  }

  void start_read() {
    if (closed || reading) return;
    reading = true;
    ctl.async_read_some(
        asio::buffer(read_buffer),
        [self = shared_from_this()](const boost::system::error_code& ec,
                                    size_t n) { self->on_read(ec, n); });
  }

  void on_read(const boost::system::error_code& ec, size_t n) {
    reading = false;
    if (closed || ec == asio::error::operation_aborted) return;
    if (ec) {
      // With our own O_RDWR handle there is no EOF; anything else is fatal
      // for the read loop.
      RUNNER_LOG("fifo", kError)
          << "reading " << options.ctl_path << ": " << ec.message();
      return;
    }
    feed(n);
    process_frames();
    start_read();
  }

  // A read shorter than the buffer emptied the FIFO (see FrameDecoder).
  void feed(size_t n) {
    decoder.feed(std::span<const uint8_t>(read_buffer.data(), n));
    if (n < read_buffer.size()) decoder.pipe_drained();
  }

  // Copies what the decoder dropped into the counters, with a warning.
  void account_decoder() {
    uint64_t resyncs = decoder.resyncs() - seen_resyncs;
    uint64_t oversized = decoder.oversized_frames() - seen_oversized;
    uint64_t discarded = decoder.discarded_bytes() - seen_discarded;
    uint64_t truncated = decoder.truncated_frames() - seen_truncated;
    if (discarded == 0 && resyncs == 0 && truncated == 0) return;
    seen_resyncs = decoder.resyncs();
    seen_oversized = decoder.oversized_frames();
    seen_discarded = decoder.discarded_bytes();
    seen_truncated = decoder.truncated_frames();
    data.counters.oversized_frames += oversized;
    data.counters.malformed_frames += resyncs - oversized;
    data.counters.resyncs += resyncs;
    data.counters.discarded_bytes += discarded;
    data.counters.truncated_frames += truncated;
    if (should_warn()) {
      RUNNER_LOG("fifo", kWarning)
          << "skipped " << discarded << " bytes on " << options.ctl_path
          << " that are not a FIFO command (" << oversized
          << " impossible lengths, " << truncated
          << " frames cut short by their writer); no reply is sent for them";
    }
  }

  // SetVersion opens a client's conversation: every reply still unread in
  // the ack FIFO belongs to a client that stopped reading (e.g. it died
  // before reading its Ack) and would be taken as this client's reply.
  void discard_stale_replies() {
    int unread = 0;
    if (::ioctl(ack.native_handle(), FIONREAD, &unread) != 0 || unread <= 0)
      return;
    std::array<uint8_t, 4096> sink{};
    while (unread > 0) {
      ssize_t n = ::read(ack.native_handle(), sink.data(),
                         std::min<size_t>(sink.size(), unread));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      unread -= static_cast<int>(n);
      data.counters.stale_reply_bytes += static_cast<uint64_t>(n);
    }
    if (should_warn()) {
      RUNNER_LOG("fifo", kWarning)
          << "discarded unread replies in " << options.ack_path
          << " left by a client that stopped reading";
    }
  }

  size_t process_frames() {
    size_t frames = 0;
    account_decoder();
    while (auto frame = decoder.next()) {
      ++frames;
      const Frame& payload = *frame;
      auto command = decode_payload(payload);
      if (!command) {
        ++data.counters.malformed_frames;
        if (should_warn()) {
          RUNNER_LOG("fifo", kWarning)
              << "failed to parse FIFO command (" << payload.size()
              << " bytes): " << command.error().what();
        }
        reply(Err{});
        continue;
      }
      ++data.counters.commands;
      RUNNER_LOG("fifo", kDebug) << "received " << describe(*command);
      if (std::holds_alternative<SetVersion>(*command)) {
        deaf = false;
        discard_stale_replies();
      }
      reply(handle(*command));
    }
    return frames;
  }

  // StartBenchmark (open) and StopBenchmark (close) of the sampling window;
  // a second start or a stop without a start is counted and ignored.
  Command set_window(bool open) {
    if (data.sampling == open) {
      ++(open ? data.counters.duplicate_starts : data.counters.unmatched_stops);
      if (should_warn()) {
        RUNNER_LOG("fifo", kWarning)
            << (open ? "StartBenchmark while a window is already open; ignored"
                     : "StopBenchmark without StartBenchmark; ignored");
      }
      return Ack{};
    }
    // The hook (enable or disable sampling) runs before the timestamp so
    // that sampling brackets the window the client measures.
    const std::function<void()>& hook = open ? hooks.on_start : hooks.on_stop;
    if (hook) hook();
    data.markers.push_back(
        {open ? MarkerType::kSampleStart : MarkerType::kSampleEnd,
         base::monotonic_ns()});
    data.sampling = open;
    return Ack{};
  }

  Command handle(const Command& command) {
    return std::visit(
        [this](const auto& c) -> Command {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, CurrentBenchmark>) {
            data.uri_by_ts.emplace_back(base::monotonic_ns(), c.uri);
            if (known_pids.insert(c.pid).second) {
              data.bench_pids.push_back(c.pid);
              if (hooks.on_new_pid) hooks.on_new_pid(c.pid);
            }
            return Ack{};
          } else if constexpr (std::is_same_v<T, StartBenchmark>) {
            return set_window(true);
          } else if constexpr (std::is_same_v<T, StopBenchmark>) {
            return set_window(false);
          } else if constexpr (std::is_same_v<T, PingPerf>) {
            return Ack{};
          } else if constexpr (std::is_same_v<T, SetIntegration>) {
            data.integration.emplace(c.name, c.version);
            return Ack{};
          } else if constexpr (std::is_same_v<T, AddMarker>) {
            data.markers.push_back(c.marker);
            return Ack{};
          } else if constexpr (std::is_same_v<T, SetVersion>) {
            if (c.version < kMinProtocolVersion ||
                c.version > kCurrentProtocolVersion) {
              ++data.counters.rejected_versions;
              if (should_warn()) {
                RUNNER_LOG("fifo", kWarning)
                    << "the benchmark speaks FIFO protocol version "
                    << c.version << " but this runner supports versions "
                    << kMinProtocolVersion << " to " << kCurrentProtocolVersion
                    << "; replying Err (update the runner or the "
                       "integration), the run continues";
              }
              return Err{};
            }
            data.protocol_version = c.version;
            return Ack{};
          } else if constexpr (std::is_same_v<T, GetIntegrationMode>) {
            return IntegrationModeResponse{IntegrationMode::kWalltime};
          } else {
            // Ack, Err, IntegrationModeResponse only flow runner -> client.
            ++data.counters.unexpected_commands;
            if (should_warn()) {
              RUNNER_LOG("fifo", kWarning)
                  << "unexpected FIFO command " << describe(c)
                  << " from the benchmark; replying Err";
            }
            return Err{};
          }
        },
        command);
  }

  // A reply is written at once, in one write() on the non-blocking ack
  // FIFO: a frame is a few bytes, below PIPE_BUF, so it lands whole or not
  // at all. A full FIFO holds 64 KiB of replies nobody read, i.e. a client
  // that stopped reading: its reply is dropped, never queued, so that
  // nothing of its conversation is written later, after the next client
  // drained the FIFO (which would take it for its own reply).
  // Once the FIFO was full, every reply is dropped until the next SetVersion
  // (`deaf`): the replies to the rest of a dead client's backlog would
  // otherwise land while the next client drains the FIFO.
  void reply(const Command& response) {
    if (closed) return;
    if (deaf) {
      ++data.counters.dropped_replies;
      return;
    }
    std::vector<uint8_t> frame = encode_frame(response);
    for (;;) {
      ssize_t n = ::write(ack.native_handle(), frame.data(), frame.size());
      if (n == static_cast<ssize_t>(frame.size())) return;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        ++data.counters.dropped_replies;
        deaf = true;
        if (should_warn()) {
          RUNNER_LOG("fifo", kWarning)
              << options.ack_path
              << " is full of replies no client read: replies dropped until "
                 "a client starts a new handshake";
        }
      } else {
        ++data.counters.write_errors;
        RUNNER_LOG("fifo", kError)
            << "writing " << options.ack_path << ": "
            << (n < 0 ? std::strerror(errno) : "short write");
      }
      return;
    }
  }

  size_t drain() {
    if (closed) return 0;
    size_t frames = 0;
    for (;;) {
      ssize_t n =
          ::read(ctl.native_handle(), read_buffer.data(), read_buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EAGAIN: the FIFO is empty
      feed(static_cast<size_t>(n));
      frames += process_frames();
    }
    return frames;
  }

  base::Status close() {
    if (closed) return {};
    closed = true;
    boost::system::error_code ignored;
    ctl.close(ignored);
    ack.close(ignored);
    if (decoder.mid_frame()) {
      RUNNER_LOG("fifo", kDebug) << "closing with a partial frame pending";
    }
    return files->remove();
  }
};

base::Result<std::unique_ptr<Server>> Server::create(asio::io_context& io,
                                                     ServerOptions options,
                                                     ServerHooks hooks) {
  RUNNER_ASSIGN_OR_RETURN(std::unique_ptr<FifoFiles> files,
                          FifoFiles::create(options), "FIFO server");
  base::UniqueFd ctl_fd = files->take_ctl_fd();
  base::UniqueFd ack_fd = files->take_ack_fd();
  auto core = std::make_shared<Core>(io, std::move(options), std::move(hooks),
                                     std::move(files));
  boost::system::error_code ec;
  core->ctl.assign(ctl_fd.release(), ec);
  if (ec) return base::Error("assign ctl FIFO: " + ec.message());
  core->ack.assign(ack_fd.release(), ec);
  if (ec) return base::Error("assign ack FIFO: " + ec.message());
  return std::unique_ptr<Server>(new Server(std::move(core)));
}

Server::Server(std::shared_ptr<Core> core) : core_(std::move(core)) {}

Server::~Server() {
  auto status = close();
  if (!status) {
    RUNNER_LOG("fifo", kWarning) << "closing: " << status.error().what();
  }
}

const ServerOptions& Server::options() const { return core_->options; }
void Server::start() { core_->start_read(); }
size_t Server::drain() { return core_->drain(); }
const RunData& Server::data() const { return core_->data; }
RunData Server::take_data() {
  RunData taken = std::move(core_->data);
  core_->data = RunData{};
  core_->data.sampling = taken.sampling;
  core_->known_pids.clear();
  return taken;
}
base::Status Server::close() { return core_->close(); }

}  // namespace runner::fifo
