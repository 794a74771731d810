// read_code(): bytes of a file's code at an ELF address, through the
// PT_LOAD that maps it (no section table needed).
#include <fcntl.h>
#include <unistd.h>

#include "symbols/symbols.hpp"

namespace runner::symbols {

base::Result<std::vector<uint8_t>> read_code(const std::string& open_path,
                                             uint64_t svma, size_t size) {
  constexpr size_t kMaxCode = 1 << 20;
  if (size > kMaxCode) return base::Error("code range too large");
  RUNNER_ASSIGN_OR_RETURN(ElfSummary summary, read_elf_summary(open_path),
                          open_path);
  for (const LoadSegment& seg : summary.loads) {
    if (svma < seg.vaddr || svma - seg.vaddr > seg.filesz ||
        size > seg.filesz - (svma - seg.vaddr))
      continue;
    base::UniqueFd fd(
        ::open(open_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return base::errno_error("open " + open_path);
    std::vector<uint8_t> out(size);
    const auto offset = static_cast<off_t>(seg.offset + (svma - seg.vaddr));
    ssize_t got = ::pread(fd.get(), out.data(), size, offset);
    if (got < 0) return base::errno_error("read " + open_path);
    if (static_cast<size_t>(got) != size)
      return base::Error(open_path + ": file shorter than its PT_LOAD");
    return out;
  }
  return base::Error(open_path + ": no PT_LOAD holds the code range");
}

}  // namespace runner::symbols
