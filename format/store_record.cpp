// SCAFFOLD: replaced by the store helper.
#include "format/store_record.hpp"

namespace runner::format {

std::string write_store_record(const StoreRecord&) { return "{}"; }
base::Result<StoreRecord> read_store_record(std::string_view) {
  return base::Error("SCAFFOLD: read_store_record");
}

}  // namespace runner::format
