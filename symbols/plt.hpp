// Internal to symbols/: x86-64 PLT entries decoded from their code bytes,
// so that ElfImage can name each one "<symbol>@plt" after the GOT slot it
// jumps through (as perf and objdump do). Pure byte decoding: no libelf.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace runner::symbols {

// One PLT entry whose first instruction (after an optional endbr64 and an
// optional bnd prefix) is `jmp *disp32(%rip)`.
struct PltEntry {
  uint64_t addr = 0, size = 0;
  uint64_t slot = 0;  // address of the GOT slot the jump reads
};

// True for the sections holding x86-64 PLT entries: .plt, .plt.sec, .plt.got.
bool is_x86_64_plt_section(std::string_view name);

// The entries of one x86-64 PLT section `name` (one of the above) mapped at
// `addr` with contents `bytes` and header sh_entsize `entsize`. Entries are
// 16 bytes, except .plt.got's: sh_entsize when it is 8 or 16, else 16 when
// the section starts with endbr64 and 8 otherwise. The first 16 bytes of .plt
// (the lazy-binding header) are no entry. Entries that do not start with the
// indirect jump (e.g. the lazy .plt entries of an IBT PLT, whose jumps sit in
// .plt.sec) are left out; a trailing partial entry is ignored.
std::vector<PltEntry> decode_x86_64_plt(std::string_view name, uint64_t addr,
                                        std::span<const uint8_t> bytes,
                                        uint64_t entsize);

}  // namespace runner::symbols
