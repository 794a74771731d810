#include "agent/args.hpp"

#include <sstream>

namespace runner::agent {
namespace {

const OptionSpec* find_long(const CommandSpec& spec, const std::string& name) {
  for (const auto& opt : spec.options)
    if (opt.name == name) return &opt;
  return nullptr;
}

const OptionSpec* find_short(const CommandSpec& spec, char c) {
  for (const auto& opt : spec.options)
    if (opt.short_name == c) return &opt;
  return nullptr;
}

}  // namespace

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

base::Result<ParsedArgs> parse_args(const CommandSpec& spec,
                                    const std::vector<std::string>& args) {
  ParsedArgs out;
  const std::string prefix = "runner " + spec.name + ": ";
  const std::string hint = " (see 'runner " + spec.name + " --help')";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    const OptionSpec* opt = nullptr;
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      opt = find_long(spec, name);
      if (opt == nullptr)
        return base::Error(prefix + "unknown option '--" + name + "'" + hint);
    } else if (arg.size() == 2 && arg[0] == '-' && arg[1] != '-') {
      opt = find_short(spec, arg[1]);
      if (opt == nullptr)
        return base::Error(prefix + "unknown option '" + arg + "'" + hint);
    } else if (arg.size() > 1 && arg[0] == '-' && out.command.empty() &&
               arg != "-") {
      return base::Error(prefix + "unknown option '" + arg + "'" + hint);
    } else {
      if (spec.command_after_positional) {
        out.command.assign(args.begin() + static_cast<long>(i), args.end());
        break;
      }
      if (out.positionals.size() >= spec.max_positionals)
        return base::Error(prefix + "unexpected argument '" + arg + "'" + hint);
      out.positionals.push_back(arg);
      continue;
    }
    if (opt->takes_value) {
      if (!inline_value) {
        if (i + 1 >= args.size())
          return base::Error(prefix + "option '--" + opt->name +
                             "' needs a value" + hint);
        inline_value = args[++i];
      }
      out.values[opt->name].push_back(*inline_value);
    } else {
      if (inline_value)
        return base::Error(prefix + "option '--" + opt->name +
                           "' takes no value" + hint);
      out.values[opt->name].push_back("");
    }
  }
  return out;
}

std::string format_help(const CommandSpec& spec) {
  std::ostringstream out;
  out << "Usage: " << spec.usage << "\n\n" << spec.summary << "\n";
  if (!spec.options.empty()) {
    out << "\nOptions:\n";
    for (const auto& opt : spec.options) {
      if (opt.hidden) continue;
      std::string left = "  ";
      left += opt.short_name != 0 ? std::string("-") + opt.short_name + ", "
                                  : std::string("    ");
      left += "--" + opt.name;
      if (opt.takes_value) left += " " + opt.value_name;
      if (left.size() < 30)
        left.resize(30, ' ');
      else
        left += "\n" + std::string(30, ' ');
      out << left << opt.help << "\n";
    }
  }
  if (!spec.details.empty()) out << "\n" << spec.details;
  return out.str();
}

}  // namespace runner::agent
