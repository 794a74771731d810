// SCAFFOLD: replaced by the store helper.
#include "upload/s3.hpp"

namespace runner::upload {

base::Result<S3Location> parse_s3_url(const std::string&) {
  return base::Error("SCAFFOLD: parse_s3_url");
}
base::Result<S3Config> s3_config_from_environment(
    const Environment&, const std::optional<std::string>&) {
  return base::Error("SCAFFOLD: s3_config_from_environment");
}
S3Client::S3Client(S3Config config, HttpClient http, std::ostream& log)
    : config_(std::move(config)), http_(std::move(http)), log_(&log) {}
base::Result<S3Client> S3Client::create(S3Config, std::ostream&) {
  return base::Error("SCAFFOLD: S3Client::create");
}
base::Status S3Client::put_object(const std::string&, const std::string&, int,
                                  uint64_t, const std::string&) {
  return base::Error("SCAFFOLD");
}
base::Status S3Client::put_text(const std::string&, const std::string&,
                                const std::string&, const std::string&) {
  return base::Error("SCAFFOLD");
}
base::Status S3Client::get_object(const std::string&, const std::string&,
                                  int) {
  return base::Error("SCAFFOLD");
}
base::Result<std::string> S3Client::get_text(const std::string&,
                                             const std::string&, uint64_t) {
  return base::Error("SCAFFOLD");
}
base::Result<std::vector<format::S3Object>> S3Client::list(
    const std::string&, const std::string&) {
  return base::Error("SCAFFOLD");
}

}  // namespace runner::upload
