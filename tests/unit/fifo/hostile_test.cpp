// Hostile and dead writers on the ctl FIFO: the FrameDecoder's
// resynchronisation, and a real fifo::Server on real FIFOs fed by raw
// writers that send garbage, die mid-frame or never read their reply.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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
#include "tests/support/fifo_peer.hpp"
#include "tests/support/temp_dir.hpp"

namespace fifo = runner::fifo;
using runner::testing::RunningServer;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes frame(const fifo::Command& c) { return fifo::encode_frame(c); }

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<fifo::Command> drain(fifo::FrameDecoder& decoder) {
  std::vector<fifo::Command> out;
  while (auto f = decoder.next()) {
    auto decoded = fifo::decode_payload(*f);
    REQUIRE(decoded.has_value());
    out.push_back(*decoded);
  }
  return out;
}

const fifo::Command kSetVersion = fifo::SetVersion{2};
const fifo::Command kStart = fifo::StartBenchmark{};
const fifo::Command kMarker =
    fifo::AddMarker{12345, {fifo::MarkerType::kRoundStart, 99}};
const fifo::Command kAck = fifo::Ack{};

// ---- a Server on temp FIFOs, and raw clients -------------------------------

// A client writing raw bytes, each write() in one piece; a request waits
// until the server has read it, and its reply may be missing.
class RawClient : public runner::testing::FifoPeer {
 public:
  using FifoPeer::FifoPeer;
  std::optional<fifo::Command> request(const fifo::Command& c) {
    write_consumed(frame(c));
    return receive();
  }
};

}  // namespace

