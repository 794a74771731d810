#include "format/json_checker.hpp"

#include <algorithm>
#include <charconv>
#include <climits>

namespace runner::format {
namespace {

// nlohmann's SAX events passed on to one of its DOM builders (`Builder`),
// except a container deeper than kMaxDocumentDepth: parsing stops there,
// before the builder grows it (and before nlohmann's msgpack reader
// recurses into it).
template <typename Json, typename Builder>
class DepthLimited {
 public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  explicit DepthLimited(Builder& builder) : builder_(builder) {}

  bool null() { return builder_.null(); }
  bool boolean(bool v) { return builder_.boolean(v); }
  bool number_integer(number_integer_t v) { return builder_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) {
    return builder_.number_unsigned(v);
  }
  bool number_float(number_float_t v, const string_t& text) {
    return builder_.number_float(v, text);
  }
  bool string(string_t& v) { return builder_.string(v); }
  bool binary(binary_t& v) { return builder_.binary(v); }
  bool key(string_t& v) { return builder_.key(v); }
  bool start_object(std::size_t n) {
    return enter() && builder_.start_object(n);
  }
  bool end_object() {
    --depth_;
    return builder_.end_object();
  }
  bool start_array(std::size_t n) { return enter() && builder_.start_array(n); }
  bool end_array() {
    --depth_;
    return builder_.end_array();
  }
  template <typename Exception>
  bool parse_error(std::size_t position, const std::string& token,
                   const Exception& e) {
    error_position_ = position;
    return builder_.parse_error(position, token, e);
  }

  bool too_deep() const { return too_deep_; }
  std::size_t error_position() const { return error_position_; }

 private:
  bool enter() {
    if (depth_ == kMaxDocumentDepth) {
      too_deep_ = true;
      return false;
    }
    ++depth_;
    return true;
  }

  Builder& builder_;
  std::size_t depth_ = 0, error_position_ = 0;
  bool too_deep_ = false;
};

// Runs the parser of `input_format` over `input` into `builder`, which
// builds `result`; `what` names the format in the error.
template <typename Json, typename Builder>
base::Result<Json> parse_bounded(std::string_view input,
                                 nlohmann::json::input_format_t input_format,
                                 Builder& builder, Json& result,
                                 const char* what) {
  DepthLimited<Json, Builder> sax(builder);
  bool ok = false;
  try {
    ok = Json::sax_parse(input, &sax, input_format, /*strict=*/true);
  } catch (const nlohmann::json::exception&) {
    ok = false;  // a size the DOM cannot hold
  }
  if (sax.too_deep())
    return base::Error("nested deeper than " +
                       std::to_string(kMaxDocumentDepth) + " levels");
  if (!ok || builder.is_errored())
    return base::Error(std::string("not ") + what + " (at byte " +
                       std::to_string(sax.error_position()) + ")");
  return std::move(result);
}

}  // namespace

template <typename Json>
base::Result<Json> parse_json_document(
    std::string_view text, bool replace_invalid_utf8,
    typename Json::parser_callback_t callback) {
  std::string replaced;
  if (replace_invalid_utf8 &&
      base::first_invalid_utf8(text) != std::string_view::npos) {
    replaced = base::replace_invalid_utf8(text);
    text = replaced;
  }
  Json result;
  constexpr auto kJson = nlohmann::json::input_format_t::json;
  if (!callback) {
    nlohmann::detail::json_sax_dom_parser<Json> builder(result, false);
    return parse_bounded(text, kJson, builder, result, "JSON");
  }
  nlohmann::detail::json_sax_dom_callback_parser<Json> builder(
      result, std::move(callback), false);
  auto parsed = parse_bounded(text, kJson, builder, result, "JSON");
  // As nlohmann::json::parse: a top-level value the callback dropped.
  if (parsed && parsed->is_discarded()) *parsed = nullptr;
  return parsed;
}

template base::Result<nlohmann::json> parse_json_document<nlohmann::json>(
    std::string_view, bool, nlohmann::json::parser_callback_t);
template base::Result<nlohmann::ordered_json>
parse_json_document<nlohmann::ordered_json>(
    std::string_view, bool, nlohmann::ordered_json::parser_callback_t);

base::Result<nlohmann::json> parse_msgpack_document(std::string_view bytes) {
  nlohmann::json result;
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> builder(result, false);
  return parse_bounded(bytes, nlohmann::json::input_format_t::msgpack, builder,
                       result, "msgpack");
}

uint64_t json_u64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return static_cast<uint64_t>(v.get<int64_t>());
  return 0;
}

void JsonChecker::problem(const std::string& path, const std::string& cause) {
  const std::string section = path.substr(0, path.find_first_of(".["));
  Problem& p = problems_[section];
  if (p.count++ != 0) return;
  // Keys come from the file: a huge one is cut.
  constexpr size_t kMaxShown = 200;
  p.first = path.size() <= kMaxShown ? path : path.substr(0, kMaxShown) + "...";
  p.first += ": " + cause;
}

const nlohmann::json* JsonChecker::member(const nlohmann::json& object,
                                          const char* key,
                                          nlohmann::json::value_t type,
                                          const std::string& path) {
  auto it = object.find(key);
  if (it == object.end()) return nullptr;
  if (it->type() != type) {
    problem(path.empty() ? key : path, std::string("expected ") +
                                           nlohmann::json(type).type_name() +
                                           ", got " + it->type_name());
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* JsonChecker::required(const nlohmann::json& object,
                                            const char* key,
                                            const std::string& path) {
  auto it = object.find(key);
  if (it != object.end()) return &*it;
  problem(path + "." + key, "missing");
  return nullptr;
}

const std::string* JsonChecker::string(const nlohmann::json& v,
                                       const std::string& path) {
  if (v.is_string()) return v.get_ptr<const std::string*>();
  problem(path, std::string("expected string, got ") + v.type_name());
  return nullptr;
}

std::optional<uint64_t> JsonChecker::u64(const nlohmann::json& v,
                                         const std::string& path) {
  if (v.is_number_integer()) return json_u64(v);
  problem(path, std::string("expected an integer, got ") + v.type_name());
  return std::nullopt;
}

std::optional<int32_t> JsonChecker::pid(const nlohmann::json& v,
                                        const std::string& path) {
  if (v.is_number_integer()) {
    const int64_t n = v.is_number_unsigned()
                          ? static_cast<int64_t>(std::min<uint64_t>(
                                v.get<uint64_t>(), INT64_MAX))
                          : v.get<int64_t>();
    if (n >= 0 && n <= INT32_MAX) return static_cast<int32_t>(n);
  }
  problem(path,
          "expected a pid, got " +
              v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return std::nullopt;
}

std::optional<int32_t> JsonChecker::pid_key(const std::string& text,
                                            const std::string& path) {
  int32_t pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec == std::errc() && end == text.data() + text.size() && pid >= 0)
    return pid;
  problem(path, "not a pid");
  return std::nullopt;
}

std::vector<std::string> JsonChecker::take_warnings() {
  std::vector<std::string> warnings;
  for (const auto& [section, p] : problems_) {
    std::string text = file_ + ": " + p.first;
    if (p.count > 1)
      text +=
          " (and " + std::to_string(p.count - 1) + " more in " + section + ")";
    warnings.push_back(text + ": ignored");
  }
  problems_.clear();
  return warnings;
}

}  // namespace runner::format
