// The lazy search of gpumux plan: per (group, model, variant) the current candidate
// configuration (refresh, with the MIG block/instance search), a group's optimistic cost, the
// dynamic programme over tenant subsets (cheapest_partition) and the rounds that simulate the
// open candidates of the cheapest partition until it is proven (solve).
#include "models/plan/planner_internal.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// Groups

Planner::GroupState& Planner::group_state(Mask group, int option, const Variant& v) {
  GroupState& state = groups_[GroupKey{group, option, v.family, v.replicas, v.profile}];
  refresh(state, group, option, v);
  return state;
}

void Planner::refresh(GroupState& state, Mask group, int option, const Variant& v) {
  if (state.status != GroupState::unknown) return;
  const int model = option_model(option);
  const std::vector<Mask> assignable =
      node_mode() ? assignable_blocks(group, option, v) : std::vector<Mask>{};
  if (!state.config.blocks.empty() && assignable.empty()) {
    // Re-check the candidate: still open while every unit is feasible or unknown.
    bool open = true, all_known = true;
    for (const Block& b : state.config.blocks) {
      const UnitInfo& info = unit(unit_key(b.tenants, model, b.profile, v));
      if (info.verdict == Verdict::infeasible || info.verdict == Verdict::pruned) {
        open = false;
        state.reason = info.reason;
      }
      if (info.verdict == Verdict::unknown) all_known = false;
    }
    if (open && all_known) {
      state.status = GroupState::feasible;
      state.pending.clear();
      return;
    }
    if (open) {
      state.pending.clear();
      for (const Block& b : state.config.blocks) {
        const UnitKey key = unit_key(b.tenants, model, b.profile, v);
        if (unit(key).verdict == Verdict::unknown) state.pending.push_back(key);
      }
      return;
    }
  }
  // A new optimistic candidate: every unit passes the bounds and none is known to fail.
  state.config = Config{model, v, {}, node_mode() ? option : -1};
  state.pending.clear();
  if (node_mode()) {
    // A balanced split of the group over the node's devices (planner_nodes.cpp).
    const int size = popcount(group);
    const int d = std::min(size, devices_of(option, v));
    const int small = size / d, big = small + (size % d ? 1 : 0);
    std::vector<Block> blocks;
    std::set<std::pair<Mask, int>> failed;
    std::string reason;
    reason_rank_ = -1;
    simulated_failure_ = false;
    // Every block the kubelet may make must be feasible, not only the split shown.
    std::vector<UnitKey> every;
    for (const Mask b : assignable) {
      const UnitKey key = unit_key(b, model, v.profile, v);
      const UnitInfo& info = unit(key);
      if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
        state.status = GroupState::infeasible;
        state.reason =
            fmt::format("{} {}{{{}}}: {} (pods the kubelet may put on one device of {})",
                        kFamilyNames[v.family], device_label(key), join_names(scenario_.tenants, b),
                        info.reason, machines_[static_cast<std::size_t>(option)].name);
        state.config.blocks.clear();
        return;
      }
      if (info.verdict == Verdict::unknown) every.push_back(key);
    }
    if (!search_split(group, size % d ? size % d : d, big, small, option, v, true, blocks,
                      state.pending, reason, failed)) {
      state.status = GroupState::infeasible;
      state.reason = reason.empty() ? fmt::format("no split of {{{}}} over {} fits",
                                                  join_names(scenario_.tenants, group),
                                                  machines_[static_cast<std::size_t>(option)].name)
                                    : reason;
      state.config.blocks.clear();
      return;
    }
    state.config.blocks = blocks;
    place_blocks(state.config);
    if (!assignable.empty()) {
      // The split's blocks are among the assignable ones. Decide the fullest first (the most
      // contention: the likeliest to fail), a batch of `jobs` at a time, so that a failing node
      // is known after few simulations.
      std::stable_sort(every.begin(), every.end(), [](const UnitKey& a, const UnitKey& b) {
        return popcount(a.tenants) > popcount(b.tenants);
      });
      if (static_cast<int>(every.size()) > jobs_) every.resize(static_cast<std::size_t>(jobs_));
      state.pending = every;
    }
    if (state.pending.empty()) state.status = GroupState::feasible;
    return;
  }
  if (!is_mig(v)) {
    const UnitKey key = unit_key(group, model, -1, v);
    const UnitInfo& info = unit(key);
    if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
      state.status = GroupState::infeasible;
      state.reason = info.reason;
      return;
    }
    state.config.blocks.push_back({group, -1});
    if (info.verdict == Verdict::feasible) {
      state.status = GroupState::feasible;
    } else {
      state.pending.push_back(key);
    }
    return;
  }
  std::vector<Block> blocks;
  std::set<std::pair<Mask, int>> failed;
  std::string reason;
  reason_rank_ = -1;
  layout_full_ = false;
  simulated_failure_ = false;
  if (!search_mig(group, 0, model, v, true, blocks, state.pending, reason, failed)) {
    state.status = GroupState::infeasible;
    if (reason.empty()) {
      state.reason =
          fmt::format("no MIG layout of {} gives each of {} tenants an instance",
                      models_[static_cast<std::size_t>(model)].profile->name, popcount(group));
    } else if (layout_full_ && !simulated_failure_) {
      state.reason =
          fmt::format("{} {{{}}}: no MIG layout fits every block (e.g. {})", kFamilyNames[v.family],
                      join_names(scenario_.tenants, group), reason);
    } else {
      state.reason = reason;
    }
    state.config.blocks.clear();
    return;
  }
  state.config.blocks = blocks;
  if (state.pending.empty()) state.status = GroupState::feasible;
}

