#include "models/app/cli.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>

#include "models/app/progress.hpp"
#include "models/app/python_tool.hpp"
#include "models/config/mig_names.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/output/result_io.hpp"
#include "models/run/runner.hpp"
#include "models/plan/capacity_check.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "models/strategies/registry.hpp"
#include "sim/io/output_target.hpp"

#ifndef GPUMUX_VERSION
#define GPUMUX_VERSION "0.0.0"
#endif

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitSlo = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

// SIGINT, SIGTERM and SIGHUP: the first stops the run (the runner polls g_interrupted), the
// partial results are written marked status=interrupted and the exit status is 128 + signal.
// A signal during the write lets the write finish. A second signal removes the temporary
// result file, if one is being written, and exits 128 + signal at once.
std::atomic<bool> g_interrupted{false};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int signal_number) {
  if (g_interrupted.load()) {
    remove_temp_output_signal_safe();
    constexpr char kMessage[] = "gpumux: second signal: stopped without writing results\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(128 + signal_number);
  }
  g_signal = signal_number;
  g_interrupted.store(true);
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal_number, &action, nullptr);
  }
}

/// 128 + the signal that stopped the run (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
int signal_exit_status() { return 128 + (g_signal != 0 ? static_cast<int>(g_signal) : SIGINT); }

const char* signal_name(int signal_number) {
  if (signal_number == SIGTERM) return "SIGTERM";
  if (signal_number == SIGHUP) return "SIGHUP";
  return "SIGINT";
}

const char* kUsage =
    "usage: gpumux COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.yaml [-o OUT.h5] [--seed N] [--set KEY=VALUE ...] [--format table|json|csv]\n"
    "                    [--quiet] [--fail-on-slo] simulate and print the summary\n"
    "  validate SCENARIO.yaml [--set ...]       check a scenario without running it\n"
    "  compare SCENARIO.yaml --strategies A,B   the same tenants under several strategies\n"
    "  plan SCENARIO.yaml [-o BEST.yaml]        the cheapest GPU setup that meets every SLO\n"
    "  mig GPU_MODEL [--check LAYOUT]           MIG profiles, layouts, placement check\n"
    "  models                                   GPU models: SMs, memory, bandwidth, MIG, nvidia-smi names\n"
    "  strategies                               sharing strategies: modes, keys, compare names\n"
    "  report OUT.h5 [--format F] [--html R.html] the summary of a result file, or an HTML report\n"
    "  plot OUT.h5 [--kind cdf|timeline|compare] -o FIG.png|svg\n"
    "                                           latency CDFs, utilisation/memory timelines, strategies\n"
    "  help [COMMAND]                           this text, or one command's options\n"
    "  --version\n"
    "\n"
    "gpumux COMMAND --help (or -h) shows a command's arguments, defaults and examples.\n";

/// What `gpumux COMMAND --help` prints around the option table.
struct CommandHelp {
  const char* usage;
  const char* about;
  const char* examples;
};

const CommandHelp kRunHelp{
    "usage: gpumux run SCENARIO.yaml [-o OUT.h5] [--seed N] [--set KEY=VALUE ...] "
    "[--format table|json|csv] [--json] [--quiet] [--fail-on-slo]",
    "Simulates SCENARIO.yaml and prints the per-tenant and per-device summary table.\n"
    "Defaults: no result file, the scenario's seed, no overrides, the table on stdout.\n"
    "-o OUT.h5 is checked before simulating: a regular file (replaced atomically) or a new name\n"
    "in an existing directory where files can be created; a symlink is followed and the file it\n"
    "points to is replaced (the link stays). Directories, devices (/dev/null), FIFOs and sockets\n"
    "are refused. The file is written as OUT.h5.tmp.PID beside it, fsynced and renamed; the\n"
    "temporary file is removed on errors and signals (not SIGKILL), and a failed write leaves\n"
    "the previous OUT.h5 unchanged.\n"
    "SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the run: what was simulated is written marked\n"
    "status=interrupted, exit 128+signal; a signal during the write lets it finish; a second\n"
    "signal exits at once without writing.\n"
    "Exit: 0 ok, 1 an SLO missed (--fail-on-slo), 2 bad input or -o refused (before simulating)\n"
    "or not writable (after: the summary is still printed), 3 internal error, 130 SIGINT,\n"
    "143 SIGTERM, 129 SIGHUP.",
    "  gpumux run scenarios/quickstart.yaml\n"
    "  gpumux run scenarios/quickstart.yaml -o out.h5 --seed 9\n"
    "  gpumux run scenarios/quickstart.yaml --format csv > tenants.csv\n"
    "  gpumux run scenarios/hybrid-h100.yaml --set gpus.0.sharing.timeslice=2ms --json\n"
    "  gpumux run scenarios/quickstart.yaml --set tenants.0.workload.arrivals.rate=400/s "
    "--fail-on-slo\n"};
