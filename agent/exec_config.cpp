#include "agent/exec_config.hpp"

#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/fs.hpp"

namespace runner::agent {
namespace {

// ---- a strict YAML subset ---------------------------------------------------

struct MapEntry;

struct Node {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;
  std::vector<Node> items;
  std::vector<MapEntry> entries;
  std::vector<int> key_lines;  // line of each entries[i] key
  int line = 0;
};

// Defined after Node: a vector of an incomplete type is fine, a std::pair
// of one is not (clang's libstdc++ instantiation).
struct MapEntry {
  std::string key;
  Node value;
};

struct Line {
  int number = 0;
  size_t indent = 0;
  std::string text;  // without indentation, comment and trailing blanks
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_blank(s.front()) || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool is_dash_item(const std::string& text) {
  return text == "-" || (text.size() >= 2 && text[0] == '-' && text[1] == ' ');
}

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
// Deeper collections are refused: the parser (and the Node tree's
// destructor) recurse once per level, so an unbounded depth would overflow
// the stack. Real configs nest about five levels.
constexpr int kMaxNesting = 64;

// Counts one level of nesting while it lives.
class NestingLevel {
 public:
  explicit NestingLevel(int& depth) : depth_(depth) { ++depth_; }
  ~NestingLevel() { --depth_; }
  NestingLevel(const NestingLevel&) = delete;
  NestingLevel& operator=(const NestingLevel&) = delete;
  bool too_deep() const { return depth_ > kMaxNesting; }

 private:
  int& depth_;
};

class YamlParser {
 public:
  explicit YamlParser(std::string path) : path_(std::move(path)) {}

  base::Result<Node> parse(std::string_view text) {
    // A UTF-8 byte order mark (editors on Windows write one) is not content.
    if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
    if (auto st = split_lines(text); !st) return std::move(st.error());
    if (lines_.empty()) return Node{};
    auto root = parse_block(lines_[0].indent);
    if (!root) return root;
    if (pos_ < lines_.size())
      return error(lines_[pos_].number, "unexpected content");
    return root;
  }

 private:
  base::Error error(int line, const std::string& message) const {
    return base::Error(path_ + ":" + std::to_string(line) + ": " + message);
  }

  base::Error too_deep(int line) const {
    return error(line, "lists and mappings nested deeper than " +
                           std::to_string(kMaxNesting) + " levels");
  }

  base::Status split_lines(std::string_view text) {
    int number = 0;
    while (!text.empty() || number == 0) {
      size_t nl = text.find('\n');
      std::string_view raw = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view()
                                          : text.substr(nl + 1);
      ++number;
      size_t indent = 0;
      while (indent < raw.size() && raw[indent] == ' ') ++indent;
      if (indent < raw.size() && raw[indent] == '\t') {
        return error(number, "tabs are not allowed in indentation");
      }
      std::string body = strip_comment(raw.substr(indent));
      if (body.empty()) continue;
      if (number == 1 && body == "---") continue;
      if (body == "---" || body == "...") {
        return error(number, "multiple YAML documents are not supported");
      }
      lines_.push_back({number, indent, std::move(body)});
      if (text.empty()) break;
    }
    return {};
  }

  // Drops a '#' comment that starts the line or follows a blank, outside
  // quotes.
  static std::string strip_comment(std::string_view s) {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#' && (i == 0 || is_blank(s[i - 1]))) {
        s = s.substr(0, i);
        break;
      }
    }
    return std::string(trim(s));
  }

  // Position of the ':' that separates a block mapping key, or npos.
  static size_t map_colon(const std::string& text) {
    if (text.empty() || text[0] == '[' || text[0] == '{')
      return std::string::npos;
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (quote == '"' && c == '\\') {
        ++i;
      } else if (quote != 0) {
        if (c == quote) quote = 0;
      } else if ((c == '"' || c == '\'') && i == 0) {
        quote = c;
      } else if (c == ':' && (i + 1 == text.size() || is_blank(text[i + 1]))) {
        return i;
      }
    }
    return std::string::npos;
  }

  base::Result<Node> parse_block(size_t indent) {
    const Line& line = lines_[pos_];
    const NestingLevel level(depth_);
    if (level.too_deep()) return too_deep(line.number);
    if (is_dash_item(line.text)) return parse_list(indent);
    if (map_colon(line.text) != std::string::npos) return parse_map(indent);
    auto node = parse_inline(line.text, line.number);
    ++pos_;
    return node;
  }

