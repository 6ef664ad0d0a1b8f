#include "sim/cli/cli.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "models/profiles/device_profile.hpp"
#include "models/profiles/mig_layout.hpp"
#include "models/resolve.hpp"
#include "models/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/strategy_variants.hpp"
#include "sim/cli/progress.hpp"
#include "sim/io/result_io.hpp"

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

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) { g_interrupted.store(true); }

const char* kUsage =
    "usage: gpumux COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.yaml [-o OUT.h5] [--seed N] [--set KEY=VALUE ...] [--json] [--quiet]\n"
    "                    [--fail-on-slo]        simulate and print the summary\n"
    "  validate SCENARIO.yaml [--set ...]       check a scenario without running it\n"
    "  compare SCENARIO.yaml --strategies A,B   the same tenants under several strategies\n"
    "  mig GPU_MODEL [--check LAYOUT]           MIG profiles, layouts, placement check\n"
    "  report OUT.h5 [--json]                   print the summary of a result file\n"
    "  help [COMMAND]                           this text, or one command's options\n"
    "  --version\n";

struct ParsedCommand {
  po::variables_map vm;
};

po::options_description run_options() {
  po::options_description o("gpumux run SCENARIO.yaml");
  o.add_options()("output,o", po::value<std::string>(), "write the HDF5 result file here")(
      "seed", po::value<std::uint64_t>(), "override the scenario's master seed")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "KEY=VALUE override, e.g. gpus.0.sharing.timeslice=2ms (repeatable)")(
      "json", po::bool_switch(), "print the summary as one JSON object instead of the table")(
      "quiet,q", po::bool_switch(), "print nothing on success")(
      "fail-on-slo", po::bool_switch(), "exit 1 when a tenant misses its SLO");
  return o;
}

po::options_description validate_options() {
  po::options_description o("gpumux validate SCENARIO.yaml");
  o.add_options()("set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override");
  return o;
}

po::options_description compare_options() {
  po::options_description o("gpumux compare SCENARIO.yaml");
  o.add_options()("strategies", po::value<std::string>()->required(),
                  "comma-separated: as-is, exclusive, time-slicing, mps, mig, mig+time-slicing, "
                  "mig+mps, mig+exclusive")("output,o", po::value<std::string>(),
                                            "write all results into one HDF5 file")(
      "seed", po::value<std::uint64_t>(), "override the master seed")(
      "set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override")(
      "json", po::bool_switch(), "print a JSON array of summaries");
  return o;
}

po::options_description mig_options() {
  po::options_description o("gpumux mig GPU_MODEL");
  o.add_options()("check", po::value<std::string>(),
                  "a layout: comma-separated profiles (3g.40gb,2g.20gb,1g.10gb) or a name "
                  "(all-balanced)");
  return o;
}

po::options_description report_options() {
  po::options_description o("gpumux report OUT.h5");
  o.add_options()("json", po::bool_switch(), "print the stored JSON summary");
  return o;
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

/// Did every tenant meet its SLO targets? Prints the misses to stderr.
bool slo_met(const Scenario& scenario, const RunResult& result) {
  bool ok = true;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    const SloSpec& slo = scenario.tenants[t].slo;
    const LatencySummary& lat = result.tenants[t].latency;
    auto check = [&](const std::optional<Nanos>& target, std::int64_t value, const char* name) {
      if (target && value > *target) {
        std::cerr << "gpumux: SLO missed: " << scenario.tenants[t].name << " " << name << " "
                  << value << " ns > target " << *target << " ns\n";
        ok = false;
      }
    };
    check(slo.p50, lat.p50, "p50");
    check(slo.p90, lat.p90, "p90");
    check(slo.p99, lat.p99, "p99");
    check(slo.p999, lat.p999, "p99.9");
  }
  return ok;
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

int command_run(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, run_options(), "scenario");
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const ResolvedScenario resolved = resolve_scenario(scenario);
  std::signal(SIGINT, on_sigint);
  const RunResult result = simulate_with_progress(resolved, vm.count("output") > 0);
  std::signal(SIGINT, SIG_DFL);
  if (vm.count("output")) write_result_h5(vm["output"].as<std::string>(), result);
  if (vm["json"].as<bool>()) {
    std::cout << summary_json(result).dump() << "\n";
  } else if (!vm["quiet"].as<bool>()) {
    std::cout << summary_table(result);
  }
  if (result.status == "interrupted") {
    std::cerr << "gpumux: interrupted at simulated " << to_seconds(result.sim_time_ns)
              << " s; partial results are marked status=interrupted\n";
    return 130;
  }
  if (vm["fail-on-slo"].as<bool>() && !slo_met(resolved.scenario, result)) return kExitSlo;
  return kExitOk;
}

