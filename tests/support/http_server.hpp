// A small HTTP/1.1 server on 127.0.0.1 (a random port) for the tests of
// upload/: each request is recorded and answered by the test's handler.
// Runs on its own thread until destroyed. Handles Content-Length and
// chunked request bodies, "Expect: 100-continue", keep-alive; answers with
// a Content-Length body or a streamed chunked one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runner::testing {

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first header named `name` (case-insensitive).
  std::optional<std::string> header(std::string_view name) const;
};

struct ScriptedResponse {
  int status = 200;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  // Close the connection without answering (a dead server mid-request).
  bool hang_up = false;
  // Wait this long before answering (a slow server).
  std::chrono::milliseconds delay{0};
  // When set, the body is sent chunked (Transfer-Encoding: chunked, after
  // `body` as the first chunk when not empty): one chunk per call, sent at
  // once, until the call returns false (the body ends), the client goes
  // away or the server stops. An endless or dribbling body.
  std::function<bool(std::string& chunk)> stream = nullptr;
};

using RequestHandler = std::function<ScriptedResponse(const RecordedRequest&)>;

class HttpServer {
 public:
  // Fails the test (REQUIRE) when it cannot listen.
  explicit HttpServer(RequestHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;
  std::string url(std::string_view path) const;   // "http://127.0.0.1:P/path"
  std::vector<RecordedRequest> requests() const;  // in arrival order

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runner::testing
