// Oracle for the report's DWARF unwinder: every DWARF-mode sample of a
// profile folder, unwound by our Unwinder (report/unwinder.cpp, from the
// folder's .unwind_data) and by libdw (dwfl_getthread_frames with thread
// callbacks that serve the same sampled registers and the same stack copy,
// the modules reported from the recorded mappings, ELF files found by path
// or by build-id and checked to carry the very .eh_frame the folder
// recorded), gives the same return addresses.
//
// Folders: two recorded here by the real runner (`runner exec` of an -O2
// program, `runner run` of the example benchmark) and every folder with a
// perf.pipedata under tests/golden/ (a recursive directory scan).
//
// Intended differences, each counted and printed:
// - Epilogues. After a `pop` that restores a register, GCC's CFI still says
//   "saved at CFA-N" while that slot is now below the stack pointer. Ours
//   reads such a register as already restored (report/unwinder.cpp,
//   apply_rule), libdw cannot read the slot (it is not in the stack copy)
//   and loses the register, so it stops early: libdw's stack must then be a
//   strict prefix of ours, and the leaf row must have a save slot below the
//   sampled stack pointer. Only the leaf frame can be in an epilogue.
// - Where no .eh_frame FDE covers a pc (or no module does), libdw tries
//   .debug_frame and then the frame-pointer chain (ebl_unwind); ours, which
//   has only the recorded .eh_frame, takes the frame pointer too (when it
//   looks valid). Both must then give the same frames; such samples are
//   counted ("through the frame-pointer fallback").
// - libdw's x86_64 ABI defaults leave rbx undefined where no CFI mentions
//   it (tests/unit/report/cfi_oracle_test.cpp); a CFA computed from rbx in
//   a caller would then stop libdw. Such a case shows up as a disagreement.
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "perfdata/perfdata.hpp"
#include "report/profile_folder.hpp"
#include "report/unwinder.hpp"
#include "symbols/symbols.hpp"
#include "tests/e2e/e2e_support.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::testing;
using runner::report::kMaxFrames;
using runner::report::ProfileFolder;

namespace {

// perf's x86_64 user-register numbers (enum perf_event_x86_regs) of DWARF
// registers 0..16: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip.
constexpr int kPerfRegOfDwarf[17] = {0,  3,  2,  1,  4,  5,  6,  7, 16,
                                     17, 18, 19, 20, 21, 22, 23, 8};
constexpr int kDwarfSp = 7, kDwarfIp = 16;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    char b[3];
    std::snprintf(b, sizeof(b), "%02x", p[i]);
    out += b;
  }
  return out;
}

std::string join(const std::vector<uint64_t>& v) {
  std::string out;
  for (uint64_t a : v) out += (out.empty() ? "" : " ") + hex(a);
  return out;
}

// The GNU build-id of an ELF file ("" when it has none or is no ELF).
std::string file_build_id(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    elf_version(EV_CURRENT);
    if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
      const void* id = nullptr;
      ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
      if (n > 0) out = hex_bytes(static_cast<const uint8_t*>(id), size_t(n));
      elf_end(elf);
    }
  }
  ::close(fd);
  return out;
}

// Sampled registers by DWARF number (nullopt: not in the sample).
std::array<std::optional<uint64_t>, 17> dwarf_regs(
    const runner::perfdata::SampleRecord& s) {
  std::array<std::optional<uint64_t>, 17> out{};
  std::array<std::optional<uint64_t>, 64> by_perf{};
  size_t next = 0;
  for (int bit = 0; bit < 64 && next < s.regs.size(); ++bit)
    if ((s.regs_mask >> bit) & 1u) by_perf[size_t(bit)] = s.regs[next++];
  for (int r = 0; r < 17; ++r) out[size_t(r)] = by_perf[kPerfRegOfDwarf[r]];
  return out;
}

