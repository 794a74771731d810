// Small helpers for walking separated lists in text ("a,b,c").
#pragma once

#include <string_view>

namespace runner::base {

// The text of `rest` before the first `separator` (all of it when there is
// none); `rest` keeps what follows that separator.
inline std::string_view take_item(std::string_view& rest, char separator) {
  size_t at = rest.find(separator);
  std::string_view item = rest.substr(0, at);
  rest =
      at == std::string_view::npos ? std::string_view() : rest.substr(at + 1);
  return item;
}

}  // namespace runner::base
