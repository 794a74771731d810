#include "perfdata/pipedata_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>

#include "base/base.hpp"
#include "perfdata/record_inflater.hpp"

namespace runner::perfdata {
namespace {

namespace pf = format::perf;

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

}  // namespace

struct PipedataReader::Impl {
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
  bool in_memory = false;  // open_memory: data holds the whole stream
  uint64_t file_size = 0;
  // Shared: a caller may keep a window alive past the reader's next move
  // (last_stack_owner) to read a stack copy where it lies.
  std::shared_ptr<const base::MappedRegion> window;
  const uint8_t* data = nullptr;  // buf.get() or the window
  size_t begin = 0, end = 0;      // unread bytes are data[begin, end)
  uint64_t offset = 0;            // file offset of data[begin]
  bool eof = false;               // read() returned 0
  bool done = false;              // end reached or stream broken: next() = end
  bool copy_stack = true;         // fill SampleRecord::stack
  // The last sample's stack copy inside `buf` (valid until the next read).
  std::span<const uint8_t> last_stack;
  // Whether the last record lies in the mapped window (not in the
  // inflater's buffer, which the next COMPRESSED record overwrites).
  bool last_in_window = false;

  // Stable storage: SampleRecord::attr points here and must survive later
  // HEADER_ATTR records; `attrs` is the contiguous copy attrs() returns.
  std::deque<EventAttr> stable_attrs;
  std::vector<EventAttr> attrs;
  std::vector<AttrState> states;
  std::unordered_map<uint64_t, size_t> index_by_id;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> features;
  ReaderStats stats;
  // PERF_RECORD_COMPRESSED: the stream's decoder and the offset of the last
  // COMPRESSED record (errors name it).
  RecordInflater inflater;
  uint64_t compressed_offset = 0;
  uint64_t delivered_offset = 0;  // of the record last delivered

  base::Error fail(std::string message) {
    done = true;
    return base::Error(path + ": " + message);
  }