  base::Result<Node> parse_list(size_t indent) {
    Node list;
    list.kind = Node::Kind::kList;
    list.line = lines_[pos_].number;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent &&
           is_dash_item(lines_[pos_].text)) {
      Line& line = lines_[pos_];
      std::string rest(trim(std::string_view(line.text).substr(1)));
      if (rest.empty()) {
        ++pos_;
        if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
          auto item = parse_block(lines_[pos_].indent);
          if (!item) return item;
          list.items.push_back(std::move(*item));
        } else {
          {
            Node null_item;
            null_item.line = line.number;
            list.items.push_back(std::move(null_item));
          }
        }
        continue;
      }
      // "- key: value" opens a mapping whose keys line up with `key`.
      line.indent = indent + (line.text.size() - rest.size());
      line.text = rest;
      auto item = parse_block(line.indent);
      if (!item) return item;
      list.items.push_back(std::move(*item));
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return error(lines_[pos_].number, "unexpected indentation");
    }
    return list;
  }

  base::Result<Node> parse_map(size_t indent) {
    Node map;
    map.kind = Node::Kind::kMap;
    map.line = lines_[pos_].number;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent &&
           !is_dash_item(lines_[pos_].text)) {
      const Line line = lines_[pos_];
      size_t colon = map_colon(line.text);
      if (colon == std::string::npos) {
        return error(line.number, "expected 'key: value'");
      }
      auto key_node = parse_inline(
          std::string(trim(line.text.substr(0, colon))), line.number);
      if (!key_node) return key_node;
      if (key_node->kind != Node::Kind::kScalar) {
        return error(line.number, "a key must be a plain or quoted string");
      }
      for (const auto& [existing, unused] : map.entries) {
        if (existing == key_node->scalar) {
          return error(line.number, "duplicate key '" + existing + "'");
        }
      }
      std::string value(trim(std::string_view(line.text).substr(colon + 1)));
      ++pos_;
      Node child;
      child.line = line.number;
      if (!value.empty()) {
        auto parsed = parse_inline(value, line.number);
        if (!parsed) return parsed;
        child = std::move(*parsed);
      } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        auto parsed = parse_block(lines_[pos_].indent);
        if (!parsed) return parsed;
        child = std::move(*parsed);
      } else if (pos_ < lines_.size() && lines_[pos_].indent == indent &&
                 is_dash_item(lines_[pos_].text)) {
        // A list may sit at the same indentation as its key.
        auto parsed = parse_list(indent);
        if (!parsed) return parsed;
        child = std::move(*parsed);
      }
      map.entries.push_back(MapEntry{key_node->scalar, std::move(child)});
      map.key_lines.push_back(line.number);
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return error(lines_[pos_].number, "unexpected indentation");
    }
    return map;
  }

  base::Result<Node> parse_inline(const std::string& text, int line) {
    size_t i = 0;
    auto node = parse_flow(text, i, line, /*in_flow=*/false);
    if (!node) return node;
    while (i < text.size() && is_blank(text[i])) ++i;
    if (i != text.size()) {
      return error(line,
                   "unexpected text after value: '" + text.substr(i) + "'");
    }
    return node;
  }

  base::Result<Node> parse_quoted(const std::string& s, size_t& i, int line) {
    const char quote = s[i++];
    Node node;
    node.kind = Node::Kind::kScalar;
    node.line = line;
    while (true) {
      if (i >= s.size()) return error(line, "unterminated quoted string");
      char c = s[i++];
      if (c == quote) {
        if (quote == '\'' && i < s.size() && s[i] == '\'') {
          node.scalar += '\'';
          ++i;
          continue;
        }
        return node;
      }
      if (quote == '"' && c == '\\') {
        if (i >= s.size()) return error(line, "unterminated quoted string");
        char e = s[i++];
        switch (e) {
          case '"':
          case '\\':
          case '/':
            node.scalar += e;
            break;
          case 'n':
            node.scalar += '\n';
            break;
          case 't':
            node.scalar += '\t';
            break;
          case 'r':
            node.scalar += '\r';
            break;
          case '0':
            node.scalar += '\0';
            break;
          default:
            return error(line, std::string("unsupported escape '\\") + e + "'");
        }
        continue;
      }
      node.scalar += c;
    }
  }

  // One value starting at s[i]: flow list, flow map, quoted or plain scalar.
  base::Result<Node> parse_flow(const std::string& s, size_t& i, int line,
                                bool in_flow) {
    while (i < s.size() && is_blank(s[i])) ++i;
    Node node;
    node.line = line;
    if (i >= s.size()) return node;  // null
    const char c = s[i];
    if (c == '&' || c == '*' || c == '!' || c == '|' || c == '>' || c == '%' ||
        c == '@' || c == '`') {
      return error(line, std::string("unsupported YAML syntax '") + c +
                             "' (anchors, tags and block scalars are not "
                             "supported)");
    }
    if (c == '"' || c == '\'') return parse_quoted(s, i, line);
    if (c == '[' || c == '{') {
      const NestingLevel level(depth_);
      if (level.too_deep()) return too_deep(line);
      const char close = c == '[' ? ']' : '}';
      node.kind = c == '[' ? Node::Kind::kList : Node::Kind::kMap;
      ++i;
      while (true) {
        while (i < s.size() && is_blank(s[i])) ++i;
        if (i >= s.size()) {
          return error(line, std::string("unterminated '") + c +
                                 "' (flow collections must fit on one line)");
        }
        if (s[i] == close) {
          ++i;
          return node;
        }
        if (node.kind == Node::Kind::kList) {
          auto item = parse_flow(s, i, line, true);
          if (!item) return item;
          node.items.push_back(std::move(*item));
        } else {
          auto key = parse_flow(s, i, line, true);
          if (!key) return key;
          if (key->kind != Node::Kind::kScalar) {
            return error(line, "a key must be a plain or quoted string");
          }
          while (i < s.size() && is_blank(s[i])) ++i;
          if (i >= s.size() || s[i] != ':') {
            return error(line, "expected ':' after key '" + key->scalar + "'");
          }
          ++i;
          auto value = parse_flow(s, i, line, true);
          if (!value) return value;
          node.entries.push_back(MapEntry{key->scalar, std::move(*value)});
          node.key_lines.push_back(line);
        }
        while (i < s.size() && is_blank(s[i])) ++i;
        if (i >= s.size()) {
          return error(line, std::string("unterminated '") + c +
                                 "' (flow collections must fit on one line)");
        }
        if (s[i] == ',') {
          ++i;
        } else if (s[i] != close) {
          return error(line, std::string("expected ',' or '") + close + "'");
        }
      }
    }
    // Plain scalar: to the end of the line, or in flow context up to , ] }
    // or a ':' that separates a key.
    size_t start = i;
    while (i < s.size()) {
      char d = s[i];
      if (in_flow && (d == ',' || d == ']' || d == '}' || d == '[' || d == '{'))
        break;
      if (in_flow && d == ':' &&
          (i + 1 == s.size() || is_blank(s[i + 1]) || s[i + 1] == ',' ||
           s[i + 1] == '}')) {
        break;
      }
      ++i;
    }
    std::string plain(trim(std::string_view(s).substr(start, i - start)));
    if (plain.empty() || plain == "~" || plain == "null" || plain == "Null" ||
        plain == "NULL") {
      return node;
    }
    node.kind = Node::Kind::kScalar;
    node.scalar = std::move(plain);
    return node;
  }

  std::string path_;
  std::vector<Line> lines_;
  size_t pos_ = 0;
  int depth_ = 0;  // collections being parsed (NestingLevel)
};

