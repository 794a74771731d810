#include "format/quantities.hpp"

#include <array>
#include <limits>

#include "format/numbers.hpp"

namespace runner::format {
namespace {

__extension__ typedef unsigned __int128 u128;  // exact ns arithmetic
constexpr u128 kMaxNs = std::numeric_limits<Duration::rep>::max();

struct Unit {
  std::string_view name;
  uint64_t ns;
};

constexpr uint64_t kSecond = 1'000'000'000;
constexpr std::array<Unit, 22> kUnits{{
    {"ns", 1},
    {"nsec", 1},
    {"us", 1'000},
    {"usec", 1'000},
    {"\xC2\xB5s", 1'000},  // µs
    {"ms", 1'000'000},
    {"msec", 1'000'000},
    {"s", kSecond},
    {"sec", kSecond},
    {"secs", kSecond},
    {"second", kSecond},
    {"seconds", kSecond},
    {"m", 60 * kSecond},
    {"min", 60 * kSecond},
    {"mins", 60 * kSecond},
    {"minute", 60 * kSecond},
    {"minutes", 60 * kSecond},
    {"h", 3600 * kSecond},
    {"hr", 3600 * kSecond},
    {"hrs", 3600 * kSecond},
    {"hour", 3600 * kSecond},
    {"hours", 3600 * kSecond},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Parses "<digits>[.<digits>]" at the start of `s` into `unit`-sized
// nanoseconds, exactly. Returns false on no number or overflow.
bool take_decimal(std::string_view& s, uint64_t unit, u128& out) {
  size_t i = 0;
  u128 whole = 0;
  bool any = false;
  while (i < s.size() && is_digit(s[i])) {
    whole = whole * 10 + static_cast<u128>(s[i] - '0');
    if (whole > kMaxNs) return false;
    any = true;
    ++i;
  }
  u128 frac = 0, scale = 1;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) {
      // Digits below 1e-19 of a unit cannot change the nanosecond count.
      if (scale < static_cast<u128>(10'000'000'000'000'000'000ULL)) {
        frac = frac * 10 + static_cast<u128>(s[i] - '0');
        scale *= 10;
      }
      any = true;
      ++i;
    }
  }
  if (!any) return false;
  out = whole * unit + frac * unit / scale;
  s.remove_prefix(i);
  return out <= kMaxNs;
}

base::Error duration_error(std::string_view text, std::string_view why) {
  return base::Error("invalid duration '" + std::string(text) +
                     "': " + std::string(why) + " (expected " +
                     std::string(kDurationHelp) + ")");
}

const Unit* find_unit(std::string_view name) {
  for (const Unit& u : kUnits)
    if (u.name == name) return &u;
  return nullptr;
}

// "<number><unit>" pieces, optionally separated by blanks.
base::Result<Duration> parse_pieces(std::string_view text, std::string_view s) {
  u128 total = 0;
  while (!s.empty()) {
    size_t unit_start = 0;
    while (unit_start < s.size() &&
           (is_digit(s[unit_start]) || s[unit_start] == '.'))
      ++unit_start;
    size_t unit_end = unit_start;
    while (unit_end < s.size() && !is_blank(s[unit_end]) &&
           !is_digit(s[unit_end]))
      ++unit_end;
    std::string_view unit_name = s.substr(unit_start, unit_end - unit_start);
    if (unit_start == 0) return duration_error(text, "expected a number");
    if (unit_name.empty())
      return duration_error(text, "missing unit after a number");
    const Unit* unit = find_unit(unit_name);
    if (unit == nullptr)
      return duration_error(text,
                            "unknown unit '" + std::string(unit_name) + "'");
    std::string_view number = s.substr(0, unit_start);
    u128 value = 0;
    if (!take_decimal(number, unit->ns, value) || !number.empty())
      return duration_error(text, "bad number or too large");
    total += value;
    if (total > kMaxNs) return duration_error(text, "too large");
    s = trim(s.substr(unit_end));
  }
  return Duration(static_cast<Duration::rep>(total));
}

}  // namespace

base::Result<Duration> parse_duration(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return duration_error(text, "empty");
  // "-0" disables a warmup like "0"; any other negative value is refused.
  if (s.front() == '-') {
    std::string_view rest = s.substr(1);
    u128 value = 0;
    if (take_decimal(rest, kSecond, value) && rest.empty() && value == 0)
      return Duration(0);
    return duration_error(text, "negative durations are not allowed");
  }
  if (s.front() == '+') s.remove_prefix(1);
  // A bare number is seconds.
  std::string_view rest = s;
  u128 value = 0;
  if (take_decimal(rest, kSecond, value) && rest.empty())
    return Duration(static_cast<Duration::rep>(value));
  return parse_pieces(text, s);
}

std::string format_duration(Duration duration) {
  const auto ns = static_cast<uint64_t>(duration.count());
  if (ns == 0) return "0s";
  for (std::string_view unit : {"h", "m", "s", "ms", "us"}) {
    const uint64_t size = find_unit(unit)->ns;
    if (ns % size == 0) return std::to_string(ns / size) + std::string(unit);
  }
  return std::to_string(ns) + "ns";
}

base::Result<uint64_t> parse_count(std::string_view text,
                                   std::string_view what) {
  std::string_view s = trim(text);
  bool digits = !s.empty();
  for (char c : s) digits = digits && is_digit(c);
  auto value = digits ? parse_dec(s) : std::nullopt;
  if (value) return *value;
  return base::Error(
      "invalid " + std::string(what) + " '" + std::string(text) + "': " +
      (digits ? "too large" : "expected a whole number") + " (0, 1, 2, ...)");
}

base::Result<uint64_t> parse_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  auto error = [&](std::string_view why) {
    return base::Error("invalid size '" + std::string(text) +
                       "': " + std::string(why) + " (expected " +
                       std::string(kSizeHelp) + ")");
  };
  auto value = parse_dec(text.substr(0, digits));
  if (!value) return error(digits == 0 ? "expected a number" : "too large");
  const std::string_view unit = text.substr(digits);
  unsigned shift = 0;
  if (unit == "K" || unit == "k" || unit == "KiB")
    shift = 10;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    shift = 20;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    shift = 30;
  else if (!unit.empty() && unit != "B")
    return error("unknown unit '" + std::string(unit) + "'");
  if (*value > (std::numeric_limits<uint64_t>::max() >> shift))
    return error("too large");
  return *value << shift;
}

base::Result<uint32_t> parse_frequency(std::string_view text, uint32_t min,
                                       uint32_t max) {
  std::string_view number = text;
  uint64_t scale = 1;
  if (number.ends_with("kHz")) {
    number.remove_suffix(3);
    scale = 1000;
  } else if (number.ends_with("Hz")) {
    number.remove_suffix(2);
  }
  auto value = parse_dec(number);
  if (value && *value <= max / scale && *value * scale >= min)
    return static_cast<uint32_t>(*value * scale);
  return base::Error("invalid frequency '" + std::string(text) +
                     "': expected a number of Hz in " + std::to_string(min) +
                     ".." + std::to_string(max) + " (e.g. 997, 997Hz, 1kHz)");
}

}  // namespace runner::format
