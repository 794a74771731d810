// The only libelf user: ElfImage (validation, summary, symbol tables, raw
// unwind sections).
#include "symbols/elf_image.hpp"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "base/base.hpp"

namespace runner::symbols {
namespace {

void init_libelf() {
  // elf_version() sets process-global state; everything else in libelf is
  // per-descriptor (its error number is thread-local), so one call up front
  // makes concurrent use of distinct Elf handles safe.
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

base::Error elf_error(std::string_view what) {
  return base::Error(std::string(what) + ": " + elf_errmsg(-1));
}

bool range_inside(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// ARM/AArch64 mapping symbols ($a, $d, $t, $x, optionally "$x.<anything>")
// mark code/data transitions, not functions; perf drops them too.
bool is_arm_mapping_symbol(std::string_view name) {
  if (name.size() < 2 || name[0] != '$') return false;
  char c = name[1];
  if (c != 'a' && c != 'd' && c != 't' && c != 'x') return false;
  return name.size() == 2 || name[2] == '.';
}

// Copies the GNU build-id out of a note section or segment, if it has one.
void read_build_id_note(Elf_Data* data, std::vector<uint8_t>& build_id) {
  size_t offset = 0, name_off = 0, desc_off = 0;
  GElf_Nhdr nhdr;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) >
         0) {
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
        std::memcmp(static_cast<const char*>(data->d_buf) + name_off, "GNU",
                    4) == 0) {
      const auto* desc = static_cast<const uint8_t*>(data->d_buf) + desc_off;
      build_id.assign(desc, desc + nhdr.n_descsz);
      return;
    }
  }
}

// One .symtab or .dynsym section: its symbols and their string table.
struct ElfSymbolSection {
  Elf_Data* syms = nullptr;
  const char* strings = nullptr;
  size_t strings_size = 0;
  size_t count = 0;
};

template <typename Sym>
void append_table(const ElfSymbolSection& table, std::vector<Symbol>& out) {
  // elf_getdata() returns the table converted to host layout and suitably
  // aligned, so it can be walked as an array of the class's Sym type.
  const auto* syms = static_cast<const Sym*>(table.syms->d_buf);
  for (size_t i = 0; i < table.count; ++i) {
    const Sym& sym = syms[i];
    if (sym.st_name == 0 || sym.st_name >= table.strings_size) continue;
    const char* name = table.strings + sym.st_name;
    size_t len = ::strnlen(name, table.strings_size - sym.st_name);
    std::string_view view(name, len);
    if (view.empty() || is_arm_mapping_symbol(view)) continue;
    out.push_back(Symbol{sym.st_value, sym.st_size, std::string(view),
                         static_cast<uint8_t>(sym.st_info >> 4)});
  }
}

}  // namespace

struct ElfImage::Impl {
  base::UniqueFd fd;
  Elf* elf = nullptr;
  uint64_t file_size = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  ElfSummary summary;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* eh_frame = nullptr;
  Elf_Scn* eh_frame_hdr = nullptr;

  ~Impl() {
    if (elf != nullptr) elf_end(elf);
  }

  base::Status validate();
  base::Status scan_sections();
  base::Status read_symbol_table(Elf_Scn* scn, std::vector<Symbol>& out) const;
};

std::string_view classify_open_error(const base::Error& error) {
  if (error.code() != 0) return "unreadable";
  std::string_view msg = error.message();
  if (msg.starts_with(kNotElfMessage)) return "not_elf";
  if (msg.starts_with(kTruncatedMessage)) return "truncated";
  return "bad_elf";
}

base::Status ElfImage::Impl::validate() {
  if (elf_kind(elf) != ELF_K_ELF)
    return base::Error(std::string(kNotElfMessage));
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) {
    return base::Error(std::string(kTruncatedMessage) + ": ELF header");
  }
  size_t phnum = 0, shnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0 || elf_getshdrnum(elf, &shnum) != 0) {
    return base::Error(std::string(kBadElfMessage) + ": header counts");
  }
  if (phnum > 0 &&
      !range_inside(ehdr.e_phoff, uint64_t{phnum} * ehdr.e_phentsize,
                    file_size)) {
    return base::Error(std::string(kTruncatedMessage) +
                       ": program headers past end of file");
  }
  // libelf may report no sections at all when the table lies past the end
  // of a truncated file, so check what the header declares too.
  uint64_t declared_shnum = ehdr.e_shnum != 0 ? ehdr.e_shnum : shnum;
  if ((declared_shnum > 0 || ehdr.e_shoff != 0) &&
      !range_inside(ehdr.e_shoff,
                    std::max<uint64_t>(declared_shnum, 1) * ehdr.e_shentsize,
                    file_size)) {
    return base::Error(std::string(kTruncatedMessage) +
                       ": section headers past end of file");
  }
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) {
      return base::Error(std::string(kBadElfMessage) + ": program header");
    }
    if (phdr.p_type != PT_LOAD) continue;
    if (!range_inside(phdr.p_offset, phdr.p_filesz, file_size)) {
      return base::Error(std::string(kTruncatedMessage) +
                         ": PT_LOAD past end of file");
    }
    summary.loads.push_back(LoadSegment{phdr.p_vaddr, phdr.p_offset,
                                        phdr.p_filesz, phdr.p_memsz,
                                        phdr.p_flags});
  }
  if (!summary.loads.empty()) summary.base_svma = summary.loads.front().vaddr;
  return {};
}

