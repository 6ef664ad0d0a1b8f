// gpumux run, validate, compare: load -> overrides -> resolve -> simulate through the front door
// (models/app/application.hpp), then print and write what it returns.
#include <algorithm>
#include <charconv>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "models/app/application.hpp"
#include "models/app/cluster_dask.hpp"
#include "models/app/cli_common.hpp"
#include "models/app/interrupt.hpp"
#include "models/cluster/cluster_output.hpp"
#include "models/cluster/node_state.hpp"
#include "models/cluster/pod_slo.hpp"
#include "models/cluster/workload_pods.hpp"
#include "models/config/input_error.hpp"
#include "models/output/result_io.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::cli {
namespace {

const CommandHelp kRunHelp{
    "usage: gpumux run SCENARIO.yaml [-o OUT.h5] [--seed N] [--set KEY=VALUE ...] "
    "[--format table|json|yaml|csv] [--json] [--quiet] [--fail-on-slo] [--workers N | --dask "
    "ADDRESS [--shards N]]",
    "Simulates SCENARIO.yaml and prints the per-tenant and per-device summary table.\n"
    "A scenario with a `cluster:` section replays the cluster instead (docs/cluster.md): pending\n"
    "time per pod class, allocation, fragmentation, cost and pending reasons; -o writes the\n"
    "/cluster tables, --json the cluster summary. --workers N simulates its workload pods'\n"
    "GPUs in N processes, split by node (the same numbers for any N); --dask ADDRESS runs those\n"
    "groups as Dask tasks on the scheduler at ADDRESS (tcp://HOST:PORT, local:N for a local\n"
    "cluster of N workers, auto for $DASK_SCHEDULER_ADDRESS; the same numbers again) and prints\n"
    "the tasks' times and the critical path on stderr; --shards N sets the number of those\n"
    "groups (default 4 per worker; the same numbers for any N). Pods whose workload has an\n"
    "slo: get verdicts (met / missed / inconclusive), and --fail-on-slo applies to them.\n"
    "Defaults: no result file, the scenario's seed, no overrides, the table on stdout.\n"
    "-o OUT.h5 is checked before simulating: a regular file (replaced atomically) or a new name\n"
    "in an existing directory where files can be created; a symlink is followed and the file it\n"
    "points to is replaced (the link stays). Directories, devices (/dev/null), FIFOs and sockets\n"
    "are refused. The file is written as OUT.h5.tmp.PID beside it (the request records while\n"
    "the simulation runs, so memory does not grow with its length; the rest after it), fsynced\n"
    "and renamed; the temporary file is removed on errors and signals (not SIGKILL), and a\n"
    "failed write leaves the previous OUT.h5 unchanged.\n"
    "SIGINT (Ctrl-C), SIGTERM and SIGHUP stop the run: what was simulated is written marked\n"
    "status=interrupted, exit 128+signal; a signal during the write lets it finish; a second\n"
    "signal exits at once without writing. A cluster replay stopped by a signal writes nothing\n"
    "(it has no partial result) and exits 128+signal; stopped after the replay, while its\n"
    "workload pods are simulated, it writes the replay marked status=interrupted, with the\n"
    "pods of the node groups (Dask tasks) finished. Its --workers processes\n"
    "and --dask driver end with it (also when gpumux is killed with SIGKILL).\n"
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
    "usage: gpumux validate SCENARIO.yaml [--set KEY=VALUE ...] [--format table|json|yaml]",
    "Checks schema, units, MIG placement and memory capacity without running; prints the devices\n"
    "and their tenants. What will fail is an error: a tenant whose static memory (or static +\n"
    "one request's) exceeds its device or MPS pinned limit. What is likely to fail is a warning\n"
    "on stderr: tenants that together exceed a device's memory, an offered load at or above\n"
    "what the device serves with the tenant alone, a device's tenants offering more SM or HBM\n"
    "time than it has. A planning scenario (plan:, tenants without devices) is checked against\n"
    "its GPU models. --format json|yaml prints the same as one document in machine units\n"
    "(bytes), warnings listed in it and still on stderr. Exit 0 when valid (warnings\n"
    "allowed), 2 with one line FILE:LINE:COLUMN: KEY: message.",
    "  gpumux validate scenarios/mig-all-balanced-a100.yaml\n"
    "  gpumux validate scenarios/hybrid-h100.yaml --format json\n"
    "  gpumux validate my.yaml --set gpus.0.mig=3g.40gb:1,1g.10gb:4\n"};
const CommandHelp kCompareHelp{
    "usage: gpumux compare SCENARIO.yaml --strategies A,B,... [-o OUT.h5] [--seed N] "
    "[--set KEY=VALUE ...] [--format table|json|yaml|csv] [--json] [--quiet] [--fail-on-slo]",
    "Runs the same tenants and arrivals under each strategy and prints one overview table\n"
    "(SLOs met: tenants meeting every target of their slo: block, per strategy).\n"
    "--strategies is required; defaults: no result file, the scenario's seed, no overrides.\n"
    "-o, signals and exit codes as for `gpumux run` (see gpumux run --help): each strategy's\n"
    "records are streamed into its group of OUT.h5.tmp.PID while it runs; a signal stops the\n"
    "strategy running and the file holds the strategies run so far; --fail-on-slo exits 1 when\n"
    "a tenant misses an SLO target under any strategy (each miss on stderr: [strategy] tenant).",
    "  gpumux compare scenarios/hybrid-h100.yaml --strategies mig,time-slicing,mps,dedicated\n"
    "  gpumux compare scenarios/antipattern-mps-fault-blast-radius.yaml --strategies mig,mps "
    "-o cmp.h5\n"};
po::options_description run_options() {
  po::options_description o("gpumux run SCENARIO.yaml");
  o.add_options()("output,o", po::value<std::string>()->value_name("OUT.h5"),
                  "write the HDF5 result file here (.h5 or .hdf5; a regular file or a new "
                  "name, symlinks followed)")("seed", po::value<std::string>()->value_name("N"),
                                              "override the scenario's master seed")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "KEY=VALUE override, e.g. gpus.0.sharing.timeslice=2ms (repeatable)")(
      "format", po::value<std::string>()->value_name(join(output_format_names(), "|")),
      "output: table (default), json (one object), csv (one row per tenant, units in the "
      "column names)")("json", po::bool_switch(), "the same as --format json")(
      "quiet,q", po::bool_switch(),
      "print nothing on success: no table (unless --format json|csv), no progress bar; "
      "warnings and errors still print")("fail-on-slo", po::bool_switch(),
                                         "exit 1 when a tenant misses its SLO")(
      "workers", po::value<int>()->default_value(1)->value_name("N"),
      "cluster scenarios: processes that simulate the workload pods' GPUs, split by node")(
      "dask", po::value<std::string>()->value_name("ADDRESS"),
      "cluster scenarios: simulate the workload pods' node groups as Dask tasks on this "
      "scheduler (tcp://HOST:PORT, local:N, auto = $DASK_SCHEDULER_ADDRESS)")(
      "shards", po::value<std::string>()->value_name("N"),
      "with --dask: N node groups (tasks), balanced by estimated launches, at most one per "
      "node (default 4 per worker; the same numbers for any N)");
  return o;
}

