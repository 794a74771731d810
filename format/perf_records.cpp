#include "format/perf_records.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "format/bytes.hpp"

namespace runner::format::perf {
namespace {

// Not in the 6.1 uapi header: branch counters (kernel 6.8+) add one u64 per
// branch entry after the entries.
constexpr uint64_t kBranchSampleCounters = uint64_t{1} << 19;
// perf's PERF_EVENT_UPDATE__NAME (tools/lib/perf/include/perf/event.h).
constexpr uint64_t kEventUpdateName = 2;

constexpr uint64_t kKnownSampleBits = PERF_SAMPLE_MAX - 1;
// The fields of the sample_id_all trailer, in their on-disk order.
constexpr uint64_t kSampleIdBits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                   PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

size_t popcount64(uint64_t v) { return static_cast<size_t>(std::popcount(v)); }

// A NUL-terminated string inside `bytes`: the bytes before the first NUL
// (all of them when there is none, as a damaged record would have).
std::string bounded_string(std::span<const uint8_t> bytes) {
  const void* nul = std::memchr(bytes.data(), 0, bytes.size());
  size_t len =
      nul != nullptr
          ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - bytes.data())
          : bytes.size();
  return std::string(reinterpret_cast<const char*>(bytes.data()), len);
}

// `count` u64 values into `out` (false when they do not fit).
bool read_u64_array(ByteReader& c, uint64_t count, std::vector<uint64_t>& out) {
  if (!c.fits(count, 8)) return false;
  out.resize(static_cast<size_t>(count));
  if (count > 0) std::memcpy(out.data(), c.take(count * 8), count * 8);
  return true;
}

// Walks a PERF_SAMPLE_READ value (layout from read_format).
void skip_read_value(ByteReader& c, uint64_t read_format) {
  uint64_t per_value = 1 + ((read_format & PERF_FORMAT_ID) ? 1 : 0) +
                       ((read_format & PERF_FORMAT_LOST) ? 1 : 0);
  uint64_t times = ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                   ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
  if (read_format & PERF_FORMAT_GROUP) {
    uint64_t nr = c.u64();
    c.skip_array(times, 8);
    c.skip_array(nr, per_value * 8);
  } else {
    c.skip_array(times + per_value, 8);
  }
}

// The fields before PERF_SAMPLE_READ: identity, place and time.
void read_sample_head(ByteReader& c, uint64_t st, SampleRecord* s) {
  if (st & PERF_SAMPLE_IDENTIFIER) s->id = c.u64();
  if (st & PERF_SAMPLE_IP) s->ip = c.u64();
  if (st & PERF_SAMPLE_TID) {
    s->pid = c.u32();
    s->tid = c.u32();
  }
  if (st & PERF_SAMPLE_TIME) s->time = c.u64();
  if (st & PERF_SAMPLE_ADDR) s->addr = c.u64();
  if (st & PERF_SAMPLE_ID) s->id = c.u64();
  if (st & PERF_SAMPLE_STREAM_ID) s->stream_id = c.u64();
  if (st & PERF_SAMPLE_CPU) {
    s->cpu = c.u32();
    c.u32();
  }
  if (st & PERF_SAMPLE_PERIOD) s->period = c.u64();
}

// CALLCHAIN (into *callchain, or skipped when it is null), RAW and
// BRANCH_STACK.
bool read_sample_chains(ByteReader& c, const perf_event_attr& attr,
                        std::vector<uint64_t>* callchain) {
  uint64_t st = attr.sample_type;
  if (st & PERF_SAMPLE_CALLCHAIN) {
    const uint64_t nr = c.u64();
    if (callchain != nullptr ? !read_u64_array(c, nr, *callchain)
                             : !c.skip_array(nr, 8))
      return false;
  }
  // u32 size + data; the kernel pads data so the pair ends u64-aligned.
  if (st & PERF_SAMPLE_RAW) c.skip(c.u32());
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    uint64_t bnr = c.u64();
    if (attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) c.u64();
    c.skip_array(bnr, sizeof(perf_branch_entry));
    if (attr.branch_sample_type & kBranchSampleCounters) c.skip_array(bnr, 8);
  }
  return true;
}

