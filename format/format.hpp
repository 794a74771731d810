// format: every on-disk and wire schema of the project, each read and
// written in one place, with no I/O policy of its own (callers hand it bytes
// or text and get typed values back, or the reverse). Parts above it
// (profiler, symbols, report, agent, integrations) use these types and never
// spell a format's bytes themselves.
//
//  - numbers: the hexadecimal/decimal field parser of the text formats.
#pragma once

#include "format/numbers.hpp"
