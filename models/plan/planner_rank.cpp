// Ranking in gpumux plan: Planner::run() (the best setup, the cheapest setup of each family
// and why cheaper ones failed, the ranking, the verification run), the choice of a group's
// configuration (refinement: most headroom at the optimum's cost) and a partition turned into a
// PlanSetup with its runnable scenario.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"
#include "models/plan/machine_types.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace planner_detail {

const char* const kRankingRule =
    "cost, then SLO margin (worst ratio, lower first), then isolation (more first)";

double Planner::config_ratio(const Config& c) {
  double worst = 0;
  Mask group = 0;
  for (const Block& b : c.blocks) {
    worst = std::max(worst, unit(unit_key(b.tenants, c.model, b.profile, c.variant)).worst_ratio);
    group |= b.tenants;
  }
  // A shared node: the worst block any assignment of its pods makes (assignable_blocks).
  if (c.machine >= 0) {
    for (const Mask b : assignable_blocks(group, c.machine, c.variant)) {
      worst = std::max(worst, unit(unit_key(b, c.model, c.variant.profile, c.variant)).worst_ratio);
    }
  }
  return worst;
}

std::optional<std::pair<int, Config>> Planner::group_choice(Mask group,
                                                            const std::vector<bool>& families,
                                                            bool best_headroom) {
  for (int m = 0; m < options(); ++m) {
    std::optional<Config> best;
    double best_ratio = kInf;
    for (const Variant& v : variants_for(group, m, families)) {
      GroupState* s = &group_state(group, m, v);
      if (best_headroom) {
        // Refinement: decide this variant too (simulate its candidates) to compare headroom.
        while (s->status == GroupState::unknown) {
          simulate_units(s->pending, {s->pending});
          s = &group_state(group, m, v);
        }
      }
      if (s->status != GroupState::feasible) continue;
      const double ratio = config_ratio(s->config);
      if (!best || ratio < best_ratio) {
        best = s->config;
        best_ratio = ratio;
      }
      if (!best_headroom) break;
    }
    if (best) return std::pair{m, *best};
  }
  return std::nullopt;
}

void Planner::add_node(PlanSetup& setup, const Config& c) {
  const Machine& machine = machines_[static_cast<std::size_t>(c.machine)];
  const ModelInfo& model = models_[static_cast<std::size_t>(machine.model)];
  PlanNode node;
  node.name = "node" + std::to_string(setup.nodes.size());
  node.machine = machine.name;
  node.model = model.profile->name;
  node.cost_per_hour = machine.price;
  node.family = kFamilyNames[c.variant.family];
  node.clients = c.variant.replicas;
  const int per_gpu =
      c.variant.profile < 0 ? 1 : instances_per_gpu(machine.model, c.variant.profile);
  if (c.variant.profile >= 0) {
    node.partition = model.profile->mig_profiles[static_cast<std::size_t>(c.variant.profile)].name;
    node.instances = per_gpu;
  }
  node.pod_order = pod_order(c);
  const Scenario one = node_scenario(c, node.name);
  Scenario& s = setup.scenario;
  for (std::size_t g = 0; g < one.gpus.size(); ++g) {
    PlanGpu gpu;
    gpu.name = one.gpus[g].name;
    gpu.model = model.profile->name;
    gpu.cost_per_hour = machine.price / machine.gpus;
    gpu.family = node.family;
    gpu.replicas = one.gpus[g].sharing.replicas;
    gpu.mig = one.gpus[g].mig;
    gpu.blocks.assign(static_cast<std::size_t>(per_gpu), {});
    node.gpus.push_back(static_cast<int>(setup.gpus.size()));
    setup.gpus.push_back(gpu);
    GpuSpec spec = one.gpus[g];
    spec.where.key_path = "gpus." + std::to_string(s.gpus.size());
    s.gpus.push_back(spec);
  }
  // On a shared node no pod is alone for sure: another may be given its device's free slot.
  const bool slots_shared =
      &strategy_of(c.variant) != &exclusive_strategy() && c.variant.replicas > 1;
  for (std::size_t j = 0; j < c.blocks.size(); ++j) {
    const Block& b = c.blocks[j];
    PlanGpu& gpu = setup.gpus[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(b.gpu)])];
    auto& members = gpu.blocks[j % static_cast<std::size_t>(per_gpu)];
    const DeviceLimits limit = limits(unit_key(b.tenants, machine.model, b.profile, c.variant));
    for (int t = 0; t < n_; ++t) {
      if (!(b.tenants >> t & 1u)) continue;
      members.push_back(t);
      const bool alone = b.tenants == (Mask{1} << t) && !slots_shared;
      // Isolated: alone, or the strategy caps each client's memory / keeps faults to a client.
      if (alone || limit.device.client_memory_limit) ++setup.memory_isolated;
      if (alone || !limit.shared_fault_domain) ++setup.fault_isolated;
    }
    const UnitInfo& info = unit(unit_key(b.tenants, machine.model, b.profile, c.variant));
    for (const PlanTenantOutcome& o : info.outcomes) setup.outcomes.push_back(o);
    setup.worst_ratio = std::max(setup.worst_ratio, info.worst_ratio);
  }
  setup.worst_ratio = std::max(setup.worst_ratio, config_ratio(c));
  for (const TenantSpec& t : one.tenants) {
    TenantSpec& tenant = s.tenants[static_cast<std::size_t>(tenant_index(t.name))];
    tenant.device = t.device;
    tenant.devices = t.devices;
    tenant.gpus = 1;
    for (PlanTenantOutcome& o : setup.outcomes) {
      if (o.name == t.name) o.device = t.device;
    }
  }
  setup.cost_per_hour += machine.price;
  setup.nodes.push_back(node);
}

