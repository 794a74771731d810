// perf.data in pipe mode (what `perf record -o -` emits and what the
// profiler writes as perf.pipedata): the record layouts, each encoded and
// decoded here, used by the profiler's PipedataWriter and by perfdata's
// PipedataReader. Kernel record types come from <linux/perf_event.h>; the
// user-space (perf tool) record types and the pipe header are perf's
// (tools/perf/util/header.h and event.h), which no uapi header carries.
// Every decoder takes the bytes of one record (after its perf_event_header)
// and never reads outside them: a short or inconsistent record is `false`.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/base.hpp"
#include "format/bytes.hpp"

namespace runner::format::perf {

inline constexpr char kPipeMagic[8] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2'};
// Pipe header: magic (8) + size of this header (u64 = 16).
inline constexpr uint64_t kPipeHeaderSize = 16;

// perf 6.1 locates the ids of a HEADER_ATTR record at a fixed offset of
// 8 + sizeof(its own perf_event_attr) = 8 + 128 (PERF_ATTR_SIZE_VER7), not at
// 8 + attr.size, so the writer always writes 128-byte attrs.
inline constexpr uint32_t kAttrSize = 128;
// Strings inside HEADER_FEATURE payloads: u32 length (including the NUL and
// the zero padding) followed by the bytes; we pad to 8.
inline constexpr uint32_t kStringAlign = 8;
// The user register mask `perf record --call-graph dwarf` sets on x86_64:
// AX..SS and R8..R15 (bits 0-11, 16-23), without DS/ES/FS/GS (bits 12-15),
// which the unwinder does not need.
inline constexpr uint64_t kX86_64DwarfRegsMask = 0xff0fffULL;
// The bit of the user stack pointer in sample_regs_user on x86_64
// (PERF_REG_X86_SP of <asm/perf_regs.h>): the stack copy starts there.
inline constexpr unsigned kX86_64RegSp = 7;
// Largest sample_stack_user the kernel accepts (u16 record size minus room
// for the rest of the sample, rounded down to 8).
inline constexpr uint32_t kMaxStackSize = 65528;

// HEADER_BUILD_ID misc bit: the id's length is in its size byte.
inline constexpr uint16_t kMiscBuildIdSize = 1u << 15;

// perf user-space record types (>= PERF_RECORD_USER_TYPE_START = 64).
enum UserRecordType : uint32_t {
  kHeaderAttr = 64,
  kHeaderEventType = 65,
  kHeaderTracingData = 66,
  kHeaderBuildId = 67,
  kFinishedRound = 68,
  kIdIndex = 69,
  kAuxtraceInfo = 70,
  kAuxtrace = 71,
  kAuxtraceError = 72,
  kThreadMap = 73,
  kCpuMap = 74,
  kStatConfig = 75,
  kStat = 76,
  kStatRound = 77,
  kEventUpdate = 78,
  kTimeConv = 79,
  kHeaderFeature = 80,
  kCompressed = 81,
  kFinishedInit = 82,
};

// HEADER_FEATURE ids (enum feature in perf's header.h).
enum FeatureId : uint64_t {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockId = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
};

// ---- decoded records (what the reader hands out)
// -----------------------------

struct EventAttr {
  perf_event_attr attr{};  // copied, zero-extended to sizeof(perf_event_attr)
  std::vector<uint64_t> ids;
  std::string name;  // from HEADER_EVENT_DESC when present, else ""
};

// Fields present in every record when sample_id_all is set (and in samples).
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
};

struct SampleRecord {
  uint64_t id = 0;  // identifier (0 when the layout has none)
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint64_t addr = 0, stream_id = 0;   // PERF_SAMPLE_ADDR / STREAM_ID
  uint64_t weight = 0, data_src = 0;  // PERF_SAMPLE_WEIGHT* / DATA_SRC
  uint16_t misc = 0;                // header misc (PERF_RECORD_MISC_USER, ...)
  std::vector<uint64_t> callchain;  // incl. PERF_CONTEXT_* markers
  uint64_t regs_abi = 0;            // PERF_SAMPLE_REGS_ABI_*, 0 = none
  uint64_t regs_mask = 0;           // attr.sample_regs_user
  std::vector<uint64_t> regs;       // one value per set bit of regs_mask
  std::vector<uint8_t> stack;       // the first dyn_size bytes of the copy
  uint64_t stack_size = 0;          // requested copy size (attr)
  const EventAttr* attr = nullptr;  // layout the sample was decoded with;
                                    // owned by the reader, valid while it
                                    // lives (later attrs do not move it)
};

struct Mmap2Record {  // PERF_RECORD_MMAP2 (and PERF_RECORD_MMAP, widened)
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;  // PROT_EXEC etc. (MMAP: prot = PROT_EXEC
                                 // unless misc has PERF_RECORD_MISC_MMAP_DATA)
  bool has_build_id = false;     // PERF_RECORD_MISC_MMAP_BUILD_ID
  std::vector<uint8_t> build_id;
  std::string filename;
  SampleId sample_id;
};