// REGS_USER and STACK_USER: what DWARF unwinding needs.
bool read_sample_user_state(ByteReader& c, const perf_event_attr& attr,
                            bool copy_stack, SampleRecord* s,
                            std::span<const uint8_t>* stack_view) {
  uint64_t st = attr.sample_type;
  s->regs_mask = attr.sample_regs_user;
  if (st & PERF_SAMPLE_REGS_USER) {
    s->regs_abi = c.u64();
    if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE &&
        !read_u64_array(c, popcount64(attr.sample_regs_user), s->regs))
      return false;
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    // u64 size, size bytes, then u64 dyn_size (only when size != 0): the
    // kernel always reserves `size` bytes but only dyn_size are valid.
    uint64_t stack_size = c.u64();
    if (stack_size != 0) {
      const uint8_t* data = c.take(stack_size);
      uint64_t dyn_size = c.u64();
      if (!c.ok() || dyn_size > stack_size) return false;
      *stack_view = {data, static_cast<size_t>(dyn_size)};
      if (copy_stack) s->stack.assign(data, data + dyn_size);
    }
    s->stack_size = stack_size;
  }
  return true;
}

// The fields after the stack copy, none of which the report uses.
void read_sample_tail(ByteReader& c, const perf_event_attr& attr,
                      SampleRecord* s) {
  uint64_t st = attr.sample_type;
  if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
    s->weight = c.u64();
  if (st & PERF_SAMPLE_DATA_SRC) s->data_src = c.u64();
  if (st & PERF_SAMPLE_TRANSACTION) c.u64();
  if (st & PERF_SAMPLE_REGS_INTR) {
    uint64_t abi = c.u64();
    if (abi != PERF_SAMPLE_REGS_ABI_NONE)
      c.skip_array(popcount64(attr.sample_regs_intr), 8);
  }
  if (st & PERF_SAMPLE_PHYS_ADDR) c.u64();
  if (st & PERF_SAMPLE_CGROUP) c.u64();
  if (st & PERF_SAMPLE_DATA_PAGE_SIZE) c.u64();
  if (st & PERF_SAMPLE_CODE_PAGE_SIZE) c.u64();
  if (st & PERF_SAMPLE_AUX) c.skip(c.u64());
}

// The fields before PERF_SAMPLE_READ, in order, one u64 each (pid+tid and
// cpu+res are two u32 in one).
constexpr uint64_t kHeadBits =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
// Fields after the stack copy that are one u64 each (WEIGHT and
// WEIGHT_STRUCT share one).
constexpr uint64_t kFixedTailBits =
    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR |
    PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
    PERF_SAMPLE_CODE_PAGE_SIZE;
// Fields whose size varies otherwise than the callchain's and the user
// registers': such layouts are walked.
constexpr uint64_t kVariableBits = PERF_SAMPLE_READ | PERF_SAMPLE_RAW |
                                   PERF_SAMPLE_BRANCH_STACK |
                                   PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX;

std::vector<uint8_t> with_header(uint32_t type, uint16_t misc,
                                 std::span<const uint8_t> body) {
  ByteWriter w;
  w.u32(type);
  w.u16(misc);
  w.u16(static_cast<uint16_t>(sizeof(perf_event_header) + body.size()));
  w.bytes(body);
  return w.take();
}

std::span<const uint8_t> as_bytes(const void* data, size_t size) {
  return {static_cast<const uint8_t*>(data), size};
}

}  // namespace

size_t fixed_size(uint32_t type) {
  switch (type) {
    case PERF_RECORD_MMAP:
      return 32;
    case PERF_RECORD_MMAP2:
      return 64;
    case PERF_RECORD_COMM:
      return 8;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      return 24;
    case PERF_RECORD_LOST:
      return 16;
    default:
      return 0;
  }
}

size_t sample_id_size(uint64_t sample_type) {
  return popcount64(sample_type & kSampleIdBits) * 8;
}

bool sample_type_supported(uint64_t sample_type) {
  return (sample_type & ~kKnownSampleBits) == 0;
}

