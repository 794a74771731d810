// JIT code of a run, from the jitdumps its processes wrote (Node
// --perf-prof, CPython 3.13 -X perf_jit / PYTHON_PERF_JIT_SUPPORT=1, Java
// agents), turned into artifacts a backend can use without the processes:
//   names         appended to the folder's perf-<pid>.map ("vma size name",
//                 CodSpeed's convention: a moved body gets a line at its new
//                 address);
//   unwind data   <key>.unwind_data per distinct CFI (bodies with the same
//                 CFI relative to their code, as CPython's trampolines all
//                 are, share one file; format::jit_unwind_data gives the
//                 layout) and one mapped_process_unwind_data_by_pid range
//                 per body;
//   source lines  one debug_info module per dump: each body's name with the
//                 file:line of its first line entry.
// A process's dump is found the way perf finds it: the process mapped a file
// named jit-<its pid>.dump (an executable mapping, the runtime's signal).
// The dump is read only when it is a regular file owned by the process's uid
// (the directory may be /tmp), up to kMaxJitDumpBytes; a dump still being
// written, or cut short, is read up to its last whole record.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "symbols/symbols.hpp"

namespace runner::finalize {

inline constexpr uint64_t kMaxJitDumpBytes = uint64_t{2} << 30;

// Whether a mapping of `pid` is its jitdump (basename "jit-<pid>.dump").
bool is_jitdump_mapping(const perfdata::TrackedMapping& mapping);

struct JitArtifacts {
  std::map<int32_t, std::string> perf_map_lines;  // per pid, to append
  // Per pid, each place a body was and when (jit-<pid>.timeline); dumps
  // whose times are not CLOCK_MONOTONIC (an architecture clock) have none.
  std::map<int32_t, std::vector<format::TimedJitEntry>> timeline_by_pid;
  std::vector<std::pair<std::string, std::string>> keys;  // key -> path
  format::ByPid<format::UnwindRef> unwind_by_pid;
  format::ByPid<format::DebugInfoRef> debug_info_by_pid;
  std::map<std::string, format::ModuleDebugInfo> debug_info;
  // "jitdump_read", "jitdump_truncated", "jitdump_unreadable",
  // "jitdump_malformed", "jit_bodies", "jit_bodies_with_cfi".
  std::map<std::string, uint64_t> counts;
  std::vector<std::string> write_failures;
};

// `first_key_index`: the index the first JIT key gets (after the ELF
// modules'). `uids`: the owner each pid's files must have (pids not in it
// were started by the runner: its own euid).
JitArtifacts build_jit_artifacts(
    const format::ProfileLayout& layout,
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::map<int32_t, uint32_t>& uids, size_t first_key_index);

// What the run's JIT runtimes left in the benchmark's folders, removed once
// read: V8 writes its jitdump (--perf-prof, which CodSpeed's Node plugins
// ask for) into the process's working directory (Node 18 and 20 have no
// flag to put it elsewhere), and --perf-basic-prof or --perf-prof open
// V8's log there too (isolate-0x<hex>-<pid>-v8.log; --logfile is not
// allowed in NODE_OPTIONS). Removed, each only when it is a regular file
// (not a link) owned by the process's uid (`uids`, else the runner's euid):
//  - every jit-<pid>.dump a process of the run mapped, except those right
//    in /tmp (where CPython 3.13 writes its dumps, like the perf maps: the
//    convention's place, left alone);
//  - every isolate-0x<hex>-<pid>-v8.log, and jit-<pid>.dump (not in /tmp),
//    in `dirs` and in the dumps' directories last modified at or after
//    `since` (CLOCK_REALTIME ns, the run's start; 0 removes none): the
//    run's processes include some no sample names (vitest's main process),
//    so the time, not the pid, says the file is the run's.
// Returns how many files were removed.
size_t remove_runtime_files(
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::map<int32_t, uint32_t>& uids,
    const std::vector<std::string>& dirs, uint64_t since);

// CPython's perf trampolines (PYTHONPERFSUPPORT=1: a copy of
// _Py_trampoline_func_start per code object, named "py::..." in
// perf-<pid>.map) have no CFI and no frame pointer: when the interpreter's
// trampoline is one format::cpython_trampoline_unwind_data knows, its CFI is
// written once (<key>.unwind_data, the next key index) and every trampoline
// of `perf_maps` (each pid's perf-<pid>.map as copied) gets its range in
// mapped_process_unwind_data_by_pid. The trampoline's bytes are read from
// the interpreter's ELF (a mapping of the pid whose file name starts with
// "libpython" or "python"), at the symbols of its <key>.symbols.map.
void add_cpython_trampolines(
    const format::ProfileLayout& layout,
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::vector<symbols::ModuleInfo>& modules,
    const std::map<int32_t, std::string>& perf_maps, JitArtifacts& out,
    size_t key_index);

}  // namespace runner::finalize
