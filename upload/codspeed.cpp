// SCAFFOLD: replaced by the codspeed helper.
#include "upload/codspeed.hpp"

namespace runner::upload {

base::Result<CodspeedUploadResult> upload_to_codspeed(
    const CodspeedUploadOptions&, const RunFacts&, const Environment&,
    std::ostream&) {
  return base::Error("SCAFFOLD: upload_to_codspeed");
}

}  // namespace runner::upload
