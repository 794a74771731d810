// index.html of `runner history --format html` (see history.hpp).
#include "history/history.hpp"

namespace runner::history {

std::string write_page(const History& history) {
  return "<!DOCTYPE html><title>" + history.branch + "</title>\n";
}

}  // namespace runner::history
