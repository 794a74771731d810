// The uri_by_ts and markers lists of a decoded JSON/msgpack object, shared
// by the ExecutionTimestamps.msgpack and perf.metadata readers. Internal to
// format/.
#pragma once

#include <nlohmann/json.hpp>

#include "format/execution_timestamps.hpp"
#include "format/json_checker.hpp"

namespace runner::format {

ExecutionTimestamps timestamps_from_json(const nlohmann::json& object,
                                         JsonChecker& check);

}  // namespace runner::format
