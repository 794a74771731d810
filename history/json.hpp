// history.json as the page embeds it (page.cpp); json.cpp writes both.
#pragma once

#include <string>

#include "history/history.hpp"

namespace runner::history {

// history.json's data as one line of ASCII that can stand inside a
// <script> element: no whitespace outside strings, every non-ASCII
// character (U+2028/U+2029 among them, which older JavaScript parsers took
// for line ends) a \uXXXX escape, and every '<' \u003c, so that no
// "</script>" or "<!--" ends or changes the element. It parses to the same
// document as write_json.
std::string write_embeddable_json(const History& history);

}  // namespace runner::history