const CommandHelp kValidateHelp{
    "usage: gpumux validate SCENARIO.yaml [--set KEY=VALUE ...]",
    "Checks schema, units, MIG placement and memory capacity without running; prints the devices\n"
    "and their tenants. What will fail is an error: a tenant whose static memory (or static +\n"
    "one request's) exceeds its device or MPS pinned limit. What is likely to fail is a warning\n"
    "on stderr: tenants that together exceed a device's memory, an offered load at or above\n"
    "what the device serves with the tenant alone, a device's tenants offering more SM or HBM\n"
    "time than it has. A planning scenario (plan:, tenants without devices) is checked against\n"
    "its GPU models. Exit 0 when valid (warnings allowed), 2 with one line\n"
    "FILE:LINE:COLUMN: KEY: message.",
    "  gpumux validate scenarios/mig-all-balanced-a100.yaml\n"
    "  gpumux validate my.yaml --set gpus.0.mig=3g.40gb:1,1g.10gb:4\n"};
const CommandHelp kCompareHelp{
    "usage: gpumux compare SCENARIO.yaml --strategies A,B,... [-o OUT.h5] [--seed N] "
    "[--set KEY=VALUE ...] [--format table|json|csv] [--json] [--fail-on-slo]",
    "Runs the same tenants and arrivals under each strategy and prints one overview table\n"
    "(SLOs met: tenants meeting every target of their slo: block, per strategy).\n"
    "--strategies is required; defaults: no result file, the scenario's seed, no overrides.\n"
    "-o, signals and exit codes as for `gpumux run` (see gpumux run --help): a signal stops the\n"
    "strategy running and the file holds the strategies run so far; --fail-on-slo exits 1 when\n"
    "a tenant misses an SLO target under any strategy (each miss on stderr: [strategy] tenant).",
    "  gpumux compare scenarios/hybrid-h100.yaml --strategies mig,time-slicing,mps,dedicated\n"
    "  gpumux compare scenarios/antipattern-mps-fault-blast-radius.yaml --strategies mig,mps "
    "-o cmp.h5\n"};
const CommandHelp kMigHelp{
    "usage: gpumux mig GPU_MODEL [--check LAYOUT]",
    "Without --check: the MIG profiles of GPU_MODEL (SMs, memory, slices, max count, placements)\n"
    "and its named layouts. With --check: does LAYOUT fit, and where does each instance go?\n"
    "LAYOUT is comma-separated profiles, PROFILE:COUNT for repeats (mig-parted/GKE syntax), or a\n"
    "named layout. GPU_MODEL is a profile name (see `gpumux models`) or an nvidia-smi name.\n"
    "Exit: 0 fits, 1 does not fit, 2 bad input.",
    "  gpumux mig h100-sxm-80gb\n"
    "  gpumux mig h100-sxm-80gb --check 3g.40gb:2,1g.10gb:1\n"
    "  gpumux mig \"NVIDIA H100 80GB HBM3\" --check all-balanced\n"};
const CommandHelp kModelsHelp{
    "usage: gpumux models",
    "Lists the GPU models built in (calibration/profiles/*.yaml): SMs, memory, HBM bandwidth,\n"
    "MIG profiles, and the nvidia-smi names accepted as `model:` in scenarios.",
    "  gpumux models\n"};
const CommandHelp kStrategiesHelp{
    "usage: gpumux strategies",
    "Lists the sharing strategies (models/strategies/registry.cpp): the `sharing.mode` each is\n"
    "named by, its `sharing:` keys, what a fatal fault takes down, and the names `gpumux compare\n"
    "--strategies` accepts. docs/strategies.md says what each models and what it does not.",
    "  gpumux strategies\n"};
const CommandHelp kReportHelp{
    "usage: gpumux report OUT.h5 [--format table|json|csv] [--json] [--html REPORT.html]",
    "Prints the summary stored in a result file written by `run -o` or `compare -o`.\n"
    "Default: the table; --json prints the stored JSON summary (one line per run).\n"
    "--html writes one self-contained page (no external files): summary tables, SLO verdicts,\n"
    "latency CDFs, utilisation and memory timelines, notes and assumptions (needs python3 with\n"
    "matplotlib; GPUMUX_PYTHON selects the interpreter).",
    "  gpumux report out.h5\n"
    "  gpumux report cmp.h5 --json\n"
    "  gpumux report cmp.h5 --format csv\n"
    "  gpumux report out.h5 --html report.html\n"};
