// Did the benchmarks that ran actually reach the runner? A benchmark whose
// integration could not talk to the runner (FIFO garbage, a desynced ack,
// a lost handshake) runs unprofiled and says so only on its own stderr; this
// check makes the run say it, and fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fifo/fifo.hpp"

namespace runner::agent {

// "Expected" means the run shows that an integration was there: the
// benchmark wrote results (result_uris not empty), or the FIFO carried
// traffic that did not parse (garbage, cut frames: a client tried). "None
// instrumented" means no benchmark got through: no CurrentBenchmark
// announcement and no StartBenchmark window. Returns the error message in
// that case, nullopt otherwise.
std::optional<std::string> missing_instrumentation(
    const fifo::RunData& run, const std::vector<std::string>& result_uris);

// URIs in the results that were never announced over the FIFO (those
// benchmarks have no profile), in result order, without duplicates.
std::vector<std::string> unannounced_uris(
    const fifo::RunData& run, const std::vector<std::string>& result_uris);

}  // namespace runner::agent
