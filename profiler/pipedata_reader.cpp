#include "profiler/pipedata_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>

#include "base/mapped_region.hpp"
#include "base/unique_fd.hpp"
#include "profiler/perf_format.hpp"

namespace runner::profiler {
namespace {

namespace pf = perf_format;

// Records are read through a buffer of one chunk plus room for the largest
// record (perf_event_header.size is a u16), so a record never has to be
// assembled from more than one read and memory stays bounded.
constexpr size_t kChunkSize = size_t{1} << 20;
constexpr size_t kMaxRecordSize = 0xffff;
// Regular files are read through a sliding read-only mapping of this many
// bytes (plus room for one record) instead: no copy out of the page cache,
// and resident memory stays bounded because old windows are unmapped.
constexpr size_t kWindowSize = size_t{2} << 20;
constexpr size_t kHeaderSize = sizeof(perf_event_header);
// HEADER_TRACING_DATA and AUXTRACE are followed by a payload that is not
// counted in header.size; it is skipped without buffering, but a size beyond
// this is taken as corruption rather than a reason to read gigabytes.
constexpr uint64_t kMaxOutOfBandPayload = uint64_t{1} << 30;
// Feature payloads are kept for features(); a file with absurdly many of them
// would otherwise grow memory with its size.
constexpr size_t kMaxKeptFeatures = 256;

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

// Bounds-checked little reader over one record. A read past the end marks
// the cursor failed and yields zeros; callers check ok() once at the end and
// check sizes before allocating from a count read from the file.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint64_t u64() { return read<uint64_t>(); }
  uint32_t u32() { return read<uint32_t>(); }
  uint8_t u8() { return read<uint8_t>(); }