std::optional<size_t> sample_id_word(uint64_t st) {
  if (st & PERF_SAMPLE_IDENTIFIER) return 0;
  if (st & PERF_SAMPLE_ID)
    return popcount64(st & (PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                            PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
  return std::nullopt;
}

std::optional<size_t> trailer_id_word_from_end(uint64_t st) {
  // The trailer keeps IDENTIFIER last so it can be found from the end.
  if (st & PERF_SAMPLE_IDENTIFIER) return 1;
  if (st & PERF_SAMPLE_ID)
    return 1 + popcount64(st & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
  return std::nullopt;
}

bool decode_sample_id(std::span<const uint8_t> trailer, uint64_t st,
                      SampleId* out) {
  ByteReader c(trailer);
  if (st & PERF_SAMPLE_TID) {
    out->pid = c.u32();
    out->tid = c.u32();
  }
  if (st & PERF_SAMPLE_TIME) out->time = c.u64();
  if (st & PERF_SAMPLE_ID) out->id = c.u64();
  if (st & PERF_SAMPLE_STREAM_ID) c.u64();
  if (st & PERF_SAMPLE_CPU) {
    out->cpu = c.u32();
    c.u32();
  }
  if (st & PERF_SAMPLE_IDENTIFIER) out->id = c.u64();
  return c.ok();
}

bool decode_sample(std::span<const uint8_t> body, const perf_event_attr& attr,
                   bool copy_stack, SampleRecord* s,
                   std::span<const uint8_t>* stack_view) {
  ByteReader c(body);
  read_sample_head(c, attr.sample_type, s);
  if (attr.sample_type & PERF_SAMPLE_READ) skip_read_value(c, attr.read_format);
  if (!read_sample_chains(c, attr, &s->callchain)) return false;
  if (!read_sample_user_state(c, attr, copy_stack, s, stack_view)) return false;
  read_sample_tail(c, attr, s);
  return c.ok() && c.remaining() == 0;
}

bool locate_user_stack(std::span<const uint8_t> body,
                       const perf_event_attr& attr, UserStackLocation* out) {
  const uint64_t st = attr.sample_type;
  if ((st & PERF_SAMPLE_STACK_USER) == 0) return false;
  ByteReader c(body);
  SampleRecord s;
  read_sample_head(c, st, &s);
  if (st & PERF_SAMPLE_READ) skip_read_value(c, attr.read_format);
  if (!read_sample_chains(c, attr, nullptr)) return false;
  out->pid = s.pid;
  out->tid = s.tid;
  out->time = s.time;
  out->sp.reset();
  if (st & PERF_SAMPLE_REGS_USER) {
    const uint64_t abi = c.u64();
    const uint64_t mask = attr.sample_regs_user;
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
      const size_t count = popcount64(mask);
      const size_t sp_index =
          popcount64(mask & ((uint64_t{1} << kX86_64RegSp) - 1));
      const size_t at = c.pos();
      if (!c.skip_array(count, 8)) return false;
      if ((mask >> kX86_64RegSp) & 1)
        out->sp = load_le(body, at + sp_index * 8, 8);
    }
  }
  // u64 size, size bytes, u64 dyn_size (only when size != 0).
  out->size = c.u64();
  out->offset = c.pos();
  out->dyn_size = 0;
  if (out->size != 0) {
    if (!c.skip(out->size)) return false;
    out->dyn_size = c.u64();
    if (out->dyn_size > out->size) return false;
  }
  read_sample_tail(c, attr, &s);
  return c.ok() && c.remaining() == 0;
}

UserStackLayout::UserStackLayout(const perf_event_attr& attr) : attr_(attr) {
  const uint64_t st = attr.sample_type;
  has_stack_ = (st & PERF_SAMPLE_STACK_USER) != 0;
  fixed_ = has_stack_ && sample_type_supported(st) && (st & kVariableBits) == 0;
  head_size_ = 8 * popcount64(st & kHeadBits);
  const uint64_t before_tid = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP;
  if (st & PERF_SAMPLE_TID) tid_at_ = 8 * popcount64(st & before_tid);
  if (st & PERF_SAMPLE_TIME)
    time_at_ = 8 * popcount64(st & (before_tid | PERF_SAMPLE_TID));
  if (st & PERF_SAMPLE_REGS_USER) {
    const uint64_t mask = attr.sample_regs_user;
    regs_words_ = popcount64(mask);
    if ((mask >> kX86_64RegSp) & 1)
      sp_word_ = popcount64(mask & ((uint64_t{1} << kX86_64RegSp) - 1));
  }
  tail_size_ = 8 * popcount64(st & kFixedTailBits);
  if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) tail_size_ += 8;
}

bool UserStackLayout::head(std::span<const uint8_t> head, uint32_t* pid,
                           uint32_t* tid, uint64_t* time) const {
  if (tid_at_ == SIZE_MAX || time_at_ == SIZE_MAX || head.size() < head_size_)
    return false;
  *pid = static_cast<uint32_t>(load_le(head, tid_at_, 4));
  *tid = static_cast<uint32_t>(load_le(head, tid_at_ + 4, 4));
  *time = load_le(head, time_at_, 8);
  return true;
}

bool UserStackLayout::locate(std::span<const uint8_t> body,
                             UserStackLocation* out) const {
  if (!fixed_) return locate_user_stack(body, attr_, out);
  const uint64_t st = attr_.sample_type;
  if (!head(body, &out->pid, &out->tid, &out->time)) {
    out->pid = out->tid = 0;
    out->time = 0;
  }
  // Offsets are checked against the body before each load: a count read
  // from the record never moves past its end.
  uint64_t at = head_size_;
  const uint64_t end = body.size();
  auto fits = [&](uint64_t n) { return at <= end && end - at >= n; };
  if (st & PERF_SAMPLE_CALLCHAIN) {
    if (!fits(8)) return false;
    const uint64_t nr = load_le(body, at, 8);
    at += 8;
    if (nr > (end - at) / 8) return false;
    at += 8 * nr;
  }
  out->sp.reset();
  if (st & PERF_SAMPLE_REGS_USER) {
    if (!fits(8)) return false;
    const uint64_t abi = load_le(body, at, 8);
    at += 8;
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
      if (!fits(8 * regs_words_)) return false;
      if (sp_word_) out->sp = load_le(body, at + 8 * *sp_word_, 8);
      at += 8 * regs_words_;
    }
  }
  if (!fits(8)) return false;
  out->size = load_le(body, at, 8);
  at += 8;
  out->offset = at;
  out->dyn_size = 0;
  if (out->size != 0) {
    if (out->size > end - at || end - at - out->size < 8) return false;
    at += out->size;
    out->dyn_size = load_le(body, at, 8);
    at += 8;
    if (out->dyn_size > out->size) return false;
  }
  return end - at == tail_size_;
}

