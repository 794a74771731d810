#include "base/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.hpp"

namespace runner::base {
namespace {

Status write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("write");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return errno_error("open " + tmp);
  Status st = write_all(fd.get(), data.data(), data.size());
  if (st && ::close(fd.release()) != 0) st = errno_error("close " + tmp);
  if (!st) {
    ::unlink(tmp.c_str());
    return std::move(st.error()).context(path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error err = errno_error("rename to " + path);
    ::unlink(tmp.c_str());
    return err;
  }
  return {};
}

Status write_file_atomic(const std::string& path,
                         std::span<const uint8_t> data) {
  return write_file_atomic(
      path, std::string_view(reinterpret_cast<const char*>(data.data()),
                             data.size()));
}

Result<std::string> read_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_error("open " + path);
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status make_directories(const std::string& path) {
  if (path.empty()) return {};
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return errno_error("mkdir " + partial);
  }
  return {};
}

}  // namespace runner::base
