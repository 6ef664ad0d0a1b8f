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
#include "models/run/runner.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace planner_detail {

double Planner::config_ratio(const Config& c) {
  double worst = 0;
  for (const Block& b : c.blocks) {
    worst = std::max(worst, unit(unit_key(b.tenants, c.model, b.profile, c.variant)).worst_ratio);
  }
  return worst;
}

std::optional<std::pair<int, Config>> Planner::group_choice(Mask group,
                                                            const std::vector<bool>& families,
                                                            bool best_headroom) {
  const std::vector<Variant> vs = variants(group, families);
  for (std::size_t m = 0; m < models_.size(); ++m) {
    std::optional<Config> best;
    double best_ratio = kInf;
    for (const Variant& v : vs) {
      GroupState* s = &group_state(group, static_cast<int>(m), v);
      if (best_headroom) {
        // Refinement: decide this variant too (simulate its candidates) to compare headroom.
        while (s->status == GroupState::unknown) {
          simulate_units(s->pending);
          s = &group_state(group, static_cast<int>(m), v);
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
    if (best) return std::pair{static_cast<int>(m), *best};
  }
  return std::nullopt;
}

PlanSetup Planner::make_setup(const std::string& label, const Partition& p,
                              const std::vector<bool>& families, bool refine) {
  PlanSetup setup;
  setup.label = label;
  setup.feasible = true;
  setup.tenants = n_;
  Scenario& s = setup.scenario;
  s = run_settings();
  s.faults = scenario_.faults;
  s.tenants = scenario_.tenants;
  std::vector<Mask> groups = p.groups;
  std::sort(groups.begin(), groups.end(), [](Mask a, Mask b) { return lowest(a) < lowest(b); });
  for (const Mask g : groups) {
    auto choice = group_choice(g, families, refine);
    if (!choice) {
      setup.feasible = false;
      continue;
    }
    const Config& c = choice->second;
    const ModelInfo& model = models_[static_cast<std::size_t>(c.model)];
    PlanGpu gpu;
    gpu.model = model.profile->name;
    gpu.cost_per_hour = model.spec.cost_per_hour;
    gpu.family = kFamilyNames[c.variant.family];
    const Scenario one = unit_scenario(c);
    gpu.replicas = one.gpus.front().sharing.replicas;
    gpu.mig = one.gpus.front().mig;
    const std::string name = "gpu" + std::to_string(s.gpus.size());
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
        const Mode mode = mode_of(c.variant);
        if (alone || (mode == Mode::mps && c.variant.replicas > 0)) ++setup.memory_isolated;
        if (alone || mode != Mode::mps) ++setup.fault_isolated;
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
  return setup;
}

PlanResult Planner::run() {
  const auto start = std::chrono::steady_clock::now();
  PlanResult result;
  result.scenario_name = scenario_.name;
  result.currency = plan_.gpus.front().currency;
  result.headroom = plan_.headroom;
  result.max_gpus = plan_.max_gpus;
  result.strategies = plan_.strategies;
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

  stats_.setups = count_setups(false);
  stats_.setups_surviving = count_setups(true);

  std::vector<Mask> best_first;
  const auto best = solve(all, &best_first, true);
  if (best) {
    result.ranked.push_back(make_setup("best", *best, all, options_.refine));
  } else {
    PlanSetup none;
    none.label = "best";
    // Name the tenants that cannot meet their SLO even alone on the largest GPU.
    for (int t = 0; t < n_; ++t) {
      const Mask g = Mask{1} << t;
      if (group_cost(g, all).first < kInf) continue;
      const GroupState& s = group_state(g, static_cast<int>(models_.size()) - 1, {kDedicated, 0});
      if (!none.reason.empty()) none.reason += "; ";
      none.reason += "alone on " + models_.back().profile->name + ": " + s.reason;
    }
    if (none.reason.empty()) {
      none.reason = fmt::format("no setup within {} GPUs meets every SLO", plan_.max_gpus);
    }
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
        for (const PlanGpu& g : result.ranked.front().gpus) {
          Mask m = 0;
          for (const auto& b : g.blocks) {
            for (int t : b) m |= Mask{1} << t;
          }
          probe.push_back(m);
        }
      }
      for (const Mask g : probe) {
        if (popcount(g) < 2) continue;
        for (std::size_t m = 0; m < models_.size(); ++m) {
          std::string why;
          bool open = false;
          for (const Variant& v : variants(g, only)) {
            GroupState* s = &group_state(g, static_cast<int>(m), v);
            while (s->status == GroupState::unknown) {  // decide it: the reason must be real
              simulate_units(s->pending);
              s = &group_state(g, static_cast<int>(m), v);
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
  // Rank: feasible setups by cost, then worst SLO ratio; infeasible families last.
  std::stable_sort(result.ranked.begin() + 1, result.ranked.end(),
                   [](const PlanSetup& a, const PlanSetup& b) {
                     if (a.feasible != b.feasible) return a.feasible;
                     if (!a.feasible) return false;
                     if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) {
                       return a.cost_per_hour < b.cost_per_hour;
                     }
                     return a.worst_ratio < b.worst_ratio;
                   });

  if (result.found()) {
    PlanSetup& winner = result.ranked.front();
    if (options_.verify) {
      // The whole setup over the longest window its units needed. A unit decided over a
      // shorter window can be inconclusive over this one (the interval's dependence estimate
      // moves with the data): the window grows on, as in simulate_units, up to
      // plan.max_duration.
      RunOptions run;
      run.record_requests = false;
      run.interrupt = options_.interrupt;
      const auto stopped = [&] {
        return options_.interrupt != nullptr && options_.interrupt->load();
      };
      const Mask all_tenants = (Mask{1} << n_) - 1;
      for (;;) {
        if (stopped()) throw PlanInterrupted();
        result.best_run = simulate(resolve_scenario(winner.scenario), run);
        if (stopped()) throw PlanInterrupted();  // a run cut short is no verdict
        double worst = 0;
        std::string reason;
        bool inconclusive = false;
        winner.outcomes =
            judge(numbers_of(*result.best_run), all_tenants, worst, reason, &inconclusive);
        winner.worst_ratio = worst;
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