// The vdso of this process in a file, for folders recorded on this machine
// (the build-id and .eh_frame checks decide whether it is the recorded one).
std::string dump_vdso(const TempDir& dir) {
  const auto* base =
      reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return "";
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(base);
  size_t size = ehdr->e_shoff + size_t{ehdr->e_shnum} * ehdr->e_shentsize;
  const auto* phdr = reinterpret_cast<const Elf64_Phdr*>(base + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; ++i)
    if (phdr[i].p_type == PT_LOAD)
      size = std::max<size_t>(size, phdr[i].p_offset + phdr[i].p_filesz);
  const std::string path = dir.file("vdso.so");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(base), std::streamsize(size));
  return path;
}

// Finds, for a module of a folder, an ELF file on this machine with the
// recorded build-id (when the folder has one) and the recorded .eh_frame.
class ElfLocator {
 public:
  ElfLocator(std::string golden_bin, std::string vdso)
      : golden_bin_(std::move(golden_bin)), vdso_(std::move(vdso)) {}

  // "" and `why` set when no file fits.
  std::string find(const std::string& recorded_path,
                   const std::string& build_id,
                   const runner::report::UnwindModule& recorded,
                   std::string* why) {
    why->clear();
    std::vector<std::string> candidates;
    if (!recorded_path.empty() && recorded_path[0] == '/')
      candidates.push_back(recorded_path);
    if (!build_id.empty()) {
      index_golden_bin();
      auto it = by_build_id_.find(build_id);
      if (it != by_build_id_.end())
        candidates.push_back(it->second);
      else
        *why +=
            "no file with build-id " + build_id + " in " + golden_bin_ + "; ";
    }
    if (recorded_path == "[vdso]" && !vdso_.empty())
      candidates.push_back(vdso_);
    if (candidates.empty()) *why += "no file on this machine";
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(c, ec)) {
        *why += c + ": missing; ";
        continue;
      }
      if (!build_id.empty() && file_build_id(c) != build_id) {
        *why += c + ": other build-id; ";
        continue;
      }
      auto data = runner::symbols::read_unwind_data(c, c);
      auto bytes = recorded.eh_frame->bytes();
      if (!data || data->base_svma != recorded.base_svma ||
          !std::equal(data->eh_frame.begin(), data->eh_frame.end(),
                      bytes.begin(), bytes.end())) {
        *why += c + ": another .eh_frame than the recorded one; ";
        continue;
      }
      return c;
    }
    return "";
  }

 private:
  void index_golden_bin() {
    if (indexed_) return;
    indexed_ = true;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(golden_bin_, ec)) {
      if (!e.is_regular_file(ec)) continue;
      std::string id = file_build_id(e.path().string());
      if (!id.empty()) by_build_id_.emplace(id, e.path().string());
    }
  }

  std::string golden_bin_, vdso_;
  bool indexed_ = false;
  std::map<std::string, std::string> by_build_id_;
};

// Build-ids of perf.pipedata's HEADER_BUILD_ID records, by file name.
std::map<std::string, std::string> recorded_build_ids(
    const std::string& pipedata) {
  std::map<std::string, std::string> out;
  auto reader = runner::perfdata::PipedataReader::open(pipedata);
  if (!reader) return out;
  runner::perfdata::Record r;
  while (true) {
    auto more = reader->next_into(r, /*copy_stack=*/false);
    if (!more || !*more) break;
    constexpr size_t kFixed = 8 + 4 + 24;  // header, pid, id[20], size, pad
    if (r.kind != runner::perfdata::RecordKind::kOther || r.type != 67 ||
        r.raw.size() <= kFixed)
      continue;
    size_t id_size = std::min<size_t>(r.raw[8 + 4 + 20], 20);
    if ((r.misc & (1u << 15)) == 0) id_size = 20;
    const char* name = reinterpret_cast<const char*>(r.raw.data() + kFixed);
    std::string file(name, strnlen(name, r.raw.size() - kFixed));
    out[file] = hex_bytes(r.raw.data() + 12, id_size);
  }
  return out;
}

