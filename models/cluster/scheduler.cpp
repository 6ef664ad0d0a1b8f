#include "models/cluster/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "sim/util/checked.hpp"

namespace gpumux::cluster {
namespace {

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
// a stateless hash giving each (decision, node) pair a pseudo-random rank for tie-breaking.
std::uint64_t tie_hash(std::uint64_t call, int node, std::uint64_t seed) {
  std::uint64_t z = seed + call * 0x9E3779B97F4A7C15ULL +
                    static_cast<std::uint64_t>(node) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr double kInfeasible = -std::numeric_limits<double>::infinity();

PodShape shape_of(const PodSpec& p) {
  PodShape s;
  s.cpu_milli = p.cpu_milli;
  s.memory_bytes = p.memory_bytes;
  for (const auto& [name, count] : p.gpu_resources) {
    if (count > 0) s.gpu_resources[name] = count;
  }
  if (s.gpu_resources.empty() && p.gpu_milli > 0) s.gpu_resources["nvidia.com/gpu"] = 1;
  s.gpu_milli = p.gpu_milli;
  auto share = s.gpu_resources.find(kGpuShareResource);
  if (share != s.gpu_resources.end() && s.gpu_milli == 0) {
    s.gpu_milli = static_cast<int>(share->second);
  }
  s.gpu_models = p.gpu_models;
  s.node_selector = p.node_selector;
  s.tolerations = p.tolerations;
  return s;
}

// FGD's PodResource (pkg/type/resource.go): CPU, per-GPU milli, GPU count, GPU type; no memory.
struct FgdKey {
  std::int64_t cpu;
  int milli;
  std::int64_t gpus;
  std::string type;
  bool operator<(const FgdKey& o) const {
    return std::tie(cpu, milli, gpus, type) < std::tie(o.cpu, o.milli, o.gpus, o.type);
  }
};

}  // namespace

Nanos ring_allreduce_time(std::int64_t bytes, int members, double bandwidth_bytes_per_s) {
  if (members <= 1 || bytes <= 0 || bandwidth_bytes_per_s <= 0) return 0;
  const double n = members;
  const double seconds = 2.0 * (n - 1) / n * static_cast<double>(bytes) / bandwidth_bytes_per_s;
  // Saturating (INT64_MAX): a step beyond ~292 years, e.g. petabytes over a bit per second.
  return checked::nanos_saturating(seconds * 1e9);
}

Scheduler::Scheduler(const ClusterSpec& spec) : spec_(&spec) {
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    templates_.push_back(advertise(spec.pools[p], static_cast<int>(p), names_));
  }
  for (PoolTemplate& t : templates_) t.capacity.resize(static_cast<std::size_t>(names_.size()), 0);
  state_ = make_state(spec.pools, templates_);

  auto intern_shape = [&](const PodShape& s) {
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      if (shapes_[i] == s) return static_cast<int>(i);
    }
    shapes_.push_back(s);
    return static_cast<int>(shapes_.size() - 1);
  };
  // Shapes are found through a map keyed by the shape's text (a linear scan above is only the
  // fallback for the typical shapes, which are few).
  std::map<std::string, int> by_text;
  auto text_of = [](const PodShape& s) {
    std::string t = fmt::format("{}|{}|{}|", s.cpu_milli, s.memory_bytes, s.gpu_milli);
    for (const auto& [n, c] : s.gpu_resources) t += fmt::format("{}={};", n, c);
    t += "|";
    for (const std::string& m : s.gpu_models) t += m + ";";
    t += "|";
    for (const auto& [k, v] : s.node_selector) t += fmt::format("{}={};", k, v);
    t += "|";
    for (const Toleration& o : s.tolerations) {
      t += fmt::format("{}:{}:{}:{};", o.key, o.op, o.value, o.effect);
    }
    return t;
  };
  for (const PodSpec& pod : spec.pods) {
    PodShape s = shape_of(pod);
    const std::string key = text_of(s);
    auto it = by_text.find(key);
    if (it == by_text.end()) {
      shapes_.push_back(std::move(s));
      it = by_text.emplace(key, static_cast<int>(shapes_.size() - 1)).first;
    }
    pod_shape_.push_back(it->second);
  }

