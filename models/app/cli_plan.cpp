// gpumux plan: the plan flags become overrides of the scenario's `plan:` block, then the front
// door loads the scenario and the planner (models/plan/planner.hpp) searches.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "models/app/application.hpp"
#include "models/app/cli_common.hpp"
#include "models/app/interrupt.hpp"
#include "models/app/plan_deploy.hpp"
#include "models/config/input_error.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/plan/machine_types.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "sim/io/output_directory.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::cli {
namespace {

/// Off a terminal, the least time between two progress lines of a plan (issue 35: a long
/// search prints a line at least every so often, and no more often than this).
constexpr double kPlanProgressInterval_s = 10.0;

const CommandHelp kPlanHelp{
    "usage: gpumux plan SCENARIO.yaml [-o BEST.yaml|DIR] [--platform P] [--gpus MODEL=PRICE,...] "
    "[--max-gpus N] [--strategies A,B] [--headroom F] [--jobs N] [--set KEY=VALUE ...] "
    "[--seed N] [--format table|json|yaml] [--json]",
    "Finds the cheapest setup (GPUs of which model, partitioned and shared how) in which every\n"
    "tenant meets its SLO over the whole run. The search space comes from the scenario's `plan:`\n"
    "block (gpus: [{model, cost_per_hour, currency}], max_gpus, strategies, headroom) or the\n"
    "flags; tenants need no `device:` (`isolation: memory|fault`, `best_effort: true` honoured).\n"
    "Setups are packings of the tenants onto GPUs, each GPU dedicated, time-sliced, MPS, MIG or\n"
    "a MIG hybrid; analytical bounds (memory, MPS client limit, sustainable load, latency floor)\n"
    "prune before simulating, survivors are simulated cheapest-first on --jobs threads until\n"
    "the cheapest feasible cost is proven (docs/plan.md). Prints the ranked table (by cost, then\n"
    "SLO margin, then isolation): the best setup and the cheapest of each strategy family, with\n"
    "why the cheaper ones failed.\n"
    "--platform bare|gke|device-plugin|mig-parted (plan.platform) keeps to what the platform\n"
    "runs and buys nodes of machine types (a3-highgpu-8g, a2-ultragpu-1g, ...) on all but bare.\n"
    "-o BEST.yaml writes the winning setup as a scenario `gpumux run` reproduces; -o DIR writes\n"
    "what you apply: best.yaml and, per platform, the GKE node-pool commands or device-plugin and\n"
    "mig-parted configs, a Pod manifest per tenant and cluster.yaml (the same, replayable),\n"
    "all or nothing: checked before planning (a new name, or a folder holding only an earlier\n"
    "plan's files), written beside it and renamed into place, so an earlier plan is replaced\n"
    "whole and a failed write leaves it as it was (docs/plan.md).\n"
    "SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the search: nothing is written, exit 128+signal;\n"
    "a signal during the write of -o lets it finish (exit 128+signal, -o complete); a second\n"
    "signal exits at once and removes the temporary file or folder (no OUT.tmp.PID is left).\n"
    "Exit: 0 a setup was found, 1 none meets every SLO, 2 bad input, 3 internal error,\n"
    "130 SIGINT, 143 SIGTERM, 129 SIGHUP.",
    "  gpumux plan scenarios/plan/plan-h100-node.yaml\n"
    "  gpumux plan scenarios/plan/plan-h100-node.yaml -o best.yaml && gpumux run best.yaml\n"
    "  gpumux plan scenarios/plan/plan-h100-node.yaml --platform gke -o deploy/\n"
    "  gpumux plan my.yaml --gpus h100-sxm-80gb=4.0,a100-sxm4-40gb=1.8 --max-gpus 4 --json\n"};

po::options_description plan_options() {
  po::options_description o("gpumux plan SCENARIO.yaml");
  o.add_options()("output,o", po::value<std::string>()->value_name("BEST.yaml|DIR"),
                  "write the winning setup as a scenario file (.yaml or .yml), or into a "
                  "directory what to apply (configs, manifests, best.yaml)")(
      "platform", po::value<std::string>()->value_name("P"),
      "bare (default), gke, device-plugin or mig-parted (replaces plan.platform)")(
      "prices", po::value<std::string>()->value_name("PRICES.yaml"),
      "host prices of machine types (replaces plan.prices; default: built-in GCP us-central1 "
      "on-demand, calibration/prices/)")(
      "gpus", po::value<std::string>()->value_name("MODEL=PRICE,..."),
      "GPU models to buy and their price per hour (replaces plan.gpus)")(
      "max-gpus", po::value<int>()->value_name("N"), "at most N GPUs (default: plan.max_gpus, 8)")(
      "strategies", po::value<std::string>()->value_name("A,B,..."),
      "families searched: dedicated, mig, time-slicing, mps, mig+time-slicing, mig+mps")(
      "headroom", po::value<double>()->value_name("F"),
      "margin kept below every SLO target, e.g. 0.1 (default: plan.headroom, 0)")(
      "jobs,j", po::value<int>()->value_name("N"),
      "simulation threads, 1-1024 (default: the cores)")(
      "seed", po::value<std::string>()->value_name("N"), "override the master seed")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "KEY=VALUE override (repeatable)")(
      "format", po::value<std::string>()->value_name(join(data_format_names(), "|")),
      "output: table (default), json or yaml")("json", po::bool_switch(),
                                               "the same as --format json");
  add_quiet_option(o);
  return o;
}

