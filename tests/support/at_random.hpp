// The AT_RANDOM values a test program wrote (sampling_target's `random`
// mode): one line of 32 hex digits per process, read back as the 16 bytes
// the kernel put on that process's initial stack, to search a profile for.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace runner::testing {

inline std::vector<std::string> at_random_values(const std::string& text) {
  std::vector<std::string> values;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() != 32) continue;
    std::string bytes;
    for (size_t i = 0; i < 32; i += 2)
      bytes += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
    values.push_back(bytes);
  }
  return values;
}

}  // namespace runner::testing