  // Makes at least `need` (<= buf_size) bytes available; returns how many
  // are (fewer only at end of file).
  base::Result<size_t> fill(size_t need) {
    if (end - begin >= need || in_memory) return end - begin;
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
    window.reset();  // unmap the old window first (unless a caller keeps it)
    auto region = base::MappedRegion::map(fd.get(), static_cast<size_t>(length),
                                          PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                                          static_cast<off_t>(start));
    if (!region) {
      done = true;
      return std::move(region).error().context("mmap " + path);
    }
    window = std::make_shared<const base::MappedRegion>(std::move(*region));
    ::madvise(const_cast<uint8_t*>(window->bytes().data()), window->size(),
              MADV_SEQUENTIAL);
    data = window->bytes().data();
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
  const AttrState* attr_for_sample(std::span<const uint8_t> body) const {
    if (states.empty()) return nullptr;
    if (states.size() == 1) return &states[0];
    auto word = pf::sample_id_word(states[0].attr->attr.sample_type);
    if (!word) return all_same_sample_type() ? &states[0] : nullptr;
    if (body.size() < (*word + 1) * 8) return nullptr;
    return state_for_id(format::load_le(body, *word * 8, 8));
  }

  // Same for the sample_id_all trailer of other kernel records, which keeps
  // IDENTIFIER last so it can be found from the end.
  const AttrState* attr_for_trailer(std::span<const uint8_t> body) const {
    if (states.empty()) return nullptr;
    if (states.size() == 1) return &states[0];
    const perf_event_attr& first = states[0].attr->attr;
    auto from_end = pf::trailer_id_word_from_end(first.sample_type);
    if (!from_end) return all_same_sample_type() ? &states[0] : nullptr;
    if (!first.sample_id_all || body.size() < *from_end * 8) return nullptr;
    return state_for_id(format::load_le(body, body.size() - *from_end * 8, 8));
  }

  bool all_same_sample_type() const {
    for (const AttrState& s : states)
      if (s.attr->attr.sample_type != states[0].attr->attr.sample_type ||
          s.attr->attr.sample_id_all != states[0].attr->attr.sample_id_all)
        return false;
    return true;
  }

  // Splits the sample_id_all trailer off the end of a kernel record's
  // `body` (after its fixed fields) and decodes it into *out; *rest is the
  // body without it. False when the record is too short for either.
  bool split_trailer(uint32_t type, std::span<const uint8_t> body,
                     SampleId* out, std::span<const uint8_t>* rest) const {
    const size_t fixed = pf::fixed_size(type);
    *rest = body;
    if (body.size() < fixed) return false;
    const AttrState* state = attr_for_trailer(body);
    if (state == nullptr || !state->attr->attr.sample_id_all) return true;
    const uint64_t st = state->attr->attr.sample_type;
    const size_t n = pf::sample_id_size(st);
    if (n > body.size() - fixed) return false;
    *rest = body.first(body.size() - n);
    return pf::decode_sample_id(body.last(n), st, out);
  }

  void set_name_for_id(uint64_t id, const std::string& name) {
    auto it = index_by_id.find(id);
    if (it == index_by_id.end() || name.empty()) return;
    stable_attrs[it->second].name = name;
    attrs[it->second].name = name;
  }

  // HEADER_ATTR: the attr and the ids of the event's fds.
  bool add_attr(std::span<const uint8_t> body) {
    std::optional<EventAttr> ea = pf::decode_attr_record(body);
    if (!ea) return false;
    size_t index = stable_attrs.size();
    for (uint64_t id : ea->ids) index_by_id.emplace(id, index);
    stable_attrs.push_back(*ea);
    attrs.push_back(std::move(*ea));
    AttrState state;
    state.attr = &stable_attrs.back();
    state.sample_supported =
        pf::sample_type_supported(state.attr->attr.sample_type);
    states.push_back(state);
    return true;
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

  // Decodes one whole record at `rec` (header included). Returns false for
  // a record that is skipped (malformed, unknown sample identifier).
  bool decode(const perf_event_header& h, const uint8_t* rec, Record* r) {
    std::span<const uint8_t> body(rec + kHeaderSize, h.size - kHeaderSize);
    r->type = h.type;
    r->misc = h.misc;
    bool ok = true;
    switch (h.type) {
      case PERF_RECORD_SAMPLE:
        return decode_sample(h, body, r);
      case PERF_RECORD_MMAP:
      case PERF_RECORD_MMAP2:
      case PERF_RECORD_COMM:
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT:
      case PERF_RECORD_LOST:
        ok = decode_side_band(h, body, r);
        break;
      case pf::kFinishedRound:
        r->kind = RecordKind::kFinishedRound;
        break;
      case pf::kHeaderAttr:
        ok = add_attr(body);
        keep_raw(RecordKind::kAttr, rec, h, r);
        break;
      case pf::kHeaderFeature:
        ok = add_feature(body);
        keep_raw(RecordKind::kFeature, rec, h, r);
        break;
      case pf::kEventUpdate:
        if (auto named = pf::decode_event_update_name(body))
          set_name_for_id(named->first, named->second);
        keep_raw(RecordKind::kOther, rec, h, r);
        break;
      default:
        keep_raw(RecordKind::kOther, rec, h, r);
        break;
    }
    if (!ok) ++stats.malformed_records;
    return ok;
  }

  static void keep_raw(RecordKind kind, const uint8_t* rec,
                       const perf_event_header& h, Record* r) {
    r->kind = kind;
    r->raw.assign(rec, rec + h.size);
  }

  // A SAMPLE, decoded with the layout of the attr its identifier names.
  bool decode_sample(const perf_event_header& h, std::span<const uint8_t> body,
                     Record* r) {
    const AttrState* state = attr_for_sample(body);
    if (state == nullptr) {
      ++stats.unknown_id_samples;
      return false;
    }
    r->kind = RecordKind::kSample;
    r->sample.misc = h.misc;
    r->sample.attr = state->attr;
    if (!state->sample_supported ||
        !pf::decode_sample(body, state->attr->attr, copy_stack, &r->sample,
                           &last_stack)) {
      ++stats.malformed_records;
      return false;
    }
    ++stats.samples;
    return true;
  }

  // MMAP/MMAP2, COMM, FORK/EXIT and LOST: fixed fields, then (with
  // sample_id_all) the trailer.
  bool decode_side_band(const perf_event_header& h,
                        std::span<const uint8_t> body, Record* r) {
    std::span<const uint8_t> rest;
    switch (h.type) {
      case PERF_RECORD_MMAP:
      case PERF_RECORD_MMAP2:
        r->kind = RecordKind::kMmap2;
        return split_trailer(h.type, body, &r->mmap.sample_id, &rest) &&
               pf::decode_mmap(h.type, h.misc, rest, &r->mmap);
      case PERF_RECORD_COMM:
        r->kind = RecordKind::kComm;
        return split_trailer(h.type, body, &r->comm.sample_id, &rest) &&
               pf::decode_comm(h.misc, rest, &r->comm);
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT:
        r->kind = RecordKind::kTask;
        return split_trailer(h.type, body, &r->task.sample_id, &rest) &&
               pf::decode_task(h.type, rest, &r->task);
      default:
        r->kind = RecordKind::kLost;
        return split_trailer(h.type, body, &r->lost.sample_id, &rest) &&
               pf::decode_lost(rest, &r->lost);
    }
  }

  // HEADER_FEATURE: kept for features() (up to kMaxKeptFeatures); the
  // EVENT_DESC feature names the attrs.
  bool add_feature(std::span<const uint8_t> body) {
    if (body.size() < 8) return false;
    const uint64_t feat = format::load_le(body, 0, 8);
    std::span<const uint8_t> payload = body.subspan(8);
    if (feat == pf::kFeatEventDesc)
      for (const auto& [id, name] : pf::decode_event_desc(payload))
        set_name_for_id(id, name);
    if (feat == pf::kFeatCompressed) {
      auto compressed = pf::decode_compressed_feature(payload);
      if (!compressed) return false;
      inflater.configure(*compressed);
    }
    if (features.size() < kMaxKeptFeatures)
      features.emplace_back(
          feat, std::vector<uint8_t>(payload.begin(), payload.end()));
    else
      ++stats.dropped_features;
    return true;
  }

  // Decodes the next kept record into `record`, reusing its vectors'
  // capacity. False at a clean end of file.
  base::Result<bool> next_into(Record& record) {
    last_stack = {};
    last_in_window = false;
    while (!done) {
      auto inner = next_inner_record();
      if (!inner) return std::move(inner).error();
      if (!inner->empty()) {
        if (deliver(*inner, record)) return true;
        continue;
      }
      auto header = next_header();
      if (!header) return std::move(header).error();
      if (!*header) return end_of_stream();
      if ((*header)->type == pf::kCompressed) {
        if (auto st = inflate(**header); !st) return std::move(st).error();
        continue;
      }
      reset(&record);
      delivered_offset = offset;
      bool keep = decode(**header, data + begin, &record);
      last_in_window = mapped;
      if (auto st = consume_record(**header); !st) return std::move(st).error();
      ++stats.records;
      if (keep) return true;
    }
    return false;
  }

  // A record decoded out of COMPRESSED ones, delivered as if it had been
  // in the file: true when it is kept.
  bool deliver(std::span<const uint8_t> rec, Record& record) {
    delivered_offset = compressed_offset;
    perf_event_header h;
    std::memcpy(&h, rec.data(), kHeaderSize);
    reset(&record);
    const bool keep = decode(h, rec.data(), &record);
    ++stats.records;
    return keep;
  }

  // The next whole record of the decoded stream, empty when none is left.
  base::Result<std::span<const uint8_t>> next_inner_record() {
    auto rec = inflater.next_record();
    if (!rec) return inner_error(std::move(rec).error().what());
    if (rec->empty()) return *rec;
    perf_event_header h;
    std::memcpy(&h, rec->data(), kHeaderSize);
    if (pf::out_of_band_payload(h.type, rec->subspan(kHeaderSize)) > 0)
      return inner_error("record of type " + std::to_string(h.type) +
                         " (payload after it) inside compressed data");
    return *rec;
  }

  base::Error inner_error(const std::string& why) {
    stats.undecoded_compressed_bytes += inflater.pending();
    return fail("compressed data of the record at offset " +
                std::to_string(compressed_offset) + ": " + why);
  }

  // PERF_RECORD_COMPRESSED: its payload is decoded after what is left of
  // the previous ones.
  base::Status inflate(const perf_event_header& h) {
    compressed_offset = offset;
    std::span<const uint8_t> payload(data + begin + kHeaderSize,
                                     h.size - kHeaderSize);
    ++stats.compressed_records;
    if (auto st = inflater.inflate(payload); !st) {
      stats.undecoded_compressed_bytes += payload.size();
      return fail("record at offset " + std::to_string(offset) + ": " +
                  st.error().what());
    }
    stats.decompressed_bytes = inflater.decompressed_bytes();
    consume(h.size);
    ++stats.records;
    return {};
  }

  // End of file: clean unless the compressed data stopped inside a record.
  base::Result<bool> end_of_stream() {
    if (inflater.pending() == 0) return false;
    stats.undecoded_compressed_bytes += inflater.pending();
    return fail("compressed data ends inside a record (" +
                std::to_string(inflater.pending()) +
                " bytes decoded after the record at offset " +
                std::to_string(compressed_offset) + ")");
  }

  // The header of the next record once the whole record is buffered;
  // nullopt at a clean end of file, an Error for a broken stream.
  base::Result<std::optional<perf_event_header>> next_header() {
    auto avail = fill(kHeaderSize);
    if (!avail) return std::move(avail).error();
    if (*avail == 0) {
      done = true;
      return std::optional<perf_event_header>();
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
    avail = fill(h.size);
    if (!avail) return std::move(avail).error();
    if (*avail < h.size)
      return fail("truncated record at offset " + std::to_string(offset) +
                  " (type " + std::to_string(h.type) + ", " +
                  std::to_string(*avail) + " of " + std::to_string(h.size) +
                  " bytes)");
    return std::optional<perf_event_header>(h);
  }

  // Moves past the record just decoded and past the payload some records
  // have outside of header.size (HEADER_TRACING_DATA, AUXTRACE).
  base::Status consume_record(const perf_event_header& h) {
    const uint64_t extra = pf::out_of_band_payload(
        h.type, std::span<const uint8_t>(data + begin + kHeaderSize,
                                         h.size - kHeaderSize));
    const uint64_t record_offset = offset;
    consume(h.size);
    if (extra > kMaxOutOfBandPayload)
      return fail("impossible payload size " + std::to_string(extra) +
                  " after record at offset " + std::to_string(record_offset));
    if (extra > 0) return skip_stream(extra);
    return {};
  }
};

base::Result<PipedataReader> PipedataReader::open(const std::string& path,
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
  if (auto header = pf::check_pipe_header({p, *avail}); !header)
    return std::move(header).error().context(path);
  impl->consume(pf::kPipeHeaderSize);
  return PipedataReader(std::move(impl));
}

base::Result<PipedataReader> PipedataReader::open_memory(
    std::span<const uint8_t> stream, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->path = name;
  impl->in_memory = true;
  impl->eof = true;
  impl->data = stream.data();
  impl->end = stream.size();
  if (stream.empty()) return base::Error(name + ": empty, not a perf.data");
  if (auto header = pf::check_pipe_header(stream); !header)
    return std::move(header).error().context(name);
  impl->consume(pf::kPipeHeaderSize);
  return PipedataReader(std::move(impl));
}

PipedataReader::PipedataReader(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PipedataReader::PipedataReader(PipedataReader&&) noexcept = default;
PipedataReader& PipedataReader::operator=(PipedataReader&&) noexcept = default;
PipedataReader::~PipedataReader() = default;

base::Result<std::optional<Record>> PipedataReader::next() {
  impl_->copy_stack = true;
  Record record;
  base::Result<bool> more = impl_->next_into(record);
  if (!more) return std::move(more).error();
  if (!*more) return std::optional<Record>();
  return std::optional<Record>(std::move(record));
}

base::Result<bool> PipedataReader::next_into(Record& record, bool copy_stack) {
  impl_->copy_stack = copy_stack;
  return impl_->next_into(record);
}

std::span<const uint8_t> PipedataReader::last_stack() const {
  return impl_->last_stack;
}

std::shared_ptr<const void> PipedataReader::last_stack_owner() const {
  if (!impl_->last_in_window || impl_->last_stack.empty()) return nullptr;
  return impl_->window;
}

uint64_t PipedataReader::record_offset() const {
  return impl_->delivered_offset;
}

const std::vector<EventAttr>& PipedataReader::attrs() const {
  return impl_->attrs;
}

const EventAttr* PipedataReader::attr_for_id(uint64_t id) const {
  const Impl::AttrState* state = impl_->state_for_id(id);
  return state != nullptr ? state->attr : nullptr;
}

const ReaderStats& PipedataReader::stats() const { return impl_->stats; }

const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>&
PipedataReader::features() const {
  return impl_->features;
}

}  // namespace runner::perfdata
