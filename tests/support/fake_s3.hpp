// A scripted S3 endpoint for the store's tests, on tests/support/
// http_server: objects in memory under one bucket ("bench"), PUT stores,
// GET answers the object or what the test scripted for its key (a 403, a
// 404 for a key still listed, a dropped connection), ListObjectsV2 lists
// every key under the prefix plus keys the test adds (a hostile listing).
// For what s3rver cannot be made to do; signatures are not checked.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/http_server.hpp"

namespace runner::testing {

inline std::string percent_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(
          std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

class FakeS3 {
 public:
  FakeS3() : server_([this](const RecordedRequest& r) { return answer(r); }) {}

  // "http://127.0.0.1:PORT", for AWS_ENDPOINT_URL or S3Config::endpoint.
  std::string endpoint() const {
    std::string url = server_.url("");
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
  }
  void put(const std::string& key, std::string body) {
    std::lock_guard lock(mutex_);
    objects_[key] = std::move(body);
  }
  // GET of `key` answers `response`; the key is listed.
  void script(const std::string& key, ScriptedResponse response) {
    std::lock_guard lock(mutex_);
    scripted_[key] = std::move(response);
  }
  void list_also(const std::string& key) {
    std::lock_guard lock(mutex_);
    extra_listed_.push_back(key);
  }
  std::string object(const std::string& key) {
    std::lock_guard lock(mutex_);
    return objects_.at(key);
  }
  std::vector<std::string> keys() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& entry : objects_) out.push_back(entry.first);
    return out;
  }
  // The keys of the object GETs so far, in order.
  std::vector<std::string> gets() const {
    std::vector<std::string> out;
    for (const auto& r : server_.requests())
      if (r.method == "GET" && r.target.find('?') == std::string::npos)
        out.push_back(percent_decode(r.target.substr(kBucketPath.size())));
    return out;
  }

 private:
  static constexpr std::string_view kBucketPath = "/bench/";

  ScriptedResponse answer(const RecordedRequest& r) {
    std::lock_guard lock(mutex_);
    if (r.method == "GET" && r.target.find('?') != std::string::npos)
      return listing(r);
    const std::string key = percent_decode(r.target.substr(kBucketPath.size()));
    if (r.method == "PUT") {
      objects_[key] = r.body;
      return {200, {"ETag: \"e\""}, ""};
    }
    if (auto it = scripted_.find(key); it != scripted_.end()) return it->second;
    if (auto it = objects_.find(key); it != objects_.end())
      return {200, {}, it->second};
    return {404, {}, "<Error><Code>NoSuchKey</Code></Error>"};
  }

  ScriptedResponse listing(const RecordedRequest& r) {
    const size_t at = r.target.find("prefix=");
    const size_t end = r.target.find('&', at);
    const std::string prefix =
        at == std::string::npos
            ? ""
            : percent_decode(r.target.substr(
                  at + 7, end == std::string::npos ? end : end - at - 7));
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult>"
        "<Name>bench</Name><IsTruncated>false</IsTruncated>";
    auto add = [&](const std::string& key) {
      xml += "<Contents><Key>" + key +
             "</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
             "<ETag>&quot;e&quot;</ETag><Size>1</Size></Contents>";
    };
    for (const auto& entry : objects_)
      if (entry.first.starts_with(prefix)) add(entry.first);
    for (const auto& entry : scripted_)
      if (entry.first.starts_with(prefix) && !objects_.contains(entry.first))
        add(entry.first);
    for (const std::string& key : extra_listed_) add(key);
    return {
        200, {"Content-Type: application/xml"}, xml + "</ListBucketResult>"};
  }

  std::mutex mutex_;
  std::map<std::string, std::string> objects_;
  std::map<std::string, ScriptedResponse> scripted_;
  std::vector<std::string> extra_listed_;
  HttpServer server_;
};

}  // namespace runner::testing