// ---- the config schema --------------------------------------------------

struct Options {
  WalltimeArgs args;
  std::optional<std::string> working_directory;
};

class ConfigReader {
 public:
  ConfigReader(std::string path, std::string base_dir)
      : path_(std::move(path)), base_dir_(std::move(base_dir)) {}

  base::Result<std::vector<ExecTarget>> read(const Node& root) {
    if (root.kind != Node::Kind::kMap) {
      return error(root.line, "expected a mapping with 'benchmarks:'");
    }
    Options defaults;
    const Node* benchmarks = nullptr;
    for (const auto& [key, value] : root.entries) {
      if (key == "options") {
        if (auto st = read_options(value, defaults); !st)
          return std::move(st.error());
      } else if (key == "benchmarks") {
        benchmarks = &value;
      } else {
        return error(
            key_line(root, key),
            "unknown key '" + key + "' (expected 'options' or 'benchmarks')");
      }
    }
    if (benchmarks == nullptr || benchmarks->kind == Node::Kind::kNull) {
      return error(root.line, "no 'benchmarks:' list");
    }
    if (benchmarks->kind != Node::Kind::kList || benchmarks->items.empty()) {
      return error(benchmarks->line, "'benchmarks' must be a non-empty list");
    }
    std::vector<ExecTarget> targets;
    for (const Node& item : benchmarks->items) {
      auto target = read_benchmark(item, defaults);
      if (!target) return std::move(target.error());
      targets.push_back(std::move(*target));
    }
    return targets;
  }