po::options_description validate_options() {
  po::options_description o("gpumux validate SCENARIO.yaml");
  o.add_options()("set",
                  po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
                  "override a scenario key, e.g. gpus.0.mig=all-balanced (repeatable)");
  add_data_format_options(o);
  add_quiet_option(o);
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
      "seed", po::value<std::string>(), "override the master seed")(
      "set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override")(
      "format", po::value<std::string>()->value_name(join(output_format_names(), "|")),
      "output: table (default), json (an array of summaries), csv (one row per strategy and "
      "tenant)")("json", po::bool_switch(), "the same as --format json")(
      "quiet,q", po::bool_switch(),
      "print nothing on success: no table (unless --format json|csv), no progress bar; "
      "warnings and errors still print")(
      "fail-on-slo", po::bool_switch(),
      "exit 1 when a tenant misses an SLO target under any strategy");
  return o;
}

// --shards N: node groups of a --dask run, 1..2^20 (python/gpumux/_dask_cluster.py's bound); 0
// when not given (4 per worker). Read here, not by program_options (it takes "1e3" and "-0").
int shards_option(const po::variables_map& vm) {
  if (!vm.count("shards")) return 0;
  constexpr int kMaxShards = 1 << 20;
  const std::string text = vm["shards"].as<std::string>();
  int shards = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), shards);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || shards < 1 ||
      shards > kMaxShards) {
    throw InputError(
        fmt::format("--shards: expected a whole number from 1 to {}, got '{}'", kMaxShards, text));
  }
  return shards;
}

