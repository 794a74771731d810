// What an S3 store answers, through the expat reader (format/xml) and the
// S3 documents on it: ListObjectsV2 pages, upload ids, error documents.
// Bad input is an error, never a crash or a hang (time linear in the
// size: libFuzzer's -timeout catches a quadratic path); an accepted page
// has a key in every object and a token when truncated; the reader never
// reports an element deeper than its limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "format/format.hpp"

namespace {

class DepthCheck : public runner::format::XmlHandler {
 public:
  explicit DepthCheck(size_t max_depth) : max_depth_(max_depth) {}
  runner::base::Status open(std::string_view path) override {
    size_t depth = 1;
    for (const char c : path) depth += c == '/';
    if (depth > max_depth_) std::abort();
    return {};
  }
  runner::base::Status close(std::string_view, std::string_view text) override {
    if (text.size() > runner::format::XmlLimits{}.max_text_bytes) std::abort();
    return {};
  }

 private:
  size_t max_depth_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runner::format;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto page = read_s3_list_page(text)) {
    if (page->truncated && page->next_continuation_token.empty()) std::abort();
    for (const S3Object& o : page->objects)
      if (o.key.empty()) std::abort();
  }
  if (auto id = read_s3_upload_id(text); id && id->empty()) std::abort();
  (void)read_s3_error(text);
  XmlLimits limits;
  limits.max_depth = 4;
  DepthCheck check(limits.max_depth);
  (void)read_xml(text, check, limits);
  return 0;
}
