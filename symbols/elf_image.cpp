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
#include <climits>
#include <cstring>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>

#include "base/base.hpp"
#include "symbols/plt.hpp"
#include "symbols/xz.hpp"

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

// One section header, kept for the symbol rules (bounds, flags) and PLTs.
struct SectionInfo {
  uint64_t addr = 0, size = 0, flags = 0, entsize = 0;
  uint32_t type = SHT_NULL, link = 0;
  std::string name;
};

// One .symtab or .dynsym section: its symbols, their string table and, for
// symbols whose st_shndx is SHN_XINDEX, the SHT_SYMTAB_SHNDX table.
struct ElfSymbolSection {
  Elf_Data* syms = nullptr;
  const char* strings = nullptr;
  size_t strings_size = 0;
  size_t count = 0;
  const uint32_t* xindex = nullptr;
  size_t xindex_count = 0;

  std::string_view name(uint64_t st_name) const {
    if (st_name == 0 || st_name >= strings_size) return {};
    const char* start = strings + st_name;
    return {start, ::strnlen(start, strings_size - st_name)};
  }
};

bool dropped_type(unsigned type) {
  return type == STT_FILE || type == STT_SECTION || type == STT_TLS;
}

}  // namespace

struct ElfImage::Impl {
  base::UniqueFd fd;
  std::vector<uint8_t> memory;  // the image of open_memory()
  Elf* elf = nullptr;
  uint64_t file_size = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  uint16_t machine = EM_NONE;
  ElfSummary summary;
  std::vector<SectionInfo> sections;  // by section index
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  Elf_Scn* eh_frame = nullptr;
  Elf_Scn* eh_frame_hdr = nullptr;
  Elf_Scn* gnu_debugdata = nullptr;

  ~Impl() {
    if (elf != nullptr) elf_end(elf);
  }

  base::Status check();
  base::Status validate();
  base::Status scan_sections();
  void note_section(Elf_Scn* scn, const GElf_Shdr& shdr, std::string_view name);
  void read_debuglink(Elf_Scn* scn);
  void read_note_segments();
  base::Result<ElfSymbolSection> symbol_section(Elf_Scn* scn) const;
  const SectionInfo* defining_section(const ElfSymbolSection& table, size_t i,
                                      uint16_t shndx) const;
  template <typename Sym>
  void append_table(const ElfSymbolSection& table,
                    std::vector<SectionSymbol>& out) const;
  base::Status read_symbol_table(Elf_Scn* scn,
                                 std::vector<SectionSymbol>& out) const;
  std::unordered_map<uint64_t, std::string> got_slot_names() const;
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
  machine = ehdr.e_machine;
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
  size_t shstrndx = 0, shnum = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0 ||
      elf_getshdrnum(elf, &shnum) != 0) {
    // No section name table (e.g. sstripped file): no sections to find.
    read_note_segments();
    return {};
  }
  sections.resize(shnum);
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
    size_t index = elf_ndxscn(scn);
    if (index < sections.size()) {
      sections[index] = SectionInfo{
          shdr.sh_addr, shdr.sh_size, shdr.sh_flags,    shdr.sh_entsize,
          shdr.sh_type, shdr.sh_link, std::string(name)};
    }
    note_section(scn, shdr, name);
  }
  read_note_segments();
  return {};
}

// Remembers the sections read later and reads the small ones now.
void ElfImage::Impl::note_section(Elf_Scn* scn, const GElf_Shdr& shdr,
                                  std::string_view name) {
  bool nobits = shdr.sh_type == SHT_NOBITS;
  if (shdr.sh_type == SHT_SYMTAB) {
    if (symtab == nullptr) symtab = scn;
  } else if (shdr.sh_type == SHT_DYNSYM) {
    if (dynsym == nullptr) dynsym = scn;
  } else if (shdr.sh_type == SHT_NOTE && summary.build_id.empty()) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data != nullptr) read_build_id_note(data, summary.build_id);
  } else if (name == ".eh_frame") {
    if (!nobits) eh_frame = scn;
  } else if (name == ".eh_frame_hdr") {
    if (!nobits) eh_frame_hdr = scn;
  } else if (name == ".debug_info" || name == ".zdebug_info") {
    summary.has_debug_info = !nobits && shdr.sh_size > 0;
  } else if (name == ".gnu_debuglink" && !nobits) {
    read_debuglink(scn);
  } else if (name == ".gnu_debugdata" && !nobits) {
    gnu_debugdata = scn;
  }
}

