// `gpumux completion bash|zsh|fish`: a shell completion script generated from the command table
// (cli.cpp) and each command's options, so a new command or option completes with no edit here.
#include <iostream>
#include <string>
#include <vector>

#include "models/app/cli_common.hpp"
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
               "  local cur=${COMP_WORDS[COMP_CWORD]} opts\n"
               "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
               "    COMPREPLY=($(compgen -W \""
            << join(command_names(), " ") << " --version --help\" -- \"$cur\"))\n"
            << "    return\n  fi\n  case \"${COMP_WORDS[1]}\" in\n";
  for (const Command& command : command_table()) {
    std::cout << "    " << command.name << ") opts=\"" << join(option_words(command), " ")
              << "\" ;;\n";
  }
  std::cout << "    help) COMPREPLY=($(compgen -W \"" << join(command_names(), " ")
            << "\" -- \"$cur\")); return ;;\n"
            << "    *) opts=\"--help\" ;;\n  esac\n"
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
            << "    return\n  fi\n  local -a opts\n  case $words[2] in\n";
  for (const Command& command : command_table()) {
    std::cout << "    " << command.name << ") opts=(" << join(option_words(command), " ")
              << ") ;;\n";
  }
  std::cout << "    help) compadd -- " << join(command_names(), " ") << "; return ;;\n"
            << "    *) opts=(--help) ;;\n  esac\n"
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
    for (const auto& option : options.options()) {
      std::cout << "complete -c gpumux -n '__fish_seen_subcommand_from " << command.name << "'";
      if (!option->long_name().empty()) std::cout << " -l " << option->long_name();
      const std::string short_name =
          option->canonical_display_name(po::command_line_style::allow_dash_for_short);
      if (short_name.size() == 2 && short_name[0] == '-') std::cout << " -s " << short_name[1];
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
