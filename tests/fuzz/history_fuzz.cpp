// `runner history` over hostile records: the input is a run's record (as
// the store holds it; anyone who can write there chooses it). When it is
// read and its medians pass upload::medians_problem, a history of eight
// runs is built from it (its medians scaled by a step, in every metric)
// and written out: history.json must parse back with as many points, the
// page must hold its data in one <script> element (exactly two "</script"),
// text and markdown must hold no control character. The input's bytes,
// read as doubles (those a record may hold), are also a series for
// find_change_points: every step
// found lies inside the series with a finite size and an ordered interval.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/format.hpp"
#include "history/history.hpp"
#include "upload/upload.hpp"

namespace {

using namespace runner;

// The values a record can hold (upload::medians_problem: times up to
// 1000 s, instructions up to 1e16; the fuzzer's small ones too); others
// are dropped, as the store's reader drops them.
void check_series(const uint8_t* data, size_t size) {
  std::vector<double> values;
  for (size_t at = 0; at + sizeof(double) <= size; at += sizeof(double)) {
    double v = 0;
    std::memcpy(&v, data + at, sizeof v);
    if (std::isfinite(v) && v >= 1e-3 && v <= upload::kMaxInstructions)
      values.push_back(v);
  }
  for (const history::Step& s :
       history::find_change_points(values, history::DetectSettings{})) {
    if (s.start == 0 || s.start >= values.size() || !std::isfinite(s.change) ||
        !(s.low <= s.high) || !(s.p_value >= 0 && s.p_value <= 1))
      std::abort();
  }
}

void check_plain(const std::string& text) {
  for (const char c : text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f)
      std::abort();
}

void check_outputs(const history::History& h, size_t points) {
  const auto json = nlohmann::json::parse(history::write_json(h));
  size_t got = 0;
  for (const auto& b : json["benchmarks"]) got += b["points"].size();
  if (got != points) std::abort();
  const std::string page = history::write_page(h);
  size_t closes = 0;
  for (size_t at = page.find("</script"); at != std::string::npos;
       at = page.find("</script", at + 1))
    ++closes;
  if (closes != 2) std::abort();
  std::ostringstream text, markdown;
  history::write_text(h, text);
  history::write_markdown(h, markdown);
  check_plain(text.str());
  check_plain(markdown.str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_series(data, size);
  auto record = format::read_store_record(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!record || !upload::medians_problem(*record).empty()) return 0;
  std::vector<format::StoreRecord> records(8, *record);
  for (size_t i = 4; i < records.size(); ++i)
    for (auto& m : records[i].benchmark_medians) m.median_ns *= 1.2;
  for (const auto metric : {format::Metric::kWall, format::Metric::kCpu,
                            format::Metric::kInstructions}) {
    const auto h = history::build_history(records, {}, metric);
    size_t points = 0;
    for (const auto& s : h.series) points += s.points.size();
    check_outputs(h, points);
  }
  return 0;
}
