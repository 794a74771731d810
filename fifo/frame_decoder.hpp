// FrameDecoder: turns the byte stream of the shared ctl FIFO (u32 LE length +
// payload frames, written by any number of clients, some of them dead or
// hostile) back into frames.
//
// Only plausible frames come out: the length must be one a command can have
// (at most kMaxFrameSize), the tag a known command, and the fixed fields
// consistent with the length. A frame of at most kAtomicFrameSize bytes must
// also decode. On anything else the decoder resynchronises: it drops one byte
// and looks for the next plausible header, so garbage costs only its own
// bytes, never 4 GiB of everybody's traffic.
//
// Truncated frames of a dead writer: a write of at most PIPE_BUF bytes to a
// FIFO is atomic, so a well-behaved client's frame (written in one write) is
// either entirely in the FIFO or not at all. When the reader has emptied the
// FIFO (pipe_drained()) and still holds part of a frame, that part came from
// a writer that split its frame. If the next bytes begin with a plausible
// frame, the held part is dropped (counted in truncated_frames()) instead of
// swallowing the next client's command; otherwise they continue it (clients
// that write the length and the payload separately, frames > PIPE_BUF).
#pragma once

#include <limits.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace runner::fifo {

// Largest frame payload accepted (a CurrentBenchmark with a 1 MiB URI).
inline constexpr uint32_t kMaxFrameSize = 1u << 20;  // 1 MiB
// Frames (length prefix included) up to this size reach the FIFO in one
// atomic write when the client writes them at once.
inline constexpr size_t kAtomicFrameSize = PIPE_BUF;

// A complete, plausible payload. An impossible length is never a frame: it
// is resynchronised over and counted in oversized_frames().
using Frame = std::vector<uint8_t>;

class FrameDecoder {
 public:
  void feed(std::span<const uint8_t> bytes);
  // The reader has just emptied the FIFO: whatever part of a frame is held
  // cannot be completed by an atomic write any more.
  void pipe_drained();
  // Next complete frame in stream order, if any.
  std::optional<Frame> next();

  // Headers at a frame boundary declaring more than kMaxFrameSize.
  uint64_t oversized_frames() const { return oversized_frames_; }
  // Times the decoder lost sync (garbage at a frame boundary).
  uint64_t resyncs() const { return resyncs_; }
  // Bytes dropped while resynchronising or as truncated frames.
  uint64_t discarded_bytes() const { return discarded_bytes_; }
  // Partial frames of a writer that stopped, dropped for the next frame.
  uint64_t truncated_frames() const { return truncated_frames_; }
  // Bytes of an unfinished frame (or of garbage being scanned) are held.
  bool mid_frame() const { return pos_ < buffer_.size(); }

 private:
  void parse();
  void discard(size_t n);
  void compact();
  bool find_complete_frame_ahead();

  std::vector<uint8_t> buffer_;  // unconsumed bytes start at pos_
  size_t pos_ = 0;
  bool scanning_ = false;      // resynchronising: the bytes at pos_ are garbage
  bool stranded_ = false;      // held bytes survived an emptied FIFO
  size_t lookahead_from_ = 0;  // absolute offset where look-ahead resumes
  uint64_t oversized_frames_ = 0;
  uint64_t resyncs_ = 0;
  uint64_t discarded_bytes_ = 0;
  uint64_t truncated_frames_ = 0;
  std::deque<Frame> ready_;
};

}  // namespace runner::fifo