base::Status ElfImage::Impl::scan_sections() {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
    // No section name table (e.g. sstripped file): no sections to find.
    return {};
  }
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      return base::Error(std::string(kBadElfMessage) + ": section header");
    }
    if (shdr.sh_type != SHT_NOBITS &&
        !range_inside(shdr.sh_offset, shdr.sh_size, file_size)) {
      return base::Error(std::string(kTruncatedMessage) +
                         ": section past end of file");
    }
    const char* name_ptr = elf_strptr(elf, shstrndx, shdr.sh_name);
    std::string_view name = name_ptr != nullptr ? name_ptr : "";
    if (shdr.sh_type == SHT_SYMTAB) {
      if (symtab == nullptr) symtab = scn;
    } else if (shdr.sh_type == SHT_DYNSYM) {
      if (dynsym == nullptr) dynsym = scn;
    } else if (shdr.sh_type == SHT_NOTE && summary.build_id.empty()) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr) continue;
      read_build_id_note(data, summary.build_id);
    } else if (name == ".eh_frame") {
      if (shdr.sh_type != SHT_NOBITS) eh_frame = scn;
    } else if (name == ".eh_frame_hdr") {
      if (shdr.sh_type != SHT_NOBITS) eh_frame_hdr = scn;
    } else if (name == ".debug_info" || name == ".zdebug_info") {
      summary.has_debug_info = shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
    } else if (name == ".gnu_debuglink" && shdr.sh_type != SHT_NOBITS) {
      // NUL-terminated file name, zero padding to 4 bytes, CRC32 in the
      // file's byte order.
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data == nullptr || data->d_buf == nullptr) continue;
      const char* bytes = static_cast<const char*>(data->d_buf);
      size_t len = ::strnlen(bytes, data->d_size);
      size_t crc_off = (len + 4) & ~size_t{3};
      if (len == 0 || crc_off + 4 > data->d_size) continue;
      uint32_t crc = 0;
      std::memcpy(&crc, bytes + crc_off, 4);
      GElf_Ehdr ehdr;
      gelf_getehdr(elf, &ehdr);
      bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
      bool file_le = ehdr.e_ident[EI_DATA] == ELFDATA2LSB;
      if (host_le != file_le) crc = __builtin_bswap32(crc);
      summary.debuglink.assign(bytes, len);
      summary.debuglink_crc = crc;
    }
  }
  // Fallback for files without section headers: build id from PT_NOTE.
  if (summary.build_id.empty()) {
    size_t phnum = 0;
    elf_getphdrnum(elf, &phnum);
    for (size_t i = 0; i < phnum && summary.build_id.empty(); ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr ||
          phdr.p_type != PT_NOTE ||
          !range_inside(phdr.p_offset, phdr.p_filesz, file_size)) {
        continue;
      }
      Elf_Data* data = elf_getdata_rawchunk(
          elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR);
      if (data == nullptr) continue;
      read_build_id_note(data, summary.build_id);
    }
  }
  return {};
}

base::Status ElfImage::Impl::read_symbol_table(Elf_Scn* scn,
                                               std::vector<Symbol>& out) const {
  GElf_Shdr shdr;
  if (gelf_getshdr(scn, &shdr) == nullptr) return elf_error("symbol table");
  ElfSymbolSection table;
  table.syms = elf_getdata(scn, nullptr);
  if (table.syms == nullptr || table.syms->d_buf == nullptr) {
    return elf_error("symbol table data");
  }
  Elf_Scn* str_scn = elf_getscn(elf, shdr.sh_link);
  Elf_Data* str_data =
      str_scn != nullptr ? elf_getdata(str_scn, nullptr) : nullptr;
  if (str_data == nullptr || str_data->d_buf == nullptr) {
    return elf_error("symbol string table");
  }
  table.strings = static_cast<const char*>(str_data->d_buf);
  table.strings_size = str_data->d_size;
  bool is64 = gelf_getclass(elf) == ELFCLASS64;
  size_t entsize = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  table.count = table.syms->d_size / entsize;
  out.reserve(out.size() + table.count);
  if (is64) {
    append_table<Elf64_Sym>(table, out);
  } else {
    append_table<Elf32_Sym>(table, out);
  }
  return {};
}

