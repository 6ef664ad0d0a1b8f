#include "models/app/cli.hpp"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "models/app/cli_common.hpp"
#include "models/config/yaml_reader.hpp"
#include "sim/io/output_target.hpp"
#include "sim/util/strings.hpp"

#ifndef GPUMUX_VERSION
#define GPUMUX_VERSION "0.0.0"
#endif

namespace gpumux {
namespace {

using namespace cli;

const char* kUsage =
    "usage: gpumux COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.yaml [-o OUT.h5] [--seed N] [--set KEY=VALUE ...] [--format "
    "table|json|yaml|csv]\n"
    "                    [--quiet] [--fail-on-slo] simulate and print the summary\n"
    "  validate SCENARIO.yaml [--set ...]       check a scenario without running it\n"
    "  compare SCENARIO.yaml --strategies A,B   the same tenants under several strategies\n"
    "  inspect SCENARIO.yaml [--format F]       every kernel parameter and where it came from\n"
    "  plan SCENARIO.yaml [-o BEST.yaml]        the cheapest GPU setup that meets every SLO\n"
    "  mig GPU_MODEL [--check LAYOUT] [--format F] MIG profiles, layouts, placement check\n"
    "  models [--format table|json|yaml]        GPU models: SMs, memory, bandwidth, MIG, "
    "nvidia-smi names\n"
    "  strategies [--format table|json|yaml]    sharing strategies: modes, keys, compare names\n"
    "  report OUT.h5 [--format F] [--html R.html] the summary of a result file, or an HTML report\n"
    "  plot OUT.h5 [--kind cdf|timeline|compare] -o FIG.png|svg\n"
    "                                           latency CDFs, utilisation/memory timelines, "
    "strategies\n"
    "  calibrate DATA.csv ... [-o PROFILE.yaml] fit kernel, block and host costs to measured\n"
    "                                           times, or time-slice and launch costs to\n"
    "                                           calibration/microbench output; cross-validated\n"
    "  completion bash|zsh|fish                 a shell completion script\n"
    "  help [COMMAND]                           this text, or one command's options\n"
    "  --version\n"
    "\n"
    "gpumux COMMAND --help (or -h) shows a command's arguments, defaults and examples.\n"
    "--format table|json|yaml on models, mig, strategies and plan; run, compare, report and\n"
    "inspect also take csv. --json is --format json.\n"
    "Every command takes -q/--quiet: no progress bar and no informational stderr lines (warnings\n"
    "and errors still print; run and compare also skip the table).\n";

}  // namespace

/// A new subcommand: its file beside the others (models/app/cli_NAME.cpp), its Command declared
/// in cli_common.hpp, one entry here (help, completion and dispatch follow from the table).
const std::vector<Command>& cli::command_table() {
  static const std::vector<Command> kCommands{
      run_command(),    validate_command(), compare_command(),   inspect_command(),
      plan_command(),   mig_command(),      models_command(),    strategies_command(),
      report_command(), plot_command(),     calibrate_command(), completion_command()};
  return kCommands;
}

namespace {

const Command* find_command(const std::string& name) {
  for (const Command& command : command_table()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

int command_help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::string& command = args.front();
  auto show = [](const CommandHelp& help, const po::options_description& options) {
    std::cout << help.usage << "\n\n" << help.about << "\n\n";
    if (!options.options().empty()) std::cout << options << "\n";
    std::cout << "  -h [ --help ]          this text\n\nexamples:\n" << help.examples;
  };
  const Command* found = find_command(command);
  if (found == nullptr) {
    std::vector<std::string> names;
    for (const Command& c : command_table()) names.emplace_back(c.name);
    names.emplace_back("help");
    std::cerr << "gpumux: error: no command '" << command << "' (commands: " << join(names, ", ")
              << ")\n";
    return kExitBadInput;
  }
  show(*found->help, found->options());
  return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv) {
  skip_hdf5_cleanup_at_exit();  // a failed write (disk full) must not crash at exit
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  try {
    if (command == "--version" || command == "version") {
      std::cout << "gpumux " << GPUMUX_VERSION << "\n";
      return kExitOk;
    }
    if (command == "help" || command == "--help" || command == "-h") return command_help(args);
    // `gpumux COMMAND --help` / `-h` anywhere among its arguments: that command's help.
    for (const std::string& arg : args) {
      if (arg == "--help" || arg == "-h") return command_help({command});
    }
    // The developer and test switches, read here once (docs/performance.md "Developer
    // switches"); the code below takes them as values.
    set_engine_switches(engine_switches_from_environment());
    const char* faults = std::getenv("GPUMUX_TEST_FAULT");
    set_output_test_faults(faults != nullptr ? faults : "");
    if (const Command* found = find_command(command)) return found->run(args);
    // One line (the usage is `gpumux --help`), with the nearest command name when one is close.
    std::vector<std::string> names;
    for (const Command& c : command_table()) names.emplace_back(c.name);
    names.emplace_back("help");
    std::cerr << "gpumux: unknown command '" << command << "'" << yaml::hint(command, names)
              << "; see gpumux --help\n";
    return kExitBadInput;
  } catch (const UserError& e) {  // InputError, OutputError
    std::cerr << "gpumux: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "gpumux: error: " << command << ": " << e.what() << " (see: gpumux help "
              << command << ")\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpumux: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace gpumux