const CommandHelp kPlanHelp{
    "usage: gpumux plan SCENARIO.yaml [-o BEST.yaml] [--gpus MODEL=PRICE,...] [--max-gpus N] "
    "[--strategies A,B] [--headroom F] [--jobs N] [--set KEY=VALUE ...] [--seed N] "
    "[--format table|json] [--json]",
    "Finds the cheapest setup (GPUs of which model, partitioned and shared how) in which every\n"
    "tenant meets its SLO over the whole run. The search space comes from the scenario's `plan:`\n"
    "block (gpus: [{model, cost_per_hour, currency}], max_gpus, strategies, headroom) or the\n"
    "flags; tenants need no `device:` (`isolation: memory|fault`, `best_effort: true` honoured).\n"
    "Setups are packings of the tenants onto GPUs, each GPU dedicated, time-sliced, MPS, MIG or\n"
    "a MIG hybrid; analytical bounds (memory, MPS client limit, sustainable load, latency floor)\n"
    "prune before simulating, survivors are simulated cheapest-first on --jobs threads until\n"
    "the cheapest feasible cost is proven (docs/plan.md). Prints the ranked table: the best setup\n"
    "and the cheapest of each strategy family, with why the cheaper ones failed.\n"
    "-o BEST.yaml writes the winning setup as a scenario `gpumux run` reproduces.\n"
    "Exit: 0 a setup was found, 1 none meets every SLO, 2 bad input.",
    "  gpumux plan scenarios/plan/plan-h100-node.yaml\n"
    "  gpumux plan scenarios/plan/plan-h100-node.yaml -o best.yaml && gpumux run best.yaml\n"
    "  gpumux plan my.yaml --gpus h100-sxm-80gb=4.0,a100-sxm4-40gb=1.8 --max-gpus 4 --json\n"};
const CommandHelp kPlotHelp{
    "usage: gpumux plot OUT.h5 [--kind cdf|timeline|compare] -o FIG.png|FIG.svg",
    "Draws a figure of a result file (run -o or compare -o) with matplotlib:\n"
    "  cdf       latency CDF per tenant (ms, log scale) and its tail (1 - CDF, log), SLO lines\n"
    "  timeline  SM busy, DRAM busy and memory used per device over simulated time\n"
    "  compare   p99 per tenant for each strategy with SLO targets; throughput, SM busy, cost\n"
    "Default kind: compare for a compare file, cdf for a single run. Needs python3 with\n"
    "matplotlib (GPUMUX_PYTHON selects the interpreter). Exit 0 written, 2 bad input.",
    "  gpumux plot out.h5 -o cdf.png\n"
    "  gpumux plot out.h5 --kind timeline -o timeline.svg\n"
    "  gpumux plot cmp.h5 --kind compare -o compare.png\n"};

struct ParsedCommand {
  po::variables_map vm;
};

po::options_description run_options() {
  po::options_description o("gpumux run SCENARIO.yaml");
  o.add_options()("output,o", po::value<std::string>()->value_name("OUT.h5"),
                  "write the HDF5 result file here (.h5 or .hdf5; a regular file or a new "
                  "name, symlinks followed)")(
      "seed", po::value<std::uint64_t>()->value_name("N"), "override the scenario's master seed")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "KEY=VALUE override, e.g. gpus.0.sharing.timeslice=2ms (repeatable)")(
      "format", po::value<std::string>()->value_name("table|json|csv"),
      "output: table (default), json (one object), csv (one row per tenant, units in the "
      "column names)")(
      "json", po::bool_switch(), "the same as --format json")(
      "quiet,q", po::bool_switch(), "print nothing on success")(
      "fail-on-slo", po::bool_switch(), "exit 1 when a tenant misses its SLO");
  return o;
}

po::options_description validate_options() {
  po::options_description o("gpumux validate SCENARIO.yaml");
  o.add_options()("set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
                  "override a scenario key, e.g. gpus.0.mig=all-balanced (repeatable)");
  return o;
}

po::options_description compare_options() {
  po::options_description o("gpumux compare SCENARIO.yaml");
  std::string names = "comma-separated:";
  for (const std::string& name : compare_strategy_names()) {
    names += names.back() == ':' ? " " : ", ";
    names += name;
  }
  o.add_options()("strategies", po::value<std::string>()->required()->value_name("A,B,..."),
                  names.c_str())("output,o", po::value<std::string>(),
                                            "write all results into one HDF5 file")(
      "seed", po::value<std::uint64_t>(), "override the master seed")(
      "set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override")(
      "format", po::value<std::string>()->value_name("table|json|csv"),
      "output: table (default), json (an array of summaries), csv (one row per strategy and "
      "tenant)")("json", po::bool_switch(), "the same as --format json")(
      "fail-on-slo", po::bool_switch(),
      "exit 1 when a tenant misses an SLO target under any strategy");
  return o;
}

