// `gpumux completion bash|zsh|fish`: a shell completion script generated from the command table
// (cli.cpp) and each command's options, so a new command or option completes with no edit here.
// Option values complete from the tables the CLI validates with: a value name of words
// ("table|json|yaml", built from output_format_names() and kin), plan platforms and strategies
// (loader.hpp), compare strategies (the strategy registry), GPU models (the embedded profiles).
#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>
#include <vector>

#include "models/app/cli_common.hpp"
#include "models/config/profile_loader.hpp"
#include "models/scenario/loader.hpp"
#include "models/strategies/registry.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::cli {
namespace {

const CommandHelp kCompletionHelp{
    "usage: gpumux completion bash|zsh|fish",
    "Prints a completion script for the shell: subcommands, then each subcommand's options\n"
    "(after -), else file names. Generated from gpumux's own command table.",
    "  source <(gpumux completion bash)                       # this bash session\n"
    "  gpumux completion bash > ~/.local/share/bash-completion/completions/gpumux\n"
    "  gpumux completion zsh > \"${fpath[1]}/_gpumux\"          # then: compinit\n"
    "  gpumux completion fish > ~/.config/fish/completions/gpumux.fish\n"};

po::options_description completion_options() {
  po::options_description o("gpumux completion SHELL");
  add_quiet_option(o);
  return o;
}

/// What an option's value completes to: words, each followed by `suffix`; `list` = the value is
/// a comma-separated list, so the word after the last comma completes.
struct ValueWords {
  std::vector<std::string> words;
  std::string suffix;
  bool list = false;
};

/// The words of a value name made of alternatives ("table|json|yaml"), else none (a value name
/// such as "N", "OUT.h5" or "FIG.png|svg" names a placeholder, not the values).
std::vector<std::string> value_name_alternatives(const std::string& value_name) {
  if (value_name.find('|') == std::string::npos) return {};
  std::vector<std::string> words(1);
  for (const char c : value_name) {
    if (c == '|') {
      words.emplace_back();
    } else if (std::islower(static_cast<unsigned char>(c)) != 0 || c == '-') {
      words.back() += c;
    } else {
      return {};
    }
  }
  return words;
}

/// The values option `long_name` of `command` takes, from the tables that validate them; no
/// words when its value is free (a file, a number, KEY=VALUE).
ValueWords option_values(const std::string& command, const std::string& long_name,
                         const std::string& value_name) {
  if (long_name == "platform") return {plan_platform_names(), "", false};
  if (long_name == "strategies") {
    return {command == "plan" ? plan_strategy_names() : compare_strategy_names(), "", true};
  }
  if (long_name == "gpus") return {embedded_profile_names(), "=", true};  // MODEL=PRICE,...
  if (long_name == "profile") return {embedded_profile_names(), "", false};
  return {value_name_alternatives(value_name), "", false};
}

/// Every option of `command` whose value completes, with its words.
std::vector<std::pair<std::string, ValueWords>> valued_options(const Command& command) {
  std::vector<std::pair<std::string, ValueWords>> out;
  const po::options_description options = command.options();
  for (const auto& option : options.options()) {
    if (option->long_name().empty() || option->semantic()->max_tokens() == 0) continue;
    ValueWords values =
        option_values(command.name, option->long_name(), option->semantic()->name());
    if (!values.words.empty()) out.emplace_back(option->long_name(), std::move(values));
  }
  return out;
}

/// "--output -o --seed ..." of one command (long names with --, short ones with -).
std::vector<std::string> option_words(const Command& command) {
  std::vector<std::string> words;
  const po::options_description options = command.options();  // the loop's range outlives it
  for (const auto& option : options.options()) {
    if (!option->long_name().empty()) words.push_back("--" + option->long_name());
    const std::string short_name =
        option->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (short_name.size() == 2 && short_name[0] == '-') words.push_back(short_name);
  }
  words.emplace_back("--help");
  return words;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& command : command_table()) names.emplace_back(command.name);
  names.emplace_back("help");
  return names;
}

