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
    const double threshold = spec.scheduler.fgd_popularity_threshold / 100.0 * total;
    const std::size_t step = 10;  // DefaultTypicalPodIncreaseStep = 10
    std::size_t taken = 0;
    double cum = 0;
    while (cum < threshold && taken < list.size()) {
      const std::size_t until = std::min(list.size(), taken + step);
      for (; taken < until; ++taken) cum += list[taken].second;
    }
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
      typical_.emplace_back(intern_shape(s), cum > 0 ? list[i].second / cum : 0.0);
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
  const std::size_t nres = static_cast<std::size_t>(std::max(1, names_.size()));
  node_frag_.assign(static_cast<std::size_t>(state_.nodes()) * nres, 0.0);
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
  memo_values_.resize(off + nres, 0.0);
  double* vals = memo_values_.data() + off;
  for (const auto& [shape, p] : typical_) {
    const Demand& d = demand(shape, pool);
    const bool fits = fits_raw(d, tpl, cpu, kNoMemoryLimit, frees);
    for (int i = 0; i < n; ++i) {
      const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
      if (frees[i] == 0) continue;
      bool usable = false;
      if (fits) {
        for (const Need& need : d.needs) {
          if (need.resource == u.resource && frees[i] >= (need.spread ? 1 : need.per_unit)) {
            usable = true;
          }
        }
      }
      if (!usable) {
        vals[u.resource] += p * static_cast<double>(frees[i]) * u.gpu_milli / u.slots;
      }
    }
  }
  memo_index_.emplace(key_buffer_, off);
  return vals;
}

void Scheduler::refresh_frag(int node) {
  const std::size_t nres = frag_by_resource_.size();
  double* mine = node_frag_.data() + static_cast<std::size_t>(node) * nres;
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] -= mine[r];
  if (state_.active[static_cast<std::size_t>(node)]) {
    const int pool = state_.pool[static_cast<std::size_t>(node)];
    const double* v = frag_of(pool, state_.cpu_free[static_cast<std::size_t>(node)],
                              state_.slot_free.data() + state_.unit_begin[node]);
    for (std::size_t r = 0; r < nres; ++r) mine[r] = v[r];
  } else {
    for (std::size_t r = 0; r < nres; ++r) mine[r] = 0;
  }
  for (std::size_t r = 0; r < nres; ++r) frag_by_resource_[r] += mine[r];
}

double Scheduler::node_fragmentation(int node) {
  const std::size_t nres = frag_by_resource_.size();
  double sum = 0;
  for (std::size_t r = 0; r < nres; ++r)
    sum += node_frag_[static_cast<std::size_t>(node) * nres + r];
  return sum;
}

double Scheduler::fragmentation_total() {
  // Summed afresh from the per-node values so rounding does not accumulate.
  double sum = 0;
  for (double v : node_frag_) sum += v;
  return sum;
}

std::vector<double> Scheduler::fragmentation_by_resource() {
  const std::size_t nres = frag_by_resource_.size();
  std::vector<double> out(nres, 0.0);
  for (std::size_t i = 0; i < node_frag_.size(); ++i) out[i % nres] += node_frag_[i];
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
      double gpu_free = 0;
      for (int i = 0; i < n; ++i) {
        const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
        gpu_free += static_cast<double>(frees[i]) * u.gpu_milli / u.slots;
      }
      double left = 0;
      if (tpl.gpus > 0) left += (gpu_free - d.gpu_milli_total) / tpl.total_gpu_milli();
      if (tpl.cpu_milli > 0) {
        left += static_cast<double>(state_.cpu_free[nn] - d.cpu_milli) / tpl.cpu_milli;
      }
      if (best) *best = allocate_on(shape, node);
      return spec_->scheduler.policy == SchedulingPolicy::best_fit ? -left : left;
    }
    case SchedulingPolicy::fgd: {
      const std::size_t nres = frag_by_resource_.size();
      double before = 0;
      for (std::size_t r = 0; r < nres; ++r) before += node_frag_[nn * nres + r];
      const std::int64_t cpu_after = state_.cpu_free[nn] - d.cpu_milli;
      int buffer[256];
      const int m = std::min(n, 256);
      // A GPU-share (or single-unit) pod: try each distinct candidate unit (FGD tries every GPU).
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
          const double s = before - after;
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
      return before - after;
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
  const bool hashed = spec_->scheduler.policy != SchedulingPolicy::first_fit;
  const std::uint64_t tie_seed = spec_->scheduler.tie_seed;
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
    if (c.score > best_score) {
      best_score = c.score;
      best_node = node;
      best_tie = hashed ? tie_hash(calls_, node, tie_seed) : 0;
    } else if (hashed && c.score == best_score && best_node >= 0) {
      const std::uint64_t h = tie_hash(calls_, node, tie_seed);
      if (h < best_tie) {
        best_tie = h;
        best_node = node;
      }
    }
    if (best_node >= 0 && spec_->scheduler.policy == SchedulingPolicy::first_fit) break;
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
