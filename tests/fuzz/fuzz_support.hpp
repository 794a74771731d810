// Shared by the libFuzzer targets: a scratch directory made once per
// fuzzing process (under $TMPDIR, removed at exit) where a target writes
// the input as the file the code under test reads, so that the real
// file-reading paths (ProfileFolder, PipedataReader) run on it.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace runner::fuzz {

inline const std::string& scratch_dir() {
  static const testing::TempDir dir;
  if (dir.path().empty()) {
    std::perror("fuzz: mkdtemp under $TMPDIR");
    std::abort();
  }
  return dir.path();
}

// Replaces `path` with exactly `size` bytes of `data`, as a new file: on
// ext4, rewriting a truncated file flushes it at close (auto_da_alloc),
// which would make a folder-based target a hundred times slower.
inline void write_input(const std::string& path, const uint8_t* data,
                        size_t size) {
  ::unlink(path.c_str());
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(("fuzz: open " + path).c_str());
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror(("fuzz: write " + path).c_str());
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// Copies every regular file of the directory `from` into `to`.
inline void copy_files(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator(from)) {
    if (!entry.is_regular_file()) continue;
    fs::copy_file(entry.path(), fs::path(to) / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  }
}

}  // namespace runner::fuzz
