// The cluster replay, its autoscaling story (cluster-autoscaler): scale-up decisions (binpacking
// estimate, expanders) and scale-down of emptied nodes. The event loop and the scheduling story
// are cluster_run.cpp; the shared state is cluster_replay.hpp.
#include <algorithm>
#include <cstdint>
#include <regex>
#include <vector>

#include "models/cluster/cluster_replay.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::cluster::detail {

namespace {

// A node in the autoscaler's simulation: free CPU, memory and unit slots, and whether a pod was
// put on it.
struct VirtualNode {
  int pool = 0;
  std::int64_t cpu = 0, mem = 0;
  std::vector<int> frees;
  bool used = false;
};

VirtualNode empty_node(const PoolTemplate& tpl, int pool) {
  VirtualNode v;
  v.pool = pool;
  v.cpu = tpl.cpu_allocatable();
  v.mem = tpl.memory_allocatable();
  for (const UnitTemplate& u : tpl.units) v.frees.push_back(u.slots);
  return v;
}

// Puts one pod of demand `d` on `v` if it fits (units in index order); false leaves v as it was.
bool put(const Demand& d, const PoolTemplate& tpl, VirtualNode& v) {
  if (!d.possible || v.cpu < d.cpu_milli || v.mem < d.memory_bytes) return false;
  std::vector<int> frees = v.frees;
  for (const Need& need : d.needs) {
    std::int64_t left = need.count;
    for (std::size_t u = 0; u < frees.size() && left > 0; ++u) {
      if (tpl.units[u].resource != need.resource) continue;
      if (need.spread) {
        const int t = static_cast<int>(std::min<std::int64_t>(left, frees[u]));
        frees[u] -= t;
        left -= t;
      } else if (frees[u] >= need.per_unit) {
        frees[u] -= need.per_unit;
        --left;
      }
    }
    if (left > 0) return false;
  }
  v.frees = std::move(frees);
  v.cpu -= d.cpu_milli;
  v.mem -= d.memory_bytes;
  v.used = true;
  return true;
}

// splitmix64 of (decision, option, seed): the random expander's deterministic draw.
std::uint64_t draw(std::uint64_t decision, std::size_t option, std::uint64_t seed) {
  std::uint64_t z = seed + decision * 0x9E3779B97F4A7C15ULL +
                    static_cast<std::uint64_t>(option) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

// cluster-autoscaler's scale-up, one decision per pass of the loop below (its RunOnce, every
// scan interval, collapsed into the instant the pods became pending -- assumption):
//  1. The pending pods that fit on nodes already being provisioned (packed first-fit in
//     priority, arrival order) are left to them (upcoming nodes in its cluster snapshot).
//  2. For each pool with autoscaling and head-room, the binpacking estimator
//     (cluster-autoscaler estimator/binpacking_estimator.go, First-Fit Decreasing; pods ordered
//     by estimator/decreasing_pod_orderer.go: cpu/node cpu + memory/node memory, largest
//     first) sizes the scale-up: each equivalence group (shape) is put on the new nodes already
//     opened, then on the last one, then on a fresh node, stopping when the last node stays
//     empty or the pool reaches max. Pods an empty node of the pool cannot host are not its.
//  3. The expander chooses among the pools that would host a pod (FAQ.md "What are
//     Expanders?"; expander/waste/waste.go; expander/priority/readme.md): random, least-waste
//     (least (cpu free / cpu) + (memory free / memory) over the new nodes, ties at random),
//     priority (highest value whose regex matches the pool name, ties at random; none matching:
//     all at random), or first (file order). Random draws are splitmix64 of the decision
//     number and the scenario seed.
//  4. The chosen pool grows by the estimate; repeat until no pool can help a pending pod.
void Replay::scale_up() {
  if (!autoscaled_ || !scale_wanted_) return;
  scale_wanted_ = false;
  const ClusterState& st = sched_.state();
  // Whether a pending queue's shape fits an empty node of some autoscaled pool: the others can
  // neither use an upcoming node nor be helped by a new one, and are left out (exactly).
  auto autoscalable = [&](int key) {
    const std::size_t k = static_cast<std::size_t>(key);
    if (key_autoscalable_.size() <= k) key_autoscalable_.resize(k + 1, -1);
    if (key_autoscalable_[k] < 0) {
      key_autoscalable_[k] = 0;
      for (int pool = 0; pool < sched_.pools(); ++pool) {
        if (spec_.pools[static_cast<std::size_t>(pool)].autoscaling &&
            sched_.fits_empty(key_shape_[k], pool)) {
          key_autoscalable_[k] = 1;
        }
      }
    }
    return key_autoscalable_[k] == 1;
  };
  while (true) {
    // No pool can grow: no decision to make (the work below is per pending pod).
    bool headroom = false;
    for (std::size_t pool = 0; pool < spec_.pools.size(); ++pool) {
      const NodePoolSpec& ps = spec_.pools[pool];
      if (!ps.autoscaling) continue;
      int upcoming_here = 0;
      for (int n : inflight_) {
        upcoming_here += st.pool[static_cast<std::size_t>(n)] == static_cast<int>(pool);
      }
      headroom |= ps.autoscaling->max_nodes - pool_active_[pool] - upcoming_here > 0;
    }
    if (!headroom) return;
    // Pending pods in queue order: (priority, arrival, group) -> members.
    std::vector<std::tuple<int, Nanos, int>> order;
    for (int k : nonempty_) {
      if (!autoscalable(k)) continue;
      for (const auto& e : queues_[static_cast<std::size_t>(k)]) order.push_back(e);
    }
    std::sort(order.begin(), order.end());
    // 1. Room on the nodes being provisioned.
    std::vector<VirtualNode> upcoming;
    for (int n : inflight_) {
      const int pool = st.pool[static_cast<std::size_t>(n)];
      upcoming.push_back(empty_node(sched_.templates()[static_cast<std::size_t>(pool)], pool));
    }
    std::vector<int> unhelped;  // shapes, one entry per pod (gang members each)
    for (const auto& [prio, arrival, g] : order) {
      const Group& gr = groups_[static_cast<std::size_t>(g)];
      const int shape = sched_.shape_of_pod(static_cast<std::size_t>(gr.spec));
      for (std::size_t m = 0; m < gr.members.size(); ++m) {
        bool placed = false;
        for (VirtualNode& v : upcoming) {
          const PoolTemplate& tpl = sched_.templates()[static_cast<std::size_t>(v.pool)];
          if (put(sched_.demand(shape, v.pool), tpl, v)) {
            placed = true;
            break;
          }
        }
        if (!placed) unhelped.push_back(shape);
      }
    }
    if (unhelped.empty()) return;
    // 2. One expansion option per pool.
    struct Option {
      int pool;
      int nodes;
      std::int64_t cpu_requested = 0, mem_requested = 0;
    };
    std::vector<Option> options;
    for (int pool = 0; pool < sched_.pools(); ++pool) {
      const NodePoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
      if (!ps.autoscaling) continue;
      int upcoming_here = 0;
      for (int n : inflight_) upcoming_here += st.pool[static_cast<std::size_t>(n)] == pool;
      const int headroom =
          ps.autoscaling->max_nodes - pool_active_[static_cast<std::size_t>(pool)] - upcoming_here;
      if (headroom <= 0) continue;
      const PoolTemplate& tpl = sched_.templates()[static_cast<std::size_t>(pool)];
      // Equivalence groups in first-appearance order, then by decreasing size score.
      std::vector<std::pair<int, int>> groups;  // (shape, pods)
      for (int shape : unhelped) {
        if (!sched_.fits_empty(shape, pool)) continue;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& gp) { return gp.first == shape; });
        if (it == groups.end()) {
          groups.emplace_back(shape, 1);
        } else {
          it->second += 1;
        }
      }
      auto size_score = [&](int shape) {
        const Demand& d = sched_.demand(shape, pool);
        double score = 0;
        if (tpl.cpu_milli > 0) score += static_cast<double>(d.cpu_milli) / tpl.cpu_milli;
        if (tpl.memory_bytes > 0) {
          score += static_cast<double>(d.memory_bytes) / static_cast<double>(tpl.memory_bytes);
        }
        return score;
      };
      std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
        return size_score(a.first) > size_score(b.first);
      });
      std::vector<VirtualNode> fresh;
      Option opt{pool, 0};
      for (const auto& [shape, pods] : groups) {
        const Demand& d = sched_.demand(shape, pool);
        int left = pods;
        // On the nodes opened so far, first that fits, until one pod does not fit.
        while (left > 0) {
          bool placed = false;
          for (VirtualNode& v : fresh) {
            if (put(d, tpl, v)) {
              placed = true;
              break;
            }
          }
          if (!placed) break;
          --left;
          opt.cpu_requested += d.cpu_milli;
          opt.mem_requested += d.memory_bytes;
        }
        // Then on the last node, or a new one.
        for (; left > 0; --left) {
          if (!fresh.empty() && put(d, tpl, fresh.back())) {
            opt.cpu_requested += d.cpu_milli;
            opt.mem_requested += d.memory_bytes;
            continue;
          }
          if (!fresh.empty() && !fresh.back().used) break;
          if (static_cast<int>(fresh.size()) >= headroom) break;
          fresh.push_back(empty_node(tpl, pool));
          if (!put(d, tpl, fresh.back())) break;
          opt.cpu_requested += d.cpu_milli;
          opt.mem_requested += d.memory_bytes;
        }
      }
      for (const VirtualNode& v : fresh) opt.nodes += v.used ? 1 : 0;
      if (opt.nodes > 0) options.push_back(opt);
    }
    if (options.empty()) return;
    // 3. The expander.
    ++scale_decisions_;
    std::vector<std::size_t> best;
    for (std::size_t i = 0; i < options.size(); ++i) best.push_back(i);
    const AutoscalerSpec& as = spec_.autoscaler;
    if (as.expander == Expander::first) {
      best.resize(1);
    } else if (as.expander == Expander::least_waste) {
      double least = 0;
      std::vector<std::size_t> kept;
      for (std::size_t i : best) {
        const Option& o = options[i];
        const PoolTemplate& tpl = sched_.templates()[static_cast<std::size_t>(o.pool)];
        double waste = 0;
        if (tpl.cpu_milli > 0) {
          const double avail = static_cast<double>(tpl.cpu_milli) * o.nodes;
          waste += (avail - static_cast<double>(o.cpu_requested)) / avail;
        }
        if (tpl.memory_bytes > 0) {
          const double avail = static_cast<double>(tpl.memory_bytes) * o.nodes;
          waste += (avail - static_cast<double>(o.mem_requested)) / avail;
        }
        if (kept.empty() || waste < least) {
          least = waste;
          kept = {i};
        } else if (waste == least) {
          kept.push_back(i);
        }
      }
      best = kept;
    } else if (as.expander == Expander::priority) {
      std::vector<std::size_t> kept;
      for (auto it = as.priorities.rbegin(); it != as.priorities.rend() && kept.empty(); ++it) {
        for (std::size_t i : best) {
          const std::string& name = spec_.pools[static_cast<std::size_t>(options[i].pool)].name;
          for (const std::string& pattern : it->second) {
            if (std::regex_search(name, std::regex(pattern))) {
              kept.push_back(i);
              break;
            }
          }
        }
      }
      if (!kept.empty()) best = kept;
    }
    std::size_t chosen = best[0];
    if (best.size() > 1) {
      std::uint64_t lowest = 0;
      for (std::size_t k = 0; k < best.size(); ++k) {
        const std::uint64_t h = draw(scale_decisions_, best[k], spec_.seed);
        if (k == 0 || h < lowest) {
          lowest = h;
          chosen = best[k];
        }
      }
    }
    // 4. Grow the chosen pool.
    const Option& o = options[chosen];
    const NodePoolSpec& ps = spec_.pools[static_cast<std::size_t>(o.pool)];
    int added = 0;
    for (int n = 0; n < st.nodes() && added < o.nodes; ++n) {
      if (st.pool[static_cast<std::size_t>(n)] != o.pool || st.active[static_cast<std::size_t>(n)])
        continue;
      if (std::find(inflight_.begin(), inflight_.end(), n) != inflight_.end()) continue;
      inflight_.push_back(n);
      pools_[static_cast<std::size_t>(o.pool)].scale_ups += 1;
      push(checked::add_saturating(now_, ps.autoscaling->provisioning_delay), Kind::node_ready, n);
      ++added;
    }
    if (added == 0) return;  // no free node slot (cannot happen below max)
  }
}

void Replay::node_emptied(int node) {
  const int pool = sched_.state().pool[static_cast<std::size_t>(node)];
  const NodePoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
  if (!ps.autoscaling) return;
  push(checked::add_saturating(now_, ps.autoscaling->scale_down_after), Kind::scale_down, node,
       sched_.state().version[static_cast<std::size_t>(node)]);
}

}  // namespace gpumux::cluster::detail
