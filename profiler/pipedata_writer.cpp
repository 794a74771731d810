#include "profiler/pipedata_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/base.hpp"

namespace runner::profiler {
namespace {

// Runs of records above this size skip the buffer.
constexpr size_t kDirectWriteThreshold = 64 << 10;

}  // namespace

base::Result<PipedataWriter> PipedataWriter::create(const std::string& path,
                                                    size_t buffer_size) {
  // Created afresh: a symlink planted at the name is replaced, not followed.
  auto fd = base::create_file(path);
  if (!fd) return std::move(fd.error());
  return from_fd(std::move(*fd), path, buffer_size);
}

base::Result<PipedataWriter> PipedataWriter::append(const std::string& path) {
  // Only the regular file of ours that create() made (not a link to one).
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return base::errno_error("open " + path);
  base::UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return base::errno_error("stat " + path);
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != ::geteuid())
    return base::Error(path + ": not a regular file of ours; not appended to");
  return from_fd(std::move(owned), path, 64 << 10);
}

base::Result<PipedataWriter> PipedataWriter::from_fd(base::UniqueFd fd,
                                                     const std::string& path,
                                                     size_t buffer_size) {
  PipedataWriter writer;
  writer.fd_ = std::move(fd);
  writer.path_ = path;
  writer.buffer_.resize(buffer_size > 0 ? buffer_size : kDefaultBufferSize);
  struct stat st {};
  if (::fstat(writer.fd_.get(), &st) == 0 && S_ISREG(st.st_mode)) {
    writer.reserving_ = true;
    writer.start_ = writer.reserved_ = static_cast<uint64_t>(st.st_size);
  }
  return writer;
}

void PipedataWriter::write_pipe_header() {
  write_record(format::perf::encode_pipe_header());
}

base::Status PipedataWriter::enable_compression(int level) {
  RUNNER_ASSIGN_OR_RETURN(RecordCompressor compressor,
                          RecordCompressor::create(level, kCompressSegment),
                          "perf.pipedata compression");
  format::perf::CompressedFeature feature;
  feature.level = static_cast<uint32_t>(level);
  feature.mmap_len = kCompressedMmapLen;
  write_feature(format::perf::kFeatCompressed,
                format::perf::encode_compressed_feature(feature));
  compressor_ = std::make_unique<RecordCompressor>(std::move(compressor));
  return {};
}

int PipedataWriter::compression_level() const {
  return compressor_ ? compressor_->level() : 0;
}

uint64_t PipedataWriter::uncompressed_bytes() const {
  return compressor_ ? compressor_->input_bytes() : 0;
}

uint64_t PipedataWriter::compressed_bytes() const {
  return compressor_ ? compressor_->output_bytes() : 0;
}

void PipedataWriter::write_attr(const perf_event_attr& attr,
                                std::span<const uint64_t> ids) {
  write_record(format::perf::encode_attr_record(attr, ids));
}

void PipedataWriter::write_feature(format::perf::FeatureId id,
                                   std::span<const uint8_t> payload) {
  write_record(format::perf::encode_feature_record(id, payload));
}

void PipedataWriter::write_build_id(std::span<const uint8_t> build_id,
                                    const std::string& filename) {
  write_record(format::perf::encode_build_id_record(build_id, filename));
}

void PipedataWriter::write_finished_round() {
  write_record(format::perf::encode_finished_round());
}

void PipedataWriter::write_record(const std::vector<uint8_t>& record) {
  write_bytes(record.data(), record.size());
}

void PipedataWriter::write_records(std::span<const uint8_t> first,
                                   std::span<const uint8_t> second) {
  const std::span<const uint8_t> pieces[2] = {first, second};
  write_records(std::span<const std::span<const uint8_t>>(pieces, 2));
}

void PipedataWriter::write_records(
    std::span<const std::span<const uint8_t>> pieces) {
  if (compressor_) {
    write_compressed(pieces);
    return;
  }
  size_t total = 0;
  for (const auto& piece : pieces) total += piece.size();
  if (total <= kDirectWriteThreshold || failed_ || !fd_) {
    for (const auto& piece : pieces) write_bytes(piece.data(), piece.size());
    return;
  }
  flush();
  // writev() takes at most IOV_MAX (1024 on Linux) pieces at a time.
  constexpr size_t kMaxPieces = 1024;
  for (size_t at = 0; at < pieces.size(); at += kMaxPieces) {
    iovecs_.clear();
    for (const auto& piece :
         pieces.subspan(at, std::min(kMaxPieces, pieces.size() - at))) {
      if (!piece.empty())
        iovecs_.push_back({const_cast<uint8_t*>(piece.data()), piece.size()});
    }
    write_through(iovecs_.data(), static_cast<int>(iovecs_.size()));
  }
}

