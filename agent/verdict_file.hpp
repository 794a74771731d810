// runner compare --verdict-file FILE: the comparison's overall verdict as
// one word and a newline, for a CI gate that must not parse compare.json.
// The file is removed before comparing and written only when the comparison
// was made (exit 0 or 1), so a crash, a kill or a fatal error leaves no
// verdict behind, whatever the exit code says.
#pragma once

#include <string>

#include "agent/options.hpp"
#include "format/format.hpp"

namespace runner::agent {

// regression when a benchmark regressed, else improvement when one
// improved, else unchanged when one was unchanged, else inconclusive (also
// when no benchmark was on both sides).
format::Verdict overall_verdict(const format::CompareReport& report);

// runner compare, with or without --store; with line.compare_verdict_file,
// the verdict file as above. Returns compare's exit code, or 2 when the
// verdict file could not be removed or written.
int compare_with_verdict(CommandLine& line);

}  // namespace runner::agent
