// What an upload service answers to the metadata POST: the first byte
// picks the status (200, 201, 400, 401, 403, 404, 413, 500), the rest is
// the body, read by upload::read_service_answer with the token the
// runner holds. Whatever the body, no text that comes out (an error
// message, the run id, the status, a status description) holds the token
// or a character a terminal would act on (base::is_printable_text).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/text.hpp"
#include "upload/upload.hpp"

namespace {

const std::string kToken = "tok-FUZZ-SECRET-42";

void check_said(const std::string& text) {
  if (text.find(kToken) != std::string::npos ||
      !runner::base::is_printable_text(text))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runner::upload;
  if (size == 0) return 0;
  static constexpr long kStatuses[] = {200, 201, 400, 401, 403, 404, 413, 500};
  HttpResponse response;
  response.status = kStatuses[data[0] % 8];
  response.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string> secrets = {kToken};
  if (auto answer = read_service_answer(response, secrets)) {
    check_said(answer->run_id);
    check_said(answer->status);
  } else {
    check_said(answer.error().message());
  }
  check_said(describe_status(response, secrets));
  check_said(server_text(response.body, secrets, 40));
  return 0;
}