bool decode_mmap(uint32_t type, uint16_t misc, std::span<const uint8_t> body,
                 Mmap2Record* m) {
  const size_t fixed = fixed_size(type);
  if (body.size() < fixed) return false;
  ByteReader c(body);
  m->pid = c.u32();
  m->tid = c.u32();
  m->addr = c.u64();
  m->len = c.u64();
  m->pgoff = c.u64();
  if (type == PERF_RECORD_MMAP2) {
    if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
      // Same 24 bytes as maj/min/ino/ino_generation: u8 size, 3 reserved
      // bytes, 20 bytes of build id.
      m->has_build_id = true;
      uint8_t id_size = c.u8();
      c.skip(3);
      const uint8_t* id = c.take(20);
      if (id != nullptr)
        m->build_id.assign(id, id + std::min<size_t>(id_size, 20));
    } else {
      m->maj = c.u32();
      m->min = c.u32();
      m->ino = c.u64();
      m->ino_generation = c.u64();
    }
    m->prot = c.u32();
    m->flags = c.u32();
  } else {
    m->prot =
        (misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_READ : PROT_READ | PROT_EXEC;
  }
  if (!c.ok()) return false;
  m->filename = bounded_string(body.subspan(fixed));
  return true;
}

bool decode_comm(uint16_t misc, std::span<const uint8_t> body, CommRecord* cm) {
  if (body.size() < fixed_size(PERF_RECORD_COMM)) return false;
  ByteReader c(body);
  cm->pid = c.u32();
  cm->tid = c.u32();
  cm->comm = bounded_string(body.subspan(8));
  cm->exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  return true;
}

