// What the store and the upload services answer, and what a CI job hands
// over: S3 listings, upload ids and error documents, store records, the
// upload service's answer, GitHub's OIDC answer and event payload, upload
// metadata. Bad input is an error, never a crash; an accepted store record
// or metadata writes and reads back equal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "format/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runner::format;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto page = read_s3_list_page(text);
      page && page->truncated && page->next_continuation_token.empty())
    std::abort();
  (void)read_s3_upload_id(text);
  (void)read_s3_error(text);
  (void)read_upload_answer(text);
  (void)read_oidc_answer(text);
  (void)read_github_event(text);
  if (auto record = read_store_record(text)) {
    auto again = read_store_record(write_store_record(*record));
    if (!again || write_store_record(*again) != write_store_record(*record))
      std::abort();
  }
  if (auto metadata = read_upload_metadata(text)) {
    auto again = read_upload_metadata(write_upload_metadata(*metadata));
    if (!again ||
        write_upload_metadata(*again) != write_upload_metadata(*metadata))
      std::abort();
  }
  return 0;
}
