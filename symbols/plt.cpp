// x86-64 PLT decoding: see plt.hpp.
#include "symbols/plt.hpp"

#include <cstring>

namespace runner::symbols {
namespace {

constexpr uint64_t kPltHeaderSize = 16;
constexpr uint8_t kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
constexpr uint8_t kBndPrefix = 0xf2;

bool starts_with_endbr64(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof(kEndbr64) &&
         std::memcmp(bytes.data(), kEndbr64, sizeof(kEndbr64)) == 0;
}

uint64_t entry_size(std::string_view name, std::span<const uint8_t> bytes,
                    uint64_t entsize) {
  if (name != ".plt.got") return 16;
  if (entsize == 8 || entsize == 16) return entsize;
  return starts_with_endbr64(bytes) ? 16 : 8;
}

// The GOT slot of the entry at `addr` whose code is `code`, or false when it
// does not start with [endbr64] [bnd] jmp *disp32(%rip) (ff 25 disp32).
bool jump_slot(std::span<const uint8_t> code, uint64_t addr, uint64_t* slot) {
  size_t at = 0;
  if (starts_with_endbr64(code)) at += sizeof(kEndbr64);
  if (at < code.size() && code[at] == kBndPrefix) ++at;
  if (code.size() < at + 6 || code[at] != 0xff || code[at + 1] != 0x25)
    return false;
  uint32_t raw = uint32_t{code[at + 2]} | uint32_t{code[at + 3]} << 8 |
                 uint32_t{code[at + 4]} << 16 | uint32_t{code[at + 5]} << 24;
  auto disp = static_cast<int64_t>(static_cast<int32_t>(raw));
  // RIP-relative: from the end of the 6-byte jump (wrapping, like the CPU).
  *slot = addr + at + 6 + static_cast<uint64_t>(disp);
  return true;
}

}  // namespace

bool is_x86_64_plt_section(std::string_view name) {
  return name == ".plt" || name == ".plt.sec" || name == ".plt.got";
}

std::vector<PltEntry> decode_x86_64_plt(std::string_view name, uint64_t addr,
                                        std::span<const uint8_t> bytes,
                                        uint64_t entsize) {
  std::vector<PltEntry> out;
  if (!is_x86_64_plt_section(name)) return out;
  uint64_t size = entry_size(name, bytes, entsize);
  uint64_t first = name == ".plt" ? kPltHeaderSize : 0;
  for (uint64_t off = first; off <= bytes.size() && bytes.size() - off >= size;
       off += size) {
    uint64_t entry_addr = addr + off;
    uint64_t slot = 0;
    if (jump_slot(bytes.subspan(off, size), entry_addr, &slot)) {
      out.push_back(PltEntry{entry_addr, size, slot});
    }
  }
  return out;
}

}  // namespace runner::symbols