  // FGD typical shapes (pkg/utils/frag.go GetTypicalPods): GPU pods only, by frequency.
  {
    std::map<FgdKey, double> counts;
    double total = 0;
    for (const PodSpec& pod : spec.pods) {
      const PodShape s = shape_of(pod);
      std::int64_t gpus = 0;
      for (const auto& [n, c] : s.gpu_resources) gpus += c;
      if (s.gpu_milli > 0 && s.gpu_milli < kMilliPerGpu) gpus = 1;  // a share of one GPU
      if (gpus == 0 && !spec.scheduler.fgd_include_cpu_pods) continue;
      std::string type;
      for (const std::string& m : s.gpu_models) type += type.empty() ? m : fmt::format("|{}", m);
      const int milli = gpus == 0                                       ? 0
                        : s.gpu_milli > 0 && s.gpu_milli < kMilliPerGpu ? s.gpu_milli
                                                                        : kMilliPerGpu;
      const double weight = 1.0;
      counts[FgdKey{s.cpu_milli, milli, gpus, type}] += weight;
      total += weight;
    }
    std::vector<std::pair<FgdKey, double>> list(counts.begin(), counts.end());
    // Decreasing count; ties: the larger resource first (sort.Reverse of TargetPodList.Less).
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second > b.second;
      return b.first < a.first;
    });
    // Written as GetTypicalPods computes it (threshold x total / 100; each share count / total,
    // renormalised by cum / total unless every shape was taken), so that the shares are the
    // same doubles and the integer scores below round alike.
    const double threshold =
        static_cast<double>(spec.scheduler.fgd_popularity_threshold) * total / 100.0;
    const std::size_t step = static_cast<std::size_t>(std::max(1, spec.scheduler.fgd_typical_step));
    std::size_t taken = 0;
    double cum = 0;
    while (cum < threshold && taken < list.size()) {
      const std::size_t until = std::min(list.size(), taken + step);
      for (; taken < until; ++taken) cum += list[taken].second;
    }
    const bool all_taken = taken >= list.size();
    for (std::size_t i = 0; i < taken; ++i) {
      const FgdKey& k = list[i].first;
      PodShape s;
      s.cpu_milli = k.cpu;
      s.gpu_milli = k.milli < kMilliPerGpu ? k.milli : 0;
      if (k.gpus > 0) s.gpu_resources["nvidia.com/gpu"] = k.gpus;
      if (!k.type.empty()) {
        std::size_t start = 0;
        while (start <= k.type.size()) {
          const std::size_t bar = k.type.find('|', start);
          const std::string m =
              k.type.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
          if (!m.empty()) s.gpu_models.push_back(m);
          if (bar == std::string::npos) break;
          start = bar + 1;
        }
      }
      // A typical shape asks "nvidia.com/gpu"; on pools advertising other names (MIG, shared)
      // the workload's own shapes are used instead (below).
      const double share = list[i].second / total;
      typical_.emplace_back(intern_shape(s), all_taken ? share : share / (cum / total));
    }
    // Pools whose GPUs are not advertised as nvidia.com/gpu: weigh the workload's shapes as they
    // are (every GPU shape, by pod count), so MIG and shared pools get a fragmentation too.
    bool other_names = false;
    for (const PoolTemplate& t : templates_) {
      for (const UnitTemplate& u : t.units)
        other_names |= names_.name(u.resource) != "nvidia.com/gpu";
    }
    if (other_names) {
      std::map<int, double> by_shape;
      double n = 0;
      for (std::size_t i = 0; i < spec.pods.size(); ++i) {
        const PodShape& s = shapes_[static_cast<std::size_t>(pod_shape_[i])];
        bool named = false;
        for (const auto& [name, c] : s.gpu_resources) named |= name != "nvidia.com/gpu";
        if (!named) continue;
        PodShape t = s;
        t.memory_bytes = 0;
        by_shape[intern_shape(t)] += 1;
        n += 1;
      }
      if (n > 0) {
        const double keep = typical_.empty() ? 1.0 : 0.5;  // assumption: equal halves
        for (auto& [id, p] : typical_) p *= 1.0 - keep;
        for (const auto& [id, c] : by_shape) typical_.emplace_back(id, keep * c / n);
      }
    }
  }

  for (std::size_t s = 0; s < shapes_.size(); ++s) {
    for (std::size_t p = 0; p < templates_.size(); ++p) {
      const PodShape& sh = shapes_[s];
      PodSpec pod;
      pod.cpu_milli = sh.cpu_milli;
      pod.memory_bytes = sh.memory_bytes;
      pod.gpu_resources = sh.gpu_resources;
      pod.gpu_milli = sh.gpu_milli;
      pod.gpu_models = sh.gpu_models;
      pod.node_selector = sh.node_selector;
      pod.tolerations = sh.tolerations;
      demands_.push_back(demand_on(pod, spec.pools[p], templates_[p], names_));
    }
  }
  cache_.resize(shapes_.size());
  // The reported fragmentation weighs, per pool, the typical shapes that ask for a GPU and fit
  // an empty node of the pool, renormalised among themselves.
  report_weight_.assign(templates_.size() * typical_.size(), 0.0);
  for (int p = 0; p < pools(); ++p) {
    double eligible = 0;
    for (const auto& [shape, w] : typical_) {
      if (!demand(shape, p).needs.empty() && fits_empty(shape, p)) eligible += w;
    }
    for (std::size_t t = 0; t < typical_.size(); ++t) {
      const int shape = typical_[t].first;
      if (eligible > 0 && !demand(shape, p).needs.empty() && fits_empty(shape, p)) {
        report_weight_[static_cast<std::size_t>(p) * typical_.size() + t] =
            typical_[t].second / eligible;
      }
    }
  }
  // best-fit / worst-fit normalise leftovers by the largest node of the cluster.
  for (const PoolTemplate& t : templates_) {
    max_cpu_milli_ = std::max(max_cpu_milli_, t.cpu_milli);
    max_gpu_milli_ = std::max<std::int64_t>(max_gpu_milli_, t.total_gpu_milli());
  }
  // The tie order, fixed for the run: node names as strings (kube-scheduler compares them so),
  // or a seeded permutation (nodes sorted by a hash of node and tie_seed).
  {
    std::vector<int> order(static_cast<std::size_t>(state_.nodes()));
    for (int i = 0; i < state_.nodes(); ++i) order[static_cast<std::size_t>(i)] = i;
    if (spec.scheduler.tie_break == TieBreak::permutation) {
      std::vector<std::uint64_t> key(order.size());
      for (int i = 0; i < state_.nodes(); ++i) {
        key[static_cast<std::size_t>(i)] = tie_hash(0, i, ~spec.scheduler.tie_seed);
      }
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
      });
    } else {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return state_.node_name[static_cast<std::size_t>(a)] <
               state_.node_name[static_cast<std::size_t>(b)];
      });
    }
    tie_rank_.assign(order.size(), 0);
    for (std::size_t r = 0; r < order.size(); ++r) {
      tie_rank_[static_cast<std::size_t>(order[r])] = static_cast<std::uint64_t>(r);
    }
  }
  const std::size_t nres = static_cast<std::size_t>(std::max(1, names_.size()));
  node_frag_.assign(static_cast<std::size_t>(state_.nodes()) * nres, 0.0);
  node_report_.assign(static_cast<std::size_t>(state_.nodes()) * nres, 0.0);
  node_frag_version_.assign(static_cast<std::size_t>(state_.nodes()), 0);
  frag_by_resource_.assign(nres, 0.0);
  for (int n = 0; n < state_.nodes(); ++n) {
    if (state_.active[static_cast<std::size_t>(n)]) refresh_frag(n);
  }
}

