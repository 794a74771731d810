#include "agent/exec_config.hpp"

#include <filesystem>
#include <set>
#include <sstream>
#include <utility>

#include "base/base.hpp"
#include "format/format.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace runner::agent {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// "path:line:column: message" (yaml-cpp counts from 0, people from 1).
std::string at(const std::string& path, const YAML::Mark& mark,
               const std::string& message) {
  if (mark.is_null()) return path + ": " + message;
  return path + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1) + ": " + message;
}

// Thrown out of the depth check; carries the mark of the offending level.
struct TooDeep {
  YAML::Mark mark;
};

// First pass over the events: refuses nesting deeper than
// kMaxConfigNesting while the parser's own recursion is still that shallow,
// before any node is built. Aliases are leaves here, so a document that
// aliases itself cannot make this loop.
class DepthCheck : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&,
                       YAML::anchor_t, YAML::EmitterStyle::value) override {
    enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void enter(const YAML::Mark& mark) {
    if (++depth_ > kMaxConfigNesting) throw TooDeep{mark};
  }
  int depth_ = 0;
};

// The one document of `text`, or an error with file:line:column.
base::Result<YAML::Node> load_document(const std::string& text,
                                       const std::string& path) {
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DepthCheck check;
    parser.HandleNextDocument(check);
    if (parser.HandleNextDocument(check))
      return base::Error(path + ": multiple YAML documents are not supported");
    return YAML::Load(text);
  } catch (const TooDeep& e) {
    return base::Error(at(path, e.mark,
                          "lists and mappings nested deeper than " +
                              std::to_string(kMaxConfigNesting) + " levels"));
  } catch (const YAML::ParserException& e) {
    return base::Error(at(path, e.mark, e.msg));
  } catch (const YAML::Exception& e) {
    return base::Error(at(path, e.mark, e.msg));
  }
}

const char* kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a string";
    default:
      return "empty";
  }
}

struct Entry {
  std::string key;
  YAML::Node key_node, value;
};

// Options for one benchmark (the file's defaults, then its own).
struct Options {
  format::WalltimeOptions walltime;
  std::optional<std::string> working_directory;
};

class ConfigReader {
 public:
  ConfigReader(std::string path, std::string base_dir)
      : path_(std::move(path)), base_dir_(std::move(base_dir)) {}

  base::Result<std::vector<format::ExecTarget>> read(const YAML::Node& root);
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

 private:
  base::Error error(const YAML::Node& node, const std::string& message) const {
    return base::Error(at(path_, node.Mark(), message));
  }
  void warn_unknown(const Entry& entry, const std::string& expected) {
    warnings_.push_back(at(path_, entry.key_node.Mark(),
                           "unknown key '" + entry.key + "' (expected " +
                               expected + "), ignored"));
  }

  base::Result<std::vector<Entry>> entries(const YAML::Node& map,
                                           const std::string& what);
  base::Status merge_into(const YAML::Node& merged, std::vector<Entry>& out);
  base::Result<std::string> scalar(const Entry& entry);
  base::Status read_options(const YAML::Node& node, Options& out);
  base::Status read_option(const Entry& entry, Options& out);
  base::Result<std::vector<std::string>> read_command(const YAML::Node& exec);
  base::Result<format::ExecTarget> read_benchmark(const YAML::Node& node,
                                                  const Options& defaults);

  std::string path_;
  std::string base_dir_;
  std::vector<std::string> warnings_;
};

