// perf.data pipe-format constants shared by the writer and the reader.
// Kernel record types come from <linux/perf_event.h>; these are the
// user-space (perf tool) record types and header layout of perf's pipe mode
// (tools/perf/util/header.h and event.h), which no uapi header carries.
#pragma once

#include <cstdint>

namespace runner::profiler::perf_format {

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

}  // namespace runner::profiler::perf_format
