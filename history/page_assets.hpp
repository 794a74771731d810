// The fixed parts of index.html (page.cpp): the head with its style and
// the body's skeleton, and the script that draws the page from the
// embedded history.json.
#pragma once

#include <string_view>

namespace runner::history {

// From "<!DOCTYPE html>" to the end of the body's static elements.
std::string_view page_head();
// The page's script (without the <script> tags).
std::string_view page_script();

}  // namespace runner::history
