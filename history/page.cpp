// index.html of `runner history --format html` (see history.hpp): one
// self-contained page. The data is history.json (write_embeddable_json),
// embedded in a <script type="application/json"> element that the page's
// script parses; the script and the style (page_assets.cpp) are inline, and
// the page's Content-Security-Policy forbids any request, so it opens
// without network access and a hostile store cannot make it load anything.
#include <string>

#include "history/history.hpp"
#include "history/json.hpp"
#include "history/page_assets.hpp"

namespace runner::history {

std::string write_page(const History& history) {
  const std::string json = write_embeddable_json(history);
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