/// --gpus MODEL=PRICE,... as a YAML flow list of plan.gpus entries ("" when not given).
std::string gpus_flow_list(const po::variables_map& vm) {
  if (!vm.count("gpus")) return "";
  std::vector<std::string> entries;
  for (const std::string& item : split(vm["gpus"].as<std::string>(), ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw po::error(fmt::format("--gpus: expected MODEL=PRICE, got '{}'", item));
    }
    entries.push_back(fmt::format("{{model: \"{}\", cost_per_hour: {}}}", item.substr(0, eq),
                                  item.substr(eq + 1)));
  }
  return fmt::format("[{}]", join(entries, ", "));
}

/// The plan flags as KEY=VALUE overrides of the scenario's `plan:` block (so errors name the
/// flag's key); without a `plan:` block, one override that creates it (--gpus required).
std::vector<std::string> plan_overrides(const po::variables_map& vm, const std::string& path) {
  const bool has_plan = scenario_has_top_level_key(path, true, "plan");
  const std::string gpus = gpus_flow_list(vm);
  std::vector<std::pair<std::string, std::string>> keys;
  if (!gpus.empty()) keys.emplace_back("gpus", gpus);
  if (vm.count("max-gpus")) keys.emplace_back("max_gpus", std::to_string(vm["max-gpus"].as<int>()));
  if (vm.count("strategies")) {
    keys.emplace_back(
        "strategies",
        fmt::format("[{}]", join(parse_strategy_list(vm["strategies"].as<std::string>()), ", ")));
  }
  if (vm.count("headroom")) {
    keys.emplace_back("headroom", fmt::format("{}", vm["headroom"].as<double>()));
  }
  if (vm.count("platform")) keys.emplace_back("platform", vm["platform"].as<std::string>());
  if (vm.count("prices")) keys.emplace_back("prices", vm["prices"].as<std::string>());
  std::vector<std::string> out;
  if (keys.empty()) return out;
  if (has_plan) {
    for (const auto& [key, value] : keys) out.push_back(fmt::format("plan.{}={}", key, value));
    return out;
  }
  if (gpus.empty()) {
    throw InputError(SourceLocation{path, 0, 0, "plan"},
                     "no `plan:` block and no --gpus: give the GPU models to buy, e.g. --gpus "
                     "h100-sxm-80gb=4.0");
  }
  std::vector<std::string> block;
  for (const auto& [key, value] : keys) block.push_back(fmt::format("{}: {}", key, value));
  out.push_back(fmt::format("plan={{{}}}", join(block, ", ")));
  return out;
}

/// Writes the winning setup to OUTPUT atomically; a failure is bad input (exit 2).
void write_best_yaml(const std::string& output, const std::string& scenario_path,
                     const PlanResult& result) {
  output_errors_as_bad_input([&] {
    replace_file_atomically(output, [&](const std::string& temp) {
      errno = 0;
      std::ofstream out(temp);
      out << "# gpumux plan " << scenario_path
          << ": the cheapest setup found (`gpumux run` reproduces it)\n"
          << result.best_yaml;
      out.close();
      // The reason (ENOSPC: "No space left on device"), as the result files' errors give it.
      if (!out) {
        throw OutputError("cannot write " + output + ": " +
                          (errno != 0 ? std::strerror(errno) : "write failed"));
      }
    });
  });
}