  // Whether `count` items of `item_size` bytes fit in what is left.
  bool fits(uint64_t count, uint64_t item_size) const {
    return ok_ && (item_size == 0 || count <= remaining() / item_size);
  }
  const uint8_t* take(uint64_t n) {
    if (!ok_ || n > remaining()) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  bool skip(uint64_t n) { return take(n) != nullptr || n == 0; }
  bool skip_array(uint64_t count, uint64_t item_size) {
    if (!fits(count, item_size)) {
      ok_ = false;
      return false;
    }
    pos_ += count * item_size;
    return true;
  }

  size_t remaining() const { return size_ - pos_; }
  size_t pos() const { return pos_; }
  bool ok() const { return ok_; }
  void fail() { ok_ = false; }

 private:
  template <typename T>
  T read() {
    T value{};
    if (!ok_ || remaining() < sizeof(T)) {
      ok_ = false;
      return value;
    }
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// A NUL-terminated string inside [p, p + n): the bytes before the first NUL
// (all of them when there is none, as a damaged record would have).
std::string bounded_string(const uint8_t* p, size_t n) {
  const void* nul = std::memchr(p, 0, n);
  size_t len = nul != nullptr
                   ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - p)
                   : n;
  return std::string(reinterpret_cast<const char*>(p), len);
}

int popcount64(uint64_t v) { return std::popcount(v); }

// Walks a PERF_SAMPLE_READ value (layout from read_format).
void skip_read_value(Cursor& c, uint64_t read_format) {
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

}  // namespace

struct PipeDataReader::Impl {
  // Per-attr decoding facts, kept next to the stable EventAttr.
  struct AttrState {
    EventAttr* attr = nullptr;     // element of stable_attrs
    bool sample_supported = true;  // no sample_type bit we cannot walk
  };

  base::UniqueFd fd;
  std::string path;
  // Not a vector: a fresh reader should not zero 1 MiB it may never use.
  std::unique_ptr<uint8_t[]> buf;
  size_t buf_size = 0;
  // Regular files: the current window of the file, mapped.
  bool mapped = false;
  uint64_t file_size = 0;
  base::MappedRegion window;
  const uint8_t* data = nullptr;  // buf.get() or the window
  size_t begin = 0, end = 0;      // unread bytes are data[begin, end)
  uint64_t offset = 0;            // file offset of data[begin]
  bool eof = false;               // read() returned 0
  bool done = false;              // end reached or stream broken: next() = end
  bool copy_stack = true;         // fill SampleRecord::stack
  // The last sample's stack copy inside `buf` (valid until the next read).
  std::span<const uint8_t> last_stack;

  // Stable storage: SampleRecord::attr points here and must survive later
  // HEADER_ATTR records; `attrs` is the contiguous copy attrs() returns.
  std::deque<EventAttr> stable_attrs;
  std::vector<EventAttr> attrs;
  std::vector<AttrState> states;
  std::unordered_map<uint64_t, size_t> index_by_id;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> features;
  ReaderStats stats;

  base::Error fail(std::string message) {
    done = true;
    return base::Error(path + ": " + message);
  }

  // Makes at least `need` (<= buf_size) bytes available; returns how many
  // are (fewer only at end of file).
  base::Result<size_t> fill(size_t need) {
    if (end - begin >= need) return end - begin;
    if (mapped) return fill_window();
    if (begin > 0) {
      std::memmove(buf.get(), data + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    while (end < need && !eof) {
      ssize_t n = ::read(fd.get(), buf.get() + end, buf_size - end);
      if (n < 0) {
        if (errno == EINTR) continue;
        done = true;
        return base::errno_error("read " + path);
      }
      if (n == 0) {
        eof = true;
        break;
      }
      end += static_cast<size_t>(n);
    }
    return end - begin;
  }

  // Maps the window that starts at the page holding `offset`.
  base::Result<size_t> fill_window() {
    if (eof || offset >= file_size) {
      eof = true;
      return end - begin;
    }
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset & ~(page - 1);
    const uint64_t length = std::min<uint64_t>(
        file_size - start, kWindowSize + kMaxRecordSize + page);
    window = base::MappedRegion();  // unmap the old window first
    auto region = base::MappedRegion::map(fd.get(), static_cast<size_t>(length),
                                          PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                                          static_cast<off_t>(start));
    if (!region) {
      done = true;
      return std::move(region).error().context("mmap " + path);
    }
    window = std::move(*region);
    ::madvise(const_cast<uint8_t*>(window.bytes().data()), window.size(),
              MADV_SEQUENTIAL);
    data = window.bytes().data();
    begin = static_cast<size_t>(offset - start);
    end = static_cast<size_t>(length);
    if (start + length >= file_size) eof = true;
    return end - begin;
  }

  void consume(size_t n) {
    begin += n;
    offset += n;
    stats.bytes += n;
  }

  // Skips `n` bytes that follow a record outside of its header.size.
  base::Status skip_stream(uint64_t n) {
    while (n > 0) {
      if (begin == end) {
        auto avail = fill(1);
        if (!avail) return std::move(avail).error();
        if (*avail == 0)
          return fail("truncated payload at offset " + std::to_string(offset) +
                      " (" + std::to_string(n) + " bytes missing)");
      }
      size_t step = static_cast<size_t>(
          std::min<uint64_t>(n, static_cast<uint64_t>(end - begin)));
      consume(step);
      n -= step;
    }
    return {};
  }

  const AttrState* state_for_index(size_t i) const {
    return i < states.size() ? &states[i] : nullptr;
  }
  const AttrState* state_for_id(uint64_t id) const {
    auto it = index_by_id.find(id);
    return it == index_by_id.end() ? nullptr : state_for_index(it->second);
  }

  // Which attr a SAMPLE belongs to. perf requires every attr of a file to
  // put the identifier at the same place, so the first attr's layout tells
  // where to look; a single attr needs no identifier at all.
  const AttrState* attr_for_sample(const uint8_t* body, size_t size) const {
    if (states.empty()) return nullptr;
    if (states.size() == 1) return &states[0];
    uint64_t st = states[0].attr->attr.sample_type;
    size_t pos;
    if (st & PERF_SAMPLE_IDENTIFIER) {
      pos = 0;
    } else if (st & PERF_SAMPLE_ID) {
      pos = static_cast<size_t>(
          popcount64(st & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                           PERF_SAMPLE_ADDR)));
    } else {
      return all_same_sample_type() ? &states[0] : nullptr;
    }
    if (size < (pos + 1) * 8) return nullptr;
    uint64_t id;
    std::memcpy(&id, body + pos * 8, 8);
    return state_for_id(id);
  }

  // Same for the sample_id_all trailer of other kernel records, which keeps
  // IDENTIFIER last so it can be found from the end.
  const AttrState* attr_for_trailer(const uint8_t* body, size_t size) const {
    if (states.empty()) return nullptr;
    if (states.size() == 1) return &states[0];
    uint64_t st = states[0].attr->attr.sample_type;
    size_t from_end;
    if (st & PERF_SAMPLE_IDENTIFIER) {
      from_end = 1;
    } else if (st & PERF_SAMPLE_ID) {
      from_end = 1 + static_cast<size_t>(popcount64(
                         st & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU)));
    } else {
      return all_same_sample_type() ? &states[0] : nullptr;
    }
    if (!states[0].attr->attr.sample_id_all || size < from_end * 8)
      return nullptr;
    uint64_t id;
    std::memcpy(&id, body + size - from_end * 8, 8);
    return state_for_id(id);
  }

  bool all_same_sample_type() const {
    for (const AttrState& s : states)
      if (s.attr->attr.sample_type != states[0].attr->attr.sample_type ||
          s.attr->attr.sample_id_all != states[0].attr->attr.sample_id_all)
        return false;
    return true;
  }

  // Decodes the sample_id_all trailer at the end of `body` (after `fixed`
  // bytes of record-specific fields). Sets *trailer to its size so the
  // caller knows where variable-length strings end.
  bool decode_trailer(const uint8_t* body, size_t size, size_t fixed,
                      SampleId* out, size_t* trailer) const {
    *trailer = 0;
    if (size < fixed) return false;
    const AttrState* state = attr_for_trailer(body, size);
    if (state == nullptr || !state->attr->attr.sample_id_all) return true;
    uint64_t st = state->attr->attr.sample_type;
    size_t n = static_cast<size_t>(popcount64(st & kSampleIdBits)) * 8;
    if (n > size - fixed) return false;
    Cursor c(body + size - n, n);
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
    *trailer = n;
    return c.ok();
  }

  // Walks a SAMPLE in the kernel's output order (perf_output_sample).
  // The stack copy is always returned in *stack_view (pointing into `body`);
  // it is also copied into s->stack when copy_stack is set.
  static bool decode_sample(const uint8_t* body, size_t size,
                            const perf_event_attr& attr, bool copy_stack,
                            SampleRecord* s,
                            std::span<const uint8_t>* stack_view) {
    Cursor c(body, size);
    uint64_t st = attr.sample_type;
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
    if (st & PERF_SAMPLE_READ) skip_read_value(c, attr.read_format);
    if (st & PERF_SAMPLE_CALLCHAIN) {
      uint64_t nr = c.u64();
      if (!c.fits(nr, 8)) return false;
      s->callchain.resize(static_cast<size_t>(nr));
      if (nr > 0) std::memcpy(s->callchain.data(), c.take(nr * 8), nr * 8);
    }
    if (st & PERF_SAMPLE_RAW) {
      // u32 size + data; the kernel pads data so the pair ends u64-aligned.
      uint32_t raw_size = c.u32();
      c.skip(raw_size);
    }
    if (st & PERF_SAMPLE_BRANCH_STACK) {
      uint64_t bnr = c.u64();
      if (attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) c.u64();
      c.skip_array(bnr, sizeof(perf_branch_entry));
      if (attr.branch_sample_type & kBranchSampleCounters) c.skip_array(bnr, 8);
    }
    s->regs_mask = attr.sample_regs_user;
    if (st & PERF_SAMPLE_REGS_USER) {
      s->regs_abi = c.u64();
      if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
        size_t n = static_cast<size_t>(popcount64(attr.sample_regs_user));
        if (!c.fits(n, 8)) return false;
        s->regs.resize(n);
        if (n > 0) std::memcpy(s->regs.data(), c.take(n * 8), n * 8);
      }
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
    if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
      s->weight = c.u64();
    if (st & PERF_SAMPLE_DATA_SRC) s->data_src = c.u64();
    if (st & PERF_SAMPLE_TRANSACTION) c.u64();
    if (st & PERF_SAMPLE_REGS_INTR) {
      uint64_t abi = c.u64();
      if (abi != PERF_SAMPLE_REGS_ABI_NONE)
        c.skip_array(static_cast<uint64_t>(popcount64(attr.sample_regs_intr)),
                     8);
    }
    if (st & PERF_SAMPLE_PHYS_ADDR) c.u64();
    if (st & PERF_SAMPLE_CGROUP) c.u64();
    if (st & PERF_SAMPLE_DATA_PAGE_SIZE) c.u64();
    if (st & PERF_SAMPLE_CODE_PAGE_SIZE) c.u64();
    if (st & PERF_SAMPLE_AUX) {
      uint64_t aux_size = c.u64();
      c.skip(aux_size);
    }
    // Every byte must be accounted for: leftovers mean the layout we walked
    // is not the one the kernel wrote.
    return c.ok() && c.remaining() == 0;
  }

  void set_name_for_id(uint64_t id, const std::string& name) {
    auto it = index_by_id.find(id);
    if (it == index_by_id.end() || name.empty()) return;
    stable_attrs[it->second].name = name;
    attrs[it->second].name = name;
  }

  // HEADER_ATTR: perf_event_attr (its own size field) + the ids of the
  // event's fds, which fill the rest of the record. The ids start at
  // attr.size (kernel ABI, newer perf); perf 6.1 itself looks at its own
  // sizeof(perf_event_attr) = 128, which agrees for the 128-byte attrs that
  // perf 6.1 and our writer emit.
  bool add_attr(const uint8_t* body, size_t size) {
    if (size < 8) return false;
    uint32_t attr_size;
    std::memcpy(&attr_size, body + 4, 4);
    if (attr_size == 0) attr_size = PERF_ATTR_SIZE_VER0;
    if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > size) return false;
    EventAttr ea;
    std::memcpy(&ea.attr, body,
                std::min<size_t>(attr_size, sizeof(perf_event_attr)));
    size_t nids = (size - attr_size) / 8;
    ea.ids.resize(nids);
    if (nids > 0) std::memcpy(ea.ids.data(), body + attr_size, nids * 8);
    size_t index = stable_attrs.size();
    for (uint64_t id : ea.ids) index_by_id.emplace(id, index);
    stable_attrs.push_back(ea);
    attrs.push_back(std::move(ea));
    AttrState state;
    state.attr = &stable_attrs.back();
    state.sample_supported =
        (state.attr->attr.sample_type & ~kKnownSampleBits) == 0;
    states.push_back(state);
    return true;
  }

  // HEADER_FEATURE EVENT_DESC: u32 nr, u32 attr_size, then per event the
  // attr, u32 nr_ids, a perf string (u32 len incl. padding + bytes) and the
  // ids. Only the names are taken; the attrs came with HEADER_ATTR.
  void apply_event_desc(const uint8_t* p, size_t n) {
    Cursor c(p, n);
    uint32_t nr = c.u32();
    uint32_t attr_size = c.u32();
    for (uint32_t i = 0; i < nr && c.ok(); ++i) {
      c.skip(attr_size);
      uint32_t nr_ids = c.u32();
      uint32_t len = c.u32();
      const uint8_t* str = c.take(len);
      if (!c.fits(nr_ids, 8)) return;
      std::string name = str != nullptr ? bounded_string(str, len) : "";
      for (uint32_t k = 0; k < nr_ids; ++k) set_name_for_id(c.u64(), name);
    }
  }

  // Back to a default Record, keeping the capacity of the sample's vectors
  // (a report reads millions of samples through one Record).
  static void reset(Record* r) {
    std::vector<uint64_t> callchain = std::move(r->sample.callchain);
    std::vector<uint64_t> regs = std::move(r->sample.regs);
    std::vector<uint8_t> stack = std::move(r->sample.stack);
    std::vector<uint8_t> raw = std::move(r->raw);
    *r = Record{};
    callchain.clear();
    regs.clear();
    stack.clear();
    raw.clear();
    r->sample.callchain = std::move(callchain);
    r->sample.regs = std::move(regs);
    r->sample.stack = std::move(stack);
    r->raw = std::move(raw);
  }

  // Decodes one whole record at buf[begin, begin + size). Returns false for
  // a record that is skipped (malformed, unknown sample identifier).
  bool decode(const perf_event_header& h, const uint8_t* rec, Record* r) {
    const uint8_t* body = rec + kHeaderSize;
    size_t size = h.size - kHeaderSize;
    r->type = h.type;
    r->misc = h.misc;
    size_t trailer = 0;
    switch (h.type) {
      case PERF_RECORD_SAMPLE: {
        const AttrState* state = attr_for_sample(body, size);
        if (state == nullptr) {
          ++stats.unknown_id_samples;
          return false;
        }
        if (!state->sample_supported) {
          ++stats.malformed_records;
          return false;
        }
        r->kind = RecordKind::kSample;
        r->sample.misc = h.misc;
        r->sample.attr = state->attr;
        if (!decode_sample(body, size, state->attr->attr, copy_stack,
                           &r->sample, &last_stack)) {
          ++stats.malformed_records;
          return false;
        }
        ++stats.samples;
        return true;
      }
      case PERF_RECORD_MMAP:
      case PERF_RECORD_MMAP2: {
        bool is2 = h.type == PERF_RECORD_MMAP2;
        size_t fixed = is2 ? 64 : 32;
        Mmap2Record& m = r->mmap;
        if (!decode_trailer(body, size, fixed, &m.sample_id, &trailer)) break;
        Cursor c(body, size);
        m.pid = c.u32();
        m.tid = c.u32();
        m.addr = c.u64();
        m.len = c.u64();
        m.pgoff = c.u64();
        if (is2) {
          if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
            // Same 24 bytes as maj/min/ino/ino_generation: u8 size,
            // 3 reserved bytes, 20 bytes of build id.
            m.has_build_id = true;
            uint8_t id_size = c.u8();
            c.skip(3);
            const uint8_t* id = c.take(20);
            if (id != nullptr)
              m.build_id.assign(id, id + std::min<size_t>(id_size, 20));
          } else {
            m.maj = c.u32();
            m.min = c.u32();
            m.ino = c.u64();
            m.ino_generation = c.u64();
          }
          m.prot = c.u32();
          m.flags = c.u32();
        } else {
          m.prot = (h.misc & PERF_RECORD_MISC_MMAP_DATA)
                       ? PROT_READ
                       : PROT_READ | PROT_EXEC;
        }
        if (!c.ok()) break;
        m.filename = bounded_string(body + fixed, size - fixed - trailer);
        r->kind = RecordKind::kMmap2;
        return true;
      }
      case PERF_RECORD_COMM: {
        CommRecord& cm = r->comm;
        if (!decode_trailer(body, size, 8, &cm.sample_id, &trailer)) break;
        Cursor c(body, size);
        cm.pid = c.u32();
        cm.tid = c.u32();
        cm.comm = bounded_string(body + 8, size - 8 - trailer);
        cm.exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
        r->kind = RecordKind::kComm;
        return true;
      }
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT: {
        TaskRecord& t = r->task;
        if (!decode_trailer(body, size, 24, &t.sample_id, &trailer)) break;
        Cursor c(body, size);
        t.is_exit = h.type == PERF_RECORD_EXIT;
        t.pid = c.u32();
        t.ppid = c.u32();
        t.tid = c.u32();
        t.ptid = c.u32();
        t.time = c.u64();
        r->kind = RecordKind::kTask;
        return true;
      }
      case PERF_RECORD_LOST: {
        LostRecord& l = r->lost;
        if (!decode_trailer(body, size, 16, &l.sample_id, &trailer)) break;
        Cursor c(body, size);
        l.id = c.u64();
        l.lost = c.u64();
        r->kind = RecordKind::kLost;
        return true;
      }
      case pf::kFinishedRound:
        r->kind = RecordKind::kFinishedRound;
        return true;
      case pf::kHeaderAttr:
        if (!add_attr(body, size)) break;
        r->kind = RecordKind::kAttr;
        r->raw.assign(rec, rec + h.size);
        return true;
      case pf::kHeaderFeature: {
        if (size < 8) break;
        uint64_t feat;
        std::memcpy(&feat, body, 8);
        if (feat == pf::kFeatEventDesc) apply_event_desc(body + 8, size - 8);
        if (features.size() < kMaxKeptFeatures)
          features.emplace_back(feat,
                                std::vector<uint8_t>(body + 8, body + size));
        else
          ++stats.dropped_features;
        r->kind = RecordKind::kFeature;
        r->raw.assign(rec, rec + h.size);
        return true;
      }
      case pf::kEventUpdate: {
        // u64 type, u64 id, then a type-specific payload (NAME: a string).
        if (size >= 16) {
          uint64_t type, id;
          std::memcpy(&type, body, 8);
          std::memcpy(&id, body + 8, 8);
          if (type == kEventUpdateName)
            set_name_for_id(id, bounded_string(body + 16, size - 16));
        }
        r->kind = RecordKind::kOther;
        r->raw.assign(rec, rec + h.size);
        return true;
      }
      default:
        r->kind = RecordKind::kOther;
        r->raw.assign(rec, rec + h.size);
        return true;
    }
    ++stats.malformed_records;
    return false;
  }

