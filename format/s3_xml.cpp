// The S3 API's XML documents: read and written here only (see s3_xml.hpp).
// Read with format/xml (expat): each document is a root element with a
// few known children; unknown elements are ignored.
#include "format/s3_xml.hpp"

#include <cstdlib>

#include "format/xml.hpp"

namespace runner::format {
namespace {

constexpr std::string_view kList = "ListBucketResult";
constexpr std::string_view kContents = "ListBucketResult/Contents";

bool parse_u64(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  out = std::strtoull(std::string(text).c_str(), nullptr, 10);
  return true;
}

// The root element must be `root`.
base::Status check_root(std::string_view path, std::string_view root) {
  if (path.find('/') == std::string_view::npos && path != root)
    return base::Error("not a <" + std::string(root) + "> document");
  return {};
}

class ListPageReader : public XmlHandler {
 public:
  S3ListPage page;

  base::Status open(std::string_view path) override {
    if (auto s = check_root(path, kList); !s) return s;
    if (path == kContents) {
      object_ = S3Object{};
      has_key_ = has_size_ = false;
    }
    return {};
  }

  base::Status close(std::string_view path, std::string_view text) override {
    if (path.size() > kContents.size() &&
        path.substr(0, kContents.size() + 1) == std::string(kContents) + "/")
      return object_member(path.substr(kContents.size() + 1), text);
    if (path == kContents) return end_object();
    if (path == "ListBucketResult/IsTruncated") {
      if (text != "true" && text != "false")
        return base::Error("<IsTruncated> is neither true nor false");
      page.truncated = text == "true";
    } else if (path == "ListBucketResult/NextContinuationToken") {
      page.next_continuation_token = text;
    }
    return {};
  }

 private:
  base::Status object_member(std::string_view name, std::string_view text) {
    if (name == "Key") {
      if (has_key_) return base::Error("<Contents> with two <Key>");
      object_.key = text;
      has_key_ = true;
    } else if (name == "Size") {
      if (!parse_u64(text, object_.size))
        return base::Error("bad <Size> in a <Contents>");
      has_size_ = true;
    } else if (name == "LastModified") {
      object_.last_modified = text;
    } else if (name == "ETag") {
      object_.etag = text;
    }
    return {};
  }

  base::Status end_object() {
    if (!has_key_ || object_.key.empty())
      return base::Error("<Contents> without a <Key>");
    if (!has_size_) return base::Error("<Contents> without a <Size>");
    page.objects.push_back(std::move(object_));
    return {};
  }

  S3Object object_;
  bool has_key_ = false;
  bool has_size_ = false;
};

// The text of root/child, root being checked.
class ChildReader : public XmlHandler {
 public:
  ChildReader(std::string_view root, std::string_view child)
      : root_(root), path_(std::string(root) + "/" + std::string(child)) {}
  std::optional<std::string> text;

  base::Status open(std::string_view path) override {
    return check_root(path, root_);
  }
  base::Status close(std::string_view path, std::string_view value) override {
    if (path == path_ && !text) text = std::string(value);
    return {};
  }

 private:
  std::string_view root_;
  std::string path_;
};

// The members of an <Error> root; not one when the root is another.
class ErrorReader : public XmlHandler {
 public:
  bool is_error = false;
  S3ErrorDocument document{"unknown", ""};

  base::Status open(std::string_view path) override {
    if (path == "Error") is_error = true;
    if (!is_error) return base::Error("not an <Error> document");
    return {};
  }
  base::Status close(std::string_view path, std::string_view text) override {
    if (path == "Error/Code" && !text.empty()) document.code = text;
    if (path == "Error/Message") document.message = text;
    return {};
  }
};

}  // namespace

base::Result<S3ListPage> read_s3_list_page(std::string_view xml) {
  ListPageReader reader;
  if (auto s = read_xml(xml, reader); !s)
    return std::move(s.error()).context("S3 listing");
  if (reader.page.truncated && reader.page.next_continuation_token.empty())
    return base::Error("S3 listing: truncated without a continuation token");
  return std::move(reader.page);
}

base::Result<std::string> read_s3_upload_id(std::string_view xml) {
  ChildReader reader("InitiateMultipartUploadResult", "UploadId");
  if (auto s = read_xml(xml, reader); !s)
    return std::move(s.error()).context("S3 CreateMultipartUpload's answer");
  if (!reader.text || reader.text->empty())
    return base::Error(
        "S3: no <UploadId> in the answer to CreateMultipartUpload");
  return *reader.text;
}

std::optional<S3ErrorDocument> read_s3_error(std::string_view xml) {
  if (xml.find("<Error") == std::string_view::npos) return std::nullopt;
  ErrorReader reader;
  if (!read_xml(xml, reader) || !reader.is_error) return std::nullopt;
  return reader.document;
}

std::string write_s3_complete_multipart(const std::vector<std::string>& etags) {
  std::string xml =
      "<CompleteMultipartUpload "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (size_t i = 0; i < etags.size(); ++i) {
    std::string etag;
    for (const char c : etags[i]) {
      if (c == '&')
        etag += "&amp;";
      else if (c == '<')
        etag += "&lt;";
      else if (c == '>')
        etag += "&gt;";
      else if (c == '"')
        etag += "&quot;";
      else
        etag += c;
    }
    xml += "<Part><PartNumber>" + std::to_string(i + 1) +
           "</PartNumber><ETag>" + etag + "</ETag></Part>";
  }
  return xml + "</CompleteMultipartUpload>";
}

}  // namespace runner::format
