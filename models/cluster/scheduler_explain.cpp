// Why a pod is pending: fit checks against empty and released nodes, and the reasons
// kube-scheduler would print, counted over the cluster's nodes.
#include "models/cluster/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "sim/util/checked.hpp"

namespace gpumux::cluster {

bool Scheduler::fits_empty(int shape, int pool) const {
  const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
  std::vector<int> frees;
  for (const UnitTemplate& u : tpl.units) frees.push_back(u.slots);
  return fits_raw(demand(shape, pool), tpl, tpl.cpu_allocatable(), tpl.memory_allocatable(),
                  frees.data());
}

bool Scheduler::fits_after_release(int shape, int node,
                                   const std::vector<const Allocation*>& freed) const {
  const std::size_t nn = static_cast<std::size_t>(node);
  const int pool = state_.pool[nn];
  const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
  const int b = state_.unit_begin[node];
  std::vector<int> frees(state_.slot_free.begin() + b,
                         state_.slot_free.begin() + b + state_.units(node));
  std::int64_t cpu = state_.cpu_free[nn], mem = state_.memory_free[nn];
  for (const Allocation* a : freed) {
    for (const auto& [u, take] : a->takes) frees[static_cast<std::size_t>(u - b)] += take;
    const Demand& held = demand(a->shape, pool);
    cpu += held.cpu_milli;
    mem += held.memory_bytes;
  }
  return fits_raw(demand(shape, pool), tpl, cpu, mem, frees.data());
}

PendingReason Scheduler::explain(int shape, int members) const {
  std::map<std::string, int> counts;
  int active = 0;
  // Cluster-wide totals of what is free, for "fragmented".
  std::vector<double> free_by_resource(static_cast<std::size_t>(std::max(1, names_.size())), 0.0);
  std::vector<double> free_milli_by_resource(free_by_resource.size(), 0.0);
  std::int64_t cpu_total = 0, mem_total = 0;
  bool some_pool_possible = false;
  for (int node = 0; node < state_.nodes(); ++node) {
    const std::size_t nn = static_cast<std::size_t>(node);
    if (!state_.active[nn]) continue;
    ++active;
    const int pool = state_.pool[nn];
    const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
    const Demand& d = demand(shape, pool);
    std::string why;
    if (d.model_mismatch) {
      why = "node(s) didn't match Pod's node affinity/selector";
    } else if (!d.untolerated_taint.empty()) {
      why = fmt::format("node(s) had untolerated taint {{{}}}", d.untolerated_taint);
    } else if (!d.possible) {
      why = fmt::format("Insufficient {}", d.refused_name);
    } else {
      some_pool_possible = true;
      cpu_total = checked::add_saturating(cpu_total, state_.cpu_free[nn]);
      mem_total = checked::add_saturating(mem_total, state_.memory_free[nn]);
      for (int i = 0; i < state_.units(node); ++i) {
        const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
        const int f = state_.slot_free[static_cast<std::size_t>(state_.unit_begin[node] + i)];
        free_by_resource[static_cast<std::size_t>(u.resource)] += f;
      }
      if (state_.cpu_free[nn] < d.cpu_milli) {
        why = "Insufficient cpu";
      } else if (state_.memory_free[nn] < d.memory_bytes) {
        why = "Insufficient memory";
      } else {
        for (const Need& need : d.needs) {
          if (!need_fits(state_, tpl, node, need)) {
            why = fmt::format("Insufficient {}", names_.name(need.resource));
            break;
          }
        }
      }
    }
    if (!why.empty()) counts[why] += 1;
  }
  PendingReason out;
  if (active == 0) {
    out.reason = "no nodes available";
    out.message = "0/0 nodes are available: no nodes available to schedule pods.";
    return out;
  }
  out.message = fmt::format("0/{} nodes are available:", active);
  bool first = true;
  int best = 0;
  for (const auto& [why, c] : counts) {
    out.message += fmt::format("{} {} {}", first ? "" : ",", c, why);
    first = false;
    if (c > best) {
      best = c;
      out.reason = why;
    }
  }
  out.message += ".";
  if (counts.empty()) {
    // Every node fits one member, but not the whole gang at once.
    out.reason = "fragmented";
    return out;
  }
  // Fragmented: in total, enough of everything is free for the pod (or gang), and an empty
  // node of some pool could hold it (a pod larger than every node is not fragmentation: it
  // keeps the Insufficient reason, as kube-scheduler's message says).
  bool fits_some_empty_node = false;
  for (int p = 0; p < pools() && !fits_some_empty_node; ++p) {
    fits_some_empty_node = fits_empty(shape, p);
  }
  if (some_pool_possible && fits_some_empty_node) {
    int pool = -1;
    for (int p = 0; p < pools(); ++p) {
      if (demand(shape, p).possible) {
        pool = p;
        break;
      }
    }
    const Demand& d = demand(shape, pool);
    bool enough = cpu_total >= checked::mul_saturating(d.cpu_milli, members) &&
                  mem_total >= checked::mul_saturating(d.memory_bytes, members);
    for (const Need& need : d.needs) {
      const double want = static_cast<double>(need.count) * need.per_unit * members;
      enough = enough && free_by_resource[static_cast<std::size_t>(need.resource)] >= want;
    }
    if (enough) out.reason = "fragmented";
  }
  return out;
}

}  // namespace gpumux::cluster