bool Planner::search_mig(Mask remaining, int layout, int model, const Variant& v, bool optimistic,
                         std::vector<Block>& blocks, std::vector<UnitKey>& pending,
                         std::string& reason, std::set<std::pair<Mask, int>>& failed) {
  if (remaining == 0) return true;
  if (failed.count({remaining, layout})) return false;
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  const int first = lowest(remaining);
  const Mask rest = remaining & ~(Mask{1} << first);
  // Blocks containing `first`: subsets of the rest, largest first (fewer, larger instances).
  std::vector<Mask> subsets;
  if (v.family == kMig) {
    subsets.push_back(0);
  } else {
    for (Mask s = rest;; s = (s - 1) & rest) {
      subsets.push_back(s);
      if (s == 0) break;
    }
    std::stable_sort(subsets.begin(), subsets.end(),
                     [](Mask a, Mask b) { return popcount(a) > popcount(b); });
  }
  for (const Mask s : subsets) {
    const Mask block = s | (Mask{1} << first);
    if (v.replicas > 0 && popcount(block) > v.replicas) continue;
    for (std::size_t k = 0; k < m.mig.size(); ++k) {
      const int grown = m.next[static_cast<std::size_t>(layout)][k];
      if (grown < 0) {
        layout_full_ = true;
        continue;
      }
      const UnitKey key = unit_key(block, model, m.mig[k], v);
      const UnitInfo& info = unit(key);
      if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
        // Keep the most telling failure: of the largest instance, a simulated one first.
        const int rank = m.profile->mig_profiles[static_cast<std::size_t>(m.mig[k])].sms * 2 +
                         (info.verdict == Verdict::infeasible ? 1 : 0);
        if (rank > reason_rank_) {
          reason_rank_ = rank;
          simulated_failure_ = info.verdict == Verdict::infeasible;
          reason = std::string(kFamilyNames[v.family]) + " " + device_label(key) + "{" +
                   join_names(scenario_.tenants, block) + "}: " + info.reason;
        }
        continue;
      }
      if (info.verdict == Verdict::unknown && !optimistic) continue;
      blocks.push_back({block, m.mig[k]});
      const std::size_t pending_size = pending.size();
      if (info.verdict == Verdict::unknown) pending.push_back(key);
      if (search_mig(remaining & ~block, grown, model, v, optimistic, blocks, pending, reason,
                     failed)) {
        return true;
      }
      blocks.pop_back();
      pending.resize(pending_size);
    }
  }
  failed.insert({remaining, layout});
  return false;
}

std::pair<double, bool> Planner::group_cost(Mask group, const std::vector<bool>& families,
                                            int* option) {
  for (int o = 0; o < options(); ++o) {
    bool unknown = false;
    for (const Variant& v : variants_for(group, o, families)) {
      const GroupState& s = group_state(group, o, v);
      if (s.status == GroupState::feasible) {
        if (option) *option = o;
        return {option_price(o), true};
      }
      if (s.status == GroupState::unknown) unknown = true;
    }
    if (unknown) {
      if (option) *option = o;
      return {option_price(o), false};
    }
  }
  return {kInf, true};
}

// ---------------------------------------------------------------------------------------------
// Partitions

