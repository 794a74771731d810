// The S3 API's XML documents: read and written here only (see s3_xml.hpp).
// A flat scan for <Tag>text</Tag> inside a parent element is all these
// documents need; nesting beyond that is not interpreted.
#include "format/s3_xml.hpp"

#include <cstdlib>

namespace runner::format {
namespace {

// The text of the next <tag>...</tag> in xml[from, to), entities decoded;
// std::nullopt when absent. `at` moves past it.
std::optional<std::string> element(std::string_view xml, std::string_view tag,
                                   size_t& at, size_t to);

bool decode_entity(std::string_view text, size_t& i, std::string& out) {
  const size_t semi = text.find(';', i);
  if (semi == std::string_view::npos || semi - i > 10) return false;
  const std::string_view name = text.substr(i + 1, semi - i - 1);
  if (name == "amp")
    out += '&';
  else if (name == "lt")
    out += '<';
  else if (name == "gt")
    out += '>';
  else if (name == "quot")
    out += '"';
  else if (name == "apos")
    out += '\'';
  else if (name.size() > 1 && name[0] == '#') {
    const bool hex = name[1] == 'x';
    const std::string digits(name.substr(hex ? 2 : 1));
    char* end = nullptr;
    const unsigned long code =
        std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
    if (digits.empty() || *end != '\0' || code == 0 || code > 0x7f)
      return false;
    out += static_cast<char>(code);
  } else {
    return false;
  }
  i = semi;
  return true;
}

std::optional<std::string> decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') return std::nullopt;
    if (text[i] != '&') {
      out += text[i];
    } else if (!decode_entity(text, i, out)) {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::string> element(std::string_view xml, std::string_view tag,
                                   size_t& at, size_t to) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  const size_t begin = xml.find(open, at);
  if (begin == std::string_view::npos || begin >= to) return std::nullopt;
  const size_t start = begin + open.size();
  const size_t end = xml.find(close, start);
  if (end == std::string_view::npos || end > to) return std::nullopt;
  at = end + close.size();
  return decode(xml.substr(start, end - start));
}

std::optional<std::string> first(std::string_view xml, std::string_view tag) {
  size_t at = 0;
  return element(xml, tag, at, xml.size());
}

bool parse_u64(const std::string& text, uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

base::Result<S3Object> read_object(std::string_view xml, size_t from,
                                   size_t to) {
  S3Object o;
  size_t at = from;
  auto key = element(xml, "Key", at, to);
  if (!key || key->empty())
    return base::Error("S3 listing: <Contents> without a <Key>");
  o.key = *key;
  at = from;
  auto size = element(xml, "Size", at, to);
  if (!size || !parse_u64(*size, o.size))
    return base::Error("S3 listing: bad <Size> for " + o.key);
  at = from;
  o.last_modified = element(xml, "LastModified", at, to).value_or("");
  at = from;
  o.etag = element(xml, "ETag", at, to).value_or("");
  return o;
}

}  // namespace

base::Result<S3ListPage> read_s3_list_page(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos)
    return base::Error("S3 listing: not a <ListBucketResult> document");
  S3ListPage page;
  for (size_t at = xml.find("<Contents>"); at != std::string_view::npos;
       at = xml.find("<Contents>", at)) {
    const size_t end = xml.find("</Contents>", at);
    if (end == std::string_view::npos)
      return base::Error("S3 listing: unterminated <Contents>");
    auto object = read_object(xml, at, end);
    if (!object) return object.error();
    page.objects.push_back(std::move(*object));
    at = end;
  }
  page.truncated = first(xml, "IsTruncated").value_or("false") == "true";
  page.next_continuation_token =
      first(xml, "NextContinuationToken").value_or("");
  if (page.truncated && page.next_continuation_token.empty())
    return base::Error("S3 listing: truncated without a continuation token");
  return page;
}

base::Result<std::string> read_s3_upload_id(std::string_view xml) {
  auto id = first(xml, "UploadId");
  if (!id || id->empty())
    return base::Error(
        "S3: no <UploadId> in the answer to CreateMultipartUpload");
  return *id;
}

std::optional<S3ErrorDocument> read_s3_error(std::string_view xml) {
  const size_t at = xml.find("<Error>");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = xml.substr(at);
  return S3ErrorDocument{first(rest, "Code").value_or("unknown"),
                         first(rest, "Message").value_or("")};
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