// The entries of a mapping in order, `<<` merge keys expanded (merged
// entries first, so the mapping's own keys win). Duplicate keys and keys
// that are not strings are errors.
base::Result<std::vector<Entry>> ConfigReader::entries(
    const YAML::Node& map, const std::string& what) {
  if (!map.IsMap())
    return error(map, what + " must be a mapping, not " + kind_name(map));
  std::vector<Entry> merged, own;
  std::set<std::string> seen;
  for (const auto& item : map) {
    if (!item.first.IsScalar())
      return error(item.first, "a key must be a string, not " +
                                   std::string(kind_name(item.first)));
    const std::string key = item.first.Scalar();
    if (!seen.insert(key).second)
      return error(item.first, "duplicate key '" + key + "'");
    if (key == "<<" && item.first.Tag() != "tag:yaml.org,2002:str") {
      if (auto st = merge_into(item.second, merged); !st) return st.error();
      continue;
    }
    own.push_back({key, item.first, item.second});
  }
  merged.insert(merged.end(), own.begin(), own.end());
  return merged;
}

// `<<: *map` or `<<: [*a, *b]` (earlier maps win over later ones).
base::Status ConfigReader::merge_into(const YAML::Node& merged,
                                      std::vector<Entry>& out) {
  std::vector<YAML::Node> maps;
  if (merged.IsSequence()) {
    for (const auto& item : merged) maps.insert(maps.begin(), item);
  } else {
    maps.push_back(merged);
  }
  for (const YAML::Node& map : maps) {
    if (!map.IsMap())
      return error(map, "'<<' must merge a mapping or a list of mappings");
    for (const auto& item : map) {
      if (!item.first.IsScalar())
        return error(item.first, "a key must be a string");
      out.push_back({item.first.Scalar(), item.first, item.second});
    }
  }
  return {};
}

base::Result<std::string> ConfigReader::scalar(const Entry& entry) {
  if (!entry.value.IsScalar())
    return error(entry.value, "'" + entry.key + "' must be a string, not " +
                                  kind_name(entry.value));
  return entry.value.Scalar();
}

base::Status ConfigReader::read_option(const Entry& entry, Options& out) {
  format::WalltimeOptions& w = out.walltime;
  std::optional<format::Duration>* duration =
      entry.key == "warmup-time" ? &w.warmup_time
      : entry.key == "max-time"  ? &w.max_time
      : entry.key == "min-time"  ? &w.min_time
                                 : nullptr;
  std::optional<uint64_t>* count = entry.key == "max-rounds"   ? &w.max_rounds
                                   : entry.key == "min-rounds" ? &w.min_rounds
                                                               : nullptr;
  if (duration == nullptr && count == nullptr &&
      entry.key != "working-directory") {
    warn_unknown(entry,
                 "warmup-time, max-time, min-time, max-rounds, min-rounds or "
                 "working-directory");
    return {};
  }
  auto text_or = scalar(entry);
  if (!text_or) return text_or.error();
  const std::string& text = *text_or;
  if (entry.key == "working-directory") {
    out.working_directory = text;
    return {};
  }
  if (duration != nullptr) {
    auto value = format::parse_duration(text);
    if (!value)
      return error(entry.value,
                   "'" + entry.key + "': " + value.error().message());
    *duration = *value;
    return {};
  }
  auto value = format::parse_count(text, "round count");
  if (!value)
    return error(entry.value,
                 "'" + entry.key + "': " + value.error().message());
  *count = *value;
  return {};
}

base::Status ConfigReader::read_options(const YAML::Node& node, Options& out) {
  if (node.IsNull()) return {};
  auto list = entries(node, "'options'");
  if (!list) return list.error();
  for (const Entry& entry : *list) {
    if (auto st = read_option(entry, out); !st) return st;
  }
  return {};
}

base::Result<std::vector<std::string>> ConfigReader::read_command(
    const YAML::Node& exec) {
  std::vector<std::string> command;
  if (exec.IsScalar()) {
    auto words = split_shell_words(exec.Scalar());
    if (!words) return error(exec, "exec: " + words.error().message());
    command = std::move(*words);
  } else if (exec.IsSequence()) {
    for (const auto& word : exec) {
      if (!word.IsScalar())
        return error(word, "'exec' list items must be strings, not " +
                               std::string(kind_name(word)));
      command.push_back(word.Scalar());
    }
  }
  if (command.empty() || command[0].empty())
    return error(exec, "'exec' must be a non-empty command");
  return command;
}

