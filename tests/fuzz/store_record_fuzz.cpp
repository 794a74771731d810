// A run's record in the shared store, as `compare --store` reads it from
// the store (written by anyone who can write there): format's reader, and
// upload's decision whether it is a branch's base. Bad input is an error,
// never a crash; an accepted record writes and reads back equal; a record
// taken as main's base is a push to refs/heads/main, not a pull request's,
// with a safe run id matching its key and its archive under runs/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "format/format.hpp"
#include "upload/upload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runner;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = format::read_store_record(text);
  if (!record) return 0;
  auto again = format::read_store_record(format::write_store_record(*record));
  if (!again ||
      format::write_store_record(*again) != format::write_store_record(*record))
    std::abort();
  upload::RunFacts facts;
  facts.owner = "acme";
  facts.repository = "widgets";
  const upload::S3Location location{"bench", "ci"};
  const std::string prefix = "ci/acme/widgets/refs/main/";
  for (const std::string& key :
       {prefix + record->run_id + ".json", prefix + "x.json"}) {
    const std::string problem =
        upload::base_record_problem(*record, key, location, facts, "main");
    if (!problem.empty()) {
      for (const char c : problem)
        if (c < 0x20 || c > 0x7e) std::abort();  // reaches a terminal
      continue;
    }
    if (record->event != "push" || record->ref != "refs/heads/main" ||
        record->branch != "main" || record->pull_request ||
        !upload::safe_run_id(record->run_id) ||
        key != prefix + record->run_id + ".json" ||
        !record->archive_key.starts_with("ci/acme/widgets/runs/") ||
        record->archive_key.find("/.") != std::string::npos)
      std::abort();
  }
  return 0;
}
