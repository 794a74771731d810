// runner compare --verdict-file FILE: the comparison's overall verdict
// (format::overall_verdict, as compare.json's "verdict" has it) as one word
// and a newline.
// The file is removed before comparing and written only when the comparison
// was made (exit 0, 1 or 3), so a crash, a kill or a fatal error leaves no
// verdict behind, whatever the exit code says.
#pragma once

#include <string>

#include "agent/options.hpp"
#include "format/format.hpp"

namespace runner::agent {

// runner compare, with or without --store; with line.compare_verdict_file,
// the verdict file as above. Returns compare's exit code, or 2 when the
// verdict file could not be removed or written.
int compare_with_verdict(CommandLine& line);

}  // namespace runner::agent
