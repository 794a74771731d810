// SCAFFOLD: replaced by the store helper.
#include "tests/support/s3rver.hpp"

namespace runner::testing {

std::optional<S3rver> S3rver::start(const std::string&, const std::string&,
                                    std::string* why_not) {
  *why_not = "SCAFFOLD";
  return std::nullopt;
}
S3rver::S3rver(S3rver&&) noexcept = default;
S3rver& S3rver::operator=(S3rver&&) noexcept = default;
S3rver::~S3rver() = default;
std::string S3rver::endpoint() const { return endpoint_; }
pid_t S3rver::pid() const { return pid_; }
void S3rver::kill() {}
std::vector<std::string> S3rver::environment() const { return {}; }

}  // namespace runner::testing
