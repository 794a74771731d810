// index.html of `runner history --format html` (see history.hpp): one
// self-contained page. The data is history.json (write_json), embedded in a
// <script type="application/json"> element that the page's script parses;
// the script and the style (page_assets.cpp) are inline, and the page's
// Content-Security-Policy forbids any request, so it opens without network
// access and a hostile store cannot make it load anything.
#include <string>
#include <string_view>

#include "history/history.hpp"
#include "history/page_assets.hpp"

namespace runner::history {
namespace {

// JSON made compact and safe inside a <script> element: whitespace
// outside strings dropped; every '<' (which JSON holds only inside strings)
// becomes \u003c, so no "</script>" or "<!--" ends or changes the element;
// U+2028/U+2029 become escapes too (older JavaScript parsers took them for
// line ends).
std::string embeddable_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (!in_string && (c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
      continue;
    }
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
    if (in_string && !escaped && c == '"') {
      in_string = false;
    } else if (!in_string && c == '"') {
      in_string = true;
    }
    escaped = in_string && !escaped && c == '\\';
  }
  return out;
}

}  // namespace

std::string write_page(const History& history) {
  const std::string json = embeddable_json(write_json(history));
  std::string page;
  page.reserve(json.size() + 40000);
  page += page_head();
  page += "<script type=\"application/json\" id=\"history-data\">";
  page += json;
  page += "</script>\n<script>\n";
  page += page_script();
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace runner::history