PlanSetup Planner::make_setup(const std::string& label, const Partition& p,
                              const std::vector<bool>& families, bool refine) {
  std::vector<Mask> groups = p.groups;
  std::sort(groups.begin(), groups.end(), [](Mask a, Mask b) { return lowest(a) < lowest(b); });
  std::vector<Config> configs;
  bool every_group_fits = true;
  for (const Mask g : groups) {
    auto choice = group_choice(g, families, refine);
    if (!choice) {
      every_group_fits = false;
      continue;
    }
    configs.push_back(choice->second);
  }
  PlanSetup setup = setup_of(label, configs);
  setup.feasible = every_group_fits;
  return setup;
}

PlanSetup Planner::setup_of(const std::string& label, const std::vector<Config>& configs) {
  PlanSetup setup;
  setup.label = label;
  setup.feasible = true;
  setup.tenants = n_;
  Scenario& s = setup.scenario;
  s = run_settings();
  s.faults = scenario_.faults;
  s.tenants = scenario_.tenants;
  add_configs(setup, configs);
  return setup;
}

void Planner::add_configs(PlanSetup& setup, const std::vector<Config>& configs) {
  Scenario& s = setup.scenario;
  for (const Config& c : configs) {
    if (node_mode()) {
      add_node(setup, c);
      continue;
    }
    const ModelInfo& model = models_[static_cast<std::size_t>(c.model)];
    PlanGpu gpu;
    gpu.model = model.profile->name;
    gpu.cost_per_hour = model.spec.cost_per_hour;
    gpu.family = kFamilyNames[c.variant.family];
    const Scenario one = unit_scenario(c);
    gpu.replicas = one.gpus.front().sharing.replicas;
    gpu.mig = one.gpus.front().mig;
    const std::string name = "gpu" + std::to_string(s.gpus.size());
    gpu.name = name;
    for (const Block& b : c.blocks) {
      std::vector<int> members;
      for (int t = 0; t < n_; ++t) {
        if (b.tenants >> t & 1u) members.push_back(t);
      }
      gpu.blocks.push_back(members);
      const UnitInfo& info = unit(unit_key(b.tenants, c.model, b.profile, c.variant));
      for (const PlanTenantOutcome& o : info.outcomes) setup.outcomes.push_back(o);
      setup.worst_ratio = std::max(setup.worst_ratio, info.worst_ratio);
    }
    // The setup runs as long as its longest unit had to (a verdict decided on a longer window).
    s.duration = std::max(s.duration, config_duration(c));
    GpuSpec spec = one.gpus.front();
    spec.name = name;
    spec.where.key_path = "gpus." + std::to_string(s.gpus.size());
    for (std::size_t b = 0; b < c.blocks.size(); ++b) {
      for (int t = 0; t < n_; ++t) {
        if (!(c.blocks[b].tenants >> t & 1u)) continue;
        TenantSpec& tenant = s.tenants[static_cast<std::size_t>(t)];
        tenant.device = gpu.mig.empty() ? name : name + "/" + std::to_string(b);
        tenant.devices = {tenant.device};
        tenant.gpus = 1;
        const bool alone = c.blocks[b].tenants == (Mask{1} << t);
        // Isolated: alone, or the strategy caps each client's memory / keeps faults to a client.
        const DeviceLimits limit =
            limits(unit_key(c.blocks[b].tenants, c.model, c.blocks[b].profile, c.variant));
        if (alone || limit.device.client_memory_limit) ++setup.memory_isolated;
        if (alone || !limit.shared_fault_domain) ++setup.fault_isolated;
      }
    }
    for (PlanTenantOutcome& o : setup.outcomes) {
      for (const TenantSpec& t : s.tenants) {
        if (t.name == o.name) o.device = t.device;
      }
    }
    s.gpus.push_back(spec);
    setup.cost_per_hour += gpu.cost_per_hour;
    setup.gpus.push_back(gpu);
  }
  // Outcomes in the scenario's tenant order.
  std::vector<PlanTenantOutcome> ordered;
  for (const TenantSpec& t : scenario_.tenants) {
    for (const PlanTenantOutcome& o : setup.outcomes) {
      if (o.name == t.name) ordered.push_back(o);
    }
  }
  setup.outcomes = ordered;
}