po::options_description plan_options() {
  po::options_description o("gpumux plan SCENARIO.yaml");
  o.add_options()("output,o", po::value<std::string>()->value_name("BEST.yaml"),
                  "write the winning setup as a scenario file (.yaml or .yml)")(
      "gpus", po::value<std::string>()->value_name("MODEL=PRICE,..."),
      "GPU models to buy and their price per hour (replaces plan.gpus)")(
      "max-gpus", po::value<int>()->value_name("N"), "at most N GPUs (default: plan.max_gpus, 8)")(
      "strategies", po::value<std::string>()->value_name("A,B,..."),
      "families searched: dedicated, mig, time-slicing, mps, mig+time-slicing, mig+mps")(
      "headroom", po::value<double>()->value_name("F"),
      "margin kept below every SLO target, e.g. 0.1 (default: plan.headroom, 0)")(
      "jobs,j", po::value<int>()->value_name("N"), "simulation threads (default: the cores)")(
      "seed", po::value<std::uint64_t>()->value_name("N"), "override the master seed")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "KEY=VALUE override (repeatable)")(
      "format", po::value<std::string>()->value_name("table|json"), "output: table (default) or json")(
      "json", po::bool_switch(), "the same as --format json");
  return o;
}

po::options_description mig_options() {
  po::options_description o("gpumux mig GPU_MODEL");
  o.add_options()("check", po::value<std::string>()->value_name("LAYOUT"),
                  "a layout: comma-separated profiles (3g.40gb,2g.20gb,1g.10gb), with counts "
                  "(3g.40gb:2,1g.10gb:1), or a name (all-balanced)");
  return o;
}

po::options_description models_options() { return po::options_description("gpumux models"); }
po::options_description strategies_options() {
  return po::options_description("gpumux strategies");
}

po::options_description report_options() {
  po::options_description o("gpumux report OUT.h5");
  o.add_options()("format", po::value<std::string>()->value_name("table|json|csv"),
                  "output: table (default), json (the stored summary, one line per run), csv "
                  "(one row per tenant, a strategy column for compare files)")(
      "json", po::bool_switch(), "the same as --format json")(
      "html", po::value<std::string>()->value_name("REPORT.html"),
      "write a self-contained HTML report here");
  return o;
}

po::options_description plot_options() {
  po::options_description o("gpumux plot OUT.h5");
  o.add_options()("kind", po::value<std::string>()->value_name("cdf|timeline|compare"),
                  "the figure (default: compare for a compare file, else cdf)")(
      "output,o", po::value<std::string>()->required()->value_name("FIG.png|svg"),
      "the figure file: .png or .svg");
  return o;
}

/// The lower-case extension of PATH with its dot ("" when none).
std::string extension_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string extension = path.substr(dot);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

/// Bad input for a file gpumux writes with an extension it does not write: one line.
[[noreturn]] void bad_extension(const std::string& option, const std::string& path,
                                const std::string& wanted) {
  std::string message = option;
  message += " ";
  message += path;
  message += ": gpumux writes ";
  message += wanted;
  const std::string extension = extension_of(path);
  if (extension.empty()) {
    message += " (no extension)";
  } else {
    message += ", not ";
    message += extension;
  }
  throw InputError(message);
}

enum class OutputFormat { table, json, csv };

/// --format table|json|csv; --json is an alias of --format json (a contradiction is bad input).
OutputFormat output_format(const po::variables_map& vm) {
  const bool json = vm.count("json") && vm["json"].as<bool>();
  if (!vm.count("format")) return json ? OutputFormat::json : OutputFormat::table;
  const std::string name = vm["format"].as<std::string>();
  OutputFormat format;
  if (name == "table") {
    format = OutputFormat::table;
  } else if (name == "json") {
    format = OutputFormat::json;
  } else if (name == "csv") {
    format = OutputFormat::csv;
  } else {
    std::string message = "--format ";
    message += name;
    message += ": not one of table, json, csv";
    throw po::error(message);
  }
  if (json && format != OutputFormat::json) {
    std::string message = "--json contradicts --format ";
    message += name;
    message += " (--json means --format json)";
    throw po::error(message);
  }
  return format;
}