// A scenario with a `cluster:` section: the cluster replay (docs/cluster.md).
int run_cluster_scenario(const po::variables_map& vm, OutputFormat format) {
  const int workers = vm["workers"].as<int>();
  if (workers < 1 || workers > 1024) {
    throw InputError("--workers: " + std::to_string(workers) + " is not in 1..1024");
  }
  // Every check before any work (-o was checked by command_run).
  if (format == OutputFormat::csv) {
    throw InputError("--format csv: not available for a cluster scenario (use --json or -o)");
  }
  const bool on_dask = vm.count("dask") != 0;
  if (on_dask && !vm["workers"].defaulted()) {
    throw InputError("--dask, --workers: one or the other (Dask workers, or local processes)");
  }
  const int shards = shards_option(vm);
  if (shards > 0 && !on_dask) {
    throw InputError("--shards: only with --dask (--workers N splits into N groups)");
  }
  // The handlers go in before loading (a 1,024-GPU description takes a while to read): a signal
  // then stops the replay at its first poll.
  catch_stop_signals();
  std::optional<ClusterRun> replayed;
  // A signal during the workload pods' simulation (after the replay): the replay's result is
  // whole and is written marked interrupted, with the pods of the node groups that finished.
  bool workload_stopped = false;
  try {
    if (on_dask) {
      DaskRunReport report;
      replayed = simulate_cluster_on_dask(scenario_request(vm), vm["dask"].as<std::string>(),
                                          shards, &stop_requested(), report);
      workload_stopped = report.interrupted;
      if (!vm["quiet"].as<bool>()) std::cerr << "gpumux: " << report.summary_line() << "\n";
    } else {
      // simulate_cluster's steps, so that a stop between them keeps the replay.
      const cluster::ClusterSpec spec = load_cluster_request(scenario_request(vm));
      replayed.emplace();
      replayed->result = cluster::run_cluster(spec, &stop_requested());
      cluster::WorkloadPodOptions options;
      options.workers = workers;
      options.interrupt = &stop_requested();
      try {
        cluster::simulate_workload_pods(spec, replayed->result, options);
      } catch (const cluster::ClusterInterrupted&) {
        workload_stopped = true;
      }
      replayed->metrics = cluster::cluster_metrics(replayed->result);
    }
  } catch (const cluster::ClusterInterrupted&) {
    std::cerr << "gpumux: interrupted (" << stop_signal_name()
              << "): the cluster replay stopped; nothing written (a cluster replay has no "
                 "partial result)\n";
    return signal_exit_status();
  }
  const ClusterRun& run = *replayed;
  const bool written = write_output(vm, [&](const std::string& path) {
    cluster::write_cluster_h5(path, run.result, run.metrics, workload_stopped);
  });
  if (structured(format)) {
    print_structured(cluster::cluster_summary_json(run.result, run.metrics, workload_stopped),
                     format, std::cout);
  } else if (!vm["quiet"].as<bool>()) {
    std::cout << cluster::cluster_summary_table(run.result, run.metrics, workload_stopped);
  }
  if (!written) return kExitBadInput;
  if (workload_stopped) {
    std::cerr << "gpumux: interrupted (" << stop_signal_name()
              << ") while simulating the workload pods: the replay is complete; results "
                 "marked status=interrupted\n";
    return signal_exit_status();
  }
  if (stop_requested().load()) {
    std::cerr << "gpumux: " << stop_signal_name() << " after the cluster replay finished; the "
              << "results are complete\n";
    return signal_exit_status();
  }
  if (vm["fail-on-slo"].as<bool>()) {
    // The workload pods' verdicts, judged as a run's tenants (models/cluster/pod_slo.hpp).
    const std::vector<std::string> misses =
        slo_miss_messages(cluster::pod_slos(run.result), "pod ", kDefaultConfidence);
    for (const std::string& line : misses) std::cerr << "gpumux: " << line << "\n";
    if (!misses.empty()) return kExitSlo;
  }
  return kExitOk;
}

