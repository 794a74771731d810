// SCAFFOLD: replaced by the http helper.
#include "upload/http.hpp"

namespace runner::upload {

struct HttpClient::Impl {};
HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;
HttpClient::~HttpClient() = default;
base::Result<HttpClient> HttpClient::create() {
  return HttpClient(std::make_unique<Impl>());
}
base::Result<HttpResponse> HttpClient::perform(const HttpRequest&) {
  return base::Error("SCAFFOLD: HttpClient::perform");
}
std::optional<std::string> HttpResponse::header(std::string_view) const {
  return std::nullopt;
}
RetryPolicy retry_policy_from_environment() { return {}; }
bool is_transient_status(long) { return false; }
base::Result<HttpResponse> perform_with_retries(HttpClient& client,
                                                const HttpRequest& request,
                                                const RetryPolicy&,
                                                std::string_view,
                                                std::ostream&) {
  return client.perform(request);
}
std::string describe_status(const HttpResponse&,
                            const std::vector<std::string>&) {
  return "SCAFFOLD";
}
std::string redact(std::string text, const std::vector<std::string>&) {
  return text;
}

}  // namespace runner::upload