/// Parses ARGS of one command: one positional argument plus the options.
po::variables_map parse_command(const std::vector<std::string>& args,
                                const po::options_description& options,
                                const std::string& positional_name) {
  po::options_description all;
  all.add(options);
  all.add_options()(positional_name.c_str(), po::value<std::string>());
  po::positional_options_description positional;
  positional.add(positional_name.c_str(), 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (!vm.count(positional_name)) {
    throw po::error("missing " + positional_name);
  }
  return vm;
}

std::vector<Override> overrides_from(const po::variables_map& vm) {
  std::vector<Override> out;
  if (vm.count("set")) {
    for (const std::string& text : vm["set"].as<std::vector<std::string>>()) {
      out.push_back(parse_override(text));
    }
  }
  if (vm.count("seed")) {
    out.push_back(Override{"seed", std::to_string(vm["seed"].as<std::uint64_t>())});
  }
  return out;
}

/// Did every tenant meet its SLO targets (models/slo.hpp)? Prints each miss to stderr in the
/// tables' units; PREFIX names the strategy in `compare`.
bool slo_met(const RunResult& result, const std::string& prefix = "") {
  const std::vector<std::string> misses = slo_miss_messages(evaluate_slos(result), prefix);
  for (const std::string& line : misses) std::cerr << "gpumux: " << line << "\n";
  return misses.empty();
}

RunResult simulate_with_progress(const ResolvedScenario& resolved, bool record_requests) {
  ProgressBar bar;
  RunOptions options;
  options.record_requests = record_requests;
  // GPUMUX_QUEUE=heap|calendar|ladder forces the pending-event set (for benchmarks; same results).
  if (const char* queue = std::getenv("GPUMUX_QUEUE"); queue != nullptr) {
    const std::string kind = queue;
    if (kind == "heap") options.queue = QueueKind::heap;
    if (kind == "calendar") options.queue = QueueKind::calendar;
    if (kind == "ladder") options.queue = QueueKind::ladder;
  }
  options.interrupt = &g_interrupted;
  options.progress = [&bar](Nanos now, Nanos horizon, std::uint64_t events) {
    bar.update(now, horizon, events);
  };
  RunResult result = simulate(resolved, options);
  bar.finish();
  return result;
}

/// -o must name a file gpumux writes: HDF5 (.h5, .hdf5), and a place it may write it: a regular
/// file (replaced atomically; a symlink is followed to it) or a new name in a directory where
/// files can be created. Anything else is bad input (exit 2), checked before the run so no time
/// is spent on a file that would not be written (write_result_h5 checks again when writing).
void check_output_path(const po::variables_map& vm) {
  if (!vm.count("output")) return;
  const std::string path = vm["output"].as<std::string>();
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  std::string extension =
      (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? ""
                                                                                : path.substr(dot);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".h5" || extension == ".hdf5") {
    try {
      check_output_target(path);
    } catch (const OutputError& e) {
      std::string message = "-o ";
      message += e.what();
      throw InputError(message);
    }
    return;
  }
  throw InputError("-o " + path + ": gpumux writes HDF5 result files only (.h5 or .hdf5)" +
                   (extension.empty() ? std::string() : ", not " + extension) +
                   "; for a table use --json or `gpumux report OUT.h5`");
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

/// One stderr line per tenant whose offered load its device could not serve: requests queued
/// without bound, so latency is the backlog (mean slowdown over kOverloadSlowdown) and the run
/// went on draining it long after arrivals stopped.
void warn_overload(const ResolvedScenario& resolved, const RunResult& result) {
  constexpr double kOverloadSlowdown = 100.0;
  const Nanos duration = resolved.scenario.duration;
  if (duration <= 0 || result.sim_time_ns <= duration + duration / 10) return;
  for (std::size_t t = 0; t < result.tenants.size() && t < resolved.scenario.tenants.size(); ++t) {
    const auto& tenant = result.tenants[t];
    if (!(tenant.slowdown_mean >= kOverloadSlowdown)) continue;
    std::cerr << "gpumux: warning: tenant " << resolved.scenario.tenants[t].name
              << ": offered load exceeds what its device can serve (mean slowdown "
              << static_cast<long long>(tenant.slowdown_mean) << "x; the backlog drained "
              << (result.sim_time_ns - duration) / 1'000'000'000 << " s after arrivals stopped)"
              << "; lower its rate or give it more GPU\n";
  }
}

int command_run(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, run_options(), "scenario");
  const OutputFormat format = output_format(vm);
  check_output_path(vm);
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const ResolvedScenario resolved = resolve_scenario(scenario);
  catch_stop_signals();
  const RunResult result = simulate_with_progress(resolved, vm.count("output") > 0);
  warn_overload(resolved, result);
  const bool written = write_output(vm, [&](const std::string& path) {
    write_result_h5(path, result);
  });
  if (format == OutputFormat::json) {
    std::cout << summary_json(result).dump() << "\n";
  } else if (format == OutputFormat::csv) {
    std::cout << summaries_csv({summary_json(result)}, false);
  } else if (!vm["quiet"].as<bool>()) {
    std::cout << summary_table(result);
  }
  if (!written) return kExitBadInput;
  if (result.status == "interrupted") {
    std::cerr << "gpumux: interrupted (" << signal_name(g_signal) << ") at simulated "
              << to_seconds(result.sim_time_ns)
              << " s; partial results are marked status=interrupted\n";
    return signal_exit_status();
  }
  if (g_interrupted.load()) {
    std::cerr << "gpumux: " << signal_name(g_signal) << " after the simulation finished; the "
              << "results are complete\n";
    return signal_exit_status();
  }
  if (vm["fail-on-slo"].as<bool>() && !slo_met(result)) return kExitSlo;
  return kExitOk;
}

int command_validate(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, validate_options(), "scenario");
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const bool planning = scenario.plan && std::any_of(scenario.tenants.begin(), scenario.tenants.end(),
                                                     [](const TenantSpec& t) { return t.device.empty(); });
  if (planning) {
    check_plan_scenario(scenario);
    std::cout << "ok: " << scenario.name << ": a planning scenario, " << scenario.tenants.size()
              << " tenant(s), " << scenario.plan->gpus.size()
              << " GPU model(s); place them with `gpumux plan`\n";
    return kExitOk;
  }
  const ResolvedScenario resolved = resolve_scenario(scenario);
  // What will fail: errors (exit 2, the first one) and warnings (stderr, exit 0).
  const std::vector<CapacityFinding> findings = capacity_findings(resolved);
  for (const CapacityFinding& f : findings) {
    if (f.error) throw InputError(f.where, f.message);
  }
  for (const CapacityFinding& f : findings) std::cerr << "gpumux: warning: " << f.text() << "\n";
  std::cout << "ok: " << scenario.name << ": " << scenario.gpus.size() << " GPU(s), "
            << resolved.devices.size() << " device(s), " << scenario.tenants.size()
            << " tenant(s)\n";
  for (const ResolvedDevice& d : resolved.devices) {
    std::cout << "  " << d.geometry.name << "  " << d.geometry.profile << "  " << d.geometry.sms
              << " SMs  " << d.sharing.mode_name() << "  tenants:";
    for (int t : d.tenants) std::cout << " " << resolved.scenario.tenants[static_cast<std::size_t>(t)].name;
    std::cout << "\n";
  }
  return kExitOk;
}