  // Decodes the next kept record into `record`, reusing its vectors'
  // capacity. False at a clean end of file.
  base::Result<bool> next_into(Record& record) {
    last_stack = {};
    while (!done) {
      auto avail = fill(kHeaderSize);
      if (!avail) return std::move(avail).error();
      if (*avail == 0) {
        done = true;
        return false;
      }
      if (*avail < kHeaderSize)
        return fail("truncated record header at offset " +
                    std::to_string(offset) + " (" + std::to_string(*avail) +
                    " of 8 bytes)");
      perf_event_header h;
      std::memcpy(&h, data + begin, kHeaderSize);
      if (h.size < kHeaderSize)
        return fail("impossible record size " + std::to_string(h.size) +
                    " at offset " + std::to_string(offset) + " (type " +
                    std::to_string(h.type) + ")");
      if (h.type == pf::kCompressed)
        return fail("compressed records (perf -z) are not supported (offset " +
                    std::to_string(offset) + ")");
      avail = fill(h.size);
      if (!avail) return std::move(avail).error();
      if (*avail < h.size)
        return fail("truncated record at offset " + std::to_string(offset) +
                    " (type " + std::to_string(h.type) + ", " +
                    std::to_string(*avail) + " of " + std::to_string(h.size) +
                    " bytes)");

      reset(&record);
      const uint8_t* rec = data + begin;
      bool keep = decode(h, rec, &record);
      // Payloads that follow the record outside of header.size.
      uint64_t extra = 0;
      if (h.type == pf::kHeaderTracingData && h.size >= kHeaderSize + 4) {
        uint32_t n;
        std::memcpy(&n, rec + kHeaderSize, 4);
        extra = (uint64_t{n} + 7) & ~uint64_t{7};
      } else if (h.type == pf::kAuxtrace && h.size >= kHeaderSize + 8) {
        std::memcpy(&extra, rec + kHeaderSize, 8);
      }
      uint64_t record_offset = offset;
      consume(h.size);
      if (extra > kMaxOutOfBandPayload)
        return fail("impossible payload size " + std::to_string(extra) +
                    " after record at offset " + std::to_string(record_offset));
      if (extra > 0) {
        auto skipped = skip_stream(extra);
        if (!skipped) return std::move(skipped).error();
      }
      ++stats.records;
      if (keep) return true;
    }
    return false;
  }
};

base::Result<PipeDataReader> PipeDataReader::open(const std::string& path,
                                                  Source source) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const bool regular_only = source == Source::kRegularFile;
  // O_NONBLOCK: a FIFO planted at the path must not block the open.
  impl->fd.reset(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
                                          (regular_only ? O_NONBLOCK : 0)));
  if (!impl->fd) return base::errno_error("open " + path);
  struct stat st {};
  if (::fstat(impl->fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
    impl->mapped = true;
    impl->file_size = static_cast<uint64_t>(st.st_size);
  } else if (regular_only) {
    return base::Error(path + ": not a regular file; not read");
  } else {
    impl->buf_size = kChunkSize + kMaxRecordSize;
    impl->buf.reset(new uint8_t[impl->buf_size]);
    impl->data = impl->buf.get();
  }
  auto avail = impl->fill(pf::kPipeHeaderSize);
  if (!avail) return std::move(avail).error();
  const uint8_t* p = impl->data + impl->begin;
  if (*avail == 0) return base::Error(path + ": empty file, not a perf.data");
  if (*avail < sizeof(pf::kPipeMagic) ||
      std::memcmp(p, pf::kPipeMagic, sizeof(pf::kPipeMagic)) != 0) {
    if (*avail >= 8 && std::memcmp(p, "2ELIFREP", 8) == 0)
      return base::Error(path +
                         ": perf.data written with the other byte order; not "
                         "supported");
    if (*avail >= 8 && std::memcmp(p, "PERFFILE", 8) == 0)
      return base::Error(path + ": perf.data version 1; not supported");
    return base::Error(path + ": not a perf.data file (bad magic)");
  }
  if (*avail < pf::kPipeHeaderSize)
    return base::Error(path + ": truncated perf.data header (" +
                       std::to_string(*avail) + " bytes)");
  uint64_t header_size;
  std::memcpy(&header_size, p + 8, 8);
  if (header_size != pf::kPipeHeaderSize)
    return base::Error(
        path + ": a perf.data file header (size " +
        std::to_string(header_size) +
        "), not pipe mode: only pipe-mode files (perf record -o -) are read");
  impl->consume(pf::kPipeHeaderSize);
  return PipeDataReader(std::move(impl));
}