int command_run(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, run_options(), "scenario");
  const OutputFormat format = output_format(vm);
  check_output_path(vm);
  if (is_cluster_request(scenario_request(vm))) return run_cluster_scenario(vm, format);
  shards_option(vm);  // a malformed value is named as such, before what it is for
  for (const char* option : {"dask", "shards"}) {
    if (vm.count(option)) {
      throw InputError(fmt::format("--{}: only for a scenario with a `cluster:` section", option));
    }
  }
  if (vm["workers"].as<int>() != 1) {
    // One scenario's independent parts already run one at a time, in windows
    // (models/run/components.cpp); worker processes split a cluster's workload pods only.
    throw InputError("--workers: only for a scenario with a `cluster:` section");
  }
  const ResolvedScenario resolved = resolve_request(scenario_request(vm));
  for (const std::string& w : default_warnings(resolved.scenario)) {
    std::cerr << "gpumux: warning: " << w << "\n";
  }
  catch_stop_signals();
  CliProgress progress(vm["quiet"].as<bool>());
  RunControl control = progress.control(false);
  control.record_kernels = false;  // without -o nothing reads them
  // -o: the records go to the file as the run produces them (memory flat in the run's length);
  // the file stays OUT.h5.tmp.PID until the rest is written after the run.
  std::optional<StreamedResultFile> file;
  if (vm.count("output")) {
    output_errors_as_bad_input(
        [&] { file.emplace(vm["output"].as<std::string>(), resolved.scenario.output.kernels); });
    control.observers.push_back(&*file);
  }
  const RunResult result = simulate_resolved(resolved, control);
  warn_overload(resolved, result);
  const bool written = write_output(vm, [&](const std::string&) { file->finish(result); });
  if (structured(format)) {
    print_structured(summary_json(result), format, std::cout);
  } else if (format == OutputFormat::csv) {
    std::cout << summaries_csv({summary_json(result)}, false);
  } else if (!vm["quiet"].as<bool>()) {
    std::cout << summary_table(result);
  }
  if (!written) return kExitBadInput;
  if (result.status == "interrupted") {
    std::cerr << "gpumux: interrupted (" << stop_signal_name() << ") at simulated "
              << to_seconds(result.sim_time_ns)
              << " s; partial results are marked status=interrupted\n";
    return signal_exit_status();
  }
  if (stop_requested().load()) {
    std::cerr << "gpumux: " << stop_signal_name() << " after the simulation finished; the "
              << "results are complete\n";
    return signal_exit_status();
  }
  if (vm["fail-on-slo"].as<bool>() && !slo_met(result)) return kExitSlo;
  return kExitOk;
}

// `validate --format json|yaml`: what the table says, in machine units, one document.
nlohmann::ordered_json validation_json(const Validation& validation) {
  const Scenario& loaded = validation.scenario;
  if (validation.planning) {
    return {{"status", "ok"},
            {"scenario", loaded.name},
            {"kind", "planning"},
            {"tenants", loaded.tenants.size()},
            {"gpu_models", loaded.plan->gpus.size()}};
  }
  const ResolvedScenario& resolved = *validation.resolved;
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const ResolvedDevice& d : resolved.devices) {
    nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
    for (int t : d.tenants) tenants.push_back(resolved.scenario.tenants[std::size_t(t)].name);
    devices.push_back({{"device", d.geometry.name},
                       {"profile", d.geometry.profile},
                       {"sms", d.geometry.sms},
                       {"memory_bytes", d.geometry.memory},
                       {"sharing", d.sharing.mode_name()},
                       {"tenants", tenants}});
  }
  return {{"status", "ok"},
          {"scenario", resolved.scenario.name},
          {"kind", "scenario"},
          {"gpus", resolved.scenario.gpus.size()},
          {"tenants", resolved.scenario.tenants.size()},
          {"devices", devices},
          {"warnings", validation.warnings}};
}