bool decode_task(uint32_t type, std::span<const uint8_t> body, TaskRecord* t) {
  ByteReader c(body);
  t->is_exit = type == PERF_RECORD_EXIT;
  t->pid = c.u32();
  t->ppid = c.u32();
  t->tid = c.u32();
  t->ptid = c.u32();
  t->time = c.u64();
  return c.ok();
}

bool decode_lost(std::span<const uint8_t> body, LostRecord* l) {
  ByteReader c(body);
  l->id = c.u64();
  l->lost = c.u64();
  return c.ok();
}

std::vector<uint8_t> encode_pipe_header() {
  ByteWriter w;
  w.bytes(std::string_view(kPipeMagic, sizeof(kPipeMagic)));
  w.u64(kPipeHeaderSize);
  return w.take();
}

base::Status check_pipe_header(std::span<const uint8_t> start) {
  auto starts_with = [&](const char* magic) {
    return start.size() >= 8 && std::memcmp(start.data(), magic, 8) == 0;
  };
  if (!starts_with(kPipeMagic)) {
    if (starts_with("2ELIFREP"))
      return base::Error(
          "perf.data written with the other byte order; not supported");
    if (starts_with("PERFFILE"))
      return base::Error("perf.data version 1; not supported");
    return base::Error("not a perf.data file (bad magic)");
  }
  if (start.size() < kPipeHeaderSize)
    return base::Error("truncated perf.data header (" +
                       std::to_string(start.size()) + " bytes)");
  const uint64_t header_size = load_le(start, 8, 8);
  if (header_size != kPipeHeaderSize)
    return base::Error(
        "a perf.data file header (size " + std::to_string(header_size) +
        "), not pipe mode: only pipe-mode files (perf record -o -) are read");
  return {};
}

std::vector<uint8_t> encode_attr_record(const perf_event_attr& attr,
                                        std::span<const uint64_t> ids) {
  static_assert(sizeof(perf_event_attr) >= kAttrSize);
  perf_event_attr copy = attr;
  copy.size = kAttrSize;
  ByteWriter body;
  body.bytes(as_bytes(&copy, kAttrSize));
  for (uint64_t id : ids) body.u64(id);
  return with_header(kHeaderAttr, 0, body.view());
}

std::optional<EventAttr> decode_attr_record(std::span<const uint8_t> body) {
  ByteReader c(body);
  c.u32();  // type
  uint32_t attr_size = c.u32();
  if (!c.ok()) return std::nullopt;
  if (attr_size == 0) attr_size = PERF_ATTR_SIZE_VER0;
  if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > body.size())
    return std::nullopt;
  EventAttr ea;
  std::memcpy(&ea.attr, body.data(),
              std::min<size_t>(attr_size, sizeof(perf_event_attr)));
  size_t nids = (body.size() - attr_size) / 8;
  ea.ids.resize(nids);
  if (nids > 0) std::memcpy(ea.ids.data(), body.data() + attr_size, nids * 8);
  return ea;
}

std::vector<uint8_t> encode_feature_record(FeatureId id,
                                           std::span<const uint8_t> payload) {
  ByteWriter body;
  body.u64(id);
  body.bytes(payload);
  return with_header(kHeaderFeature, 0, body.view());
}

