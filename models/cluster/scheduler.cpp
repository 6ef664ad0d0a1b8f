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
constexpr std::int64_t kNoMemoryLimit = std::numeric_limits<std::int64_t>::max();

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

const double* Scheduler::frag_of(int pool, std::int64_t cpu, const int* frees) {
  const PoolTemplate& tpl = templates_[static_cast<std::size_t>(pool)];
  const int n = static_cast<int>(tpl.units.size());
  const std::size_t nres = static_cast<std::size_t>(std::max(1, names_.size()));
  // Key: pool, CPU, the sorted (resource, free) codes (units of one resource are alike).
  std::uint32_t codes[256];
  const int m = std::min(n, 256);
  for (int i = 0; i < m; ++i) {
    codes[i] = (static_cast<std::uint32_t>(tpl.units[static_cast<std::size_t>(i)].resource) << 16) |
               static_cast<std::uint32_t>(frees[i] & 0xffff);
  }
  std::sort(codes, codes + m);
  key_buffer_.resize(sizeof(int) + sizeof(std::int64_t) + m * sizeof(std::uint32_t));
  char* k = key_buffer_.data();
  std::memcpy(k, &pool, sizeof(int));
  std::memcpy(k + sizeof(int), &cpu, sizeof(std::int64_t));
  std::memcpy(k + sizeof(int) + sizeof(std::int64_t), codes, m * sizeof(std::uint32_t));
  auto it = memo_index_.find(key_buffer_);
  if (it != memo_index_.end()) return memo_values_.data() + it->second;

  const std::size_t off = memo_values_.size();
  memo_values_.resize(off + 2 * nres, 0.0);
  double* vals = memo_values_.data() + off;  // [0, nres): FGD's measure; [nres, 2 nres): report
  const std::size_t typical = typical_.size();
  if (tpl.fractional) {
    // The reference's own arithmetic (pkg/utils/frag.go NodeGpuShareFragAmount): per typical
    // pod, in order, freq x the integer milli-GPUs into its quadrant; F = the quadrants summed
    // in index order except Q3. The same doubles as the reference, so that an unchanged F
    // gives a gain of exactly 0 and the integer scores round alike.
    enum { kQ1, kQ2, kQ3, kQ4, kXL, kXR, kNA, kQuadrants };
    double quadrant[kQuadrants] = {};
    std::int64_t left_total = 0;
    for (int i = 0; i < n; ++i) left_total += frees[i];  // slots are milli-GPUs here
    for (const auto& [shape, p] : typical_) {
      const Demand& d = demand(shape, pool);
      const bool cpu_fits = cpu >= d.cpu_milli;
      if (d.needs.empty() && d.possible) {  // a CPU pod
        quadrant[cpu_fits ? kXL : kXR] += p * static_cast<double>(left_total);
        continue;
      }
      if (d.model_mismatch) {
        quadrant[kNA] += p * static_cast<double>(left_total);
        continue;
      }
      if (d.needs.empty()) {  // asks for something the pool does not advertise
        quadrant[cpu_fits ? kQ2 : kQ1] += p * static_cast<double>(left_total);
        continue;
      }
      const Need& need = d.needs[0];
      std::int64_t hosts = 0, frag = 0;
      for (int i = 0; i < n; ++i) {
        if (frees[i] >= need.per_unit) {
          ++hosts;
        } else {
          frag += frees[i];
        }
      }
      if (d.possible && hosts >= need.count) {
        if (cpu_fits) {
          quadrant[kQ2] += p * static_cast<double>(frag);
          quadrant[kQ3] += p * static_cast<double>(left_total - frag);
        } else {
          quadrant[kQ4] += p * static_cast<double>(left_total);
        }
      } else {
        quadrant[cpu_fits ? kQ2 : kQ1] += p * static_cast<double>(left_total);
      }
    }
    double f = 0;
    for (int q = 0; q < kQuadrants; ++q) {
      if (q != kQ3) f += quadrant[q];
    }
    vals[tpl.units.empty() ? 0 : static_cast<std::size_t>(tpl.units[0].resource)] = f;
  }
  for (std::size_t t = 0; t < typical; ++t) {
    const auto& [shape, p] = typical_[t];
    const Demand& d = demand(shape, pool);
    const bool fits = fits_raw(d, tpl, cpu, kNoMemoryLimit, frees);
    const double report_p = report_weight_[static_cast<std::size_t>(pool) * typical + t];
    for (int i = 0; i < n; ++i) {
      const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
      if (frees[i] == 0) continue;
      bool asked = false, usable = false;
      for (const Need& need : d.needs) {
        if (need.resource != u.resource) continue;
        asked = true;
        usable |= fits && frees[i] >= (need.spread ? 1 : need.per_unit);
      }
      if (usable) continue;
      const double free_milli = static_cast<double>(frees[i]) * u.gpu_milli / u.slots;
      if (!tpl.fractional) vals[u.resource] += p * free_milli;
      if (asked && report_p > 0) vals[nres + u.resource] += report_p * free_milli;
    }
  }
  memo_index_.emplace(key_buffer_, off);
  return vals;
}

void Scheduler::refresh_frag(int node) {
  const std::size_t nres = frag_by_resource_.size();
  double* mine = node_frag_.data() + static_cast<std::size_t>(node) * nres;
  double* report = node_report_.data() + static_cast<std::size_t>(node) * nres;
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] -= report[r];
  if (state_.active[static_cast<std::size_t>(node)]) {
    const int pool = state_.pool[static_cast<std::size_t>(node)];
    const double* v = frag_of(pool, state_.cpu_free[static_cast<std::size_t>(node)],
                              state_.slot_free.data() + state_.unit_begin[node]);
    for (std::size_t r = 0; r < nres; ++r) {
      mine[r] = v[r];
      report[r] = v[nres + r];
    }
  } else {
    for (std::size_t r = 0; r < nres; ++r) mine[r] = report[r] = 0;
  }
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] += report[r];
}

double Scheduler::fgd_measure(int node) const {
  const std::size_t nres = frag_by_resource_.size();
  double sum = 0;
  for (std::size_t r = 0; r < nres; ++r)
    sum += node_frag_[static_cast<std::size_t>(node) * nres + r];
  return sum;
}

double Scheduler::node_fragmentation(int node) const {
  const std::size_t nres = frag_by_resource_.size();
  double sum = 0;
  for (std::size_t r = 0; r < nres; ++r)
    sum += node_report_[static_cast<std::size_t>(node) * nres + r];
  return sum;
}

double Scheduler::fragmentation_total() const {
  // Summed afresh from the per-node values so rounding does not accumulate.
  double sum = 0;
  for (double v : node_report_) sum += v;
  return sum;
}

std::vector<double> Scheduler::fragmentation_by_resource() const {
  const std::size_t nres = frag_by_resource_.size();
  std::vector<double> out(nres, 0.0);
  for (std::size_t i = 0; i < node_report_.size(); ++i) out[i % nres] += node_report_[i];
  return out;
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
  // Fragmented: in total, enough of everything is free for the pod (or gang).
  if (some_pool_possible) {
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