// What the libdw callbacks serve for the sample being unwound.
struct SampleState {
  pid_t tid = 0;
  std::array<std::optional<uint64_t>, 17> regs{};
  uint64_t sp = 0;
  std::span<const uint8_t> stack;
};

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  const auto* s = static_cast<const SampleState*>(arg);
  if (addr < s->sp || addr - s->sp > s->stack.size() ||
      s->stack.size() - (addr - s->sp) < 8)
    return false;
  std::memcpy(result, s->stack.data() + (addr - s->sp), 8);
  return true;
}

pid_t next_thread(Dwfl*, void*, void**) { return 0; }

bool get_thread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
  *thread_argp = dwfl_arg;
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  const auto* s = static_cast<const SampleState*>(arg);
  for (int r = 0; r < 17; ++r) {
    if (!s->regs[size_t(r)]) continue;
    Dwarf_Word v = *s->regs[size_t(r)];
    if (!dwfl_thread_state_registers(thread, r, 1, &v)) return false;
  }
  dwfl_thread_state_register_pc(thread, *s->regs[kDwarfIp]);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    next_thread,           get_thread, memory_read,
    set_initial_registers, nullptr,    nullptr};

int no_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*,
                 const char*, GElf_Word, char**) {
  return -1;
}
const Dwfl_Callbacks kCallbacks = {no_elf, no_debuginfo, nullptr, nullptr};

// Whether libdw has .eh_frame CFI for `pc` (else it unwinds the frame with
// its frame-pointer fallback, as ours does).
bool libdw_has_cfi(Dwfl* dwfl, Dwarf_Addr pc) {
  Dwfl_Module* mod = dwfl_addrmodule(dwfl, pc);
  if (mod == nullptr) return false;
  Dwarf_Addr bias = 0;
  Dwarf_CFI* cfi = dwfl_module_eh_cfi(mod, &bias);
  if (cfi == nullptr) return false;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) return false;
  std::free(frame);
  return true;
}

struct LibdwStack {
  Dwfl* dwfl = nullptr;
  std::vector<uint64_t> pcs;
  uint64_t next_lookup = 0;  // where libdw looks up the last frame's CFI
  bool through_fallback = false;
  bool through_signal_frame = false;  // a frame after a signal frame
};

