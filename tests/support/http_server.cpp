// SCAFFOLD: replaced by the http helper.
#include "tests/support/http_server.hpp"

namespace runner::testing {

struct HttpServer::Impl {};
std::optional<std::string> RecordedRequest::header(std::string_view) const {
  return std::nullopt;
}
HttpServer::HttpServer(RequestHandler) : impl_(std::make_unique<Impl>()) {}
HttpServer::~HttpServer() = default;
uint16_t HttpServer::port() const { return 0; }
std::string HttpServer::url(std::string_view) const { return ""; }
std::vector<RecordedRequest> HttpServer::requests() const { return {}; }

}  // namespace runner::testing