int command_validate(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, validate_options(), "scenario");
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const ResolvedScenario resolved = resolve_scenario(scenario);
  std::cout << "ok: " << scenario.name << ": " << scenario.gpus.size() << " GPU(s), "
            << resolved.devices.size() << " device(s), " << scenario.tenants.size()
            << " tenant(s)\n";
  for (const ResolvedDevice& d : resolved.devices) {
    std::cout << "  " << d.geometry.name << "  " << d.geometry.profile << "  " << d.geometry.sms
              << " SMs  " << sharing_mode_name(d.sharing.mode) << "  tenants:";
    for (int t : d.tenants) std::cout << " " << resolved.scenario.tenants[static_cast<std::size_t>(t)].name;
    std::cout << "\n";
  }
  return kExitOk;
}

int command_compare(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, compare_options(), "scenario");
  const Scenario scenario = load_scenario_file(vm["scenario"].as<std::string>(), overrides_from(vm));
  const std::vector<std::string> strategies =
      parse_strategy_list(vm["strategies"].as<std::string>());
  // Resolve every variant first, so a bad strategy fails before any time is spent.
  std::vector<ResolvedScenario> variants;
  for (const std::string& strategy : strategies) {
    variants.push_back(resolve_scenario(apply_strategy(scenario, strategy)));
  }
  std::signal(SIGINT, on_sigint);
  std::vector<RunResult> results;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    results.push_back(simulate_with_progress(variants[i], vm.count("output") > 0));
    results.back().strategy = strategies[i];
    if (g_interrupted.load()) break;
  }
  std::signal(SIGINT, SIG_DFL);
  if (vm.count("output")) write_results_h5(vm["output"].as<std::string>(), results);
  if (vm["json"].as<bool>()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const RunResult& r : results) all.push_back(summary_json(r));
    std::cout << all.dump() << "\n";
  } else {
    std::cout << compare_table(results);
  }
  return g_interrupted.load() ? 130 : kExitOk;
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

int command_report(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, report_options(), "file");
  const std::vector<nlohmann::ordered_json> summaries = read_summaries_h5(vm["file"].as<std::string>());
  if (vm["json"].as<bool>()) {
    for (const nlohmann::ordered_json& s : summaries) std::cout << s.dump() << "\n";
  } else if (summaries.size() > 1) {
    std::cout << compare_table_from_json(summaries);
  } else {
    for (const nlohmann::ordered_json& s : summaries) std::cout << summary_table_from_json(s);
  }
  return kExitOk;
}

int command_help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::string& command = args.front();
  if (command == "run") {
    std::cout << run_options();
  } else if (command == "validate") {
    std::cout << validate_options();
  } else if (command == "compare") {
    std::cout << compare_options();
  } else if (command == "mig") {
    std::cout << mig_options();
  } else if (command == "report") {
    std::cout << report_options();
  } else {
    std::cerr << "gpumux: no command '" << command << "'\n" << kUsage;
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv) {
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
    if (command == "run") return command_run(args);
    if (command == "validate") return command_validate(args);
    if (command == "compare") return command_compare(args);
    if (command == "mig") return command_mig(args);
    if (command == "report") return command_report(args);
    std::cerr << "gpumux: error: unknown command '" << command << "'\n" << kUsage;
    return kExitBadInput;
  } catch (const InputError& e) {
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
