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
//  - bytes: the one little-endian, bounds-checked ByteReader/ByteWriter of
//    the binary formats.
//  - unwind_data: <key>.unwind_data (bincode), written by symbols/, read by
//    report/.
//  - perf_records: perf.pipedata record layouts (format::perf), encoded for
//    profiler/'s writer and decoded for perfdata/'s reader.
//  - side_band: SideBandRecords, the side-band records the profiler keeps in
//    memory for perfdata/'s mapping replay.
//  - proc_maps: /proc/<pid>/maps lines.
//  - proc_stat: where /proc/<pid>/stat says the initial stack area lies.
//  - perf_map: perf-<pid>.map lines (JIT symbols).
//  - jitdump: jit-<pid>.dump (JIT bodies, source lines, CFI) read, and the
//    UnwindData of one jitted body.
//  - trampoline_cfi: the .eh_frame of CPython's perf trampolines, which
//    describe themselves nowhere.
//  - symbols_map: <key>.symbols.map, written by symbols/, read by report/.
//  - compare_report: CompareReport, compare.json of `runner compare`.
//  - run_counters: RunCounters, runner.counters.json (the benchmark's
//    counting perf events per benchmark window) read and written.
//  - upload_metadata: CodSpeed's upload metadata JSON and its answer.
//  - store_record: a run's record in the shared profile store.
//  - s3_xml: the S3 API's XML documents the store reads and writes.
//  - xml: the bounded XML reader (expat) they are read with.
//  - github_event: the members of a GitHub Actions event payload uploads use.
#pragma once

#include "format/bytes.hpp"
#include "format/compare_report.hpp"
#include "format/exec_targets.hpp"
#include "format/execution_timestamps.hpp"
#include "format/github_event.hpp"
#include "format/jitdump.hpp"
#include "format/numbers.hpp"
#include "format/perf_map.hpp"
#include "format/perf_metadata.hpp"
#include "format/perf_records.hpp"
#include "format/proc_maps.hpp"
#include "format/proc_stat.hpp"
#include "format/profile_layout.hpp"
#include "format/quantities.hpp"
#include "format/run_counters.hpp"
#include "format/s3_xml.hpp"
#include "format/side_band.hpp"
#include "format/store_record.hpp"
#include "format/symbols_map.hpp"
#include "format/trampoline_cfi.hpp"
#include "format/unwind_data.hpp"
#include "format/upload_metadata.hpp"
#include "format/walltime_results.hpp"
#include "format/xml.hpp"
