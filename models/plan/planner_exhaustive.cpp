// Brute force for tests (PlanOptions::exhaustive): every configuration of every group is
// simulated as a whole GPU, no bounds beyond the definition of feasible, no early stop.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <functional>

#include "models/run/runner.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// Brute force (tests): every configuration of every group simulated as a whole GPU.

void Planner::enumerate_configs(Mask group, int model, const Variant& v, std::vector<Config>& out) {
  if (node_mode()) {
    enumerate_node_configs(group, model, v, out);  // `model` is the machine type here
    return;
  }
  if (!is_mig(v)) {
    out.push_back(Config{model, v, {{group, -1}}});
    return;
  }
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  std::vector<Block> blocks;
  std::function<void(Mask, int)> rec = [&](Mask remaining, int layout) {
    if (remaining == 0) {
      out.push_back(Config{model, v, blocks});
      return;
    }
    const int f = lowest(remaining);
    const Mask rest = remaining & ~(Mask{1} << f);
    for (Mask s = rest;; s = (s - 1) & rest) {
      const Mask block = s | (Mask{1} << f);
      if ((v.family != kMig || s == 0) && (v.replicas == 0 || popcount(block) <= v.replicas)) {
        for (std::size_t k = 0; k < m.mig.size(); ++k) {
          const int grown = m.next[static_cast<std::size_t>(layout)][k];
          if (grown < 0) continue;
          blocks.push_back({block, m.mig[k]});
          rec(remaining & ~block, grown);
          blocks.pop_back();
        }
      }
      if (s == 0) break;
    }
  };
  rec(group, 0);
}

bool Planner::config_feasible_whole(const Config& c) {
  // Isolation and sustainability are part of the definition of feasible (not bounds): checked
  // per block analytically, then the whole GPU is simulated.
  for (const Block& b : c.blocks) {
    if (constraint_violation(unit_key(b.tenants, c.model, b.profile, c.variant))) {
      return false;
    }
  }
  // Inconclusive verdicts get longer windows, as in simulate_units.
  for (std::optional<Nanos> window = scenario_.duration; window; window = longer_window(*window)) {
    ++stats_.simulations;
    try {
      RunOptions run;
      run.record_requests = false;
      run.device_statistics = false;  // (the verdict reads latencies and failures only)
      const RunResult r = simulate(resolve_scenario(unit_scenario(c, *window)), run);
      Mask all = 0;
      for (const Block& b : c.blocks) all |= b.tenants;
      double worst = 0;
      std::string reason;
      bool inconclusive = false;
      judge(numbers_of(r), all, worst, reason, &inconclusive);
      if (!inconclusive) return reason.empty();
    } catch (const std::exception&) {
      return false;
    }
  }
  return false;
}

std::optional<Planner::Partition> Planner::solve_exhaustive(const std::vector<bool>& families) {
  const std::size_t size = std::size_t{1} << n_;
  std::vector<double> cost(size, kInf);
  std::vector<int> weight(size, 1);
  for (Mask g = 1; g < size; ++g) {
    for (int m = 0; m < options() && !(cost[g] < kInf); ++m) {
      for (const Variant& v : variants_for(g, m, families)) {
        std::vector<Config> configs;
        enumerate_configs(g, m, v, configs);
        bool feasible = false;
        for (const Config& c : configs) {
          // Every configuration is simulated (no early exit): brute force.
          feasible = config_feasible_whole(c) || feasible;
        }
        if (feasible && option_price(m) < cost[g]) {
          cost[g] = option_price(m);
          weight[g] = option_gpus(m);
        }
      }
    }
  }
  const Partition p = cheapest_partition(cost, node_mode() ? &weight : nullptr);
  if (!(p.cost < kInf)) return std::nullopt;
  return p;
}

}  // namespace planner_detail
}  // namespace gpumux