std::int64_t Scheduler::gpu_milli_of(int shape) const {
  for (int p = 0; p < pools(); ++p) {
    const Demand& d = demand(shape, p);
    if (d.possible) return d.gpu_milli_total;
  }
  return 0;
}

double Scheduler::unit_free_milli(int global_unit, int node) const {
  const PoolTemplate& t =
      templates_[static_cast<std::size_t>(state_.pool[static_cast<std::size_t>(node)])];
  const UnitTemplate& u = t.units[static_cast<std::size_t>(global_unit - state_.unit_begin[node])];
  return static_cast<double>(state_.slot_free[static_cast<std::size_t>(global_unit)]) *
         u.gpu_milli / u.slots;
}

bool Scheduler::fits_raw(const Demand& d, const PoolTemplate& tpl, std::int64_t cpu,
                         std::int64_t mem, const int* frees) const {
  if (!d.possible || cpu < d.cpu_milli || mem < d.memory_bytes) return false;
  const int n = static_cast<int>(tpl.units.size());
  for (const Need& need : d.needs) {
    std::int64_t found = 0;
    for (int i = 0; i < n && found < need.count; ++i) {
      if (tpl.units[static_cast<std::size_t>(i)].resource != need.resource) continue;
      if (need.spread) {
        found += frees[i];
      } else if (frees[i] >= need.per_unit) {
        ++found;
      }
    }
    if (found < need.count) return false;
  }
  return true;
}

