#pragma once
// The front door: what `gpumux` (models/app/cli*.cpp) and the Python module (python/bindings.cpp)
// do with a scenario, written once:
//
//   load (a file or YAML text) -> overrides (--set KEY=VALUE ..., then --seed) -> resolve
//     -> validate (stop here) | simulate | compare (one resolved variant per strategy)
//
// plus the choices every run makes the same way: the engine switches (EngineSwitches), the stop
// flag polled by the runner (the CLI sets it from SIGINT/SIGTERM/SIGHUP, models/app/interrupt.hpp;
// Python from KeyboardInterrupt) and the progress callback. The callers only parse their
// arguments, format, print and translate errors. Every error the user can fix is a UserError
// (InputError, OutputError): one line.
//
// A new front-door operation goes here, beside validate/simulate/compare/plan, so both the CLI
// and Python get it from one place.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/cluster_spec.hpp"
#include "models/plan/planner.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/inspect.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/core/event_queue.hpp"

namespace gpumux {

/// Which scenario, and what to change in it before it is resolved.
struct ScenarioRequest {
  std::string scenario;  ///< a file path (is_path), or YAML text
  bool is_path = true;
  /// YAML text only: the name error messages give the document; its directory resolves relative
  /// trace paths ("" = "<text>", relative to the working directory).
  std::string source_name;
  std::vector<std::string> overrides;  ///< "KEY=VALUE" (--set), applied in order
  std::optional<std::uint64_t> seed;   ///< the master seed (--seed), applied after them
};

/// How a run is executed, never what it computes: whichever is chosen, every number of the result
/// is the same (tested; benchmarks and cross-checks flip them). Carried into RunOptions by
/// simulate_resolved / simulate_variants. The CLI reads them once, at start-up, from developer
/// environment variables (docs/performance.md "Developer switches"); no other code reads them.
struct EngineSwitches {
  /// The pending-event set (GPUMUX_QUEUE=heap|calendar|ladder); unset: chosen by the runner
  /// from the scenario's size.
  std::optional<QueueKind> queue;
  bool direct_path = true;    ///< RunOptions::direct_path (GPUMUX_DIRECT=0: false)
  bool partition = true;      ///< RunOptions::partition (GPUMUX_PARTITION=0: false)
  bool eager_device = false;  ///< RunOptions::eager_device (GPUMUX_DEVICE_EAGER=1: true)
  /// `gpumux plan`'s search shortcuts (PlanOptions::lazy_windows, dominance, continue_windows;
  /// GPUMUX_PLAN_LAZY=0, GPUMUX_PLAN_DOMINANCE=0, GPUMUX_PLAN_CONTINUE=0: false) and its unit
  /// worker processes (PlanOptions::unit_processes; GPUMUX_PLAN_PROCESSES=0: threads).
  bool plan_lazy_windows = true, plan_dominance = true, plan_continue_windows = true,
       plan_futility = true, plan_unit_processes = true;
};

/// How a run is watched and stopped.
struct RunControl {
  EngineSwitches engine;  ///< how the run is executed (the same results either way)
  /// Polled by the runner; once true the run stops and its result is marked "interrupted".
  const std::atomic<bool>* interrupt = nullptr;
  /// Called every few thousand events with (simulated now, horizon, events so far).
  std::function<void(Nanos, Nanos, std::uint64_t)> progress;
  /// Called before and after each simulation (e.g. to draw and erase a progress bar).
  std::function<void()> started, finished;
  /// Keep one record per request (HDF5 files and Python need them; a printed summary does not).
  bool record_requests = true;
  /// Keep output.kernels' kernel records (false when an observer streams them to a file).
  bool record_kernels = true;
  /// Observers of each run (models/run/recorder.hpp; not owned), e.g. a streamed result file
  /// (models/output/result_io.hpp, StreamedResultFile). They change no number of the result.
  std::vector<Recorder*> observers;
  /// simulate_variants only: called with each variant's strategy label before it runs, and with
  /// its labelled result after it, before the next one starts (a streamed compare file,
  /// StreamedCompareFile, opens and completes the variant's group).
  std::function<void(const std::string&)> variant_started;
  std::function<void(const RunResult&)> variant_finished;
};

/// Loads the scenario and applies the overrides (parsed first: a malformed KEY=VALUE is reported
/// before the file is read). Throws InputError.
Scenario load_request(const ScenarioRequest& request);

/// load_request, resolve_scenario, then the errors `validate` reports (what will fail: static
/// memory over a device or an MPS pinned limit; models/plan/capacity_check.hpp): one code path
/// for `validate`, `run`, Python's run() and sweep(). Throws InputError.
ResolvedScenario resolve_request(const ScenarioRequest& request);

/// What `validate` finds. A planning scenario (a `plan:` block and tenants without a device) is
/// checked against its GPU models (models/plan/capacity_check.hpp) and not resolved; any other
/// is resolved and its capacity checked: what will fail (static memory over a device or MPS
/// limit) is thrown as InputError, what is likely to fail is a warning.
struct Validation {
  bool planning = false;
  Scenario scenario;                         ///< as loaded (overrides and seed applied)
  std::optional<ResolvedScenario> resolved;  ///< empty for a planning scenario
  std::vector<std::string> warnings;         ///< one line each, without a "warning:" prefix
};
Validation validate_request(const ScenarioRequest& request);

/// What `inspect` shows: every tenant's kernel classes with each parameter's origin
/// (models/scenario/inspect.hpp), and the defaults warnings `validate` and `run` print.
struct Inspection {
  ResolvedScenario resolved;
  std::vector<InspectRow> rows;
  std::vector<std::string> warnings;  ///< default_warnings, one line each
};
/// resolve_request, then inspect_kernels. Throws InputError.
Inspection inspect_request(const ScenarioRequest& request);

/// load_request, then the planner (models/plan/planner.hpp): the cheapest setup meeting every
/// SLO. Throws InputError.
PlanResult plan_request(const ScenarioRequest& request, const PlanOptions& options);

/// One resolved scenario per strategy label (strategy_variants.hpp), all resolved before anything
/// runs so a bad strategy fails first. Throws InputError (also for an empty list).
std::vector<ResolvedScenario> resolve_variants(const Scenario& scenario,
                                               const std::vector<std::string>& strategies);

/// The same from a request: an empty list is refused before the scenario is loaded.
std::vector<ResolvedScenario> resolve_variants(const ScenarioRequest& request,
                                               const std::vector<std::string>& strategies);

/// The pending-event set named NAME (GPUMUX_QUEUE's value: heap, calendar or ladder; "" = none,
/// the runner chooses). Any other name is an InputError ("GPUMUX_QUEUE: unknown event queue
/// 'bogus'; ...").
std::optional<QueueKind> queue_kind_named(const std::string& name);

/// Simulates one resolved scenario (with CONTROL's engine switches). When CONTROL keeps records
/// (record_requests; record_kernels with output.kernels), first checks that they fit the work
/// budget's memory (check_work_budget with KeptRecords: InputError naming the key that drives
/// it); resolve_scenario has checked the rest.
RunResult simulate_resolved(const ResolvedScenario& resolved, const RunControl& control);

/// Simulates each variant in order, labelling each result with its strategy; stops after the
/// variant during which the stop flag was set (the results cover the strategies run so far).
/// Before anything runs, checks the work budget's memory for every variant with all results
/// held at once (KeptRecords::results = the number of variants; InputError).
std::vector<RunResult> simulate_variants(const std::vector<ResolvedScenario>& variants,
                                         const std::vector<std::string>& strategies,
                                         const RunControl& control);

/// Whether the scenario has a top-level `cluster:` section (a cluster replay, docs/cluster.md)
/// rather than hand-placed tenants. A document that does not parse answers false (the scenario
/// loader then reports it). Cost: one YAML parse.
bool is_cluster_request(const ScenarioRequest& request);

/// Whether the scenario (a path, or YAML text when !is_path) is a mapping with the top-level
/// `key`, read as the loader reads it: a regular file within the scenario size limit
/// (sim/util/input_file.hpp), parsed with the nesting and encoding checks. False for anything
/// the loader would refuse (it then reports it) and for a path that is not a regular file (a
/// pipe is read once, by the loader). Cost: one read and parse of the document.
bool scenario_has_top_level_key(const std::string& scenario, bool is_path, const std::string& key);

/// The `cluster:` section as the typed cluster description (models/cluster/cluster_loader.hpp),
/// the overrides applied. Throws InputError.
cluster::ClusterSpec load_cluster_request(const ScenarioRequest& request);

/// A cluster replay and its metrics.
struct ClusterRun {
  cluster::ClusterResult result;
  cluster::ClusterMetrics metrics;
};

/// Replays a cluster description (models/cluster/cluster_run.hpp), simulates its workload pods
/// on their GPUs (models/cluster/workload_pods.hpp: in WORKERS processes split by node, the
/// same numbers for any count) and computes its metrics. INTERRUPT (the CLI's stop flag) is
/// polled by the replay and the simulations: once set, cluster::ClusterInterrupted is thrown
/// (a replay stopped midway has no partial result).
ClusterRun simulate_cluster(const cluster::ClusterSpec& spec, int workers = 1,
                            const std::atomic<bool>* interrupt = nullptr);

/// load_cluster_request, then simulate_cluster. Throws InputError.
ClusterRun simulate_cluster_request(const ScenarioRequest& request, int workers = 1);

}  // namespace gpumux