void ElfImage::Impl::read_debuglink(Elf_Scn* scn) {
  // NUL-terminated file name, zero padding to 4 bytes, CRC32 in the file's
  // byte order.
  Elf_Data* data = elf_rawdata(scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) return;
  const char* bytes = static_cast<const char*>(data->d_buf);
  size_t len = ::strnlen(bytes, data->d_size);
  size_t crc_off = (len + 4) & ~size_t{3};
  if (len == 0 || crc_off + 4 > data->d_size) return;
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

// Fallback for files without section headers: build id from PT_NOTE.
void ElfImage::Impl::read_note_segments() {
  if (!summary.build_id.empty()) return;
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

base::Result<ElfSymbolSection> ElfImage::Impl::symbol_section(
    Elf_Scn* scn) const {
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
  table.count =
      table.syms->d_size / (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
  // Extended section indices: the SHT_SYMTAB_SHNDX section linked to this
  // table, one word per symbol (only files with >= 0xff00 sections).
  size_t index = elf_ndxscn(scn);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].type != SHT_SYMTAB_SHNDX || sections[i].link != index)
      continue;
    Elf_Data* x = elf_getdata(elf_getscn(elf, i), nullptr);
    if (x == nullptr || x->d_buf == nullptr) break;
    table.xindex = static_cast<const uint32_t*>(x->d_buf);
    table.xindex_count = x->d_size / sizeof(uint32_t);
    break;
  }
  return table;
}

// The allocated section symbol `i` of `table` is defined in; nullptr for
// imports (SHN_UNDEF), SHN_ABS / SHN_COMMON and other reserved indices, and
// indices that name no allocated section.
const SectionInfo* ElfImage::Impl::defining_section(
    const ElfSymbolSection& table, size_t i, uint16_t shndx) const {
  size_t index = shndx;
  if (shndx == SHN_XINDEX) {
    if (table.xindex == nullptr || i >= table.xindex_count) return nullptr;
    index = table.xindex[i];
  } else if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) {
    return nullptr;
  }
  if (index == SHN_UNDEF || index >= sections.size()) return nullptr;
  const SectionInfo& section = sections[index];
  if ((section.flags & SHF_ALLOC) == 0 || section.type == SHT_NULL)
    return nullptr;
  return &section;
}

template <typename Sym>
void ElfImage::Impl::append_table(const ElfSymbolSection& table,
                                  std::vector<SectionSymbol>& out) const {
  // elf_getdata() returns the table converted to host layout and suitably
  // aligned, so it can be walked as an array of the class's Sym type.
  const auto* syms = static_cast<const Sym*>(table.syms->d_buf);
  for (size_t i = 0; i < table.count; ++i) {
    const Sym& sym = syms[i];
    unsigned type = sym.st_info & 0xf;
    if (dropped_type(type)) continue;
    std::string_view name = table.name(sym.st_name);
    if (name.empty() || is_arm_mapping_symbol(name)) continue;
    const SectionInfo* section = defining_section(table, i, sym.st_shndx);
    if (section == nullptr) continue;
    out.push_back(SectionSymbol{
        .symbol = Symbol{sym.st_value, sym.st_size, std::string(name),
                         static_cast<uint8_t>(sym.st_info >> 4)},
        .section_start = section->addr,
        .section_end = section->addr + section->size,
        .executable = (section->flags & SHF_EXECINSTR) != 0,
        .function = type == STT_FUNC || type == STT_GNU_IFUNC});
  }
}

base::Status ElfImage::Impl::read_symbol_table(
    Elf_Scn* scn, std::vector<SectionSymbol>& out) const {
  base::Result<ElfSymbolSection> section = symbol_section(scn);
  if (!section) return std::move(section.error());
  const ElfSymbolSection& table = *section;
  out.reserve(out.size() + table.count);
  if (gelf_getclass(elf) == ELFCLASS64) {
    append_table<Elf64_Sym>(table, out);
  } else {
    append_table<Elf32_Sym>(table, out);
  }
  return {};
}

// GOT slot address -> .dynsym name, from the R_X86_64_JUMP_SLOT and
// R_X86_64_GLOB_DAT relocations of the SHT_RELA sections (.rela.plt,
// .rela.dyn) whose symbol table is .dynsym.
std::unordered_map<uint64_t, std::string> ElfImage::Impl::got_slot_names()
    const {
  std::unordered_map<uint64_t, std::string> out;
  if (dynsym == nullptr) return out;
  base::Result<ElfSymbolSection> table = symbol_section(dynsym);
  if (!table) return out;
  size_t dynsym_index = elf_ndxscn(dynsym);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].type != SHT_RELA || sections[i].link != dynsym_index)
      continue;
    Elf_Data* data = elf_getdata(elf_getscn(elf, i), nullptr);
    if (data == nullptr) continue;
    GElf_Rela rela;
    // gelf_getrela() checks the index against the data size.
    for (int r = 0; gelf_getrela(data, r, &rela) != nullptr; ++r) {
      uint64_t type = GELF_R_TYPE(rela.r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      GElf_Sym sym;
      auto sym_index = static_cast<int>(
          std::min<uint64_t>(GELF_R_SYM(rela.r_info), INT32_MAX));
      if (gelf_getsym(table->syms, sym_index, &sym) == nullptr) continue;
      std::string_view name = table->name(sym.st_name);
      if (!name.empty()) out.emplace(rela.r_offset, std::string(name));
    }
  }
  return out;
}