ElfImage::ElfImage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElfImage::ElfImage(ElfImage&& other) noexcept = default;
ElfImage& ElfImage::operator=(ElfImage&& other) noexcept = default;
ElfImage::~ElfImage() = default;

base::Result<ElfImage> ElfImage::open(const std::string& path) {
  init_libelf();
  auto impl = std::make_unique<Impl>();
  // O_NONBLOCK: a FIFO at the path must not block the open (refused below).
  impl->fd.reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!impl->fd) return base::errno_error("open " + path);
  struct stat st;
  if (::fstat(impl->fd.get(), &st) != 0)
    return base::errno_error("stat " + path);
  if (!S_ISREG(st.st_mode)) {
    return base::Error(std::string(kNotElfMessage) + ": not a regular file");
  }
  impl->file_size = static_cast<uint64_t>(st.st_size);
  impl->dev = st.st_dev;
  impl->ino = st.st_ino;
  // Files shorter than an ELF identification are not ELF at all; libelf
  // would call them ELF_K_NONE anyway but check the magic ourselves so a
  // truncated ELF (magic present) is told apart from a non-ELF file.
  unsigned char ident[EI_NIDENT] = {};
  ssize_t got = ::pread(impl->fd.get(), ident, sizeof(ident), 0);
  if (got < 0) return base::errno_error("read " + path);
  if (got < 4 || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return base::Error(std::string(kNotElfMessage));
  }
  // ELF_C_READ_MMAP: libelf maps the file read-only and copies only what it
  // must convert, so big libraries cost page faults, not reads.
  impl->elf = elf_begin(impl->fd.get(), ELF_C_READ_MMAP, nullptr);
  if (impl->elf == nullptr) {
    if (static_cast<size_t>(got) < EI_NIDENT ||
        impl->file_size < sizeof(Elf32_Ehdr)) {
      return base::Error(std::string(kTruncatedMessage) + ": ELF header");
    }
    return base::Error(std::string(kBadElfMessage) + ": " + elf_errmsg(-1));
  }
  // No path context here: classify_open_error() looks at the message start,
  // and callers add the path themselves.
  if (base::Status valid = impl->validate(); !valid)
    return std::move(valid.error());
  if (base::Status scanned = impl->scan_sections(); !scanned)
    return std::move(scanned.error());
  return ElfImage(std::move(impl));
}

const ElfSummary& ElfImage::summary() const { return impl_->summary; }
dev_t ElfImage::device() const { return impl_->dev; }
ino_t ElfImage::inode() const { return impl_->ino; }

base::Status ElfImage::append_symbols(std::vector<Symbol>& out) const {
  if (impl_->symtab != nullptr) {
    RUNNER_RETURN_IF_ERROR(impl_->read_symbol_table(impl_->symtab, out),
                           ".symtab");
  }
  if (impl_->dynsym != nullptr) {
    RUNNER_RETURN_IF_ERROR(impl_->read_symbol_table(impl_->dynsym, out),
                           ".dynsym");
  }
  return {};
}

base::Result<UnwindData> ElfImage::unwind_data(
    const std::string& recorded_path) const {
  if (impl_->eh_frame == nullptr)
    return base::Error(std::string(kNoEhFrameMessage));
  UnwindData out;
  out.path = recorded_path;
  out.base_svma = impl_->summary.base_svma;
  auto read_section = [](Elf_Scn* scn, std::vector<uint8_t>& bytes,
                         Range& range) -> base::Status {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return elf_error("section header");
    // Raw bytes: .eh_frame is never converted by libelf, and the unwinder
    // expects exactly what is in the file.
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (data == nullptr) return elf_error("section data");
    const auto* begin = static_cast<const uint8_t*>(data->d_buf);
    if (begin != nullptr) bytes.assign(begin, begin + data->d_size);
    range = Range{shdr.sh_addr, shdr.sh_addr + shdr.sh_size};
    return {};
  };
  RUNNER_RETURN_IF_ERROR(
      read_section(impl_->eh_frame, out.eh_frame, out.eh_frame_svma),
      ".eh_frame");
  if (impl_->eh_frame_hdr != nullptr) {
    std::vector<uint8_t> hdr;
    Range range;
    RUNNER_RETURN_IF_ERROR(read_section(impl_->eh_frame_hdr, hdr, range),
                           ".eh_frame_hdr");
    out.eh_frame_hdr = std::move(hdr);
    out.eh_frame_hdr_svma = range;
  }
  return out;
}

}  // namespace runner::symbols