struct CommRecord {
  uint32_t pid = 0, tid = 0;
  std::string comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
  SampleId sample_id;
};

struct TaskRecord {  // PERF_RECORD_FORK / PERF_RECORD_EXIT
  bool is_exit = false;
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
  SampleId sample_id;
};

struct LostRecord {  // PERF_RECORD_LOST
  uint64_t id = 0, lost = 0;
  SampleId sample_id;
};

// One event of HEADER_FEATURE EVENT_DESC: its attr, name and ids.
struct EventDesc {
  perf_event_attr attr{};
  std::string name;
  std::vector<uint64_t> ids;
};

// ---- kernel records
// -----------------------------------------------------------

// PERF_RECORD_LOST is { header; u64 id; u64 lost; sample_id }: where its
// count of lost records is, for readers of raw ring-buffer bytes.
inline constexpr size_t kLostCountOffset = sizeof(perf_event_header) + 8;

// Size of the fixed part of a record before its sample_id_all trailer (and
// before MMAP/MMAP2/COMM's string), or 0 for a type without one here.
size_t fixed_size(uint32_t type);
// Size of the sample_id_all trailer of an attr with this sample_type.
size_t sample_id_size(uint64_t sample_type);
// Whether every sample_type bit is one decode_sample can walk.
bool sample_type_supported(uint64_t sample_type);
// Where the identifier of a SAMPLE is (in u64 words from the start), or of
// another record's trailer (in u64 words from the end), given the first
// attr's sample_type; nullopt when the layout carries none.
std::optional<size_t> sample_id_word(uint64_t sample_type);
std::optional<size_t> trailer_id_word_from_end(uint64_t sample_type);

// The sample_id_all trailer, `trailer` being its bytes.
bool decode_sample_id(std::span<const uint8_t> trailer, uint64_t sample_type,
                      SampleId* out);
// A SAMPLE in the kernel's output order (perf_output_sample). The stack copy
// is always returned in *stack_view (pointing into `body`); it is also
// copied into s->stack when copy_stack is set. Every byte must be accounted
// for: leftovers mean the layout is not the one the kernel wrote.
bool decode_sample(std::span<const uint8_t> body, const perf_event_attr& attr,
                   bool copy_stack, SampleRecord* s,
                   std::span<const uint8_t>* stack_view);
// The fields of a SAMPLE before PERF_SAMPLE_READ (identifier, pid/tid, time,
// cpu, ...) take at most this many bytes.
inline constexpr size_t kSampleHeadMax = 9 * 8;

// Where a SAMPLE's copy of the user stack lies, found without decoding (or
// copying) the rest: what the profiler needs to blank part of the copy
// before the record is written.
struct UserStackLocation {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  // The user stack pointer, where the copy starts (nullopt when the sample
  // has no user registers or sample_regs_user lacks the stack pointer).
  std::optional<uint64_t> sp;
  size_t offset = 0;      // of the first copied byte, from the body's start
  uint64_t size = 0;      // bytes the record holds for the copy
  uint64_t dyn_size = 0;  // of which the kernel filled the first dyn_size
};
// False when `body` (a SAMPLE after its perf_event_header) does not have
// attr's layout, or the layout has no PERF_SAMPLE_STACK_USER.
bool locate_user_stack(std::span<const uint8_t> body,
                       const perf_event_attr& attr, UserStackLocation* out);

// locate_user_stack() for every sample of one attr, its offsets worked out
// once: when the layout's only variable parts are the callchain and the
// user registers (the profiler's own attrs), a sample is located with a
// few loads instead of a walk of its fields; other layouts are walked.
class UserStackLayout {
 public:
  explicit UserStackLayout(const perf_event_attr& attr);
  bool has_stack() const { return has_stack_; }
  // The pid, tid and time of a sample from the first bytes of its body (at
  // least head_size() of them); false when they are not in the layout.
  size_t head_size() const { return head_size_; }
  bool head(std::span<const uint8_t> head, uint32_t* pid, uint32_t* tid,
            uint64_t* time) const;
  bool locate(std::span<const uint8_t> body, UserStackLocation* out) const;

 private:
  perf_event_attr attr_{};
  bool has_stack_ = false;
  bool fixed_ = false;        // offsets below apply
  size_t head_size_ = 0;      // fields before the callchain
  size_t tid_at_ = SIZE_MAX;  // offsets in the body
  size_t time_at_ = SIZE_MAX;
  size_t regs_words_ = 0;  // user registers when their ABI is not NONE
  std::optional<size_t> sp_word_;
  size_t tail_size_ = 0;  // fields after dyn_size
};
// MMAP or MMAP2 (`type`), COMM, FORK or EXIT, LOST: `body` without the
// trailer, whose size the caller took off.
bool decode_mmap(uint32_t type, uint16_t misc, std::span<const uint8_t> body,
                 Mmap2Record* m);
