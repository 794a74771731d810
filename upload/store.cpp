// SCAFFOLD: replaced by the store helper.
#include "upload/store.hpp"

namespace runner::upload {

base::Result<StoreUploadResult> store_upload(S3Client&, const S3Location&,
                                             const std::string&,
                                             const RunFacts&, std::ostream&) {
  return base::Error("SCAFFOLD: store_upload");
}
base::Result<StoredRun> find_newest_run(S3Client&, const S3Location&,
                                        const RunFacts&, const std::string&) {
  return base::Error("SCAFFOLD: find_newest_run");
}
base::Result<std::string> fetch_run(S3Client&, const S3Location&,
                                    const StoredRun&, const std::string&,
                                    std::ostream&) {
  return base::Error("SCAFFOLD: fetch_run");
}
std::string default_store_cache(const Environment&) { return ""; }
std::string ref_key(const std::string& branch) { return branch; }

}  // namespace runner::upload
