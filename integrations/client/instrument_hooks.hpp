// RAII C++ wrapper over the instrument-hooks C API: the handle is created in
// the constructor (handshake with the runner, or a silent no-op without
// one) and released in the destructor. Every call returns true on success
// (also when not instrumented, where calls do nothing).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "instrument_hooks.h"

namespace runner::client {

class InstrumentHooks {
 public:
  InstrumentHooks() : hooks_(instrument_hooks_init()) {}
  ~InstrumentHooks() { instrument_hooks_deinit(hooks_); }

  InstrumentHooks(const InstrumentHooks&) = delete;
  InstrumentHooks& operator=(const InstrumentHooks&) = delete;
  InstrumentHooks(InstrumentHooks&& other) noexcept
      : hooks_(std::exchange(other.hooks_, nullptr)) {}
  InstrumentHooks& operator=(InstrumentHooks&& other) noexcept {
    if (this != &other) {
      instrument_hooks_deinit(hooks_);
      hooks_ = std::exchange(other.hooks_, nullptr);
    }
    return *this;
  }

  bool instrumented() const { return instrument_hooks_is_instrumented(hooks_); }
  bool start_benchmark() {
    return instrument_hooks_start_benchmark(hooks_) == 0;
  }
  bool stop_benchmark() { return instrument_hooks_stop_benchmark(hooks_) == 0; }
  bool set_executed_benchmark(int32_t pid, const std::string& uri) {
    return instrument_hooks_set_executed_benchmark(hooks_, pid, uri.c_str()) ==
           0;
  }
  bool set_integration(const std::string& name, const std::string& version) {
    return instrument_hooks_set_integration(hooks_, name.c_str(),
                                            version.c_str()) == 0;
  }
  bool add_marker(int32_t pid, uint8_t type, uint64_t ts) {
    return instrument_hooks_add_marker(hooks_, pid, type, ts) == 0;
  }
  static uint64_t now() { return instrument_hooks_current_timestamp(); }

 private:
  ::InstrumentHooks* hooks_;
};

}  // namespace runner::client