void Scheduler::choose_units(const Demand& d, int node, const int* frees_in,
                             std::vector<std::pair<int, int>>& takes) const {
  const PoolTemplate& tpl =
      templates_[static_cast<std::size_t>(state_.pool[static_cast<std::size_t>(node)])];
  const int n = static_cast<int>(tpl.units.size());
  const int base = state_.unit_begin[node];
  std::vector<int> frees(frees_in, frees_in + n);
  const SchedulingPolicy policy = spec_->scheduler.policy;
  for (const Need& need : d.needs) {
    std::vector<int> cand;
    for (int i = 0; i < n; ++i) {
      if (tpl.units[static_cast<std::size_t>(i)].resource != need.resource) continue;
      if (frees[static_cast<std::size_t>(i)] >= (need.spread ? 1 : need.per_unit))
        cand.push_back(i);
    }
    if (need.spread) {
      // Replicas of a shared device: the device plugin picks them, not the scheduler's policy,
      // the device with the fewest allocated replicas first (NVIDIA k8s-device-plugin
      // internal/rm/allocate.go distributedAlloc: "replicated devices are distributed across
      // all replicated GPUs equally"); ties: the lowest index (assumption: the plugin's order).
      std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
        const UnitTemplate& ua = tpl.units[static_cast<std::size_t>(a)];
        const UnitTemplate& ub = tpl.units[static_cast<std::size_t>(b)];
        return ua.slots - frees[static_cast<std::size_t>(a)] <
               ub.slots - frees[static_cast<std::size_t>(b)];
      });
    } else if (policy == SchedulingPolicy::best_fit) {
      std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
        return frees[static_cast<std::size_t>(a)] < frees[static_cast<std::size_t>(b)];
      });
    } else if (policy == SchedulingPolicy::worst_fit) {
      std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
        return frees[static_cast<std::size_t>(a)] > frees[static_cast<std::size_t>(b)];
      });
    }
    std::int64_t left = need.count;
    for (int i : cand) {
      if (left == 0) break;
      const int take =
          need.spread
              ? static_cast<int>(std::min<std::int64_t>(left, frees[static_cast<std::size_t>(i)]))
              : need.per_unit;
      frees[static_cast<std::size_t>(i)] -= take;
      takes.emplace_back(base + i, take);
      left -= need.spread ? take : 1;
    }
  }
}

Allocation Scheduler::allocate_on(int shape, int node) const {
  Allocation a;
  a.node = node;
  a.shape = shape;
  const Demand& d = demand(shape, state_.pool[static_cast<std::size_t>(node)]);
  choose_units(d, node, state_.slot_free.data() + state_.unit_begin[node], a.takes);
  return a;
}

