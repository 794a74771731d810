// A status line drawn in place on stderr (the run's progress on a
// terminal), kept apart from the log messages of base/log.hpp: each
// set_status_line() redraws it ("\r", erase to the end of the line, `line`);
// an empty `line` erases it. Log messages erase it before they are written
// and draw it again after, so it never mixes with them. The caller checks
// that stderr is a terminal.
#pragma once

#include <string_view>

namespace runner::base {

void set_status_line(std::string_view line);

}  // namespace runner::base
