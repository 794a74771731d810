// The C library this test process runs with, found from the process itself
// (dladdr on a libc function) instead of a fixed path: the path differs
// between distributions, architectures and merged-/usr layouts.
#pragma once

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include <gnu/libc-version.h>

namespace runner::testing {

// Canonical path of the loaded libc ("" if it cannot be found). The path a
// kernel mmap record or /proc/<pid>/maps shows for it is this one.
inline std::string loaded_libc_path() {
  Dl_info info{};
  // gnu_get_libc_version lives in libc itself and no sanitizer intercepts
  // it, so its address is inside libc's mapping.
  if (::dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  std::error_code ec;
  auto canonical = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : canonical.string();
}

}  // namespace runner::testing