 private:
  base::Error error(int line, const std::string& message) const {
    return base::Error(path_ + ":" + std::to_string(line) + ": " + message);
  }

  static int key_line(const Node& map, const std::string& key) {
    for (size_t i = 0; i < map.entries.size() && i < map.key_lines.size();
         ++i) {
      if (map.entries[i].key == key) return map.key_lines[i];
    }
    return map.line;
  }

  base::Result<std::string> scalar(const Node& node, const std::string& key) {
    if (node.kind != Node::Kind::kScalar) {
      return error(node.line, "'" + key + "' must be a string");
    }
    return node.scalar;
  }

  base::Status read_options(const Node& node, Options& out) {
    if (node.kind == Node::Kind::kNull) return {};
    if (node.kind != Node::Kind::kMap) {
      return error(node.line, "'options' must be a mapping");
    }
    for (const auto& [key, value] : node.entries) {
      std::optional<std::string>* text = nullptr;
      if (key == "warmup-time") text = &out.args.warmup_time;
      if (key == "max-time") text = &out.args.max_time;
      if (key == "min-time") text = &out.args.min_time;
      if (key == "working-directory") text = &out.working_directory;
      if (text != nullptr) {
        RUNNER_ASSIGN_OR_RETURN(*text, scalar(value, key), "options");
        continue;
      }
      if (key == "max-rounds" || key == "min-rounds") {
        RUNNER_ASSIGN_OR_RETURN(std::string s, scalar(value, key), "options");
        uint64_t n = 0;
        bool ok = !s.empty() && s.size() <= 19;
        for (char c : s) ok = ok && c >= '0' && c <= '9';
        if (ok) n = std::stoull(s);
        if (!ok || n == 0) {
          return error(
              value.line,
              "'" + key + "' must be a positive integer, got '" + s + "'");
        }
        (key == "max-rounds" ? out.args.max_rounds : out.args.min_rounds) = n;
        continue;
      }
      return error(key_line(node, key),
                   "unknown option '" + key +
                       "' (expected warmup-time, max-time, min-time, "
                       "max-rounds, min-rounds, working-directory)");
    }
    return {};
  }

  base::Result<ExecTarget> read_benchmark(const Node& node,
                                          const Options& defaults) {
    if (node.kind != Node::Kind::kMap) {
      return error(node.line, "each benchmark must be a mapping with 'exec:'");
    }
    ExecTarget target;
    Options options = defaults;
    const Node* exec = nullptr;
    for (const auto& [key, value] : node.entries) {
      if (key == "name") {
        RUNNER_ASSIGN_OR_RETURN(target.name, scalar(value, key), "benchmark");
      } else if (key == "id") {
        RUNNER_ASSIGN_OR_RETURN(std::string id, scalar(value, key),
                                "benchmark");
        (void)id;
      } else if (key == "exec") {
        exec = &value;
      } else if (key == "entrypoint") {
        return error(key_line(node, key),
                     "'entrypoint' targets are not supported by runner exec "
                     "(run them with `runner run -- <command>`)");
      } else if (key == "options") {
        Options own;
        if (auto st = read_options(value, own); !st)
          return std::move(st.error());
        merge(own, options);
      } else {
        return error(key_line(node, key),
                     "unknown benchmark key '" + key +
                         "' (expected name, id, exec, options)");
      }
    }
    if (exec == nullptr) return error(node.line, "benchmark without 'exec:'");
    if (exec->kind == Node::Kind::kScalar) {
      auto words = split_shell_words(exec->scalar);
      if (!words) return error(exec->line, "exec: " + words.error().message());
      target.command = std::move(*words);
    } else if (exec->kind == Node::Kind::kList) {
      for (const Node& word : exec->items) {
        if (word.kind != Node::Kind::kScalar) {
          return error(word.line, "'exec' list items must be strings");
        }
        target.command.push_back(word.scalar);
      }
    }
    if (target.command.empty() || target.command[0].empty()) {
      return error(exec->line, "'exec' must be a non-empty command");
    }
    target.args = options.args;
    if (options.working_directory) {
      std::filesystem::path dir(*options.working_directory);
      if (dir.is_relative()) dir = std::filesystem::path(base_dir_) / dir;
      target.working_directory = dir.lexically_normal().string();
    }
    return target;
  }