int command_compare(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, compare_options(), "scenario");
  const OutputFormat format = output_format(vm);
  check_output_path(vm);
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const std::vector<std::string> strategies =
      parse_strategy_list(vm["strategies"].as<std::string>());
  // Resolve every variant first, so a bad strategy fails before any time is spent.
  std::vector<ResolvedScenario> variants;
  for (const std::string& strategy : strategies) {
    variants.push_back(resolve_scenario(apply_strategy(scenario, strategy)));
  }
  catch_stop_signals();
  std::vector<RunResult> results;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    results.push_back(simulate_with_progress(variants[i], vm.count("output") > 0));
    results.back().strategy = strategies[i];
    if (g_interrupted.load()) break;
  }
  const bool written = write_output(vm, [&](const std::string& path) {
    write_results_h5(path, results);
  });
  if (format == OutputFormat::json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const RunResult& r : results) all.push_back(summary_json(r));
    std::cout << all.dump() << "\n";
  } else if (format == OutputFormat::csv) {
    std::vector<nlohmann::ordered_json> all;
    for (const RunResult& r : results) all.push_back(summary_json(r));
    std::cout << summaries_csv(all, true);
  } else {
    std::cout << compare_table(results);
  }
  if (!written) return kExitBadInput;
  if (g_interrupted.load()) {
    std::cerr << "gpumux: " << signal_name(g_signal) << ": stopped; the results cover the strategies "
              << "run so far (an interrupted run is marked status=interrupted)\n";
    return signal_exit_status();
  }
  if (vm["fail-on-slo"].as<bool>()) {
    bool met = true;
    for (const RunResult& r : results) met = slo_met(r, fmt::format("[{}] ", r.strategy)) && met;
    if (!met) return kExitSlo;
  }
  return kExitOk;
}

/// The plan flags as overrides of the scenario's `plan:` block (so errors name the flag).
std::vector<Override> plan_overrides(const po::variables_map& vm, const std::string& path) {
  std::vector<Override> out;
  bool has_plan = false;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    has_plan = root.IsMap() && root["plan"].IsDefined();
  } catch (const std::exception&) {
    return out;  // the loader reports the file's problem
  }
  std::string gpus;
  if (vm.count("gpus")) {
    gpus = "[";
    std::string text = vm["gpus"].as<std::string>();
    std::size_t start = 0;
    bool first = true;
    while (start <= text.size()) {
      std::size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      const std::string item = text.substr(start, comma - start);
      start = comma + 1;
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
        throw po::error("--gpus: expected MODEL=PRICE, got '" + item + "'");
      }
      if (!first) gpus += ", ";
      first = false;
      gpus += "{model: \"";
      gpus += item.substr(0, eq);
      gpus += "\", cost_per_hour: ";
      gpus += item.substr(eq + 1);
      gpus += "}";
    }
    gpus += "]";
  }
  std::vector<std::pair<std::string, std::string>> keys;
  if (!gpus.empty()) keys.emplace_back("gpus", gpus);
  if (vm.count("max-gpus")) keys.emplace_back("max_gpus", std::to_string(vm["max-gpus"].as<int>()));
  if (vm.count("strategies")) {
    std::string list = "[";
    for (const std::string& s : parse_strategy_list(vm["strategies"].as<std::string>())) {
      if (list.size() > 1) list += ", ";
      list += s;
    }
    list += "]";
    keys.emplace_back("strategies", list);
  }
  if (vm.count("headroom")) keys.emplace_back("headroom", fmt::format("{}", vm["headroom"].as<double>()));
  if (keys.empty()) return out;
  if (has_plan) {
    for (const auto& [key, value] : keys) out.push_back(Override{"plan." + key, value});
    return out;
  }
  if (gpus.empty()) {
    throw InputError(SourceLocation{path, 0, 0, "plan"},
                     "no `plan:` block and no --gpus: give the GPU models to buy, e.g. --gpus "
                     "h100-sxm-80gb=4.0");
  }
  std::string block = "{";
  for (const auto& [key, value] : keys) {
    if (block.size() > 1) block += ", ";
    block += key;
    block += ": ";
    block += value;
  }
  block += "}";
  out.push_back(Override{"plan", block});
  return out;
}