std::vector<std::string> Planner::alone_checks(std::string& reason) {
  // Every tenant alone on a whole GPU of each model, simulated as one batch: the best a tenant
  // can get (no neighbour, the most SMs and memory). A tenant that fails there fails in every
  // setup, so the plan has no answer; these units are the dedicated ones the search reuses.
  std::vector<UnitKey> batch;
  for (int t = 0; t < n_; ++t) {
    for (std::size_t m = 0; m < models_.size(); ++m) {
      const UnitKey key = unit_key(Mask{1} << t, static_cast<int>(m), -1, {kDedicated, 0});
      if (unit(key).verdict == Verdict::unknown) batch.push_back(key);
    }
  }
  simulate_units(batch);
  std::vector<std::string> failing;
  for (int t = 0; t < n_; ++t) {
    std::string why;
    bool somewhere = false;
    for (std::size_t m = 0; m < models_.size(); ++m) {
      const UnitInfo& info = unit(unit_key(Mask{1} << t, static_cast<int>(m), -1, {kDedicated, 0}));
      if (info.verdict == Verdict::feasible) somewhere = true;
      why = info.reason;  // the last model: the largest price, usually the largest GPU
    }
    if (somewhere) continue;
    failing.push_back(scenario_.tenants[static_cast<std::size_t>(t)].name);
    if (!reason.empty()) reason += "; ";
    reason += "alone on " + models_.back().profile->name + ": " + why;
  }
  return failing;
}

