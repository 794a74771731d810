#include "profiler/initial_stacks.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>

#include "format/format.hpp"

namespace runner::profiler {
namespace {

// A stat line is about 300 bytes plus a command name of at most 64.
constexpr size_t kStatCap = 4096;

std::optional<uint64_t> read_stat(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  char buffer[kStatCap];
  size_t used = 0;
  while (used < sizeof(buffer)) {
    const ssize_t n = ::read(fd, buffer + used, sizeof(buffer) - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  auto fields = format::parse_proc_stat_stack(std::string_view(buffer, used));
  if (!fields) return std::nullopt;
  const uint64_t floor = format::initial_stack_floor(*fields);
  if (floor == 0) return std::nullopt;
  return floor;
}

}  // namespace

std::optional<uint64_t> InitialStacks::read_proc(pid_t pid, pid_t tid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  if (tid > 0) {
    if (auto start = read_stat(dir + "/task/" + std::to_string(tid) + "/stat"))
      return start;
  }
  return read_stat(dir + "/stat");
}

uint64_t InitialStacks::monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL +
         static_cast<uint64_t>(ts.tv_nsec);
}

InitialStacks::InitialStacks(Lookup lookup, Clock clock)
    : lookup_(std::move(lookup)), clock_(std::move(clock)) {}

void InitialStacks::begin_pass() {
  ++pass_;
  read_this_pass_.clear();
  // A process's samples are all published before its EXIT record; the
  // pass that noted the EXIT and the next one wrote every one of them.
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = it->second;
    if (!p.exit_time || p.exit_pass + 2 > pass_) {
      ++it;
      continue;
    }
    // Keep what began after the exit: the pid was reused.
    const uint64_t exit_time = *p.exit_time;
    std::erase_if(p.generations,
                  [&](const Generation& g) { return g.time <= exit_time; });
    p.exit_time.reset();
    if (p.generations.empty())
      it = processes_.erase(it);
    else
      ++it;
  }
}

InitialStacks::Process* InitialStacks::process(pid_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return &it->second;
  if (processes_.size() >= kMaxProcesses) return nullptr;
  Process& p = processes_[pid];
  p.generations.push_back(Generation{});
  return &p;
}

InitialStacks::Generation* InitialStacks::generation_at(Process& p,
                                                        uint64_t time) {
  auto& gens = p.generations;
  auto it = std::lower_bound(
      gens.begin(), gens.end(), time,
      [](const Generation& g, uint64_t t) { return g.time < t; });
  if (it != gens.end() && it->time == time) return &*it;
  const size_t index = static_cast<size_t>(it - gens.begin());
  gens.insert(it, Generation{time, 0, 0});
  if (gens.size() <= kMaxGenerations) return &gens[index];
  gens.erase(gens.begin());
  return index == 0 ? nullptr : &gens[index - 1];
}

InitialStacks::Generation* InitialStacks::current(Process& p, uint64_t time) {
  auto& gens = p.generations;
  auto it = std::upper_bound(
      gens.begin(), gens.end(), time,
      [](uint64_t t, const Generation& g) { return t < g.time; });
  return it == gens.begin() ? nullptr : &*(it - 1);
}

const InitialStacks::Generation* InitialStacks::current(const Process& p,
                                                        uint64_t time) {
  return current(const_cast<Process&>(p), time);
}

void InitialStacks::note_exec(pid_t pid, uint64_t time) {
  Process* p = process(pid);
  if (p == nullptr) return;
  generation_at(*p, time);
  // Learn the new area while the process still lives.
  wanted_.emplace(pid, pid);
}

void InitialStacks::note_fork(pid_t pid, pid_t ppid, uint64_t time) {
  if (pid == ppid) return;  // a new thread of the same process
  Process* p = process(pid);
  if (p == nullptr) return;
  Generation* g = generation_at(*p, time);
  if (g == nullptr || g->start != 0 || g->parent != 0) return;
  g->parent = ppid;
  if (!inherit(*g)) pending_forks_.push_back({pid, time, pass_});
}

// A fork's area is its parent's at the time of the fork.
bool InitialStacks::inherit(Generation& g) const {
  if (g.start != 0) return true;
  auto it = processes_.find(g.parent);
  if (it == processes_.end()) return false;
  const Generation* from = current(it->second, g.time);
  if (from == nullptr || from->start == 0) return false;
  g.start = from->start;
  return true;
}

void InitialStacks::note_exit(pid_t pid, pid_t tid, uint64_t time) {
  if (pid != tid) return;  // a thread
  auto it = processes_.find(pid);
  if (it == processes_.end() || it->second.exit_time) return;
  it->second.exit_time = time;
  it->second.exit_pass = pass_;
}

void InitialStacks::barrier(uint64_t time) {
  for (auto& [pid, p] : processes_) {
    if (p.generations.empty() || p.generations.back().time < time)
      generation_at(p, time);
    wanted_.emplace(pid, pid);
  }
}

void InitialStacks::want(pid_t pid, pid_t tid, uint64_t time) {
  Process* p = process(pid);
  if (p == nullptr) return;
  const Generation* g = current(*p, time);
  if (g != nullptr && g->start != 0) return;
  wanted_.emplace(pid, tid);
}

void InitialStacks::learn() {
  for (const auto& [pid, tid] : wanted_) {
    if (!read_this_pass_.insert(pid).second) continue;
    Read read;
    read.pid = pid;
    read.before = clock_();
    read.start = lookup_(pid, tid);
    ++lookups_;
    read.after = clock_();
    reads_.push_back(read);
  }
  wanted_.clear();
}

void InitialStacks::resolve() {
  for (const Read& read : reads_) {
    if (!read.start) continue;
    auto it = processes_.find(read.pid);
    if (it == processes_.end()) continue;
    Process& p = it->second;
    // A generation begun while /proc was read: the value may be either's.
    const bool ambiguous = std::any_of(
        p.generations.begin(), p.generations.end(), [&](const Generation& g) {
          return g.time > read.before && g.time <= read.after;
        });
    if (ambiguous) continue;
    Generation* g = current(p, read.before);
    if (g != nullptr && g->start == 0) g->start = *read.start;
  }
  reads_.clear();
  // Forks whose parent's area became known (a fork of a fork once its
  // parent's is): until a round changes nothing.
  for (bool changed = true; changed && !pending_forks_.empty();) {
    changed = false;
    std::erase_if(pending_forks_, [&](const PendingFork& f) {
      if (f.pass + 2 <= pass_) return true;
      auto it = processes_.find(f.pid);
      if (it == processes_.end()) return true;
      Generation* g = current(it->second, f.time);
      if (g == nullptr || g->time != f.time || g->start != 0) return true;
      if (!inherit(*g)) return false;
      changed = true;
      return true;
    });
  }
}

std::optional<uint64_t> InitialStacks::start_at(pid_t pid,
                                                uint64_t time) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return std::nullopt;
  const Generation* g = current(it->second, time);
  if (g == nullptr || g->start == 0) return std::nullopt;
  return g->start;
}

}  // namespace runner::profiler