bool decode_comm(uint16_t misc, std::span<const uint8_t> body, CommRecord* c);
bool decode_task(uint32_t type, std::span<const uint8_t> body, TaskRecord* t);
bool decode_lost(std::span<const uint8_t> body, LostRecord* l);

// ---- perf's user records
// ------------------------------------------------------

// The 16-byte pipe header: magic + its own size.
std::vector<uint8_t> encode_pipe_header();
// Checks the start of a file (`start`: its first bytes, at least the 16 of
// the header unless the file is shorter) for the pipe header; the Error
// says what the file is instead (other byte order, perf.data version 1, a
// perf.data file header, not perf.data at all, truncated).
base::Status check_pipe_header(std::span<const uint8_t> start);
// HEADER_ATTR: the attr as kAttrSize bytes (attr.size set to it), then ids.
std::vector<uint8_t> encode_attr_record(const perf_event_attr& attr,
                                        std::span<const uint64_t> ids);
// The attr (its own size field says how long it is) and the ids that fill
// the rest of the record. The ids start at attr.size (kernel ABI, newer
// perf); perf 6.1 itself looks at its own sizeof(perf_event_attr) = 128,
// which agrees for the 128-byte attrs that perf 6.1 and our writer emit.
std::optional<EventAttr> decode_attr_record(std::span<const uint8_t> body);
// HEADER_FEATURE: u64 feature id, then the payload.
std::vector<uint8_t> encode_feature_record(FeatureId id,
                                           std::span<const uint8_t> payload);
// PERF_RECORD_HEADER_BUILD_ID: the GNU build-id of a user-space file (what
// `perf buildid-list` lists), for perf's host machine (pid -1).
std::vector<uint8_t> encode_build_id_record(std::span<const uint8_t> build_id,
                                            const std::string& filename);
std::vector<uint8_t> encode_finished_round();
// HEADER_EVENT_UPDATE of type NAME: the identifier and its name.
std::optional<std::pair<uint64_t, std::string>> decode_event_update_name(
    std::span<const uint8_t> body);
// Bytes that follow a HEADER_TRACING_DATA or AUXTRACE record outside of its
// header.size (0 for other types).
uint64_t out_of_band_payload(uint32_t type, std::span<const uint8_t> body);

// ---- compressed records (perf record -z)
// -------------------------------------------

// PERF_RECORD_COMPRESSED is a perf_event_header followed by bytes of one
// zstd stream that runs through every COMPRESSED record of the file (one
// context, never ended); its size is not padded to 8. The stream decodes
// to ordinary records, which may be split across two COMPRESSED records.
inline constexpr size_t kMaxCompressedPayload =
    0xffff - sizeof(perf_event_header);
// enum perf_comp_type: PERF_COMP_ZSTD.
inline constexpr uint32_t kCompressionZstd = 1;

// HEADER_COMPRESSED: five u32s. perf reads the zstd output of each
// COMPRESSED record into a buffer of mmap_len bytes, so no record may
// decode to more. perf writes version 0, and ratio 0 in pipe mode (the
// header is written before any data).
struct CompressedFeature {
  uint32_t version = 0;
  uint32_t type = kCompressionZstd;
  uint32_t level = 1;
  uint32_t ratio = 0;
  uint32_t mmap_len = 0;
};
std::vector<uint8_t> encode_compressed_feature(const CompressedFeature& c);
std::optional<CompressedFeature> decode_compressed_feature(
    std::span<const uint8_t> payload);
// The header of a COMPRESSED record carrying `payload_size` (at most
// kMaxCompressedPayload) bytes of the stream.
perf_event_header compressed_record_header(size_t payload_size);

// ---- HEADER_FEATURE payloads
// ----------------------------------------------------

// Builds a HEADER_FEATURE payload in perf's header.c layouts.
class FeatureBuilder {
 public:
  FeatureBuilder& add_u32(uint32_t value);
  FeatureBuilder& add_u64(uint64_t value);
  // u32 length (NUL and zero padding included, rounded up to 8) + bytes.
  FeatureBuilder& add_string(const std::string& value);
  FeatureBuilder& add_bytes(const void* data, size_t size);
  // Zero-pads the payload to a multiple of 8 bytes.
  FeatureBuilder& align();
  const std::vector<uint8_t>& bytes() const { return out_.view(); }

 private:
  ByteWriter out_;
};

// EVENT_DESC: u32 nr, u32 attr_size, then per event the attr, u32 nr_ids, a
// perf string (u32 len incl. padding + bytes) and the ids.
std::vector<uint8_t> encode_event_desc(std::span<const EventDesc> events);
// The (id, name) pairs of an EVENT_DESC payload (the attrs themselves came
// with HEADER_ATTR); stops at the first event that does not fit.
std::vector<std::pair<uint64_t, std::string>> decode_event_desc(
    std::span<const uint8_t> payload);

}  // namespace runner::format::perf
