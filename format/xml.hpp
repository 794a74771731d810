// A bounded XML reader over expat, wrapped here and nowhere else: the
// documents of the S3 API (format/s3_xml) come from a store that may be
// hostile. Streaming (no tree is built): the handler sees each element
// open and close with its path from the root and its own text. Refused:
// a document larger than max_bytes, elements nested deeper than max_depth,
// an element's text longer than max_text_bytes, any DOCTYPE (so no entity
// can be declared and nothing external is ever loaded), undefined
// entities, and anything that is not well-formed XML. Time is linear in
// the document's size.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/base.hpp"

namespace runner::format {

struct XmlLimits {
  size_t max_bytes = 16u << 20;
  size_t max_depth = 32;
  size_t max_text_bytes = 64u << 10;
};

class XmlHandler {
 public:
  virtual ~XmlHandler() = default;
  // An element opens. `path` is the names from the root, '/'-separated
  // ("ListBucketResult/Contents"), namespaces not interpreted.
  virtual base::Status open(std::string_view path) = 0;
  // It closes; `text` is its character data outside its children,
  // entities decoded, in UTF-8. An error stops the reading and is what
  // read_xml returns.
  virtual base::Status close(std::string_view path, std::string_view text) = 0;
};

// Reads `xml` whole; errors name the line and column.
base::Status read_xml(std::string_view xml, XmlHandler& handler,
                      const XmlLimits& limits = {});

}  // namespace runner::format