int command_validate(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, validate_options(), "scenario");
  const DataFormat format = data_format(vm);
  if (is_cluster_request(scenario_request(vm))) {
    // A cluster scenario: the loader's checks (schema, units, device-plugin / mig-parted / GKE
    // settings, openb rows), then what each pool advertises.
    const cluster::ClusterSpec spec = load_cluster_request(scenario_request(vm));
    const std::vector<std::string> advertised = cluster::advertised_lines(spec);
    if (format != DataFormat::table) {
      print_data({{"status", "ok"},
                  {"kind", "cluster"},
                  {"pools", spec.pools.size()},
                  {"pods", spec.pods.size()},
                  {"policy", cluster::policy_name(spec.scheduler.policy)},
                  {"advertised", advertised}},
                 format, std::cout);
      return kExitOk;
    }
    std::cout << "ok: a cluster scenario: " << spec.pools.size() << " pool(s), " << spec.pods.size()
              << " pod(s), policy " << cluster::policy_name(spec.scheduler.policy) << "\n";
    for (const std::string& line : advertised) std::cout << "  " << line << "\n";
    return kExitOk;
  }
  const Validation validation = validate_request(scenario_request(vm));
  // Warnings go to stderr in every format (a JSON/YAML document also lists them).
  if (!validation.planning) {
    for (const std::string& w : validation.warnings) std::cerr << "gpumux: warning: " << w << "\n";
  }
  if (format != DataFormat::table) {
    print_data(validation_json(validation), format, std::cout);
    return kExitOk;
  }
  if (validation.planning) {
    const Scenario& loaded = validation.scenario;
    std::cout << "ok: " << loaded.name << ": a planning scenario, " << loaded.tenants.size()
              << " tenant(s), " << loaded.plan->gpus.size()
              << " GPU model(s); place them with `gpumux plan`\n";
    return kExitOk;
  }
  const ResolvedScenario& resolved = *validation.resolved;
  const Scenario& scenario = resolved.scenario;
  std::cout << "ok: " << scenario.name << ": " << scenario.gpus.size() << " GPU(s), "
            << resolved.devices.size() << " device(s), " << scenario.tenants.size()
            << " tenant(s)\n";
  for (const ResolvedDevice& d : resolved.devices) {
    std::cout << "  " << d.geometry.name << "  " << d.geometry.profile << "  " << d.geometry.sms
              << " SMs  " << d.sharing.mode_name() << "  tenants:";
    for (int t : d.tenants)
      std::cout << " " << resolved.scenario.tenants[static_cast<std::size_t>(t)].name;
    std::cout << "\n";
  }
  return kExitOk;
}

int command_compare(const std::vector<std::string>& args) {
  const po::variables_map vm = parse_command(args, compare_options(), "scenario");
  const OutputFormat format = output_format(vm);
  check_output_path(vm);
  const Scenario scenario = load_request(scenario_request(vm));
  const std::vector<std::string> strategies =
      parse_strategy_list(vm["strategies"].as<std::string>());
  // Every variant is resolved first, so a bad strategy fails before any time is spent.
  const std::vector<ResolvedScenario> variants = resolve_variants(scenario, strategies);
  catch_stop_signals();
  CliProgress progress(vm["quiet"].as<bool>());
  RunControl control = progress.control(false);
  control.record_kernels = false;
  // -o: each strategy's records go to its group of the file as its run produces them (memory
  // flat in the runs' length), the rest of the group after its run; the file stays
  // OUT.h5.tmp.PID until the summaries are written after the last run.
  std::optional<StreamedCompareFile> file;
  if (vm.count("output")) {
    const bool kernels = std::any_of(variants.begin(), variants.end(),
                                     [](const auto& v) { return v.scenario.output.kernels; });
    output_errors_as_bad_input([&] { file.emplace(vm["output"].as<std::string>(), kernels); });
    control.observers.push_back(&*file);
    control.variant_started = [&](const std::string& label) { file->begin_run(label); };
    control.variant_finished = [&](const RunResult& result) { file->end_run(result); };
  }
  const std::vector<RunResult> results = simulate_variants(variants, strategies, control);
  const bool written =
      write_output(vm, [&](const std::string&) { file->finish(results, stop_requested().load()); });
  if (structured(format)) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const RunResult& r : results) all.push_back(summary_json(r));
    print_structured(all, format, std::cout);
  } else if (format == OutputFormat::csv) {
    std::vector<nlohmann::ordered_json> all;
    for (const RunResult& r : results) all.push_back(summary_json(r));
    std::cout << summaries_csv(all, true);
  } else if (!vm["quiet"].as<bool>()) {
    std::cout << compare_table(results);
  }
  if (!written) return kExitBadInput;
  if (stop_requested().load()) {
    std::cerr << "gpumux: " << stop_signal_name() << ": stopped; the results cover the strategies "
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

}  // namespace

Command run_command() { return Command{"run", &kRunHelp, run_options, command_run}; }
Command validate_command() {
  return Command{"validate", &kValidateHelp, validate_options, command_validate};
}
Command compare_command() {
  return Command{"compare", &kCompareHelp, compare_options, command_compare};
}

}  // namespace gpumux::cli
