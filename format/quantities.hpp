// Quantities typed by people (command-line options, runner.yml, the exec
// targets JSON): durations, counts, byte sizes and frequencies. One parser
// each, so that every place that reads "1.5s", "8M" or "997" agrees; errors
// say what was wrong and what is allowed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/base.hpp"

namespace runner::format {

using Duration = std::chrono::nanoseconds;

// What parse_duration accepts, for help texts and errors.
inline constexpr std::string_view kDurationHelp =
    "e.g. 500ms, 1.5s, 2m, 1h, 10us, 100ns, 1m 30s, or a number of seconds";

// "500ms", "1.5s", "2m", "1h", "10us", "100ns", combinations such as
// "1m 30s", or a bare number of seconds ("2", "0.5"). Exact (no floating
// point); surrounding blanks are ignored; "-0" is 0. Negative, non-finite,
// unparseable or overflowing (beyond int64 nanoseconds) values fail with
// "invalid duration '...': why (expected ...)".
base::Result<Duration> parse_duration(std::string_view text);
// The shortest exact spelling in the largest unit that divides it: "0s",
// "1500ms", "2m", "100ns". parse_duration(format_duration(d)) == d.
std::string format_duration(Duration duration);

// A count such as a number of rounds: decimal digits only (surrounding
// blanks ignored), 0 allowed. `what` names it in the error ("invalid round
// count 'x': expected a whole number 0, 1, 2, ...").
base::Result<uint64_t> parse_count(std::string_view text,
                                   std::string_view what = "count");

inline constexpr std::string_view kSizeHelp =
    "bytes, or a number with K, M or G (KiB, MiB, GiB; powers of 1024), "
    "e.g. 512K, 8M";
// "4096", "4096B", "512K"/"512k"/"512KiB", "8M"/"8m"/"8MiB", "1G"/"1g"/"1GiB"
// (powers of 1024). Overflow and anything else fail.
base::Result<uint64_t> parse_size(std::string_view text);

// A sampling frequency in Hz: "997", "997Hz", "1kHz", within [min, max].
base::Result<uint32_t> parse_frequency(std::string_view text, uint32_t min,
                                       uint32_t max);

}  // namespace runner::format
