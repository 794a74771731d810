// Text and markdown of `runner history` (see history.hpp).
#include "history/history.hpp"

namespace runner::history {

void write_text(const History& history, std::ostream& out) {
  for (const Series& s : history.series)
    out << s.uri << ": " << s.points.size() << " runs, "
        << s.changes.size() << " change points\n";
}

void write_markdown(const History& history, std::ostream& out) {
  write_text(history, out);
}

}  // namespace runner::history