void PipedataWriter::write_compressed(
    std::span<const std::span<const uint8_t>> pieces) {
  size_t total = 0;
  for (const auto& piece : pieces) total += piece.size();
  if (failed_ || !fd_) {
    bytes_dropped_ += total;
    return;
  }
  for (const auto& piece : pieces) {
    if (auto st = compressor_->add(piece); !st) {
      fail_compression(st.error());
      bytes_dropped_ += total;
      return;
    }
    put(compressor_->ready().data(), compressor_->ready().size());
    compressor_->clear_ready();
  }
}

void PipedataWriter::flush_compressor() {
  if (!compressor_ || failed_) return;
  if (auto st = compressor_->flush(); !st) {
    fail_compression(st.error());
    return;
  }
  put(compressor_->ready().data(), compressor_->ready().size());
  compressor_->clear_ready();
}

void PipedataWriter::reserve_ahead(size_t size) {
  const uint64_t end = start_ + bytes_written_ + size;
  if (!reserving_ || end <= reserved_) return;
  const uint64_t step =
      std::clamp<uint64_t>(bytes_written_, kMinReserve, kMaxReserve);
  struct statvfs fs {};
  const bool room =
      ::fstatvfs(fd_.get(), &fs) == 0 &&
      static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize >= kReserveRoom * step;
  const uint64_t want = end - reserved_ + step;
  if (!room ||
      ::fallocate(fd_.get(), FALLOC_FL_KEEP_SIZE, static_cast<off_t>(reserved_),
                  static_cast<off_t>(want)) != 0) {
    reserving_ = false;
    release_reserve();
    return;
  }
  reserved_ += want;
}

void PipedataWriter::release_reserve() {
  // Truncating to its own size frees the blocks past the end (also any
  // that a refused fallocate left behind).
  const uint64_t end = start_ + bytes_written_;
  if (reserved_ > end || !reserving_) {
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0 &&
        static_cast<uint64_t>(st.st_size) == end)
      (void)::ftruncate(fd_.get(), static_cast<off_t>(end));
  }
  reserved_ = end;
}

void PipedataWriter::write_through(iovec* pieces, int count) {
  size_t left = 0;
  for (int i = 0; i < count; ++i) left += pieces[i].iov_len;
  reserve_ahead(left);
  while (left > 0) {
    if (failed_) {
      bytes_dropped_ += left;
      return;
    }
    ssize_t n = ::writev(fd_.get(), pieces, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail(n < 0 ? errno : EIO, "write " + path_);
      continue;
    }
    bytes_written_ += static_cast<uint64_t>(n);
    left -= static_cast<size_t>(n);
    // Skip what was written.
    size_t done = static_cast<size_t>(n);
    while (count > 0 && done >= pieces[0].iov_len) {
      done -= pieces[0].iov_len;
      ++pieces;
      --count;
    }
    if (count > 0) {
      pieces[0].iov_base = static_cast<uint8_t*>(pieces[0].iov_base) + done;
      pieces[0].iov_len -= done;
    }
  }
}

void PipedataWriter::write_bytes(const void* data, size_t size) {
  flush_compressor();
  put(data, size);
}

void PipedataWriter::put(const void* data, size_t size) {
  if (size == 0) return;
  if (failed_ || !fd_) {
    bytes_dropped_ += size;
    return;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (size > buffer_.size() - used_) {
    flush();
    if (failed_) {
      bytes_dropped_ += size;
      return;
    }
  }
  if (size > buffer_.size()) {
    // Larger than the whole buffer: write it straight through.
    iovec piece{const_cast<uint8_t*>(bytes), size};
    write_through(&piece, 1);
    return;
  }
  std::memcpy(buffer_.data() + used_, bytes, size);
  used_ += size;
}

void PipedataWriter::flush() {
  flush_compressor();
  if (failed_ || !fd_) {
    bytes_dropped_ += used_;
    used_ = 0;
    return;
  }
  iovec piece{buffer_.data(), used_};
  write_through(&piece, used_ == 0 ? 0 : 1);
  used_ = 0;
}

PipedataWriter::~PipedataWriter() {
  if (fd_ && reserving_) release_reserve();
}

base::Status PipedataWriter::close() {
  if (fd_) {
    flush();
    if (reserving_) release_reserve();
    if (::close(fd_.release()) != 0 && !failed_) fail(errno, "close " + path_);
  }
  if (failed_) return base::Error(error_);
  return {};
}

void PipedataWriter::fail(int code, const std::string& what) {
  failed_ = true;
  error_code_ = code;
  error_ = what + ": " + std::strerror(code);
}

void PipedataWriter::fail_compression(const base::Error& error) {
  failed_ = true;
  error_code_ = EIO;
  error_ = path_ + ": " + error.what();
}

}  // namespace runner::profiler
