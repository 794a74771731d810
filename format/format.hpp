// format: every on-disk and wire schema of the project, each read and
// written in one place, with no I/O policy of its own (callers hand it bytes
// or text and get typed values back, or the reverse). Parts above it
// (profiler, symbols, report, agent, integrations) use these types and never
// spell a format's bytes themselves.
//
//  - numbers: the hexadecimal/decimal field parser of the text formats.
//  - quantities: durations, counts, sizes and frequencies people type.
//  - exec_targets: the walltime options and the exec targets JSON handed to
//    `exec-harness -`.
#pragma once

#include "format/exec_targets.hpp"
#include "format/numbers.hpp"
#include "format/quantities.hpp"
