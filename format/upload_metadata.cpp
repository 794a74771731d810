// SCAFFOLD: replaced by the metadata helper.
#include "format/upload_metadata.hpp"

namespace runner::format {

std::string write_upload_metadata(const UploadMetadata&) { return "{}"; }
base::Result<UploadMetadata> read_upload_metadata(std::string_view) {
  return base::Error("SCAFFOLD: read_upload_metadata");
}
base::Result<UploadAnswer> read_upload_answer(std::string_view) {
  return base::Error("SCAFFOLD: read_upload_answer");
}

}  // namespace runner::format
