// Simulating units in gpumux plan: the one-GPU scenario of a configuration (unit_scenario),
// the input's run settings, the per-tenant numbers of a run (RunResult or summary JSON), the SLO
// verdict per tenant (judge), and the batch runner: in-process threads or options.batch_runner
// (Dask), results stored in the unit cache.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "models/gpu/device_profile.hpp"
#include "models/run/runner.hpp"
#include "models/run/slo.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/resolve.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// Units: simulation

Scenario Planner::run_settings() const {
  Scenario s;
  s.name = scenario_.name;
  s.description = scenario_.description;
  s.seed = scenario_.seed;
  s.duration = scenario_.duration;
  s.warmup = scenario_.warmup;
  s.output = scenario_.output;
  s.source_file = scenario_.source_file;
  return s;
}

Scenario Planner::unit_scenario(const Config& config) const {
  if (config.machine >= 0) return node_scenario(config, "node0");
  const ModelInfo& model = models_[static_cast<std::size_t>(config.model)];
  Scenario s = run_settings();
  GpuSpec gpu;
  gpu.name = "gpu0";
  gpu.model = model.profile->name;
  gpu.cost_per_hour = model.spec.cost_per_hour;
  gpu.where.key_path = "gpus.0";
  // The strategy by its registry name (models/strategies/registry.hpp).
  const Mode mode = mode_of(config.variant);
  const char* mode_name = mode == Mode::time_slicing ? "time-slicing"
                          : mode == Mode::mps        ? "mps"
                                                     : "exclusive";
  const Strategy* strategy = find_strategy(mode_name);
  if (strategy == nullptr) throw std::logic_error(std::string("no strategy ") + mode_name);
  gpu.sharing = SharingSpec(*strategy);
  int max_block = 0;
  for (const Block& b : config.blocks) max_block = std::max(max_block, popcount(b.tenants));
  if (mode == Mode::time_slicing) gpu.sharing.replicas = max_block;
  if (mode == Mode::mps) gpu.sharing.replicas = config.variant.replicas;
  const bool mig = config.blocks.front().profile >= 0;
  for (const Block& b : config.blocks) {
    if (mig)
      gpu.mig.push_back(model.profile->mig_profiles[static_cast<std::size_t>(b.profile)].name);
  }
  s.gpus.push_back(gpu);
  for (int t = 0; t < n_; ++t) {
    for (std::size_t b = 0; b < config.blocks.size(); ++b) {
      if (!(config.blocks[b].tenants >> t & 1u)) continue;
      TenantSpec spec = scenario_.tenants[static_cast<std::size_t>(t)];
      spec.device = mig ? "gpu0/" + std::to_string(b) : std::string("gpu0");
      spec.devices = {spec.device};
      spec.gpus = 1;
      s.tenants.push_back(spec);
    }
  }
  for (const FaultSpec& f : scenario_.faults) {
    for (const TenantSpec& t : s.tenants) {
      if (t.name == f.tenant) s.faults.push_back(f);
    }
  }
  return s;
}

std::vector<Numbers> numbers_of(const RunResult& r) {
  std::vector<Numbers> out;
  for (const TenantResult& t : r.tenants) {
    Numbers n;
    n.name = t.name;
    n.device = t.device;
    n.failed = t.failed;
    n.oom = t.oom_events;
    for (const SloCheck& c : evaluate_slo(t).checks) {
      PlanSloTarget target{c.key, c.label, static_cast<double>(c.target_ns), std::nullopt};
      if (c.value_ns) target.value_ns = static_cast<double>(*c.value_ns);
      n.targets.push_back(target);
    }
    out.push_back(n);
  }
  return out;
}

std::vector<Numbers> numbers_of(const std::string& summary_text) {
  const nlohmann::json summary = nlohmann::json::parse(summary_text);
  std::vector<Numbers> out;
  for (const auto& [name, t] : summary.at("tenants").items()) {
    Numbers n;
    n.name = name;
    n.device = t.value("device", "");
    n.failed = t.value("failed", std::int64_t{0});
    n.oom = t.value("oom_events", std::int64_t{0});
    if (const auto slo = t.find("slo"); slo != t.end() && slo->is_object()) {
      for (const auto& [key, check] : slo->items()) {
        PlanSloTarget target{key, slo_label(key), check.value("target_ns", 0.0), std::nullopt};
        if (check.contains("value_ns") && check["value_ns"].is_number()) {
          target.value_ns = check["value_ns"].get<double>();
        }
        n.targets.push_back(target);
      }
    }
    out.push_back(n);
  }
  return out;
}

