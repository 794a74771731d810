// SCAFFOLD: replaced by the store helper.
#include "format/s3_xml.hpp"

namespace runner::format {

base::Result<S3ListPage> read_s3_list_page(std::string_view) {
  return base::Error("SCAFFOLD: read_s3_list_page");
}
base::Result<std::string> read_s3_upload_id(std::string_view) {
  return base::Error("SCAFFOLD: read_s3_upload_id");
}
std::optional<S3ErrorDocument> read_s3_error(std::string_view) {
  return std::nullopt;
}
std::string write_s3_complete_multipart(const std::vector<std::string>&) {
  return "";
}

}  // namespace runner::format
