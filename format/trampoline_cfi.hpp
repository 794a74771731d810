// CFI for CPython's perf trampolines (3.12+, `-X perf` /
// PYTHONPERFSUPPORT=1), which the interpreter copies from
// _Py_trampoline_func_start (Python/asm_trampoline.S) for each code object
// and names in perf-<pid>.map, but describes nowhere: asm_trampoline.S has
// no CFI directives and the x86-64 trampoline keeps no frame pointer
//   48 83 ec 08   sub  $8, %rsp
//   ff d1         call *%rcx
//   48 83 c4 08   add  $8, %rsp
//   c3            ret
// so neither a DWARF nor a frame-pointer unwinder gets past it. Given the
// trampoline's bytes (read from the interpreter's ELF file), this writes the
// .eh_frame that describes them exactly: CFA = rsp + 8 at entry, rsp + 16
// from the `sub` to the `add`, rsp + 8 again before the `ret`; the return
// address at CFA - 8 throughout.
//
// Layout: as format::jit_unwind_data's (format/jitdump.hpp): the code at
// SVMA [0, size), base_svma 0 (a range's base_avma is the trampoline's
// address), .eh_frame at ALIGN_8(size); one CIE ("zR", FDE pointers
// pcrel|sdata4), one FDE, a zero terminator; no .eh_frame_hdr (optional in
// unwind data V4).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "format/unwind_data.hpp"

namespace runner::format {

// The unwind data of a trampoline whose code is `code`, or nullopt when the
// bytes are not a trampoline this knows (another architecture, another
// CPython build).
std::optional<UnwindData> cpython_trampoline_unwind_data(
    std::span<const uint8_t> code);

}  // namespace runner::format
