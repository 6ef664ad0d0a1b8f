#pragma once
// What the `gpumux` subcommands share: the command table entry, exit codes, argument parsing,
// --format, -o checks, CSV tables, SLO and overload messages, the progress bar. Each subcommand
// lives in its own file (cli_simulate.cpp: run, validate, compare; cli_inspect.cpp: mig, models,
// report, plot); cli.cpp dispatches. They call the front door (models/app/application.hpp) and
// only parse, print and map errors to exit codes.
#include <boost/program_options.hpp>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/app/application.hpp"
#include "models/app/progress.hpp"
#include "models/config/input_error.hpp"
#include "models/run/result.hpp"
#include "models/scenario/resolve.hpp"
#include "sim/io/output_target.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::cli {

namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitSlo = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

/// What `gpumux COMMAND --help` prints around the option table.
struct CommandHelp {
  const char* usage;
  const char* about;
  const char* examples;
};

/// One subcommand: its name, its help, its options and what runs it. cli.cpp lists them.
struct Command {
  const char* name;
  const CommandHelp* help;
  po::options_description (*options)();
  int (*run)(const std::vector<std::string>& args);
};

// The subcommands (cli_simulate.cpp, cli_inspect.cpp).
Command run_command();
Command validate_command();
Command compare_command();
Command inspect_command();  // cli_inspect_scenario.cpp
Command mig_command();
Command models_command();
Command report_command();
Command plot_command();
Command strategies_command();
Command plan_command();
Command completion_command();  // cli_completion.cpp
Command calibrate_command();   // cli_calibrate.cpp

/// Every subcommand, in the order `gpumux help` lists them (cli.cpp).
const std::vector<Command>& command_table();

/// Parses ARGS of one command: one positional argument plus the options.
po::variables_map parse_command(const std::vector<std::string>& args,
                                const po::options_description& options,
                                const std::string& positional_name);

/// The scenario (positional `scenario`) with --set and --seed.
ScenarioRequest scenario_request(const po::variables_map& vm);

enum class OutputFormat { table, json, yaml, csv };
/// The names --format takes where output_format() reads it, in enum order; the option's value
/// name and `gpumux completion` list the same words.
const std::vector<std::string>& output_format_names();

/// --format table|json|yaml|csv; --json is an alias of --format json (a contradiction is bad
/// input).
OutputFormat output_format(const po::variables_map& vm);

/// json or yaml: the command prints its data with print_structured.
inline bool structured(OutputFormat format) {
  return format == OutputFormat::json || format == OutputFormat::yaml;
}

/// What a listing command (models, mig, strategies) prints: `--format table|json|yaml`, with
/// --json an alias of --format json (a contradiction is bad input).
enum class DataFormat { table, json, yaml };
/// The names --format takes where data_format() reads it, in enum order.
const std::vector<std::string>& data_format_names();
DataFormat data_format(const po::variables_map& vm);

/// The --format/--json options of a listing command, added to OPTIONS.
void add_data_format_options(po::options_description& options);

/// Prints DATA as FORMAT (json: one indented document; yaml: one block-style document through
/// yaml-cpp's emitter, keys in DATA's order). Machine units: bytes, ns, bytes/s, FLOP/s.
void print_data(const nlohmann::ordered_json& data, DataFormat format, std::ostream& out);

/// DATA as --format json (one line, as before) or yaml (one block document).
void print_structured(const nlohmann::ordered_json& data, OutputFormat format, std::ostream& out);
inline void print_structured(const nlohmann::json& data, OutputFormat format, std::ostream& out) {
  print_structured(nlohmann::ordered_json::parse(data.dump()), format, out);
}

/// The --quiet/-q switch every command accepts: it silences the progress bar and informational
/// stderr lines; warnings and errors still print.
void add_quiet_option(po::options_description& options);

/// The lower-case extension of PATH with its dot ("" when none).
std::string extension_of(const std::string& path);

/// Bad input for a file gpumux writes with an extension it does not write: one line.
[[noreturn]] void bad_extension(const std::string& option, const std::string& path,
                                const std::string& wanted);

/// -o must name a file gpumux writes: HDF5 (.h5, .hdf5), and a place it may write it: a regular
/// file (replaced atomically; a symlink is followed to it) or a new name in a directory where
/// files can be created. Anything else is bad input (exit 2), checked before the run so no time
/// is spent on a file that would not be written (write_result_h5 checks again when writing).
void check_output_path(const po::variables_map& vm);

/// Runs WORK (checking or writing the -o target); an OutputError from it becomes bad input
/// (InputError, exit 2) reading "-o PATH: why" (OPTION: the flag that named the file, e.g.
/// "--report").
template <class Work>
void output_errors_as_bad_input(Work&& work, const char* option = "-o") {
  try {
    work();
  } catch (const OutputError& e) {
    std::string message = option;
    message += " ";
    message += e.what();
    throw InputError(message);
  }
}

/// Writes -o (when given) with WRITE(path). A failed write (disk full, the target replaced by a
/// directory during the run...) prints one line and returns false, so the caller still prints
/// the summary and then exits 2; the previous file is unchanged and no temporary file remains.
template <class Write>
bool write_output(const po::variables_map& vm, Write&& write) {
  if (!vm.count("output")) return true;
  try {
    write(vm["output"].as<std::string>());
    return true;
  } catch (const OutputError& e) {
    std::cerr << "gpumux: error: " << e.what() << "\n";
    return false;
  }
}

/// Did every tenant meet its SLO targets (models/run/slo.hpp)? Prints each miss to stderr in
/// the tables' units; PREFIX names the strategy in `compare`.
bool slo_met(const RunResult& result, const std::string& prefix = "");

/// One stderr line per tenant whose offered load its device could not serve: requests queued
/// without bound, so latency is the backlog (mean slowdown over kOverloadSlowdown) and the run
/// went on draining it long after arrivals stopped.
void warn_overload(const ResolvedScenario& resolved, const RunResult& result);

/// The engine switches (EngineSwitches) from the developer environment variables GPUMUX_QUEUE,
/// GPUMUX_DIRECT=0, GPUMUX_PARTITION=0, GPUMUX_DEVICE_EAGER=1 and the plan search's
/// GPUMUX_PLAN_LAZY=0, GPUMUX_PLAN_DOMINANCE=0, GPUMUX_PLAN_CONTINUE=0, GPUMUX_PLAN_PROCESSES=0
/// (docs/performance.md "Developer switches"). The only place that reads them: run_cli, once, at
/// start-up. Throws InputError for an unknown GPUMUX_QUEUE and for a switch set to anything but 0,
/// 1 or empty.
EngineSwitches engine_switches_from_environment();

/// The engine switches of this process: set once by run_cli, carried by every
/// CliProgress::control into its runs. Default: EngineSwitches{}.
void set_engine_switches(const EngineSwitches& switches);
const EngineSwitches& engine_switches();

/// The CLI's RunControl: the stop flag of the signal handlers (models/app/interrupt.hpp), a
/// progress bar on stderr for each simulation and the process's engine switches.
class CliProgress {
 public:
  /// QUIET (--quiet): no progress bar.
  explicit CliProgress(bool quiet = false) : quiet_(quiet) {}
  RunControl control(bool record_requests);

 private:
  bool quiet_;
  std::optional<ProgressBar> bar_;
};

}  // namespace gpumux::cli