int on_frame(Dwfl_Frame* state, void* arg) {
  auto* out = static_cast<LibdwStack*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  if (!out->pcs.empty() && !libdw_has_cfi(out->dwfl, out->next_lookup))
    out->through_fallback = true;  // this frame came from the fp fallback
  if (activation && !out->pcs.empty()) out->through_signal_frame = true;
  out->pcs.push_back(pc);
  out->next_lookup = activation ? pc : pc - 1;
  return out->pcs.size() >= kMaxFrames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

// One Dwfl per pid: the pid's modules, reported once.
struct PidDwfl {
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl{nullptr, &dwfl_end};
  std::vector<std::pair<uint64_t, uint64_t>> unavailable;  // avma ranges
  bool any_module = false;
};

struct Tally {
  size_t samples = 0, dwarf = 0, compared = 0, exact = 0, epilogue = 0;
  size_t skipped_modules = 0, skipped_no_pid = 0, through_fallback = 0;
  size_t frames = 0, through_signal_frame = 0;
  std::vector<std::string> disagreements;
  size_t disagreeing = 0;
};

class Oracle {
 public:
  Oracle(const std::string& folder, ElfLocator& locator)
      : folder_path_(folder), locator_(locator) {}

  Tally run() {
    Tally t;
    auto folder = ProfileFolder::open(folder_path_);
    REQUIRE_MESSAGE(folder, (folder ? "" : folder.error().what()));
    folder_ = &*folder;
    build_ids_ = recorded_build_ids(folder_path_ + "/perf.pipedata");
    runner::report::Unwinder unwinder(*folder_);
    auto reader =
        runner::perfdata::PipedataReader::open(folder_path_ + "/perf.pipedata");
    REQUIRE(reader);
    runner::perfdata::Record r;
    while (true) {
      auto more = reader->next_into(r, /*copy_stack=*/false);
      REQUIRE_MESSAGE(more, (more ? "" : more.error().what()));
      if (!*more) break;
      if (r.kind != runner::perfdata::RecordKind::kSample) continue;
      ++t.samples;
      const auto& s = r.sample;
      if (s.regs_abi == 0 || s.regs.empty()) continue;
      ++t.dwarf;
      compare(s, reader->last_stack(), unwinder, &t);
    }
    folder_ = nullptr;
    return t;
  }

 private:
  PidDwfl& pid_dwfl(int32_t pid) {
    auto it = dwfls_.find(pid);
    if (it != dwfls_.end()) return it->second;
    PidDwfl& p = dwfls_[pid];
    const runner::report::PidModules* modules = folder_->modules(pid);
    if (modules == nullptr) return p;
    p.dwfl.reset(dwfl_begin(&kCallbacks));
    REQUIRE(p.dwfl);
    dwfl_report_begin(p.dwfl.get());
    std::set<std::string> reported;
    for (const auto& ref : modules->unwind) {
      runner::report::UnwindModule* um = folder_->unwind(ref.key);
      std::string path = folder_->key_path(ref.key), why = "no .unwind_data";
      std::string file;
      if (um != nullptr) {
        auto id = build_ids_.find(path);
        file = locator_.find(path, id == build_ids_.end() ? "" : id->second,
                             *um, &why);
      }
      if (file.empty()) {
        p.unavailable.push_back({ref.start, ref.end});
        missing_.insert(path + ": " + why);
        continue;
      }
      if (!reported.insert(ref.key).second) continue;
      const uint64_t bias = ref.base_avma - um->base_svma;
      Dwfl_Module* mod = dwfl_report_elf(p.dwfl.get(), ref.key.c_str(),
                                         file.c_str(), -1, bias, true);
      Dwarf_Addr got = 0;
      if (mod == nullptr || dwfl_module_getelf(mod, &got) == nullptr ||
          got != bias) {
        p.unavailable.push_back({ref.start, ref.end});
        missing_.insert(path + ": libdw could not place it at bias " +
                        hex(bias) + " (" + dwfl_errmsg(-1) + ")");
        continue;
      }
      p.any_module = true;
    }
    dwfl_report_end(p.dwfl.get(), nullptr, nullptr);
    if (p.any_module)
      REQUIRE_MESSAGE(dwfl_attach_state(p.dwfl.get(), nullptr, pid,
                                        &kThreadCallbacks, &state_),
                      dwfl_errmsg(-1));
    return p;
  }

  static bool inside(const PidDwfl& p, const std::vector<uint64_t>& addrs) {
    for (uint64_t a : addrs)
      for (const auto& [start, end] : p.unavailable)
        if (a >= start && a < end) return true;
    return false;
  }

  // Whether the leaf's row saves a register below the sampled stack pointer
  // (an epilogue: see the file comment).
  bool leaf_in_epilogue(int32_t pid, uint64_t ip, uint64_t sp,
                        const std::array<std::optional<uint64_t>, 17>& regs) {
    const runner::report::PidModules* modules = folder_->modules(pid);
    if (modules == nullptr) return false;
    for (const auto& ref : modules->unwind) {
      if (ip < ref.start || ip >= ref.end) continue;
      runner::report::UnwindModule* um = folder_->unwind(ref.key);
      if (um == nullptr) return false;
      auto row = um->eh_frame->find_row(ip - ref.base_avma + um->base_svma);
      if (!row || row->cfa.kind != runner::report::CfaRule::Kind::kRegOffset ||
          row->cfa.reg >= 17 || !regs[row->cfa.reg])
        return false;
      const uint64_t cfa =
          *regs[row->cfa.reg] + static_cast<uint64_t>(row->cfa.offset);
      for (const auto& rule : row->regs)
        if (rule.kind == runner::report::RegRule::Kind::kOffset &&
            cfa + static_cast<uint64_t>(rule.offset) < sp)
          return true;
      return false;
    }
    return false;
  }

  void compare(const runner::perfdata::SampleRecord& s,
               std::span<const uint8_t> stack,
               runner::report::Unwinder& unwinder, Tally* t) {
    state_.tid = static_cast<pid_t>(s.tid);
    state_.regs = dwarf_regs(s);
    if (!state_.regs[kDwarfSp] || !state_.regs[kDwarfIp]) return;
    state_.sp = *state_.regs[kDwarfSp];
    state_.stack = stack;
    const auto ours = unwinder.unwind(s, stack).addrs;
    PidDwfl& p = pid_dwfl(static_cast<int32_t>(s.pid));
    if (!p.any_module) {
      ++t->skipped_no_pid;
      return;
    }
    LibdwStack libdw;
    libdw.dwfl = p.dwfl.get();
    dwfl_getthread_frames(p.dwfl.get(), state_.tid, on_frame, &libdw);
    if (inside(p, ours) || inside(p, libdw.pcs)) {
      ++t->skipped_modules;
      return;
    }
    ++t->compared;
    t->frames += ours.size();
    if (libdw.through_fallback) ++t->through_fallback;
    if (libdw.through_signal_frame) ++t->through_signal_frame;
    if (ours == libdw.pcs) {
      ++t->exact;
      return;
    }
    const bool prefix =
        !libdw.pcs.empty() && libdw.pcs.size() < ours.size() &&
        std::equal(libdw.pcs.begin(), libdw.pcs.end(), ours.begin());
    if (prefix &&
        leaf_in_epilogue(static_cast<int32_t>(s.pid), *state_.regs[kDwarfIp],
                         state_.sp, state_.regs)) {
      ++t->epilogue;
      return;
    }
    ++t->disagreeing;
    if (t->disagreements.size() < 15)
      t->disagreements.push_back(
          "pid " + std::to_string(s.pid) + " t=" + std::to_string(s.time) +
          "\n  ours:  " + join(ours) + "\n  libdw: " + join(libdw.pcs));
  }

 public:
  const std::set<std::string>& missing() const { return missing_; }

 private:
  std::string folder_path_;
  ElfLocator& locator_;
  ProfileFolder* folder_ = nullptr;
  std::map<std::string, std::string> build_ids_;
  std::map<int32_t, PidDwfl> dwfls_;
  SampleState state_;
  std::set<std::string> missing_;
};

std::string env_or_empty(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr ? v : "";
}

std::string golden_dir() { return env_or_empty("GOLDEN_DIR"); }

// Runs the oracle on a folder, prints the counts; returns the tally.
Tally check_folder(const std::string& folder, ElfLocator& locator) {
  Oracle oracle(folder, locator);
  Tally t = oracle.run();
  std::string missing;
  for (const auto& m : oracle.missing()) missing += "\n  " + m;
  MESSAGE(folder, ": ", t.samples, " samples, ", t.dwarf, " with DWARF regs; ",
          t.compared, " compared (", t.frames, " frames, ",
          t.through_signal_frame, " through a signal frame): ", t.exact,
          " exact, ", t.epilogue,
          " where libdw stops in the leaf's epilogue (a strict prefix of "
          "ours), ",
          t.disagreeing,
          " disagreeing; through the frame-pointer "
          "fallback in ",
          t.through_fallback, "; skipped: ", t.skipped_modules,
          " touching modules not on this machine, ", t.skipped_no_pid,
          " of pids without modules",
          (missing.empty() ? "" : "; modules not available:" + missing));
  std::string listing;
  for (const auto& d : t.disagreements) listing += d + "\n";
  CHECK_MESSAGE(t.disagreeing == 0, t.disagreeing,
                " samples disagree (first 15):\n", listing);
  return t;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("unwind oracle: an -O2 program profiled by the runner") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r =
        run_process(runner_argv("exec", folder, dir.path(),
                                {"--warmup-time", "0", "--max-rounds", "5"},
                                {binary("CFI_O2_PROGRAM"), "400"}),
                    {"RUNNER_EXEC_HARNESS=" + binary("EXEC_HARNESS_BIN")});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    ElfLocator locator(golden_dir() + "/bin", dump_vdso(dir));
    Tally t = check_folder(folder, locator);
    CHECK(t.compared >= 50);
    // Most samples are in the program, whose modules are all on disk.
    CHECK(t.compared * 10 >= t.dwarf * 9);
    // The program's SIGILL handler spins: some stacks cross a signal frame.
    CHECK(t.through_signal_frame > 0);
    // It also spins in an epilogue under a frame addressed through rbp.
    CHECK(t.epilogue > 0);

    // The frame a signal interrupted is named at its exact pc: the function
    // that was interrupted at its first byte, not what precedes it. (Stack:
    // the handler on_sigill, libc's trampoline __restore_rt, which libc's
    // symbols may not name, then the interrupted cfi_o2_trap.)
    auto report = run_process(
        {binary("RUNNER_BIN"), "report", "--format", "perf-script", folder});
    INFO(report.err);
    REQUIRE(report.exit_code == 0);
    size_t in_handler = 0, named = 0;
    std::string other;
    for (const auto& sample : parse_perf_script(report.out)) {
      for (size_t i = 0; i + 2 < sample.frames.size(); ++i) {
        if (sample.frames[i].sym.find("on_sigill") == std::string::npos)
          continue;
        ++in_handler;
        if (sample.frames[i + 2].sym == "cfi_o2_trap")
          ++named;
        else
          other = sample.frames[i + 2].sym;
      }
    }
    CHECK(in_handler > 0);
    CHECK_MESSAGE(named == in_handler, named, " of ", in_handler,
                  " interrupted frames are named cfi_o2_trap (other: ", other,
                  ")");
  }

  TEST_CASE("unwind oracle: the example benchmark profiled by the runner") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    TempDir dir;
    const std::string folder = dir.file("profile");
    auto r = run_process(runner_argv("run", folder, dir.path(), {},
                                     {binary("EXAMPLE_BIN"), "--rounds", "3"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    ElfLocator locator(golden_dir() + "/bin", dump_vdso(dir));
    Tally t = check_folder(folder, locator);
    CHECK(t.compared >= 20);
  }

  TEST_CASE("unwind oracle: the golden DWARF folders") {
    const std::string golden = golden_dir();
    REQUIRE_MESSAGE(!golden.empty(), "GOLDEN_DIR is not set (run via meson)");
    // Every folder with a perf.pipedata, at any depth (folders/<name>/).
    std::error_code ec;
    std::vector<std::string> folders;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(golden, ec))
      if (e.path().filename() == "perf.pipedata" && e.is_regular_file(ec))
        folders.push_back(e.path().parent_path().string());
    std::sort(folders.begin(), folders.end());
    if (folders.empty())
      RUNNER_SKIP_CASE("no profile folder under " + golden + " yet");
    TempDir dir;
    ElfLocator locator(golden + "/bin", dump_vdso(dir));
    size_t usable = 0;
    std::string reasons;
    for (const auto& folder : folders) {
      Tally t = check_folder(folder, locator);
      if (t.compared > 0) {
        ++usable;
      } else {
        reasons += "\n  " + folder + ": " +
                   (t.dwarf == 0 ? "no DWARF-mode samples"
                                 : "every DWARF sample needs a module that "
                                   "is not available (listed above)");
      }
    }
    if (usable == 0)
      RUNNER_SKIP_CASE("no golden folder has a usable DWARF sample:" + reasons);
    if (!reasons.empty()) MESSAGE("golden folders not compared:", reasons);
  }
}
