// Server: the runner end of the FIFO protocol, driven by one io_context.
//
// Flow: the benchmark writes frames to the ctl FIFO -> async reads feed a
// FrameDecoder -> each well-formed command updates RunData, runs the matching
// hook synchronously, then exactly one reply frame is written to the ack FIFO
// (one non-blocking write; dropped and counted when the FIFO is full of
// replies no client read, so that no stale reply is written later). Bytes that
// are not a plausible frame (garbage, impossible lengths, frames cut short by a
// dead writer) are skipped by the decoder, which resynchronises on the next
// plausible frame; they are counted and get no reply (like the CodSpeed
// runner's unparseable frames). A frame larger than PIPE_BUF that is delimited
// but does not decode gets Err. A SetVersion (a client starting its handshake)
// first discards replies left unread in the ack FIFO by clients that stopped
// reading.
//
// Threading: every member function must be called on the thread running the
// io_context, or while it is not running. Hooks run on that thread, before
// the reply is written, so the client stays blocked while they run. The
// io_context must outlive the Server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "base/base.hpp"
#include "fifo/command.hpp"
#include "fifo/server_options.hpp"

namespace runner::fifo {

inline constexpr uint64_t kMinProtocolVersion = 1;
inline constexpr uint64_t kCurrentProtocolVersion = 2;

struct ServerHooks {
  // StartBenchmark opening a window: before SampleStart is timestamped.
  std::function<void()> on_start;
  // StopBenchmark closing a window: before SampleEnd is timestamped.
  std::function<void()> on_stop;
  // First CurrentBenchmark naming this pid (the process is still alive, so
  // /proc/<pid>/maps can be snapshotted).
  std::function<void(int32_t pid)> on_new_pid;
};

struct RunData {
  // (CLOCK_MONOTONIC ns at receipt, uri) for each CurrentBenchmark.
  std::vector<std::pair<uint64_t, std::string>> uri_by_ts;
  // SampleStart/SampleEnd added by the runner + client markers as received.
  std::vector<Marker> markers;
  std::optional<std::pair<std::string, std::string>> integration;  // last wins
  std::vector<int32_t> bench_pids;  // first-announcement order, no duplicates
  std::optional<uint64_t> protocol_version;  // last accepted SetVersion
  struct Counters {
    uint64_t commands = 0;  // well-formed commands received
    // Unparseable input: resyncs that did not start at an impossible length,
    // plus delimited frames > PIPE_BUF that did not decode.
    uint64_t malformed_frames = 0;
    uint64_t oversized_frames = 0;     // headers declaring > kMaxFrameSize
    uint64_t unexpected_commands = 0;  // Ack/Err/IntegrationModeResponse
    uint64_t rejected_versions = 0;
    uint64_t duplicate_starts = 0;
    uint64_t unmatched_stops = 0;
    uint64_t dropped_replies = 0;  // ack FIFO full (client not reading)
    uint64_t write_errors = 0;
    uint64_t resyncs = 0;            // times the decoder lost sync
    uint64_t discarded_bytes = 0;    // ctl bytes skipped while resyncing
    uint64_t truncated_frames = 0;   // partial frames of a writer that stopped
    uint64_t stale_reply_bytes = 0;  // unread replies discarded on SetVersion
  } counters;
  bool sampling = false;  // inside a StartBenchmark..StopBenchmark window
};

class Server {
 public:
  // Takes the lock, creates both FIFOs and opens them; nothing is read
  // until start().
  static base::Result<std::unique_ptr<Server>> create(
      boost::asio::io_context& io, ServerOptions options, ServerHooks hooks);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();  // close()

  const ServerOptions& options() const;
  // Starts the async read loop.
  void start();
  // Synchronously processes whatever is already in the ctl FIFO (e.g. after
  // the benchmark exited), replying as it goes. Returns the number of frames
  // processed.
  size_t drain();
  const RunData& data() const;
  RunData take_data();
  // Stops I/O and removes the FIFOs and the lock file if they still are the
  // ones we created. Idempotent.
  base::Status close();

 private:
  struct Core;
  explicit Server(std::shared_ptr<Core> core);
  std::shared_ptr<Core> core_;
};

}  // namespace runner::fifo
