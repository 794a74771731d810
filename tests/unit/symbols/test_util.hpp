// Helpers shared by the symbols tests: test program paths and running the
// reference tools (readelf, addr2line, objcopy) through a shell, the
// mappings a loaded file would have.
#pragma once

#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "symbols/symbols.hpp"

namespace runner::symbols::testing {

inline std::string env_path(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value != nullptr, name,
                  " must be set (run through meson test)");
  return value;
}

inline std::string prog_pie() { return env_path("SYMBOLS_PROG_PIE"); }
inline std::string prog_nopie() { return env_path("SYMBOLS_PROG_NOPIE"); }
inline std::string prog_cpp() { return env_path("SYMBOLS_PROG_CPP"); }
inline std::string prog_inline() { return env_path("SYMBOLS_PROG_INLINE"); }
// programs/plt.c: compiled by the tests themselves (compile_c) under several
// PLT layouts.
inline std::string plt_source() { return env_path("SYMBOLS_PLT_C_SOURCE"); }

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `command` with /bin/sh; returns stdout, REQUIREs exit status 0.
inline std::string run(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE_MESSAGE(pipe != nullptr, command);
  std::string out;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  REQUIRE_MESSAGE(status == 0, "command failed: ", command);
  return out;
}

// Compiles the C file `source` into the executable `out` with `cc`.
inline void compile_c(const std::string& source, const std::string& out,
                      const std::string& flags) {
  run("cc " + flags + " -o " + shell_quote(out) + " " + shell_quote(source));
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

inline std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

inline constexpr uint64_t kMappingPage = 4096;

// Executable mappings the kernel would create for `path` loaded at `base`
// by `pid`.
inline std::vector<ModuleMapping> mappings_for(const std::string& path,
                                               int32_t pid, uint64_t base) {
  auto summary = read_elf_summary(path);
  REQUIRE(summary);
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  std::vector<ModuleMapping> out;
  for (const LoadSegment& seg : summary->loads) {
    if ((seg.flags & PF_X) == 0) continue;
    ModuleMapping m;
    m.pid = pid;
    m.path = path;
    m.start = base + (seg.vaddr & ~(kMappingPage - 1));
    m.end = base +
            ((seg.vaddr + seg.memsz + kMappingPage - 1) & ~(kMappingPage - 1));
    m.pgoff = seg.offset & ~(kMappingPage - 1);
    m.dev_major = major(st.st_dev);
    m.dev_minor = minor(st.st_dev);
    m.inode = st.st_ino;
    out.push_back(m);
  }
  REQUIRE_FALSE(out.empty());
  return out;
}

}  // namespace runner::symbols::testing