int command_plan(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, plan_options(), "scenario");
  const OutputFormat format = output_format(vm);
  if (format == OutputFormat::csv) throw po::error("--format csv: plan prints table or json");
  std::string output;
  if (vm.count("output")) {
    output = vm["output"].as<std::string>();
    const std::string extension = extension_of(output);
    if (extension != ".yaml" && extension != ".yml") bad_extension("-o", output, ".yaml or .yml");
    try {
      check_output_target(output);
    } catch (const OutputError& e) {
      std::string message = "-o ";
      message += e.what();
      throw InputError(message);
    }
  }
  const std::string path = vm["scenario"].as<std::string>();
  std::vector<Override> overrides = plan_overrides(vm, path);
  for (const Override& o : overrides_from(vm)) overrides.push_back(o);
  const Scenario scenario = load_scenario_file(path, overrides);
  PlanOptions options;
  if (vm.count("jobs")) {
    options.jobs = vm["jobs"].as<int>();
    if (options.jobs < 1) throw po::error("--jobs must be >= 1");
  }
  const PlanResult result = plan_scenario(scenario, options);
  if (!output.empty() && result.found()) {
    try {
      replace_file_atomically(output, [&](const std::string& temp) {
        std::ofstream out(temp);
        out << "# gpumux plan " << path
            << ": the cheapest setup found (`gpumux run` reproduces it)\n"
            << result.best_yaml;
        out.flush();
        if (!out) throw OutputError("cannot write " + output);
      });
    } catch (const OutputError& e) {
      std::string message = "-o ";
      message += e.what();
      throw InputError(message);
    }
  }
  if (format == OutputFormat::json) {
    std::cout << plan_json(result).dump() << "\n";
  } else {
    std::cout << plan_table(result);
    if (!output.empty() && result.found()) std::cout << "wrote " << output << "\n";
  }
  if (!result.found()) {
    std::cerr << "gpumux: plan: no setup meets every SLO: " << result.ranked.front().reason << "\n";
    return kExitSlo;
  }
  return kExitOk;
}

int command_mig(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, mig_options(), "model");
  const DeviceProfile& profile = load_device_profile(vm["model"].as<std::string>());
  if (!vm.count("check")) {
    std::cout << describe_mig(profile);
    return kExitOk;
  }
  const std::string layout_text = vm["check"].as<std::string>();
  const std::vector<std::string> layout = expand_mig_layout(profile, {layout_text});
  const MigFitResult fit = fit_mig_layout(profile, layout);
  if (!fit.fits) {
    std::cout << "does not fit on " << profile.name << ": " << fit.reason << "\n";
    return kExitSlo;
  }
  std::cout << "fits on " << profile.name << ":\n";
  int compute = 0;
  for (const MigInstancePlacement& p : fit.placements) {
    compute += p.profile->compute_slices;
    std::cout << "  #" << p.index << "  " << p.profile->name << "  memory slices " << p.start << "-"
              << p.end() - 1 << "  " << p.profile->sms << " SMs\n";
  }
  std::cout << "  compute slices used: " << compute << " of " << profile.compute_slices << "\n";
  return kExitOk;
}

int command_models(const std::vector<std::string>& args) {
  if (!args.empty()) throw po::error("unexpected argument '" + args.front() + "'");
  std::cout << fmt::format("{:<15} {:>4} {:>10} {:>10}  {:<48} {}\n", "model", "SMs", "memory",
                           "HBM", "MIG profiles", "nvidia-smi name");
  for (const std::string& name : embedded_profile_names()) {
    const DeviceProfile& gpu = load_device_profile(name);
    std::string mig;
    for (const MigProfileSpec& spec : gpu.mig_profiles) {
      if (spec.name.find('+') != std::string::npos) continue;  // +me/+gfx variants: `gpumux mig`
      mig += (mig.empty() ? "" : " ") + spec.name;
    }
    std::string smi;
    for (const std::string& alias : gpu.nvidia_smi_names) smi += (smi.empty() ? "" : " | ") + alias;
    std::cout << fmt::format("{:<15} {:>4} {:>6.1f} GiB {:>5.2f} TB/s  {:<48} {}\n", gpu.name,
                             gpu.sms, static_cast<double>(gpu.memory) / (1024.0 * 1024 * 1024),
                             gpu.hbm_bandwidth / 1e12, mig.empty() ? "-" : mig,
                             smi.empty() ? "-" : smi);
  }
  std::cout << "\nUse a model name or its nvidia-smi name as `model:` in a scenario; "
               "`gpumux mig MODEL` shows the MIG details.\n";
  return kExitOk;
}