/// Writes what `-o DIR` holds (models/app/plan_deploy.hpp) all or nothing: into DIR.tmp.PID,
/// each file fsynced, then renamed into place over an earlier plan's folder
/// (sim/io/output_directory.hpp); a failure is bad input (exit 2) and leaves DIR as it was.
void write_plan_directory(const std::string& dir, const std::string& scenario_path,
                          const PlanResult& result) {
  output_errors_as_bad_input([&] {
    replace_directory_atomically(dir, plan_output_entry, [&](const std::string& temp) {
      std::error_code error;
      for (const PlanFile& file : plan_deployment_files(result, scenario_path)) {
        const std::filesystem::path path = std::filesystem::path(temp) / file.path;
        std::filesystem::create_directories(path.parent_path(), error);
        if (error) {
          throw OutputError("cannot write " + dir + ": creating " + file.path +
                            "'s folder: " + error.message());
        }
        replace_file_atomically(path.string(), [&](const std::string& part) {
          errno = 0;
          std::ofstream out(part);
          out << file.text;
          out.close();
          if (!out) {
            throw OutputError("cannot write " + (std::filesystem::path(dir) / file.path).string() +
                              ": " + (errno != 0 ? std::strerror(errno) : "write failed"));
          }
        });
        if (file.path.ends_with(".sh")) {
          std::filesystem::permissions(path, std::filesystem::perms::owner_exec,
                                       std::filesystem::perm_options::add, error);
        }
      }
    });
  });
}

/// The plan flags and the `plan:` keys they set: an error about one of those keys names the
/// flag the user wrote, not the `--set plan.KEY` it became (plan_overrides).
constexpr std::pair<const char*, const char*> kPlanFlags[] = {
    {"max-gpus", "plan.max_gpus"},     {"headroom", "plan.headroom"}, {"platform", "plan.platform"},
    {"strategies", "plan.strategies"}, {"gpus", "plan.gpus"},         {"prices", "plan.prices"}};

/// E as the flag's error when it is about a key a plan flag set and no --set of the user's
/// names that key; else E unchanged.
InputError as_flag_error(const InputError& e, const po::variables_map& vm,
                         const std::vector<std::string>& user_sets) {
  const SourceLocation& where = e.where();
  if (where.file != yaml::kOverrideSource) return e;
  for (const auto& [flag, key] : kPlanFlags) {
    const std::string prefix = key;
    const std::string& path = where.key_path;
    if (!vm.count(flag) || (path != prefix && !path.starts_with(prefix + "."))) continue;
    const bool user_set = std::any_of(user_sets.begin(), user_sets.end(), [&](const auto& text) {
      return text.starts_with(prefix + "=") || text.starts_with(prefix + ".") ||
             text.starts_with("plan=");
    });
    if (user_set) return e;
    std::string message = e.what();
    const std::string old_prefix = where.describe() + ": ";
    if (message.starts_with(old_prefix)) message.erase(0, old_prefix.size());
    return InputError(SourceLocation{std::string("--") + flag, 0, 0, ""}, message);
  }
  return e;
}