  static void merge(const Options& own, Options& out) {
    if (own.args.warmup_time) out.args.warmup_time = own.args.warmup_time;
    if (own.args.max_time) out.args.max_time = own.args.max_time;
    if (own.args.min_time) out.args.min_time = own.args.min_time;
    if (own.args.max_rounds) out.args.max_rounds = own.args.max_rounds;
    if (own.args.min_rounds) out.args.min_rounds = own.args.min_rounds;
    if (own.working_directory) out.working_directory = own.working_directory;
  }

  std::string path_;
  std::string base_dir_;
};

nlohmann::ordered_json optional_json(const std::optional<std::string>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
nlohmann::ordered_json optional_json(const std::optional<uint64_t>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string exec_targets_json(std::span<const ExecTarget> targets) {
  using Json = nlohmann::ordered_json;
  Json list = Json::array();
  for (const ExecTarget& t : targets) {
    Json item;
    item["command"] = t.command;
    if (t.name) item["name"] = *t.name;
    item["walltime_args"] = {{"warmup_time", optional_json(t.args.warmup_time)},
                             {"max_time", optional_json(t.args.max_time)},
                             {"min_time", optional_json(t.args.min_time)},
                             {"max_rounds", optional_json(t.args.max_rounds)},
                             {"min_rounds", optional_json(t.args.min_rounds)}};
    if (t.working_directory) item["working_directory"] = *t.working_directory;
    list.push_back(std::move(item));
  }
  return list.dump(-1, ' ', false, Json::error_handler_t::replace);
}

base::Result<std::vector<std::string>> split_shell_words(
    std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i++];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\\') {
      if (i >= text.size()) return base::Error("trailing backslash");
      char next = text[i++];
      if (next != '\n') word += next;  // backslash-newline joins lines
      in_word = true;
    } else if (c == '\'') {
      size_t end = text.find('\'', i);
      if (end == std::string_view::npos) {
        return base::Error("unterminated single quote");
      }
      word.append(text.substr(i, end - i));
      i = end + 1;
      in_word = true;
    } else if (c == '"') {
      in_word = true;
      while (true) {
        if (i >= text.size()) return base::Error("unterminated double quote");
        char d = text[i++];
        if (d == '"') break;
        if (d == '\\' && i < text.size() &&
            (text[i] == '"' || text[i] == '\\' || text[i] == '$' ||
             text[i] == '`' || text[i] == '\n')) {
          if (text[i] != '\n') word += text[i];
          ++i;
          continue;
        }
        word += d;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

base::Result<std::vector<ExecTarget>> parse_exec_config(
    std::string_view text, const std::string& path,
    const std::string& base_dir) {
  YamlParser parser(path);
  RUNNER_ASSIGN_OR_RETURN(Node root, parser.parse(text), "reading config");
  ConfigReader reader(path, base_dir);
  auto targets = reader.read(root);
  if (!targets) return std::move(targets.error()).context("reading config");
  return targets;
}

base::Result<std::optional<std::vector<ExecTarget>>> load_exec_config(
    const std::string& dir) {
  for (const char* name :
       {"runner.yml", "runner.yaml", "codspeed.yml", "codspeed.yaml",
        ".codspeed.yml", ".codspeed.yaml"}) {
    std::string path = dir + "/" + name;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    // The user's own file: a symlink is followed (a FIFO is still refused).
    RUNNER_ASSIGN_OR_RETURN(std::string text,
                            base::read_file(path, base::following_symlinks()),
                            "reading config");
    auto targets = parse_exec_config(text, path, dir);
    if (!targets) return std::move(targets.error());
    return std::optional<std::vector<ExecTarget>>(std::move(*targets));
  }
  return std::optional<std::vector<ExecTarget>>();
}

}  // namespace runner::agent