int command_strategies(const std::vector<std::string>& args) {
  if (!args.empty()) throw po::error("unexpected argument '" + args.front() + "'");
  for (const Strategy* strategy : strategies()) {
    std::string spellings;
    for (const std::string& s : strategy->spellings()) {
      spellings += spellings.empty() ? "" : ", ";
      spellings += s;
    }
    std::string keys = "replicas";
    for (const std::string& key : strategy->keys()) {
      keys += ", ";
      keys += key;
    }
    std::cout << strategy->name() << ": " << strategy->summary() << "\n"
              << "  mode:        " << spellings << "\n"
              << "  keys:        " << keys << "\n"
              << "  a fault:     "
              << (strategy->fault_scope() == FaultScope::device ? "kills every client of the device"
                                                                 : "kills only its client")
              << "\n";
  }
  std::string names;
  for (const std::string& name : compare_strategy_names()) {
    names += names.empty() ? "" : ", ";
    names += name;
  }
  std::cout << "\ncompare --strategies: " << names << "\n"
            << "MIG (`mig:` on a gpus entry) runs a strategy inside every instance; "
               "`mig+NAME` in compare.\n";
  return kExitOk;
}

int command_report(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, report_options(), "file");
  const OutputFormat format = output_format(vm);
  if (vm.count("html") && extension_of(vm["html"].as<std::string>()) != ".html" &&
      extension_of(vm["html"].as<std::string>()) != ".htm") {
    bad_extension("--html", vm["html"].as<std::string>(), ".html");
  }
  const std::vector<nlohmann::ordered_json> summaries = read_summaries_h5(vm["file"].as<std::string>());
  if (vm.count("html")) {
    return exec_python_module("gpumux.report",
                              {vm["file"].as<std::string>(), "--html", vm["html"].as<std::string>()});
  }
  if (format == OutputFormat::json) {
    for (const nlohmann::ordered_json& s : summaries) std::cout << s.dump() << "\n";
  } else if (format == OutputFormat::csv) {
    bool compare_file = summaries.size() > 1;
    for (const nlohmann::ordered_json& s : summaries) {
      if (s.contains("strategy") && !s["strategy"].is_null()) compare_file = true;
    }
    std::cout << summaries_csv(summaries, compare_file);
  } else if (summaries.size() > 1) {
    std::cout << compare_table_from_json(summaries);
  } else {
    for (const nlohmann::ordered_json& s : summaries) std::cout << summary_table_from_json(s);
  }
  return kExitOk;
}

/// gpumux plot: checks the arguments and the file here (one-line errors, exit 2), then draws
/// with `python3 -m gpumux.plot` (matplotlib).
int command_plot(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, plot_options(), "file");
  const std::string output = vm["output"].as<std::string>();
  const std::string extension = extension_of(output);
  if (extension != ".png" && extension != ".svg") bad_extension("-o", output, ".png or .svg");
  std::vector<std::string> forwarded{vm["file"].as<std::string>(), "-o", output};
  if (vm.count("kind")) {
    const std::string kind = vm["kind"].as<std::string>();
    if (kind != "cdf" && kind != "timeline" && kind != "compare") {
      std::string message = "--kind ";
      message += kind;
      message += ": not one of cdf, timeline, compare";
      throw po::error(message);
    }
    forwarded.push_back("--kind");
    forwarded.push_back(kind);
  }
  read_summaries_h5(vm["file"].as<std::string>());  // a gpumux result file, or one line, exit 2
  return exec_python_module("gpumux.plot", forwarded);
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
  if (command == "run") {
    show(kRunHelp, run_options());
  } else if (command == "validate") {
    show(kValidateHelp, validate_options());
  } else if (command == "compare") {
    show(kCompareHelp, compare_options());
  } else if (command == "mig") {
    show(kMigHelp, mig_options());
  } else if (command == "models") {
    show(kModelsHelp, models_options());
  } else if (command == "strategies") {
    show(kStrategiesHelp, strategies_options());
  } else if (command == "report") {
    show(kReportHelp, report_options());
  } else if (command == "plot") {
    show(kPlotHelp, plot_options());
  } else if (command == "plan") {
    show(kPlanHelp, plan_options());
  } else {
    std::cerr << "gpumux: error: no command '" << command << "' (commands: run, validate, compare, "
              << "plan, mig, models, strategies, report, plot, help)\n";
    return kExitBadInput;
  }
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
    if (command == "models") return command_models(args);
    if (command == "strategies") return command_strategies(args);
    if (command == "run") return command_run(args);
    if (command == "validate") return command_validate(args);
    if (command == "compare") return command_compare(args);
    if (command == "plan") return command_plan(args);
    if (command == "mig") return command_mig(args);
    if (command == "report") return command_report(args);
    if (command == "plot") return command_plot(args);
    std::cerr << "gpumux: error: unknown command '" << command << "'\n" << kUsage;
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