std::vector<uint8_t> encode_build_id_record(std::span<const uint8_t> build_id,
                                            const std::string& filename) {
  // struct perf_record_header_build_id: header, pid, 20 bytes of id + size
  // byte + 3 reserved, then the NUL-terminated name padded to 64 bytes.
  constexpr size_t kNameAlign = 64;
  const size_t id_size = std::min<size_t>(build_id.size(), 20);
  ByteWriter body;
  body.i32(-1);  // perf's host machine
  body.bytes(build_id.first(id_size));
  body.zeros(20 - id_size);
  body.u8(static_cast<uint8_t>(id_size));
  body.zeros(3);
  const size_t name_size =
      (filename.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
  body.bytes(filename);
  body.zeros(name_size - filename.size());
  return with_header(kHeaderBuildId, PERF_RECORD_MISC_USER | kMiscBuildIdSize,
                     body.view());
}

std::vector<uint8_t> encode_finished_round() {
  return with_header(kFinishedRound, 0, {});
}

std::vector<uint8_t> encode_compressed_feature(const CompressedFeature& c) {
  ByteWriter w;
  w.u32(c.version);
  w.u32(c.type);
  w.u32(c.level);
  w.u32(c.ratio);
  w.u32(c.mmap_len);
  return w.take();
}

std::optional<CompressedFeature> decode_compressed_feature(
    std::span<const uint8_t> payload) {
  ByteReader c(payload);
  CompressedFeature out;
  out.version = c.u32();
  out.type = c.u32();
  out.level = c.u32();
  out.ratio = c.u32();
  out.mmap_len = c.u32();
  if (!c.ok()) return std::nullopt;
  return out;
}

perf_event_header compressed_record_header(size_t payload_size) {
  perf_event_header h{};
  h.type = kCompressed;
  h.size = static_cast<uint16_t>(sizeof(perf_event_header) + payload_size);
  return h;
}

std::optional<std::pair<uint64_t, std::string>> decode_event_update_name(
    std::span<const uint8_t> body) {
  // u64 type, u64 id, then a type-specific payload (NAME: a string).
  ByteReader c(body);
  uint64_t type = c.u64();
  uint64_t id = c.u64();
  if (!c.ok() || type != kEventUpdateName) return std::nullopt;
  return std::make_pair(id, bounded_string(body.subspan(16)));
}

uint64_t out_of_band_payload(uint32_t type, std::span<const uint8_t> body) {
  ByteReader c(body);
  if (type == kHeaderTracingData) {
    uint64_t n = c.u32();
    return c.ok() ? (n + 7) & ~uint64_t{7} : 0;
  }
  if (type == kAuxtrace) {
    uint64_t n = c.u64();
    return c.ok() ? n : 0;
  }
  return 0;
}

FeatureBuilder& FeatureBuilder::add_u32(uint32_t value) {
  out_.u32(value);
  return *this;
}

FeatureBuilder& FeatureBuilder::add_u64(uint64_t value) {
  out_.u64(value);
  return *this;
}

FeatureBuilder& FeatureBuilder::add_string(const std::string& value) {
  const uint32_t len = static_cast<uint32_t>(
      (value.size() + 1 + kStringAlign - 1) / kStringAlign * kStringAlign);
  out_.u32(len);
  out_.bytes(value);
  out_.zeros(len - value.size());
  return *this;
}

FeatureBuilder& FeatureBuilder::add_bytes(const void* data, size_t size) {
  out_.bytes(as_bytes(data, size));
  return *this;
}

FeatureBuilder& FeatureBuilder::align() {
  out_.align(8);
  return *this;
}

std::vector<uint8_t> encode_event_desc(std::span<const EventDesc> events) {
  FeatureBuilder desc;
  desc.add_u32(static_cast<uint32_t>(events.size())).add_u32(kAttrSize);
  for (const EventDesc& event : events) {
    desc.add_bytes(&event.attr, kAttrSize)
        .add_u32(static_cast<uint32_t>(event.ids.size()))
        .add_string(event.name)
        .add_bytes(event.ids.data(), event.ids.size() * sizeof(uint64_t));
  }
  return desc.bytes();
}

std::vector<std::pair<uint64_t, std::string>> decode_event_desc(
    std::span<const uint8_t> payload) {
  std::vector<std::pair<uint64_t, std::string>> out;
  ByteReader c(payload);
  uint32_t nr = c.u32();
  uint32_t attr_size = c.u32();
  for (uint32_t i = 0; i < nr && c.ok(); ++i) {
    c.skip(attr_size);
    uint32_t nr_ids = c.u32();
    uint32_t len = c.u32();
    const uint8_t* str = c.take(len);
    if (!c.fits(nr_ids, 8)) break;
    std::string name = str != nullptr ? bounded_string({str, len}) : "";
    for (uint32_t k = 0; k < nr_ids; ++k) out.emplace_back(c.u64(), name);
  }
  return out;
}

}  // namespace runner::format::perf