base::Result<format::ExecTarget> ConfigReader::read_benchmark(
    const YAML::Node& node, const Options& defaults) {
  if (!node.IsMap())
    return error(node, "each benchmark must be a mapping with 'exec:'");
  auto list = entries(node, "a benchmark");
  if (!list) return list.error();
  format::ExecTarget target;
  Options options = defaults;
  std::optional<YAML::Node> exec;
  for (const Entry& entry : *list) {
    if (entry.key == "name" || entry.key == "id") {
      auto text = scalar(entry);  // id: accepted, not used
      if (!text) return text.error();
      if (entry.key == "name") target.name = *text;
    } else if (entry.key == "exec") {
      exec = entry.value;
    } else if (entry.key == "entrypoint") {
      return error(entry.key_node,
                   "'entrypoint' targets are not supported by runner exec "
                   "(run them with `runner run -- <command>`)");
    } else if (entry.key == "options") {
      Options own;
      if (auto st = read_options(entry.value, own); !st) return st.error();
      options.walltime.override_with(own.walltime);
      if (own.working_directory)
        options.working_directory = own.working_directory;
    } else {
      warn_unknown(entry, "name, id, exec or options");
    }
  }
  if (!exec) return error(node, "benchmark without 'exec:'");
  auto command = read_command(*exec);
  if (!command) return command.error();
  target.command = std::move(*command);
  target.walltime = options.walltime;
  if (options.working_directory) {
    std::filesystem::path dir(*options.working_directory);
    if (dir.is_relative()) dir = std::filesystem::path(base_dir_) / dir;
    target.working_directory = dir.lexically_normal().string();
  }
  return target;
}

base::Result<std::vector<format::ExecTarget>> ConfigReader::read(
    const YAML::Node& root) {
  if (!root.IsMap())
    return error(root, "expected a mapping with 'benchmarks:', not " +
                           std::string(kind_name(root)));
  auto list = entries(root, "the file");
  if (!list) return list.error();
  Options defaults;
  std::optional<Entry> benchmarks;
  for (const Entry& entry : *list) {
    if (entry.key == "options") {
      if (auto st = read_options(entry.value, defaults); !st) return st.error();
    } else if (entry.key == "benchmarks") {
      benchmarks = entry;
    } else {
      warn_unknown(entry, "options or benchmarks");
    }
  }
  if (!benchmarks || benchmarks->value.IsNull())
    return error(root, "no 'benchmarks:' list");
  if (!benchmarks->value.IsSequence() || benchmarks->value.size() == 0)
    return error(benchmarks->value, "'benchmarks' must be a non-empty list");
  std::vector<format::ExecTarget> targets;
  for (const auto& item : benchmarks->value) {
    auto target = read_benchmark(item, defaults);
    if (!target) return target.error();
    targets.push_back(std::move(*target));
  }
  return targets;
}

}  // namespace

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

base::Result<ExecConfig> parse_exec_config(std::string_view text,
                                           const std::string& path,
                                           const std::string& base_dir) {
  // A UTF-8 byte order mark (editors on Windows write one) is not content.
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  RUNNER_ASSIGN_OR_RETURN(YAML::Node root,
                          load_document(std::string(text), path),
                          "reading config");
  ConfigReader reader(path, base_dir);
  ExecConfig config;
  RUNNER_ASSIGN_OR_RETURN(config.targets, reader.read(root), "reading config");
  config.warnings = reader.take_warnings();
  return config;
}

base::Result<std::optional<ExecConfig>> load_exec_config(
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
    auto config = parse_exec_config(text, path, dir);
    if (!config) return config.error();
    return std::optional<ExecConfig>(std::move(*config));
  }
  return std::optional<ExecConfig>();
}

}  // namespace runner::agent