std::vector<PlanTenantOutcome> Planner::judge(const std::vector<Numbers>& numbers, Mask tenants,
                                              double& worst, std::string& reason) const {
  std::vector<PlanTenantOutcome> out;
  worst = 0;
  reason.clear();
  for (const Numbers& n : numbers) {
    int t = -1;
    for (int i = 0; i < n_; ++i) {
      if (scenario_.tenants[static_cast<std::size_t>(i)].name == n.name) t = i;
    }
    if (t < 0 || !(tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    PlanSloInput in;
    in.name = spec.name;
    in.best_effort = spec.best_effort;
    in.failed = faults_of_[static_cast<std::size_t>(t)] ? 0 : n.failed;
    in.oom_events = n.oom;
    in.targets = n.targets;
    in.headroom = plan_.headroom;
    const PlanSloVerdict check = check_plan_slo(in);
    PlanTenantOutcome o;
    o.name = spec.name;
    o.device = n.device;
    o.met = check.met;
    o.worst_ratio = check.worst_ratio;
    o.reason = check.reason;
    o.worst = check.worst;
    worst = std::max(worst, check.worst_ratio);
    if (!check.met && reason.empty()) reason = check.reason;
    out.push_back(o);
  }
  return out;
}

void Planner::simulate_units(const std::vector<UnitKey>& batch) {
  if (batch.empty()) return;
  const auto stopped = [&] { return options_.interrupt != nullptr && options_.interrupt->load(); };
  if (stopped()) throw PlanInterrupted();
  std::vector<Config> configs;
  for (const UnitKey& u : batch) {
    Config c;
    c.model = u.model;
    c.variant.family = u.profile >= 0 ? (u.mode == Mode::exclusive      ? kMig
                                         : u.mode == Mode::time_slicing ? kMigTs
                                                                        : kMigMps)
                                      : (u.mode == Mode::exclusive      ? kDedicated
                                         : u.mode == Mode::time_slicing ? kTimeSlicing
                                                                        : kMps);
    c.variant.replicas = u.mode == Mode::mps ? u.replicas : 0;
    c.blocks.push_back({u.tenants, u.profile});
    configs.push_back(c);
  }
  std::vector<std::vector<Numbers>> results(batch.size());
  std::vector<std::string> errors(batch.size());
  if (options_.batch_runner) {
    std::vector<std::string> texts;
    for (const Config& c : configs) texts.push_back(emit_scenario_yaml(unit_scenario(c)));
    const std::vector<std::string> summaries = options_.batch_runner(texts);
    for (std::size_t i = 0; i < batch.size() && i < summaries.size(); ++i) {
      try {
        results[i] = numbers_of(summaries[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  } else {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < batch.size(); i = next++) {
        try {
          RunOptions run;
          run.record_requests = false;
          run.interrupt = options_.interrupt;
          results[i] = numbers_of(simulate(resolve_scenario(unit_scenario(configs[i])), run));
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      }
    };
    const int threads = std::min<int>(jobs_, static_cast<int>(batch.size()));
    std::vector<std::thread> pool;
    for (int k = 1; k < threads; ++k) pool.emplace_back(work);
    work();
    for (std::thread& th : pool) th.join();
  }
  // A simulation cut short is no verdict: stop before any is recorded.
  if (stopped()) throw PlanInterrupted();
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.batches;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    UnitInfo& info = units_[batch[i]];
    ++stats_.simulations;
    if (!errors[i].empty()) {
      info.verdict = Verdict::infeasible;
      info.reason = errors[i];
      continue;
    }
    info.outcomes = judge(results[i], batch[i].tenants, info.worst_ratio, info.reason);
    info.verdict = info.reason.empty() ? Verdict::feasible : Verdict::infeasible;
  }
  if (options_.progress) options_.progress(stats_.simulations);
}

}  // namespace planner_detail
}  // namespace gpumux