void Planner::exact_search(PlanResult& result) {
  std::vector<bool> all(kFamilies, false);
  for (int f = 0; f < kFamilies; ++f) all[static_cast<std::size_t>(f)] = allowed_[f];
  stats_.setups = count_setups(false);
  stats_.setups_surviving = count_setups(true);

  std::vector<Mask> best_first;
  const auto best = solve(all, &best_first, true);
  if (best) {
    result.ranked.push_back(make_setup("best", *best, all, options_.refine));
  } else {
    PlanSetup none;
    none.label = "best";
    none.tenants = n_;
    none.reason = fmt::format("no setup within {} GPUs meets every SLO", plan_.max_gpus);
    result.ranked.push_back(none);
  }

  // The cheapest setup of each family (a group of one is always a dedicated GPU).
  for (int f = 0; f < kFamilies; ++f) {
    if (!allowed_[f]) continue;
    std::vector<bool> only(kFamilies, false);
    only[static_cast<std::size_t>(f)] = true;
    std::vector<Mask> first;
    const auto p = solve(only, &first, true);
    PlanSetup setup;
    if (p) {
      setup = make_setup(kFamilyNames[f], *p, only, false);
    } else {
      setup.label = kFamilyNames[f];
      setup.tenants = n_;
    }
    // Why cheaper setups of this family failed: the groups of its first (optimistic) partition
    // that turned out infeasible, with the failure of each.
    const double best_cost = result.found() ? result.ranked.front().cost_per_hour : kInf;
    if (!p || p->cost > best_cost + 1e-9) {
      std::vector<Mask> probe = first;
      if (result.found() && f != kDedicated) {
        // With the winner's packing, what goes wrong in this family?
        probe.clear();
        const PlanSetup& winner = result.ranked.front();
        const auto mask_of = [](const PlanGpu& g) {
          Mask m = 0;
          for (const auto& b : g.blocks) {
            for (int t : b) m |= Mask{1} << t;
          }
          return m;
        };
        if (node_mode()) {
          for (const PlanNode& node : winner.nodes) {
            Mask m = 0;
            for (int g : node.gpus) m |= mask_of(winner.gpus[static_cast<std::size_t>(g)]);
            probe.push_back(m);
          }
        } else {
          for (const PlanGpu& g : winner.gpus) probe.push_back(mask_of(g));
        }
      }
      for (const Mask g : probe) {
        if (popcount(g) < 2) continue;
        for (int m = 0; m < options(); ++m) {
          std::string why;
          bool open = false;
          for (const Variant& v : variants_for(g, m, only)) {
            GroupState* s = &group_state(g, m, v);
            while (s->status == GroupState::unknown) {  // decide it: the reason must be real
              simulate_units(s->pending, {s->pending});
              s = &group_state(g, m, v);
            }
            if (s->status == GroupState::feasible) open = true;
            if (s->status == GroupState::infeasible && why.empty()) why = s->reason;
          }
          if (!open && !why.empty()) {
            if (!setup.reason.empty()) setup.reason += "; ";
            if (why.rfind(kFamilyNames[f], 0) != 0) {
              why = std::string(kFamilyNames[f]) + " {" + join_names(scenario_.tenants, g) +
                    "}: " + why;
            }
            setup.reason += why;
            break;
          }
        }
      }
      if (!p && setup.reason.empty()) {
        setup.reason = fmt::format("no setup within {} GPUs", plan_.max_gpus);
      }
    }
    result.ranked.push_back(setup);
  }
  if (result.found()) result.lower_bound = result.ranked.front().cost_per_hour;
}

void Planner::note_undecided_units(PlanResult& result) const {
  if (stats_.inconclusive_at_bound == 0) return;
  result.notes.push_back(fmt::format(
      "{} unit(s) stayed inconclusive within plan.max_duration ({:.4g} s) and were not ranked{}: "
      "a longer plan.max_duration may find a cheaper setup",
      stats_.inconclusive_at_bound, to_seconds(max_duration()),
      stats_.projected_at_bound > 0
          ? fmt::format(" ({} of them stopped early, projected not to be met within it)",
                        stats_.projected_at_bound)
          : std::string()));
}

