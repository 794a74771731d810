// expat, wrapped here and nowhere else (see xml.hpp).
#include "format/xml.hpp"

#include <expat.h>

#include <optional>
#include <string>
#include <vector>

namespace runner::format {
namespace {

// What expat's callbacks share; the first error stops the parser.
struct Reading {
  XML_Parser parser = nullptr;
  XmlHandler* handler = nullptr;
  const XmlLimits* limits = nullptr;
  std::string path;
  std::vector<size_t> path_lengths;  // path's length before each open
  std::vector<std::string> texts;    // the text of each open element
  std::optional<base::Error> error;

  void fail(base::Error e) {
    if (!error) error = std::move(e);
    XML_StopParser(parser, XML_FALSE);
  }
};

Reading& reading_of(void* user) { return *static_cast<Reading*>(user); }

void on_start(void* user, const XML_Char* name, const XML_Char**) {
  Reading& r = reading_of(user);
  if (r.error) return;
  if (r.texts.size() >= r.limits->max_depth)
    return r.fail(base::Error("elements nested deeper than " +
                              std::to_string(r.limits->max_depth)));
  r.path_lengths.push_back(r.path.size());
  if (!r.path.empty()) r.path += '/';
  r.path += name;
  r.texts.emplace_back();
  if (auto s = r.handler->open(r.path); !s) r.fail(s.error());
}

void on_end(void* user, const XML_Char*) {
  Reading& r = reading_of(user);
  if (r.error || r.texts.empty()) return;
  const std::string text = std::move(r.texts.back());
  r.texts.pop_back();
  auto s = r.handler->close(r.path, text);
  r.path.resize(r.path_lengths.back());
  r.path_lengths.pop_back();
  if (!s) r.fail(s.error());
}

void on_text(void* user, const XML_Char* data, int length) {
  Reading& r = reading_of(user);
  if (r.error || r.texts.empty() || length <= 0) return;
  std::string& text = r.texts.back();
  if (text.size() + static_cast<size_t>(length) > r.limits->max_text_bytes)
    return r.fail(base::Error("an element's text is longer than " +
                              std::to_string(r.limits->max_text_bytes) +
                              " bytes"));
  text.append(data, static_cast<size_t>(length));
}

void on_doctype(void* user, const XML_Char*, const XML_Char*, const XML_Char*,
                int) {
  reading_of(user).fail(base::Error("a DOCTYPE (refused: no DTD is read)"));
}

// Any entity declaration (unreachable once DOCTYPE is refused; kept so
// that no declared entity can ever be expanded).
void on_entity(void* user, const XML_Char*, int, const XML_Char*, int,
               const XML_Char*, const XML_Char*, const XML_Char*,
               const XML_Char*) {
  reading_of(user).fail(base::Error("an entity declaration (refused)"));
}

struct ParserOwner {
  XML_Parser parser;
  ~ParserOwner() {
    if (parser != nullptr) XML_ParserFree(parser);
  }
};

std::string position(XML_Parser parser) {
  return "line " + std::to_string(XML_GetCurrentLineNumber(parser)) +
         ", column " + std::to_string(XML_GetCurrentColumnNumber(parser) + 1);
}

}  // namespace

base::Status read_xml(std::string_view xml, XmlHandler& handler,
                      const XmlLimits& limits) {
  if (xml.size() > limits.max_bytes)
    return base::Error("XML document of " + std::to_string(xml.size()) +
                       " bytes: more than " + std::to_string(limits.max_bytes));
  ParserOwner owner{XML_ParserCreate(nullptr)};
  if (owner.parser == nullptr) return base::Error("cannot start expat");
  Reading r;
  r.parser = owner.parser;
  r.handler = &handler;
  r.limits = &limits;
  XML_SetUserData(r.parser, &r);
  XML_SetElementHandler(r.parser, on_start, on_end);
  XML_SetCharacterDataHandler(r.parser, on_text);
  XML_SetStartDoctypeDeclHandler(r.parser, on_doctype);
  XML_SetEntityDeclHandler(r.parser, on_entity);
  XML_SetParamEntityParsing(r.parser, XML_PARAM_ENTITY_PARSING_NEVER);
  const auto status =
      XML_Parse(r.parser, xml.data(), static_cast<int>(xml.size()), XML_TRUE);
  if (r.error) {
    base::Error e = std::move(*r.error);
    return std::move(e).context("XML at " + position(r.parser));
  }
  if (status != XML_STATUS_OK)
    return base::Error("XML at " + position(r.parser) + ": " +
                       XML_ErrorString(XML_GetErrorCode(r.parser)));
  return {};
}

}  // namespace runner::format