void print_bash() {
  std::cout << "# gpumux "
            << "bash completion (gpumux completion bash)\n"
            << "_gpumux() {\n"
               "  local cur=${COMP_WORDS[COMP_CWORD]} opts vals=\"\" sep=\"\" list=0\n"
               "  local prev=${COMP_WORDS[COMP_CWORD-1]}\n"
               "  # --option=value: bash splits at '=', so the option is one or two words back\n"
               "  if [ \"$cur\" = \"=\" ]; then cur=\"\";\n"
               "  elif [ \"$prev\" = \"=\" ] && [ \"$COMP_CWORD\" -ge 3 ]; then\n"
               "    prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
               "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
               "    COMPREPLY=($(compgen -W \""
            << join(command_names(), " ") << " --version --help\" -- \"$cur\"))\n"
            << "    return\n  fi\n  case \"${COMP_WORDS[1]}\" in\n";
  for (const Command& command : command_table()) {
    std::cout << "    " << command.name << ") opts=\"" << join(option_words(command), " ")
              << "\"\n      case \"$prev\" in\n";
    for (const auto& [name, values] : valued_options(command)) {
      std::cout << "        --" << name << ") vals=\"" << join(values.words, " ") << "\"";
      if (!values.suffix.empty()) std::cout << " sep=\"" << values.suffix << "\"";
      if (values.list) std::cout << " list=1";
      std::cout << " ;;\n";
    }
    std::cout << "      esac ;;\n";
  }
  std::cout
      << "    help) COMPREPLY=($(compgen -W \"" << join(command_names(), " ")
      << "\" -- \"$cur\")); return ;;\n"
      << "    *) opts=\"--help\" ;;\n  esac\n"
         "  if [ -n \"$vals\" ]; then\n"
         "    local pre=\"\" word=$cur\n"
         "    if [ \"$list\" = 1 ] && [[ $cur == *,* ]]; then pre=${cur%,*},; word=${cur##*,}; fi\n"
         "    COMPREPLY=($(compgen -P \"$pre\" -S \"$sep\" -W \"$vals\" -- \"$word\"))\n"
         "    return\n"
         "  fi\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _gpumux gpumux\n";
}

void print_zsh() {
  std::cout << "#compdef gpumux\n# gpumux zsh completion (gpumux completion zsh)\n"
            << "_gpumux() {\n"
               "  if (( CURRENT == 2 )); then\n"
               "    compadd -- "
            << join(command_names(), " ") << " --version --help\n"
            << "    return\n  fi\n  local -a opts vals\n  local prev=$words[CURRENT-1] sep=\"\" "
               "list=0\n  case $words[2] in\n";
  for (const Command& command : command_table()) {
    std::cout << "    " << command.name << ") opts=(" << join(option_words(command), " ")
              << ")\n      case $prev in\n";
    for (const auto& [name, values] : valued_options(command)) {
      std::cout << "        --" << name << ") vals=(" << join(values.words, " ") << ")";
      if (!values.suffix.empty()) std::cout << " sep=\"" << values.suffix << "\"";
      if (values.list) std::cout << " list=1";
      std::cout << " ;;\n";
    }
    std::cout << "      esac ;;\n";
  }
  std::cout
      << "    help) compadd -- " << join(command_names(), " ") << "; return ;;\n"
      << "    *) opts=(--help) ;;\n  esac\n"
         "  if (( ${#vals} )); then\n"
         "    if (( list )); then compset -P '*,'; fi\n"
         "    if [[ -n $sep ]]; then compadd -S \"$sep\" -- $vals; else compadd -- $vals; fi\n"
         "    return\n"
         "  fi\n"
         "  if [[ $PREFIX == -* ]]; then\n"
         "    compadd -- $opts\n"
         "  else\n"
         "    _files\n"
         "  fi\n"
         "}\n"
         "compdef _gpumux gpumux\n";
}

void print_fish() {
  const std::string names = join(command_names(), " ");
  std::cout << "# gpumux fish completion (gpumux completion fish)\n"
            << "complete -c gpumux -n 'not __fish_seen_subcommand_from " << names << "' -f -a '"
            << names << "'\n"
            << "complete -c gpumux -n 'not __fish_seen_subcommand_from " << names
            << "' -f -l version\n"
            << "complete -c gpumux -n '__fish_seen_subcommand_from help' -f -a '" << names << "'\n";
  for (const Command& command : command_table()) {
    const po::options_description options = command.options();
    const auto valued = valued_options(command);
    for (const auto& option : options.options()) {
      std::cout << "complete -c gpumux -n '__fish_seen_subcommand_from " << command.name << "'";
      if (!option->long_name().empty()) std::cout << " -l " << option->long_name();
      const std::string short_name =
          option->canonical_display_name(po::command_line_style::allow_dash_for_short);
      if (short_name.size() == 2 && short_name[0] == '-') std::cout << " -s " << short_name[1];
      const auto values = std::find_if(valued.begin(), valued.end(), [&](const auto& v) {
        return v.first == option->long_name();
      });
      if (values != valued.end()) {
        std::cout << " -x -a '" << join(values->second.words, " ") << "'";
      }
      std::cout << "\n";
    }
  }
}

int command_completion(const std::vector<std::string>& args) {
  const po::options_description options = completion_options();  // `parsed` points to it
  const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
  std::vector<std::string> shells;
  for (const po::option& option : parsed.options) {
    if (option.position_key >= 0) shells.push_back(option.value.front());
  }
  if (shells.size() != 1) throw po::error("completion takes one shell: bash, zsh or fish");
  po::variables_map vm;
  po::store(parsed, vm);
  po::notify(vm);
  const std::string& shell = shells.front();
  if (shell == "bash") {
    print_bash();
  } else if (shell == "zsh") {
    print_zsh();
  } else if (shell == "fish") {
    print_fish();
  } else {
    throw po::error("completion " + shell + ": not one of bash, zsh, fish");
  }
  return kExitOk;
}

}  // namespace

Command completion_command() {
  return Command{"completion", &kCompletionHelp, completion_options, command_completion};
}

}  // namespace gpumux::cli