PipeDataReader::PipeDataReader(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PipeDataReader::PipeDataReader(PipeDataReader&&) noexcept = default;
PipeDataReader& PipeDataReader::operator=(PipeDataReader&&) noexcept = default;
PipeDataReader::~PipeDataReader() = default;

base::Result<std::optional<Record>> PipeDataReader::next() {
  impl_->copy_stack = true;
  Record record;
  base::Result<bool> more = impl_->next_into(record);
  if (!more) return std::move(more).error();
  if (!*more) return std::optional<Record>();
  return std::optional<Record>(std::move(record));
}

base::Result<bool> PipeDataReader::next_into(Record& record, bool copy_stack) {
  impl_->copy_stack = copy_stack;
  return impl_->next_into(record);
}

std::span<const uint8_t> PipeDataReader::last_stack() const {
  return impl_->last_stack;
}

const std::vector<EventAttr>& PipeDataReader::attrs() const {
  return impl_->attrs;
}

const EventAttr* PipeDataReader::attr_for_id(uint64_t id) const {
  const Impl::AttrState* state = impl_->state_for_id(id);
  return state != nullptr ? state->attr : nullptr;
}

const ReaderStats& PipeDataReader::stats() const { return impl_->stats; }

const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>&
PipeDataReader::features() const {
  return impl_->features;
}

}  // namespace runner::profiler