ElfImage::ElfImage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElfImage::ElfImage(ElfImage&& other) noexcept = default;
ElfImage& ElfImage::operator=(ElfImage&& other) noexcept = default;
ElfImage::~ElfImage() = default;

// Validation and section scan shared by open() and open_memory().
base::Status ElfImage::Impl::check() {
  // No path context here: classify_open_error() looks at the message start,
  // and callers add the path themselves.
  if (base::Status valid = validate(); !valid) return valid;
  return scan_sections();
}

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
  if (base::Status checked = impl->check(); !checked)
    return std::move(checked.error());
  return ElfImage(std::move(impl));
}

base::Result<ElfImage> ElfImage::open_memory(std::vector<uint8_t> bytes) {
  init_libelf();
  auto impl = std::make_unique<Impl>();
  impl->memory = std::move(bytes);
  impl->file_size = impl->memory.size();
  if (impl->memory.size() < SELFMAG ||
      std::memcmp(impl->memory.data(), ELFMAG, SELFMAG) != 0) {
    return base::Error(std::string(kNotElfMessage));
  }
  if (impl->memory.size() < sizeof(Elf32_Ehdr)) {
    return base::Error(std::string(kTruncatedMessage) + ": ELF header");
  }
  // libelf reads (and may convert in place) the buffer, which `impl` owns
  // for as long as the Elf handle lives.
  impl->elf = elf_memory(reinterpret_cast<char*>(impl->memory.data()),
                         impl->memory.size());
  if (impl->elf == nullptr) {
    return base::Error(std::string(kBadElfMessage) + ": " + elf_errmsg(-1));
  }
  if (base::Status checked = impl->check(); !checked)
    return std::move(checked.error());
  return ElfImage(std::move(impl));
}

const ElfSummary& ElfImage::summary() const { return impl_->summary; }
dev_t ElfImage::device() const { return impl_->dev; }
ino_t ElfImage::inode() const { return impl_->ino; }

base::Status ElfImage::append_symbols(std::vector<SectionSymbol>& out) const {
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

void ElfImage::append_plt_symbols(std::vector<SectionSymbol>& out) const {
  if (impl_->machine != EM_X86_64) return;
  std::unordered_map<uint64_t, std::string> slots = impl_->got_slot_names();
  if (slots.empty()) return;
  const std::vector<SectionInfo>& sections = impl_->sections;
  for (size_t i = 0; i < sections.size(); ++i) {
    const SectionInfo& section = sections[i];
    if (!is_x86_64_plt_section(section.name) || section.type != SHT_PROGBITS ||
        (section.flags & SHF_ALLOC) == 0 ||
        (section.flags & SHF_EXECINSTR) == 0) {
      continue;
    }
    Elf_Data* data = elf_rawdata(elf_getscn(impl_->elf, i), nullptr);
    if (data == nullptr || data->d_buf == nullptr) continue;
    std::span<const uint8_t> bytes(
        static_cast<const uint8_t*>(data->d_buf),
        std::min<uint64_t>(data->d_size, section.size));
    for (const PltEntry& entry : decode_x86_64_plt(section.name, section.addr,
                                                   bytes, section.entsize)) {
      auto it = slots.find(entry.slot);
      if (it == slots.end()) continue;
      out.push_back(SectionSymbol{
          .symbol =
              Symbol{entry.addr, entry.size, it->second + "@plt", STB_GLOBAL},
          .section_start = section.addr,
          .section_end = section.addr + section.size,
          .executable = true,
          .function = true});
    }
  }
}

base::Result<std::optional<ElfImage>> ElfImage::mini_debuginfo() const {
  if (impl_->gnu_debugdata == nullptr) return std::optional<ElfImage>();
  Elf_Data* data = elf_rawdata(impl_->gnu_debugdata, nullptr);
  if (data == nullptr || data->d_buf == nullptr)
    return elf_error(".gnu_debugdata");
  std::span<const uint8_t> packed(static_cast<const uint8_t*>(data->d_buf),
                                  data->d_size);
  RUNNER_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          decompress_xz(packed, kMaxMiniDebugInfoSize),
                          ".gnu_debugdata");
  RUNNER_ASSIGN_OR_RETURN(ElfImage inner, open_memory(std::move(bytes)),
                          ".gnu_debugdata");
  return std::optional<ElfImage>(std::move(inner));
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
