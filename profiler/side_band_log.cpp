#include "profiler/side_band_log.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>

namespace runner::profiler {
namespace {

namespace perf = format::perf;

bool is_kept_type(uint32_t type) {
  return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
         type == PERF_RECORD_COMM || type == PERF_RECORD_FORK ||
         type == PERF_RECORD_EXIT;
}

void append(std::vector<uint8_t>& out, std::span<const uint8_t> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace

SideBandLog::SideBandLog(std::span<const perf::EventDesc> events,
                         uint64_t max_bytes)
    : max_bytes_(max_bytes),
      sample_attr_(events.empty() ? perf_event_attr{} : events.front().attr),
      layout_(sample_attr_) {
  // The replay orders records by time only when every attr gives one to
  // every record (as MappingTracker::replay_file decides).
  timed_ = !events.empty();
  for (const perf::EventDesc& event : events) {
    if (!event.attr.sample_id_all ||
        !(event.attr.sample_type & PERF_SAMPLE_TIME))
      timed_ = false;
  }
  append(records_.stream, perf::encode_pipe_header());
  for (const perf::EventDesc& event : events)
    append(records_.stream, perf::encode_attr_record(event.attr, event.ids));
}

void SideBandLog::add(const perf_event_header& header,
                      const RingBuffer::RecordBytes& bytes) {
  if (overflowed()) return;
  if (header.type == PERF_RECORD_SAMPLE) {
    add_sample(header, bytes);
  } else if (is_kept_type(header.type)) {
    add_side_band(header, bytes);
  }
}

void SideBandLog::add_records(std::span<const uint8_t> run) {
  perf_event_header header;
  size_t at = 0;
  while (run.size() - at >= sizeof(header)) {
    std::memcpy(&header, run.data() + at, sizeof(header));
    if (header.size < sizeof(header) || header.size > run.size() - at) {
      set_incomplete("a record set aside for the writer is impossible");
      return;
    }
    RingBuffer::RecordBytes bytes;
    bytes.first = run.subspan(at, header.size);
    add(header, bytes);
    at += header.size;
  }
}

void SideBandLog::add_sample(const perf_event_header& header,
                             const RingBuffer::RecordBytes& bytes) {
  perf::UserStackLocation sample;
  if (layout_.has_stack()) {
    // The drain does not write a sample whose stack copy it cannot locate.
    const size_t size = header.size - sizeof(header);
    std::span<const uint8_t> body;
    if (bytes.second.empty() && bytes.first.size() >= header.size) {
      body = bytes.first.subspan(sizeof(header), size);
    } else {
      scratch_.resize(size);
      if (!bytes.read(sizeof(header), scratch_.data(), size)) return;
      body = scratch_;
    }
    if (!layout_.locate(body, &sample)) return;
  } else {
    std::array<uint8_t, perf::kSampleHeadMax> head;
    const size_t n = layout_.head_size();
    if (n > head.size() || !bytes.read(sizeof(header), head.data(), n) ||
        !layout_.head({head.data(), n}, &sample.pid, &sample.tid, &sample.time))
      return;
  }
  add_sample(sample);
}

void SideBandLog::add_sample(const perf::UserStackLocation& sample) {
  if (overflowed()) return;
  Event event;
  event.pid = sample.pid;
  event.tid = sample.tid;
  event.time = sample.time;
  newest_sample_ = std::max(newest_sample_, event.time);
  note(event);
}

void SideBandLog::add_side_band(const perf_event_header& header,
                                const RingBuffer::RecordBytes& bytes) {
  const size_t at = records_.stream.size();
  records_.stream.resize(at + header.size);
  bytes.read(0, records_.stream.data() + at, header.size);
  uint64_t time = 0;
  perf::TaskRecord task;
  if (!side_band_time(header, {records_.stream.data() + at, header.size}, &time,
                      &task)) {
    check_cap();
    return;  // the replay skips it too
  }
  newest_ = std::max(newest_, time);
  if (header.type == PERF_RECORD_FORK && task.pid != task.ppid) {
    Event event;
    event.at = at;
    event.time = time;
    event.pid = task.pid;
    event.fork = true;
    note(event);
  }
  check_cap();
}

bool SideBandLog::side_band_time(const perf_event_header& header,
                                 std::span<const uint8_t> record,
                                 uint64_t* time, perf::TaskRecord* task) const {
  std::span<const uint8_t> body = record.subspan(sizeof(header));
  if (body.size() < perf::fixed_size(header.type)) return false;
  perf::SampleId id;
  if (sample_attr_.sample_id_all) {
    const size_t n = perf::sample_id_size(sample_attr_.sample_type);
    if (n > body.size() - perf::fixed_size(header.type) ||
        !perf::decode_sample_id(body.last(n), sample_attr_.sample_type, &id))
      return false;
    body = body.first(body.size() - n);
  }
  bool ok = false;
  if (header.type == PERF_RECORD_MMAP || header.type == PERF_RECORD_MMAP2) {
    perf::Mmap2Record mmap;
    ok = perf::decode_mmap(header.type, header.misc, body, &mmap);
  } else if (header.type == PERF_RECORD_COMM) {
    perf::CommRecord comm;
    ok = perf::decode_comm(header.misc, body, &comm);
  } else {
    ok = perf::decode_task(header.type, body, task);
    *time = task->time;
    return ok;
  }
  *time = id.time;
  return ok;
}

void SideBandLog::note(Event event) {
  event.order = order_++;
  if (!event.fork) event.at = records_.stream.size();
  if (!timed_) {
    // The replay applies the records in the file's order.
    if (event.fork) {
      sampled_.erase(event.pid);
    } else if (sampled_.insert(event.pid).second) {
      keep(event);
    }
    return;
  }
  Batch& batch = event.time <= limit_ ? current_ : next_;
  batch.has_fork |= event.fork;
  batch.events.push_back(event);
  newest_ = std::max(newest_, event.time);
}

void SideBandLog::end_round() {
  if (overflowed()) return;
  const size_t at = records_.stream.size();
  append(records_.stream, perf::encode_finished_round());
  records_.rounds.push_back({at, newest_sample_});
  if (timed_) {
    close_batch(current_);
    std::swap(current_, next_);
    limit_ = newest_;
  }
  check_cap();
}

// The replay applies a batch's records sorted by time (stable): a pid's
// first sample in that order is kept unless the pid is marked already.
void SideBandLog::close_batch(Batch& batch) {
  if (batch.has_fork) {
    close_forked_batch(batch);
  } else {
    std::unordered_map<uint32_t, size_t> first;
    for (size_t i = 0; i < batch.events.size(); ++i) {
      const Event& e = batch.events[i];
      auto [it, added] = first.try_emplace(e.pid, i);
      const Event& best = batch.events[it->second];
      if (!added &&
          (e.time < best.time || (e.time == best.time && e.order < best.order)))
        it->second = i;
    }
    for (const auto& [pid, index] : first)
      if (sampled_.insert(pid).second) keep(batch.events[index]);
  }
  batch.events.clear();
  batch.has_fork = false;
}

// With FORKs in the batch: its events in the replay's order.
void SideBandLog::close_forked_batch(Batch& batch) {
  std::stable_sort(
      batch.events.begin(), batch.events.end(),
      [](const Event& a, const Event& b) { return a.time < b.time; });
  for (const Event& e : batch.events) {
    if (e.fork) {
      sampled_.erase(e.pid);
    } else if (sampled_.insert(e.pid).second) {
      keep(e);
    }
  }
}

void SideBandLog::keep(const Event& event) {
  records_.samples.push_back({event.at, event.pid, event.tid, event.time});
  kept_order_.push_back(event.order);
}

uint64_t SideBandLog::pending_bytes() const {
  return (current_.events.capacity() + next_.events.capacity()) *
             sizeof(Event) +
         kept_order_.size() * sizeof(uint64_t);
}

void SideBandLog::check_cap() {
  if (bytes() <= max_bytes_) return;
  set_incomplete("the side-band records passed " +
                 std::to_string(max_bytes_ >> 20) + " MiB");
}

void SideBandLog::set_incomplete(std::string why) {
  if (overflowed()) return;
  records_ = format::perf::SideBandRecords{};
  records_.incomplete = std::move(why);
  current_ = Batch{};
  next_ = Batch{};
  sampled_.clear();
  kept_order_.clear();
}

format::perf::SideBandRecords SideBandLog::take() {
  if (!overflowed() && timed_) {
    close_batch(current_);
    close_batch(next_);
  }
  // Kept samples in arrival order (each batch picks its own, later).
  std::vector<size_t> index(records_.samples.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](size_t a, size_t b) {
    return kept_order_[a] < kept_order_[b];
  });
  std::vector<format::perf::SideBandRecords::Sample> samples;
  samples.reserve(index.size());
  for (size_t i : index) samples.push_back(records_.samples[i]);
  records_.samples = std::move(samples);
  format::perf::SideBandRecords out = std::move(records_);
  records_ = format::perf::SideBandRecords{};
  set_incomplete("already taken");
  return out;
}

}  // namespace runner::profiler
