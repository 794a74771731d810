#include "profiler/pipedata_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/fs.hpp"

namespace runner::profiler {
namespace {

// Runs of records above this size skip the buffer.
constexpr size_t kDirectWriteThreshold = 64 << 10;

}  // namespace

FeatureBuilder& FeatureBuilder::add_u32(uint32_t value) {
  return add_bytes(&value, sizeof(value));
}

FeatureBuilder& FeatureBuilder::add_u64(uint64_t value) {
  return add_bytes(&value, sizeof(value));
}

FeatureBuilder& FeatureBuilder::add_string(const std::string& value) {
  const uint32_t len = static_cast<uint32_t>(
      (value.size() + 1 + perf_format::kStringAlign - 1) /
      perf_format::kStringAlign * perf_format::kStringAlign);
  add_u32(len);
  add_bytes(value.data(), value.size());
  bytes_.resize(bytes_.size() + (len - value.size()), 0);
  return *this;
}

FeatureBuilder& FeatureBuilder::add_bytes(const void* data, size_t size) {
  const auto* begin = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), begin, begin + size);
  return *this;
}

FeatureBuilder& FeatureBuilder::align() {
  bytes_.resize((bytes_.size() + 7) / 8 * 8, 0);
  return *this;
}

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
  return writer;
}

void PipedataWriter::write_pipe_header() {
  write_bytes(perf_format::kPipeMagic, sizeof(perf_format::kPipeMagic));
  const uint64_t size = perf_format::kPipeHeaderSize;
  write_bytes(&size, sizeof(size));
}

void PipedataWriter::write_attr(const perf_event_attr& attr,
                                std::span<const uint64_t> ids) {
  static_assert(sizeof(perf_event_attr) >= perf_format::kAttrSize);
  perf_event_attr copy = attr;
  copy.size = perf_format::kAttrSize;
  perf_event_header header{};
  header.type = perf_format::kHeaderAttr;
  header.misc = 0;
  header.size = static_cast<uint16_t>(sizeof(header) + perf_format::kAttrSize +
                                      ids.size() * sizeof(uint64_t));
  write_bytes(&header, sizeof(header));
  write_bytes(&copy, perf_format::kAttrSize);
  write_bytes(ids.data(), ids.size() * sizeof(uint64_t));
}

void PipedataWriter::write_feature(perf_format::FeatureId id,
                                   std::span<const uint8_t> payload) {
  perf_event_header header{};
  header.type = perf_format::kHeaderFeature;
  header.size =
      static_cast<uint16_t>(sizeof(header) + sizeof(uint64_t) + payload.size());
  const uint64_t feat_id = id;
  write_bytes(&header, sizeof(header));
  write_bytes(&feat_id, sizeof(feat_id));
  write_bytes(payload.data(), payload.size());
}

void PipedataWriter::write_build_id(std::span<const uint8_t> build_id,
                                    const std::string& filename) {
  // struct perf_record_header_build_id: header, pid, 20 bytes of id + size
  // byte + 3 reserved, then the NUL-terminated name padded to 64 bytes.
  constexpr size_t kNameAlign = 64;
  const size_t name_size =
      (filename.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
  uint8_t fixed[sizeof(perf_event_header) + 4 + 24] = {};
  perf_event_header header{};
  header.type = perf_format::kHeaderBuildId;
  header.misc = PERF_RECORD_MISC_USER | perf_format::kMiscBuildIdSize;
  header.size = static_cast<uint16_t>(sizeof(fixed) + name_size);
  const int32_t pid = -1;  // perf's host machine
  const size_t id_size = std::min<size_t>(build_id.size(), 20);
  std::memcpy(fixed, &header, sizeof(header));
  std::memcpy(fixed + sizeof(header), &pid, sizeof(pid));
  if (id_size > 0)
    std::memcpy(fixed + sizeof(header) + 4, build_id.data(), id_size);
  fixed[sizeof(header) + 4 + 20] = static_cast<uint8_t>(id_size);
  write_bytes(fixed, sizeof(fixed));
  std::vector<uint8_t> name(name_size, 0);
  std::memcpy(name.data(), filename.data(), filename.size());
  write_bytes(name.data(), name.size());
}

void PipedataWriter::write_finished_round() {
  perf_event_header header{};
  header.type = perf_format::kFinishedRound;
  header.size = sizeof(header);
  write_bytes(&header, sizeof(header));
}

void PipedataWriter::write_records(std::span<const uint8_t> first,
                                   std::span<const uint8_t> second) {
  const size_t total = first.size() + second.size();
  if (total <= kDirectWriteThreshold || failed_ || !fd_) {
    write_bytes(first.data(), first.size());
    write_bytes(second.data(), second.size());
    return;
  }
  flush();
  iovec pieces[2] = {
      {const_cast<uint8_t*>(first.data()), first.size()},
      {const_cast<uint8_t*>(second.data()), second.size()},
  };
  write_through(pieces, second.empty() ? 1 : 2);
}

void PipedataWriter::write_through(iovec* pieces, int count) {
  size_t left = 0;
  for (int i = 0; i < count; ++i) left += pieces[i].iov_len;
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
  if (failed_ || !fd_) {
    bytes_dropped_ += used_;
    used_ = 0;
    return;
  }
  iovec piece{buffer_.data(), used_};
  write_through(&piece, used_ == 0 ? 0 : 1);
  used_ = 0;
}

base::Status PipedataWriter::close() {
  if (fd_) {
    flush();
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

}  // namespace runner::profiler