TEST_SUITE("fifo") {
  // ---- decoder ------------------------------------------------------------

  TEST_CASE("resync: a 4 GiB length costs 4 bytes, not the stream") {
    fifo::FrameDecoder decoder;
    decoder.feed(
        cat({{0xff, 0xff, 0xff, 0xff}, frame(kSetVersion), frame(kStart)}));
    CHECK(drain(decoder) == std::vector<fifo::Command>{kSetVersion, kStart});
    CHECK(decoder.oversized_frames() == 1);
    CHECK(decoder.resyncs() == 1);
    CHECK(decoder.discarded_bytes() == 4);
    CHECK_FALSE(decoder.mid_frame());
  }

  TEST_CASE("resync: garbage of every kind between frames, at every split") {
    Bytes bad_utf8 = frame(fifo::CurrentBenchmark{1, "x"});
    bad_utf8.back() = 0xff;
    Bytes stream = cat({frame(kSetVersion),
                        {0xff, 0xff, 0xff, 0xff},
                        frame(kStart),
                        {4, 0, 0, 0, 0x63, 0, 0, 0},  // unknown tag 99
                        frame(kMarker),
                        {0, 0, 0, 0},  // empty frame
                        frame(fifo::StopBenchmark{}),
                        bad_utf8,
                        frame(fifo::CurrentBenchmark{7, "bench::a"}),
                        {0x14, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 9,
                         0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  // marker type 9
                        frame(fifo::GetIntegrationMode{})});
    std::vector<fifo::Command> expected = {
        kSetVersion,
        kStart,
        kMarker,
        fifo::StopBenchmark{},
        fifo::CurrentBenchmark{7, "bench::a"},
        fifo::GetIntegrationMode{}};
    for (size_t split = 0; split <= stream.size(); ++split) {
      CAPTURE(split);
      fifo::FrameDecoder decoder;
      decoder.feed(std::span<const uint8_t>(stream.data(), split));
      auto got = drain(decoder);
      decoder.feed(std::span<const uint8_t>(stream.data() + split,
                                            stream.size() - split));
      auto rest = drain(decoder);
      got.insert(got.end(), rest.begin(), rest.end());
      REQUIRE(got == expected);
      CHECK(decoder.resyncs() == 5);
    }
  }

  TEST_CASE("resync: a header cut by a dead writer, then the next client") {
    fifo::FrameDecoder decoder;
    decoder.feed(Bytes{0x14, 0x00});
    decoder.pipe_drained();
    decoder.feed(frame(kSetVersion));
    CHECK(drain(decoder) == std::vector<fifo::Command>{kSetVersion});
    CHECK(decoder.truncated_frames() == 1);
    CHECK(decoder.discarded_bytes() == 2);
  }

  TEST_CASE(
      "resync: a payload cut by a dead writer is not completed by the "
      "next client's frame") {
    // Header, tag, pid and marker type of an AddMarker: the next frame's
    // first 8 bytes would make a valid timestamp.
    Bytes cut = {0x14, 0, 0, 0, 7, 0, 0, 0, 0x39, 0x30, 0, 0, 2, 0, 0, 0};
    fifo::FrameDecoder decoder;
    decoder.feed(cut);
    decoder.pipe_drained();
    decoder.feed(frame(kSetVersion));
    CHECK(drain(decoder) == std::vector<fifo::Command>{kSetVersion});
    CHECK(decoder.truncated_frames() == 1);
  }

  TEST_CASE("resync: a cut frame and the next frame read at once") {
    // No emptied FIFO in between: the cut frame swallows the start of the
    // next one, does not decode, and the decoder finds the frame inside.
    Bytes cut = {0x14, 0, 0, 0, 7, 0, 0, 0, 0x39, 0x30};
    fifo::FrameDecoder decoder;
    decoder.feed(cat({cut, frame(kSetVersion), frame(kStart)}));
    CHECK(drain(decoder) == std::vector<fifo::Command>{kSetVersion, kStart});
  }

  TEST_CASE(
      "resync: a big frame cut by its writer, the next client's frame "
      "in the same read") {
    Bytes cut = frame(fifo::CurrentBenchmark{1, std::string(100000, 'u')});
    cut.resize(5000);
    fifo::FrameDecoder decoder;
    decoder.feed(cat({cut, frame(kSetVersion)}));
    CHECK(drain(decoder).empty());  // could still be the rest of the URI
    decoder.pipe_drained();         // it is not
    CHECK(drain(decoder) == std::vector<fifo::Command>{kSetVersion});
    CHECK(decoder.truncated_frames() == 1);
    CHECK_FALSE(decoder.mid_frame());
  }

  TEST_CASE("resync: length and payload written separately still decode") {
    // CodSpeed's client writes the u32 length and the payload in two
    // writes; the reader may empty the FIFO in between.
    for (const fifo::Command& c :
         {kSetVersion, kStart, kMarker,
          fifo::Command(fifo::GetIntegrationMode{}),
          fifo::Command(fifo::PingPerf{}),
          fifo::Command(fifo::SetIntegration{"codspeed-cpp", "2.3.0"}),
          fifo::Command(fifo::CurrentBenchmark{42, "a.cpp::BM"}),
          fifo::Command(fifo::StopBenchmark{})}) {
      CAPTURE(fifo::describe(c));
      Bytes bytes = frame(c);
      fifo::FrameDecoder decoder;
      decoder.feed(std::span<const uint8_t>(bytes.data(), 4));
      decoder.pipe_drained();
      decoder.feed(
          std::span<const uint8_t>(bytes.data() + 4, bytes.size() - 4));
      decoder.pipe_drained();
      CHECK(drain(decoder) == std::vector<fifo::Command>{c});
      CHECK(decoder.discarded_bytes() == 0);
    }
  }

  TEST_CASE("resync: a frame larger than PIPE_BUF arrives in pieces") {
    fifo::Command big = fifo::CurrentBenchmark{3, std::string(300000, 'u')};
    Bytes bytes = frame(big);
    fifo::FrameDecoder decoder;
    for (size_t at = 0; at < bytes.size(); at += 65536) {
      size_t n = std::min<size_t>(65536, bytes.size() - at);
      decoder.feed(std::span<const uint8_t>(bytes.data() + at, n));
      decoder.pipe_drained();
    }
    CHECK(drain(decoder) == std::vector<fifo::Command>{big});
    CHECK(decoder.discarded_bytes() == 0);
  }

  // ---- server on real FIFOs -----------------------------------------------

  TEST_CASE("server: ff ff ff ff, then a client is answered") {
    RunningServer running;
    RawClient hostile(running.options());
    hostile.write_consumed({0xff, 0xff, 0xff, 0xff});
    RawClient client(running.options());
    CHECK(client.request(kSetVersion) == kAck);
    CHECK(client.request(fifo::GetIntegrationMode{}) ==
          fifo::Command(fifo::IntegrationModeResponse{}));
    CHECK_FALSE(hostile.receive(100).has_value());  // garbage gets no reply
    auto data = running.stop();
    CHECK(data.counters.oversized_frames == 1);
    CHECK(data.counters.commands == 2);
    CHECK(data.protocol_version == std::optional<uint64_t>(2));
  }

  TEST_CASE("server: a cut header of a dead writer, then a client") {
    RunningServer running;
    {
      RawClient dead(running.options());
      dead.write_consumed({0x14, 0x00});
    }
    RawClient client(running.options());
    CHECK(client.request(kSetVersion) == kAck);
    CHECK(client.request(kStart) == kAck);
    auto data = running.stop();
    CHECK(data.counters.truncated_frames == 1);
    CHECK(data.markers.size() == 1);
  }

  TEST_CASE("server: a cut payload of a dead writer, then a client") {
    RunningServer running;
    {
      RawClient dead(running.options());
      dead.write_consumed(
          {0x14, 0, 0, 0, 7, 0, 0, 0, 0x39, 0x30, 0, 0, 2, 0, 0, 0});
    }
    RawClient client(running.options());
    CHECK(client.request(kSetVersion) == kAck);
    auto data = running.stop();
    CHECK(data.markers.empty());  // no marker made of two clients' bytes
    CHECK(data.protocol_version == std::optional<uint64_t>(2));
    CHECK(data.counters.truncated_frames == 1);
  }

  TEST_CASE("server: an Ack a dead client never read is not the next one's") {
    RunningServer running;
    {
      RawClient dead(running.options());
      dead.write_consumed(frame(fifo::PingPerf{}));
      dead.wait_replies(8);  // its Ack is in the ack FIFO; it dies
    }
    RawClient client(running.options());  // does not drain anything itself
    client.write_consumed(frame(kSetVersion));
    CHECK(client.receive() == kAck);
    CHECK(client.request(fifo::GetIntegrationMode{}) ==
          fifo::Command(fifo::IntegrationModeResponse{}));
    CHECK_FALSE(client.receive(100).has_value());
    auto data = running.stop();
    CHECK(data.counters.stale_reply_bytes == 8);
  }

  TEST_CASE("server: 60 000 announced pids are all recorded once") {
    RunningServer running;
    RawClient client(running.options());
    constexpr int kPids = 60000;
    std::atomic<int> acks{0};
    std::thread reader([&] {
      // A stall is not what this case checks: under sanitizers on a loaded
      // machine the server may pause for seconds, so wait long.
      for (int i = 0; i < 2 * kPids; ++i) {
        auto reply = client.receive(60000);
        if (!reply || !(*reply == kAck)) break;
        ++acks;
      }
    });
    // A client that stops reading gets its replies dropped once the ack
    // FIFO is full (fifo/server.cpp), and that FIFO may hold as little as
    // 4 KiB (a user past pipe-user-pages-soft gets small pipes): the bursts
    // keep at most ~400 replies (8 bytes each) unread, whatever the reader
    // thread's scheduling.
    int sent = 0, in_burst = 0;
    Bytes burst;
    const auto send_burst = [&] {
      const auto limit =
          std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (sent - acks.load() > 200 &&
             std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      client.write_consumed(burst);
      sent += in_burst;
      burst.clear();
      in_burst = 0;
    };
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < kPids; ++i) {
        Bytes f = frame(fifo::CurrentBenchmark{i, "u"});
        burst.insert(burst.end(), f.begin(), f.end());
        ++in_burst;
        if (in_burst == 190) send_burst();  // 3,990 bytes: one write
      }
    }
    if (!burst.empty()) send_burst();
    reader.join();
    CHECK(acks.load() == 2 * kPids);
    auto data = running.stop();
    CHECK(data.bench_pids.size() == kPids);
    CHECK(data.uri_by_ts.size() == 2 * kPids);
    CHECK(data.bench_pids.front() == 0);
    CHECK(data.bench_pids.back() == kPids - 1);
  }
}