PlanResult Planner::run() {
  const auto start = std::chrono::steady_clock::now();
  PlanResult result;
  result.scenario_name = scenario_.name;
  result.currency = plan_.gpus.front().currency;
  result.headroom = plan_.headroom;
  result.max_gpus = plan_.max_gpus;
  result.strategies = plan_.strategies;
  result.platform = plan_.platform;
  if (plan_.platform != "bare") result.prices = plan_price_table(plan_).summary();
  for (const TenantSpec& t : scenario_.tenants) result.tenant_names.push_back(t.name);
  result.ranking = kRankingRule;
  result.notes = platform_notes_;
  stats_.jobs = jobs_;
  std::vector<bool> all(kFamilies, false);
  for (int f = 0; f < kFamilies; ++f) all[static_cast<std::size_t>(f)] = allowed_[f];

  if (options_.exhaustive) {
    const auto p = solve_exhaustive(all);
    PlanSetup setup;
    setup.label = "best";
    if (p) {
      setup.feasible = true;
      setup.cost_per_hour = p->cost;
      for (const Mask g : p->groups) {
        PlanGpu gpu;
        for (int t = 0; t < n_; ++t) {
          if (g >> t & 1u) gpu.blocks.push_back({t});
        }
        setup.gpus.push_back(gpu);
      }
    } else {
      setup.reason = "no feasible setup";
    }
    result.ranked.push_back(setup);
    stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.stats = stats_;
    return result;
  }

  // The alone checks first: a tenant that cannot meet its SLO alone answers the plan at once.
  {
    std::string reason;
    result.infeasible_alone = alone_checks(reason);
    // An interval straddling the target is not a failure: say which of them were undecided.
    for (int t = 0; t < n_; ++t) {
      const std::string& name = scenario_.tenants[static_cast<std::size_t>(t)].name;
      if (std::find(result.infeasible_alone.begin(), result.infeasible_alone.end(), name) ==
          result.infeasible_alone.end()) {
        continue;
      }
      bool missed = false;
      for (std::size_t m = 0; m < models_.size(); ++m) {
        const UnitInfo& info =
            unit(unit_key(Mask{1} << t, static_cast<int>(m), -1, {kDedicated, 0}));
        missed = missed || !info.inconclusive;
      }
      if (!missed) {
        result.notes.push_back(fmt::format(
            "{} is inconclusive alone, not failing: its interval still straddles a target at "
            "plan.max_duration; a longer plan.max_duration decides it",
            name));
      }
    }
    if (!result.infeasible_alone.empty()) {
      PlanSetup none;
      none.label = "best";
      none.tenants = n_;
      none.reason = reason;
      result.ranked.push_back(none);
      note_undecided_units(result);
      stats_.wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      result.stats = stats_;
      return result;
    }
  }

  if (packing_search()) {
    run_large(result);
  } else {
    exact_search(result);
  }
  // Rank (kRankingRule): feasible setups by cost, then the worst SLO ratio (the margin), then
  // isolation (tenants memory- plus fault-isolated, more first); infeasible families last. The
  // first is the answer: "best" (a family row that beats the mixed optimum on margin or
  // isolation at the same cost takes its place; the mixed one is kept as "mixed").
  const auto before = [](const PlanSetup& a, const PlanSetup& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (!a.feasible) return false;
    if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) {
      return a.cost_per_hour < b.cost_per_hour;
    }
    if (std::abs(a.worst_ratio - b.worst_ratio) > 1e-12) return a.worst_ratio < b.worst_ratio;
    return a.memory_isolated + a.fault_isolated > b.memory_isolated + b.fault_isolated;
  };
  std::stable_sort(result.ranked.begin(), result.ranked.end(), before);
  if (result.ranked.front().feasible && result.ranked.front().label != "best") {
    // A family's setup is the answer: it leads as "best" (its family row stays below it); the
    // mixed search's setup stays only if it differs, as "mixed".
    PlanSetup winner = result.ranked.front();
    for (std::size_t i = 0; i < result.ranked.size(); ++i) {
      if (result.ranked[i].label != "best") continue;
      if (!before(winner, result.ranked[i]) && !before(result.ranked[i], winner)) {
        result.ranked.erase(result.ranked.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        result.ranked[i].label = "mixed";
      }
      break;
    }
    winner.label = "best";
    result.ranked.insert(result.ranked.begin(), winner);
  }

  note_undecided_units(result);
  if (result.found()) {
    PlanSetup& winner = result.ranked.front();
    if (options_.verify) {
      // The whole setup over the longest window its units needed. A unit decided over a
      // shorter window can be inconclusive over this one (the interval's dependence estimate
      // moves with the data): the window grows on, as in simulate_units, up to
      // plan.max_duration.
      RunOptions run;
      run.record_requests = false;
      // The verdicts read only the tenants' latencies, failures and OOMs, as the units' runs:
      // no utilization statistics (best_run's device fractions read 0).
      run.device_statistics = false;
      run.interrupt = options_.interrupt;
      const auto stopped = [&] {
        return options_.interrupt != nullptr && options_.interrupt->load();
      };
      const Mask all_tenants = n_ >= 64 ? ~Mask{0} : (Mask{1} << n_) - 1;
      for (;;) {
        if (stopped()) throw PlanInterrupted();
        result.best_run = simulate(resolve_scenario(winner.scenario), run);
        if (stopped()) throw PlanInterrupted();  // a run cut short is no verdict
        double worst = 0;
        std::string reason;
        bool inconclusive = false;
        winner.outcomes =
            judge(numbers_of(*result.best_run), all_tenants, worst, reason, &inconclusive);
        winner.verified_worst_ratio = worst;
        if (reason.empty()) break;
        const std::optional<Nanos> longer =
            inconclusive ? longer_window(winner.scenario.duration) : std::nullopt;
        if (!longer) {
          winner.reason = "verification run differs from the per-GPU runs: " + reason;
          if (inconclusive) {
            winner.reason += fmt::format(" after {:.4g} s simulated (plan.max_duration)",
                                         to_seconds(winner.scenario.duration));
          }
          break;
        }
        winner.scenario.duration = *longer;
      }
    }
    result.best_yaml = emit_scenario_yaml(winner.scenario);
  }
  stats_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats = stats_;
  return result;
}

}  // namespace planner_detail
}  // namespace gpumux
