// format: every on-disk and wire schema of the project, each read and
// written in one place, with no I/O policy of its own (callers hand it bytes
// or text and get typed values back, or the reverse). Parts above it
// (profiler, symbols, report, agent, integrations) use these types and never
// spell a format's bytes themselves.
//
//  - numbers: the hexadecimal/decimal field parser of the text formats.
//  - profile_layout: ProfileLayout, every file name of a profile folder.
//  - perf_metadata: PerfMetadata, perf.metadata (JSON) read and written.
//  - execution_timestamps: ExecutionTimestamps, ExecutionTimestamps.msgpack
//    (msgpack) read and written; perf.metadata holds a copy.
//  - walltime_results: WalltimeResults, results/<pid>.json read and written.
//  - quantities: durations, counts, sizes and frequencies people type.
//  - exec_targets: the walltime options and the exec targets JSON handed to
//    `exec-harness -`.
#pragma once

#include "format/exec_targets.hpp"
#include "format/execution_timestamps.hpp"
#include "format/numbers.hpp"
#include "format/perf_metadata.hpp"
#include "format/profile_layout.hpp"
#include "format/quantities.hpp"
#include "format/walltime_results.hpp"
