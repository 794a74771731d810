#include "format/profile_layout.hpp"

namespace runner::format {

std::string ProfileLayout::module_key(size_t index, std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::to_string(index) + "__" + std::string(name);
}

std::string ProfileLayout::file_stem(std::string_view name) {
  std::string stem;
  for (const char c : name.substr(0, kMaxFileStem)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    stem += ok ? c : '_';
  }
  return stem;
}

std::string ProfileLayout::key_file_name(std::string_view key) {
  const size_t sep = key.find("__");
  return std::string(sep == std::string_view::npos ? key : key.substr(sep + 2));
}

}  // namespace runner::format