double fgd_node_score(double gain, NodeScore mode) {
  if (mode == NodeScore::exact) return gain;
  // FGDScorePlugin: int64(sigmoid(gain / 1000) x framework.MaxNodeScore), truncated.
  return std::trunc(1.0 / (1.0 + std::exp(-gain / 1000.0)) * 100.0);
}

double fit_node_score(double leftover, bool best_fit, NodeScore mode) {
  if (mode == NodeScore::exact) return best_fit ? -leftover : leftover;
  // BestFitScorePlugin: int64((1 - score) x framework.MaxNodeScore).
  return std::trunc((best_fit ? 1.0 - leftover : leftover) * 100.0);
}

double Scheduler::fgd_score(double before, double after) const {
  return fgd_node_score(before - after, spec_->scheduler.node_score);
}

double Scheduler::score(int shape, int node, Allocation* best) {
  const std::size_t nn = static_cast<std::size_t>(node);
  const int pool = state_.pool[nn];
  const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
  const Demand& d = demand(shape, pool);
  if (!demand_fits(state_, tpl, node, d)) return kInfeasible;
  const int n = static_cast<int>(tpl.units.size());
  const int* frees = state_.slot_free.data() + state_.unit_begin[node];
  switch (spec_->scheduler.policy) {
    case SchedulingPolicy::first_fit:
      if (best) *best = allocate_on(shape, node);
      return 0;
    case SchedulingPolicy::best_fit:
    case SchedulingPolicy::worst_fit: {
      // The leftover after placement, each resource over the largest node's capacity, weighed
      // 1/2 each (BestFitScorePlugin: weights 0.5, 0.5 over MaxSpecCpu, MaxSpecGpu).
      double gpu_free = 0;
      for (int i = 0; i < n; ++i) {
        const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
        gpu_free += static_cast<double>(frees[i]) * u.gpu_milli / u.slots;
      }
      // Summed in the reference's order (CPU, then GPU; (free - request) / max x weight) so
      // that the integer scores round alike.
      double left = 0;
      if (max_cpu_milli_ > 0 && tpl.cpu_milli > 0) {
        left += static_cast<double>(state_.cpu_free[nn] - d.cpu_milli) /
                static_cast<double>(max_cpu_milli_) * 0.5;
      }
      if (max_gpu_milli_ > 0) {
        left += (gpu_free - static_cast<double>(d.gpu_milli_total)) /
                static_cast<double>(max_gpu_milli_) * 0.5;
      }
      if (best) *best = allocate_on(shape, node);
      return fit_node_score(left, spec_->scheduler.policy == SchedulingPolicy::best_fit,
                            spec_->scheduler.node_score);
    }
    case SchedulingPolicy::fgd: {
      const std::size_t nres = frag_by_resource_.size();
      double before = 0;
      for (std::size_t r = 0; r < nres; ++r) before += node_frag_[nn * nres + r];
      const std::int64_t cpu_after = state_.cpu_free[nn] - d.cpu_milli;
      int buffer[256];
      const int m = std::min(n, 256);
      // A GPU-share (or single-unit) pod: try each candidate unit in index order and keep the
      // first with the highest score (FGD tries every GPU; units with the same free slots
      // score alike, so each free value is tried once).
      const bool single = d.needs.size() == 1 && d.needs[0].count == 1 && !d.needs[0].spread;
      double best_score = kInfeasible;
      if (single) {
        const Need& need = d.needs[0];
        std::vector<std::uint32_t> seen;
        for (int i = 0; i < m; ++i) {
          const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
          if (u.resource != need.resource || frees[i] < need.per_unit) continue;
          const std::uint32_t code = static_cast<std::uint32_t>(frees[i]);
          if (std::find(seen.begin(), seen.end(), code) != seen.end()) continue;
          seen.push_back(code);
          std::copy(frees, frees + m, buffer);
          buffer[i] -= need.per_unit;
          const double* v = frag_of(pool, cpu_after, buffer);
          double after = 0;
          for (std::size_t r = 0; r < nres; ++r) after += v[r];
          const double s = fgd_score(before, after);
          if (s > best_score) {
            best_score = s;
            if (best) {
              best->node = node;
              best->shape = shape;
              best->takes.assign(1, {state_.unit_begin[node] + i, need.per_unit});
            }
          }
        }
        return best_score;
      }
      Allocation a = allocate_on(shape, node);
      std::copy(frees, frees + m, buffer);
      for (const auto& [u, take] : a.takes) buffer[u - state_.unit_begin[node]] -= take;
      const double* v = frag_of(pool, cpu_after, buffer);
      double after = 0;
      for (std::size_t r = 0; r < nres; ++r) after += v[r];
      if (best) *best = std::move(a);
      return fgd_score(before, after);
    }
  }
  return kInfeasible;
}

