// The scripted HTTP/1.1 server of the upload tests (see http_server.hpp):
// one thread, one connection at a time (libcurl keeps one alive).
#include "tests/support/http_server.hpp"

#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

namespace runner::testing {

std::optional<std::string> RecordedRequest::header(
    std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key.size() == name.size() &&
        ::strncasecmp(key.data(), name.data(), name.size()) == 0)
      return value;
  return std::nullopt;
}

namespace {

// Reads from a socket into a buffer; false on EOF, error or stop.
class Reader {
 public:
  Reader(int fd, const std::atomic<bool>& stop) : fd_(fd), stop_(stop) {}

  bool fill() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready == 0) continue;
      if (ready < 0) return false;
      char chunk[65536];
      const ssize_t got = ::read(fd_, chunk, sizeof(chunk));
      if (got <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(got));
      return true;
    }
    return false;
  }
  // Up to and without "\r\n".
  std::optional<std::string> line() {
    size_t end;
    while ((end = buffer_.find("\r\n")) == std::string::npos)
      if (!fill()) return std::nullopt;
    std::string out = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    return out;
  }
  std::optional<std::string> bytes(size_t n) {
    while (buffer_.size() < n)
      if (!fill()) return std::nullopt;
    std::string out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return out;
  }

 private:
  int fd_;
  const std::atomic<bool>& stop_;
  std::string buffer_;
};

bool send_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string chunk_of(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// A streamed answer; false when the connection is to be closed.
bool send_stream(int fd, const ScriptedResponse& response,
                 const std::string& head, const std::atomic<bool>& stop) {
  std::string out = head + "Transfer-Encoding: chunked\r\n\r\n";
  if (!response.body.empty()) out += chunk_of(response.body);
  if (!send_all(fd, out)) return false;
  std::string chunk;
  while (!stop) {
    chunk.clear();
    if (!response.stream(chunk)) return send_all(fd, "0\r\n\r\n");
    if (!chunk.empty() && !send_all(fd, chunk_of(chunk))) return false;
  }
  return false;
}

std::string trim(const std::string& text) {
  const size_t b = text.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return text.substr(b, text.find_last_not_of(" \t") - b + 1);
}

std::optional<std::string> chunked_body(Reader& reader) {
  std::string body;
  for (;;) {
    auto size_line = reader.line();
    if (!size_line) return std::nullopt;
    const size_t size = std::strtoul(size_line->c_str(), nullptr, 16);
    if (size == 0) {
      while (auto trailer = reader.line())
        if (trailer->empty()) return body;
      return std::nullopt;
    }
    auto chunk = reader.bytes(size + 2);
    if (!chunk) return std::nullopt;
    body += chunk->substr(0, size);
  }
}

// One request: its line, headers and body; 100 Continue sent when asked.
std::optional<RecordedRequest> read_request(Reader& reader, int fd) {
  auto first = reader.line();
  if (!first || first->empty()) return std::nullopt;
  RecordedRequest r;
  const size_t sp1 = first->find(' '), sp2 = first->rfind(' ');
  if (sp1 == std::string::npos || sp2 <= sp1) return std::nullopt;
  r.method = first->substr(0, sp1);
  r.target = first->substr(sp1 + 1, sp2 - sp1 - 1);
  for (auto line = reader.line(); line && !line->empty();
       line = reader.line()) {
    const size_t colon = line->find(':');
    if (colon != std::string::npos)
      r.headers.emplace_back(line->substr(0, colon),
                             trim(line->substr(colon + 1)));
  }
  if (auto expect = r.header("Expect");
      expect && ::strcasecmp(expect->c_str(), "100-continue") == 0)
    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
  if (auto te = r.header("Transfer-Encoding");
      te && te->find("chunked") != std::string::npos) {
    auto body = chunked_body(reader);
    if (!body) return std::nullopt;
    r.body = std::move(*body);
  } else if (auto length = r.header("Content-Length")) {
    auto body = reader.bytes(std::strtoull(length->c_str(), nullptr, 10));
    if (!body) return std::nullopt;
    r.body = std::move(*body);
  }
  return r;
}

std::string status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

struct HttpServer::Impl {
  RequestHandler handler;
  int listen_fd = -1;
  uint16_t port = 0;
  std::atomic<bool> stop{false};
  mutable std::mutex mutex;
  std::vector<RecordedRequest> requests;
  std::thread thread;

  // Serves one connection until it closes; false when the server stops.
  void serve(int fd) {
    Reader reader(fd, stop);
    while (auto request = read_request(reader, fd)) {
      {
        std::lock_guard lock(mutex);
        requests.push_back(*request);
      }
      const ScriptedResponse response = handler(*request);
      if (response.delay.count() > 0)
        std::this_thread::sleep_for(response.delay);
      if (response.hang_up) return;
      std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                        status_text(response.status) + "\r\n";
      for (const std::string& h : response.headers) out += h + "\r\n";
      if (response.stream && request->method != "HEAD") {
        if (!send_stream(fd, response, out, stop)) return;
        continue;
      }
      out += "Content-Length: " + std::to_string(response.body.size()) +
             "\r\n\r\n";
      if (request->method != "HEAD") out += response.body;
      send_all(fd, out);
    }
  }

  void run() {
    while (!stop) {
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      serve(fd);
      ::close(fd);
    }
  }
};

HttpServer::HttpServer(RequestHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(impl_->listen_fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(impl_->listen_fd, reinterpret_cast<sockaddr*>(&address),
                 sizeof(address)) == 0);
  REQUIRE(::listen(impl_->listen_fd, 16) == 0);
  socklen_t size = sizeof(address);
  REQUIRE(::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&address),
                        &size) == 0);
  impl_->port = ntohs(address.sin_port);
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

HttpServer::~HttpServer() {
  impl_->stop = true;
  impl_->thread.join();
  ::close(impl_->listen_fd);
}

uint16_t HttpServer::port() const { return impl_->port; }

std::string HttpServer::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + std::string(path);
}

std::vector<RecordedRequest> HttpServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

}  // namespace runner::testing