int command_plan(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, plan_options(), "scenario");
  const OutputFormat format = output_format(vm);
  if (format == OutputFormat::csv) throw po::error("--format csv: plan prints table, json or yaml");
  std::string output;
  bool output_dir = false;
  if (vm.count("output")) {
    output = vm["output"].as<std::string>();
    const std::string extension = extension_of(output);
    // A name without extension (or an existing directory, or one ending in '/') is a directory.
    std::error_code error;  // (a name too long is refused by the checks below, in one line)
    output_dir =
        extension.empty() || output.ends_with("/") || std::filesystem::is_directory(output, error);
    if (!output_dir && extension != ".yaml" && extension != ".yml") {
      bad_extension("-o", output, ".yaml or .yml, or a directory");
    }
    // Checked before planning: a folder to create or an earlier plan's folder to replace whole.
    output_errors_as_bad_input([&] {
      if (output_dir) {
        check_output_directory(output, plan_output_entry);
      } else {
        check_output_target(output);
      }
    });
  }
  ScenarioRequest request = scenario_request(vm);
  // -o naming the scenario itself replaced the search space (its plan: block) with the setup.
  std::error_code same_error;
  if (!output.empty() && !output_dir && request.is_path &&
      std::filesystem::equivalent(output, request.scenario, same_error)) {
    throw InputError("-o " + output +
                     ": is the scenario being planned; the best setup written there would "
                     "replace it (name another file)");
  }
  const std::vector<std::string> user_sets = request.overrides;
  std::vector<std::string> overrides = plan_overrides(vm, request.scenario);
  overrides.insert(overrides.end(), request.overrides.begin(), request.overrides.end());
  request.overrides = std::move(overrides);
  if (vm.count("prices")) {
    // Read and checked on every platform: bare buys no machine types and never read it, so a
    // missing or malformed file used to pass without a word.
    PlanSpec given;
    given.prices = vm["prices"].as<std::string>();
    given.prices_where = SourceLocation{"--prices", 0, 0, ""};
    (void)plan_price_table(given);
  }
  PlanOptions options;
  options.lazy_windows = engine_switches().plan_lazy_windows;
  options.dominance = engine_switches().plan_dominance;
  options.continue_windows = engine_switches().plan_continue_windows;
  options.futility = engine_switches().plan_futility;
  options.unit_processes = engine_switches().plan_unit_processes;
  if (vm.count("jobs")) {
    options.jobs = vm["jobs"].as<int>();
    // Each job is a forked simulation process: an unbounded count (--jobs 100000) forked
    // thousands of processes and took minutes to stop. The bound is --workers' (and Python's).
    if (options.jobs < 1 || options.jobs > 1024) {
      throw InputError("--jobs: " + std::to_string(options.jobs) + " is not in 1..1024");
    }
  }
  // SIGINT/SIGTERM/SIGHUP stop the search (the simulations poll the flag): nothing is written.
  // One during the write of -o lets it finish, then exits 128+signal; a second removes the
  // temporary file or folder (interrupt.hpp).
  catch_stop_signals();
  options.interrupt = &stop_requested();
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  // Progress: on a terminal one line rewritten after each batch; off a terminal (a log, CI) a
  // line after the first batch, then at most one every 10 s, so a long search is never silent.
  double last_line_s = -kPlanProgressInterval_s;
  if (!vm["quiet"].as<bool>()) {
    options.progress = [&](std::uint64_t simulations) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const std::string line =
          fmt::format("gpumux: plan: {} simulations, {:.0f} s", simulations, seconds);
      if (terminal) {
        std::cerr << "\r" << line << std::flush;
      } else if (seconds - last_line_s >= kPlanProgressInterval_s) {
        last_line_s = seconds;
        std::cerr << line << "\n" << std::flush;
      }
    };
  }
  std::optional<PlanResult> searched;
  try {
    searched = plan_request(request, options);
  } catch (const InputError& e) {
    throw as_flag_error(e, vm, user_sets);
  } catch (const PlanInterrupted&) {
    if (terminal) std::cerr << "\n";
    std::cerr << "gpumux: plan: interrupted (" << stop_signal_name()
              << "): the search stopped; nothing written\n";
    return signal_exit_status();
  }
  if (terminal) std::cerr << "\r\033[K" << std::flush;
  const PlanResult& result = *searched;
  if (!output.empty() && result.found()) {
    if (output_dir) {
      write_plan_directory(output, request.scenario, result);
    } else {
      write_best_yaml(output, request.scenario, result);
    }
  }
  if (structured(format)) {
    print_structured(plan_json(result), format, std::cout);
  } else {
    std::cout << plan_table(result);
    if (!output.empty() && result.found()) std::cout << "wrote " << output << "\n";
  }
  if (stop_requested().load()) {
    // The signal came after the search (while writing -o, say): what was written is complete.
    std::cerr << "gpumux: plan: " << stop_signal_name() << " after the search finished; "
              << (!output.empty() && result.found() ? output + " is complete"
                                                    : std::string("the plan is complete"))
              << "\n";
    return signal_exit_status();
  }
  if (!result.found()) {
    std::cerr << "gpumux: plan: no setup meets every SLO: " << result.ranked.front().reason << "\n";
    return kExitSlo;
  }
  return kExitOk;
}

}  // namespace

Command plan_command() { return Command{"plan", &kPlanHelp, plan_options, command_plan}; }

}  // namespace gpumux::cli