bool Scheduler::choose(int shape, Allocation& out) {
  std::vector<Cached>& cache = cache_[static_cast<std::size_t>(shape)];
  if (cache.empty()) cache.resize(static_cast<std::size_t>(state_.nodes()));
  int best_node = -1;
  double best_score = kInfeasible;
  ++calls_;
  const bool first_fit = spec_->scheduler.policy == SchedulingPolicy::first_fit;
  const bool per_decision = spec_->scheduler.tie_break == TieBreak::random;
  const std::uint64_t tie_seed = spec_->scheduler.tie_seed;
  // The tie rank of a node: its place in name order or in the run's permutation (tie_rank_),
  // or a hash of (decision, node, seed).
  auto rank = [&](int node) {
    return per_decision ? tie_hash(calls_, node, tie_seed)
                        : tie_rank_[static_cast<std::size_t>(node)];
  };
  std::uint64_t best_tie = 0;
  const int nodes = state_.nodes();
  for (int node = 0; node < nodes; ++node) {
    const std::size_t nn = static_cast<std::size_t>(node);
    if (!state_.active[nn]) continue;
    Cached& c = cache[nn];
    if (c.version != state_.version[nn] + 1) {
      c.score = score(shape, node, nullptr);
      c.version = state_.version[nn] + 1;
    }
    if (c.score == kInfeasible) continue;
    if (first_fit) {
      best_node = node;
      break;
    }
    if (c.score > best_score) {
      best_score = c.score;
      best_node = node;
      best_tie = rank(node);
    } else if (c.score == best_score) {
      const std::uint64_t r = rank(node);
      if (r < best_tie) {
        best_tie = r;
        best_node = node;
      }
    }
  }
  if (best_node < 0) return false;
  out = Allocation{};
  score(shape, best_node, &out);
  return true;
}

void Scheduler::apply(int shape, const Allocation& a) {
  const std::size_t nn = static_cast<std::size_t>(a.node);
  const Demand& d = demand(shape, state_.pool[nn]);
  state_.cpu_free[nn] -= d.cpu_milli;
  state_.memory_free[nn] -= d.memory_bytes;
  for (const auto& [u, take] : a.takes) state_.slot_free[static_cast<std::size_t>(u)] -= take;
  state_.pods_on[nn] += 1;
  state_.version[nn] += 1;
  refresh_frag(a.node);
}

void Scheduler::release(int shape, const Allocation& a) {
  const std::size_t nn = static_cast<std::size_t>(a.node);
  const Demand& d = demand(shape, state_.pool[nn]);
  state_.cpu_free[nn] += d.cpu_milli;
  state_.memory_free[nn] += d.memory_bytes;
  for (const auto& [u, take] : a.takes) state_.slot_free[static_cast<std::size_t>(u)] += take;
  state_.pods_on[nn] -= 1;
  state_.version[nn] += 1;
  refresh_frag(a.node);
}

void Scheduler::set_active(int node, bool active) {
  state_.active[static_cast<std::size_t>(node)] = active;
  state_.version[static_cast<std::size_t>(node)] += 1;
  refresh_frag(node);
}

}  // namespace gpumux::cluster
