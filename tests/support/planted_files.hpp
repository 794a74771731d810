// Plain file helpers for tests that plant files where the runner reads or
// writes, and check afterwards what became of them. They use iostreams,
// not base/fs, so that they do not depend on the code under test.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

namespace runner::testing {

// The content of a file a symlink planted by a hostile user points at: it
// must still be there afterwards.
inline constexpr const char* kPrecious = "precious content\n";

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

// The whole file; empty when it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A regular file, not a symbolic link to one.
inline bool is_regular_not_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace runner::testing
