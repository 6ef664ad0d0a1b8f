#include "models/app/application.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/workload_pods.hpp"
#include "models/config/input_error.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/plan/capacity_check.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/util/input_file.hpp"

namespace gpumux {

Scenario load_request(const ScenarioRequest& request) {
  std::vector<Override> overrides;
  overrides.reserve(request.overrides.size() + 1);
  for (const std::string& text : request.overrides) overrides.push_back(parse_override(text));
  // --seed is a last override of the master seed.
  if (request.seed) overrides.push_back(Override{"seed", std::to_string(*request.seed)});
  if (request.is_path) return load_scenario_file(request.scenario, overrides);
  return load_scenario_text(
      request.scenario, request.source_name.empty() ? "<text>" : request.source_name, overrides);
}

namespace {

// The one check `validate`, `run` and Python's run() and sweep() share: resolve, then refuse
// what will fail (capacity_findings' errors: static memory over a device or an MPS pinned
// limit, more clients than the strategy takes). FINDINGS receives every finding (validate prints
// the warnings).
ResolvedScenario resolve_checked(const Scenario& s, std::vector<CapacityFinding>* findings) {
  ResolvedScenario resolved = resolve_scenario(s);
  std::vector<CapacityFinding> found = capacity_findings(resolved);
  for (const CapacityFinding& f : found) {
    if (f.error) throw InputError(f.where, f.message);  // the first error
  }
  if (findings != nullptr) *findings = std::move(found);
  return resolved;
}

}  // namespace

ResolvedScenario resolve_request(const ScenarioRequest& request) {
  return resolve_checked(load_request(request), nullptr);
}

Validation validate_request(const ScenarioRequest& request) {
  Validation out;
  out.scenario = load_request(request);
  const Scenario& s = out.scenario;
  out.planning = s.plan && std::any_of(s.tenants.begin(), s.tenants.end(),
                                       [](const TenantSpec& t) { return t.device.empty(); });
  if (out.planning) {
    check_plan_scenario(s);
    return out;
  }
  std::vector<CapacityFinding> findings;
  out.resolved.emplace(resolve_checked(s, &findings));
  for (const CapacityFinding& f : findings) out.warnings.push_back(f.text());
  for (std::string& w : default_warnings(out.resolved->scenario)) out.warnings.push_back(w);
  return out;
}

Inspection inspect_request(const ScenarioRequest& request) {
  // The checks validate makes, in the same order (issue 36: inspect showed a tenant whose memory
  // exceeds its device, which validate and run refuse, and exited 0).
  // A cluster scenario gets the cluster loader's checks first (validate's), then one line at its
  // `cluster:` key: it has no tenants' kernels to show.
  if (is_cluster_request(request)) load_cluster_request(request);
  Inspection out{resolve_checked(load_request(request), nullptr), {}, {}};
  out.rows = inspect_kernels(out.resolved);
  out.warnings = default_warnings(out.resolved.scenario);
  return out;
}

PlanResult plan_request(const ScenarioRequest& request, const PlanOptions& options) {
  return plan_scenario(load_request(request), options);
}

std::vector<ResolvedScenario> resolve_variants(const Scenario& scenario,
                                               const std::vector<std::string>& strategies) {
  if (strategies.empty()) throw InputError("compare: no strategies given");
  std::vector<ResolvedScenario> variants;
  variants.reserve(strategies.size());
  for (const std::string& strategy : strategies) {
    variants.push_back(resolve_scenario(apply_strategy(scenario, strategy)));
  }
  return variants;
}

std::vector<ResolvedScenario> resolve_variants(const ScenarioRequest& request,
                                               const std::vector<std::string>& strategies) {
  if (strategies.empty()) throw InputError("compare: no strategies given");
  return resolve_variants(load_request(request), strategies);
}

std::optional<QueueKind> queue_kind_named(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name == "heap") return QueueKind::heap;
  if (name == "calendar") return QueueKind::calendar;
  if (name == "ladder") return QueueKind::ladder;
  // An unknown value is refused, not ignored: a benchmark that asks for a queue gets it or stops.
  throw InputError(SourceLocation{"GPUMUX_QUEUE", 0, 0, ""},
                   "unknown event queue '" + name + "'; choose heap, calendar or ladder");
}