Planner::Partition Planner::cheapest_partition(const std::vector<double>& cost,
                                               const std::vector<int>* weight) const {
  const Mask full = (Mask{1} << n_) - 1;
  const std::size_t size = std::size_t{1} << n_;
  const int kmax = weight ? plan_.max_gpus : std::min(plan_.max_gpus, n_);
  // f[k][mask]: cheapest way to place `mask` on exactly k GPUs; choice for reconstruction.
  std::vector<std::vector<double>> f(static_cast<std::size_t>(kmax) + 1,
                                     std::vector<double>(size, kInf));
  std::vector<std::vector<Mask>> choice(static_cast<std::size_t>(kmax) + 1,
                                        std::vector<Mask>(size, 0));
  f[0][0] = 0;
  for (int k = 1; k <= kmax; ++k) {
    for (Mask mask = 1; mask <= full; ++mask) {
      const Mask low = mask & (~mask + 1);
      const Mask rest = mask & ~low;
      double best = kInf;
      Mask pick = 0;
      for (Mask s = rest;; s = (s - 1) & rest) {
        const Mask g = s | low;
        const int w = weight ? (*weight)[g] : 1;
        const double c = w <= k ? cost[g] + f[static_cast<std::size_t>(k - w)][mask & ~g] : kInf;
        if (c < best) {
          best = c;
          pick = g;
        }
        if (s == 0) break;
      }
      f[static_cast<std::size_t>(k)][mask] = best;
      choice[static_cast<std::size_t>(k)][mask] = pick;
    }
  }
  Partition p;
  int best_k = -1;
  for (int k = 1; k <= kmax; ++k) {
    // Fewer GPUs win ties (cost equal only when prices make it so).
    if (f[static_cast<std::size_t>(k)][full] < p.cost - 1e-9) {
      p.cost = f[static_cast<std::size_t>(k)][full];
      best_k = k;
    }
  }
  if (best_k < 0) return p;
  Mask mask = full;
  for (int k = best_k; k > 0 && mask != 0;) {
    const Mask g = choice[static_cast<std::size_t>(k)][mask];
    p.groups.push_back(g);
    mask &= ~g;
    k -= weight ? (*weight)[g] : 1;
  }
  return p;
}

std::optional<Planner::Partition> Planner::solve(const std::vector<bool>& families,
                                                 std::vector<Mask>* first, bool drive) {
  const std::size_t size = std::size_t{1} << n_;
  for (;;) {
    ++stats_.dp_rounds;
    std::vector<double> cost(size, kInf);
    std::vector<bool> proven(size, false);
    std::vector<int> weight(size, 1);
    for (Mask g = 1; g < size; ++g) {
      int option = 0;
      const auto [c, known] = group_cost(g, families, &option);
      cost[g] = c;
      proven[g] = known;
      weight[g] = option_gpus(option);
    }
    const Partition p = cheapest_partition(cost, node_mode() ? &weight : nullptr);
    if (first != nullptr && first->empty()) *first = p.groups;
    if (!(p.cost < kInf)) return std::nullopt;
    std::vector<UnitKey> batch;
    // The candidates the batch decides (simulate_units grows a unit's window only while one of
    // the candidates holding it may still work).
    std::vector<std::vector<UnitKey>> candidates;
    for (const Mask g : p.groups) {
      if (proven[g]) continue;
      // The cheapest option where the group may still work: its first open variant.
      bool taken = false;
      for (int m = 0; m < options() && !taken; ++m) {
        for (const Variant& v : variants_for(g, m, families)) {
          const GroupState& s = group_state(g, m, v);
          if (s.status != GroupState::unknown) continue;
          for (const UnitKey& u : s.pending) {
            if (std::find(batch.begin(), batch.end(), u) == batch.end()) batch.push_back(u);
          }
          candidates.push_back(s.pending);
          taken = true;
          break;
        }
      }
    }
    if (batch.empty()) return p;
    if (!drive) return p;
    // Fill idle workers with the next open variants of the same groups (speculative).
    for (const Mask g : p.groups) {
      if (static_cast<int>(batch.size()) >= jobs_) break;
      if (proven[g]) continue;
      for (const Variant& v : variants_for(g, 0, families)) {
        const GroupState& s = group_state(g, 0, v);
        if (s.status != GroupState::unknown) continue;
        std::vector<UnitKey> filled;  // the part of this candidate the batch holds
        for (const UnitKey& u : s.pending) {
          const bool held = std::find(batch.begin(), batch.end(), u) != batch.end();
          if (!held && static_cast<int>(batch.size()) < jobs_) {
            batch.push_back(u);
            filled.push_back(u);
          } else if (held) {
            filled.push_back(u);
          }
        }
        if (!filled.empty()) candidates.push_back(filled);
      }
    }
    simulate_units(batch, candidates);
  }
}

}  // namespace planner_detail
}  // namespace gpumux