namespace {

// What CONTROL keeps in memory, for the work budget (resolve_scenario checked the case of none).
KeptRecords kept_records(const RunControl& control, std::size_t results) {
  KeptRecords kept;
  kept.requests = control.record_requests;
  kept.kernels = control.record_kernels;
  kept.results = static_cast<double>(results);
  return kept;
}

RunResult simulate_checked(const ResolvedScenario& resolved, const RunControl& control) {
  RunOptions options;
  options.interrupt = control.interrupt;
  options.progress = control.progress;
  options.record_requests = control.record_requests;
  options.record_kernels = control.record_kernels;
  options.observers = control.observers;
  options.queue = control.engine.queue;
  options.direct_path = control.engine.direct_path;
  options.partition = control.engine.partition;
  options.eager_device = control.engine.eager_device;
  if (control.started) control.started();
  RunResult result = simulate(resolved, options);
  if (control.finished) control.finished();
  return result;
}

}  // namespace

RunResult simulate_resolved(const ResolvedScenario& resolved, const RunControl& control) {
  if (control.record_requests || (control.record_kernels && resolved.scenario.output.kernels)) {
    check_work_budget(resolved.scenario, resolved.traces, kept_records(control, 1));
  }
  return simulate_checked(resolved, control);
}

std::vector<RunResult> simulate_variants(const std::vector<ResolvedScenario>& variants,
                                         const std::vector<std::string>& strategies,
                                         const RunControl& control) {
  // Every result is held until the end: check them all before anything runs.
  for (const ResolvedScenario& variant : variants) {
    check_work_budget(variant.scenario, variant.traces, kept_records(control, variants.size()));
  }
  std::vector<RunResult> results;
  results.reserve(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (control.variant_started) control.variant_started(strategies[i]);
    results.push_back(simulate_checked(variants[i], control));
    results.back().strategy = strategies[i];
    if (control.variant_finished) control.variant_finished(results.back());
    if (control.interrupt != nullptr && control.interrupt->load()) break;
  }
  return results;
}

bool scenario_has_top_level_key(const std::string& scenario, bool is_path, const std::string& key) {
  try {
    std::string text;
    if (is_path) {
      std::error_code error;
      if (!std::filesystem::is_regular_file(scenario, error)) return false;
      text = input_file::read(scenario, input_file::kMaxScenarioBytes, "scenario file");
    }
    // A key that is nowhere in the text is not a key of the document: most scenarios never say
    // "cluster", and this skips a full parse (35 % of the start-up of a 512-GPU scenario). (A
    // key spelled only through escapes, "\x63luster", is not recognised: the loader then
    // refuses it as an unknown key.)
    const std::string& source = is_path ? text : scenario;
    if (source.find(key) == std::string::npos) return false;
    const YAML::Node doc = yaml::parse(source, is_path ? scenario : "<text>");
    return doc.IsMap() && doc[key].IsDefined();
  } catch (const std::exception&) {
    return false;  // the loader reports the problem
  }
}

bool is_cluster_request(const ScenarioRequest& request) {
  return scenario_has_top_level_key(request.scenario, request.is_path, "cluster");
}

cluster::ClusterSpec load_cluster_request(const ScenarioRequest& request) {
  std::vector<Override> overrides;
  overrides.reserve(request.overrides.size());
  for (const std::string& text : request.overrides) overrides.push_back(parse_override(text));
  // --seed (applied after the --set overrides, as for a scenario): it draws generated pod
  // arrivals and seeds pod workloads.
  if (request.seed) overrides.push_back(Override{"seed", std::to_string(*request.seed)});
  if (request.is_path) return cluster::load_cluster(request.scenario, overrides);
  return cluster::load_cluster_text(
      request.scenario, request.source_name.empty() ? "<text>" : request.source_name, overrides);
}

ClusterRun simulate_cluster(const cluster::ClusterSpec& spec, int workers,
                            const std::atomic<bool>* interrupt) {
  ClusterRun run;
  run.result = cluster::run_cluster(spec, interrupt);
  cluster::WorkloadPodOptions options;
  options.workers = workers;
  options.interrupt = interrupt;
  cluster::simulate_workload_pods(spec, run.result, options);
  run.metrics = cluster::cluster_metrics(run.result);
  return run;
}

ClusterRun simulate_cluster_request(const ScenarioRequest& request, int workers) {
  return simulate_cluster(load_cluster_request(request), workers);
}

}  // namespace gpumux
