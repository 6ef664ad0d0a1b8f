#include "models/cluster/node_state.hpp"

#include "models/gpu/mig_layout.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "models/config/profile_loader.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::cluster {

int ResourceNames::intern(const std::string& name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(names_.size());
  names_.push_back(name);
  ids_.emplace(name, id);
  return id;
}

int ResourceNames::find(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

const DeviceProfile* find_profile(const std::string& gpu_model) {
  if (gpu_model.empty()) return nullptr;
  std::string name;
  for (const std::string& known : embedded_profile_names()) {
    if (known == gpu_model) name = known;
  }
  if (name.empty()) name = embedded_profile_for_alias(gpu_model);
  if (name.empty()) return nullptr;
  return &load_device_profile(name);
}

// "2g.20gb" -> {2, 20}; false when malformed.
bool parse_mig_name(const std::string& profile, int& slices, int& gb) {
  const auto g = profile.find('g');
  const auto dot = profile.find('.');
  if (g == std::string::npos || dot == std::string::npos || g == 0 || dot != g + 1) return false;
  try {
    slices = std::stoi(profile.substr(0, g));
    gb = std::stoi(profile.substr(dot + 1));
  } catch (...) {
    return false;
  }
  return slices > 0 && gb > 0;
}

}  // namespace

bool Toleration::tolerates(const Taint& taint) const {
  if (!effect.empty() && effect != taint.effect) return false;
  if (key.empty()) return op == "Exists";
  if (key != taint.key) return false;
  return op == "Exists" || value == taint.value;
}

std::int64_t gpu_model_memory_bytes(const std::string& gpu_model) {
  if (const DeviceProfile* p = find_profile(gpu_model)) return p->memory;
  // source: FGD simulator pkg/type/open-gpu-share/utils/const.go MapGpuTypeMemoryMiB.
  static const std::pair<const char*, std::int64_t> kOpenb[] = {
      {"P4", 7611},       {"T4", 15109},   {"V100M16", 16160}, {"P100", 16280}, {"A10", 22731},
      {"V100M32", 32510}, {"A100", 81251}, {"G1", 10000},      {"G2", 20000},   {"G3", 30000}};
  for (const auto& [name, mib] : kOpenb) {
    if (gpu_model == name) return mib * kMiB;
  }
  return 0;
}

PoolTemplate advertise(const NodePoolSpec& spec, int pool_index, ResourceNames& names) {
  const GpuSharingConfig& sh = spec.sharing;
  PoolTemplate out;
  out.pool = pool_index;
  out.gpus = spec.gpus_per_node;
  out.cpu_milli = spec.cpu_milli;
  out.memory_bytes = spec.memory_bytes;
  out.gpu_memory_bytes = gpu_model_memory_bytes(spec.gpu_model);
  out.fractional = sh.sharing == SharingKind::fractional;
  out.fail_requests_greater_than_one = sh.fail_requests_greater_than_one;
  const DeviceProfile* profile = find_profile(spec.gpu_model);
  const int compute_slices_per_gpu = 7;  // source: NVIDIA MIG user guide (A100/H100/H200)

  // The base (unshared) units, named as the plugin's migStrategy names them.
  struct Base {
    std::string name;
    int gpu;
    int gpu_milli;
    double gpu_fraction;
    std::int64_t memory;
    std::string profile;
  };
  std::vector<Base> base;
  for (int g = 0; g < spec.gpus_per_node; ++g) {
    const std::vector<std::string>* layout = &sh.mig_devices;
    auto by_index = sh.mig_devices_by_index.find(g);
    if (by_index != sh.mig_devices_by_index.end()) layout = &by_index->second;
    const bool mig = sh.mig_strategy != MigStrategy::none && !layout->empty() && !out.fractional;
    if (!mig) {
      base.push_back({"nvidia.com/gpu", g, kMilliPerGpu, 1.0, out.gpu_memory_bytes, ""});
      continue;
    }
    for (const std::string& p : *layout) {
      int slices = 0, gb = 0;
      if (!parse_mig_name(p, slices, gb)) {
        throw InputError(sh.where, fmt::format("pool {}: MIG profile '{}' is not of the form "
                                               "<N>g.<M>gb",
                                               spec.name, p));
      }
      std::int64_t memory = static_cast<std::int64_t>(gb) * 1000 * 1000 * 1000;  // nominal
      int milli = kMilliPerGpu * slices / compute_slices_per_gpu;
      double fraction = mig_cost_fraction(slices, compute_slices_per_gpu);
      if (profile != nullptr && !profile->mig_profiles.empty()) {
        const MigProfileSpec* m = profile->find_mig_profile(p);
        if (m == nullptr) {
          throw InputError(sh.where, fmt::format("pool {}: GPU model {} has no MIG profile '{}'",
                                                 spec.name, spec.gpu_model, p));
        }
        memory = m->memory;
        const int total =
            profile->compute_slices > 0 ? profile->compute_slices : compute_slices_per_gpu;
        milli = kMilliPerGpu * m->compute_slices / std::max(1, total);
        fraction = mig_cost_fraction(m->compute_slices, total);
      }
      const std::string name = sh.mig_strategy == MigStrategy::single
                                   ? std::string("nvidia.com/gpu")
                                   : fmt::format("nvidia.com/mig-{}", p);
      base.push_back({name, g, milli, fraction, memory, p});
    }
  }
  for (const Base& b : base) {
    UnitTemplate u;
    u.gpu = b.gpu;
    u.gpu_milli = b.gpu_milli;
    u.gpu_fraction = b.gpu_fraction;
    u.memory_bytes = b.memory;
    u.profile = b.profile;
    u.slots = out.fractional ? kMilliPerGpu : 1;
    std::string advertised = b.name;
    if (!out.fractional &&
        (sh.sharing == SharingKind::time_slicing || sh.sharing == SharingKind::mps)) {
      for (const SharedResource& r : sh.shared) {
        if (r.name != b.name) continue;
        u.slots = std::max(1, r.replicas);
        advertised = r.advertised_name.empty()
                         ? (sh.rename_by_default ? fmt::format("{}.shared", r.name) : r.name)
                         : r.advertised_name;
      }
    }
    u.resource = names.intern(advertised);
    out.units.push_back(u);
  }
  // Alibaba GPU share's resource (the openb reader's kGpuMilliResource): milli-GPUs of one GPU.
  const int milli_resource = out.fractional ? names.intern(kGpuShareResource) : -1;
  out.capacity.assign(static_cast<std::size_t>(names.size()), 0);
  if (milli_resource >= 0) {
    out.capacity[static_cast<std::size_t>(milli_resource)] =
        static_cast<std::int64_t>(out.units.size()) * kMilliPerGpu;
  }
  for (const UnitTemplate& u : out.units)
    out.capacity[static_cast<std::size_t>(u.resource)] += u.slots;
  if (out.fractional) {
    // A fractional GPU is advertised as one nvidia.com/gpu (whole GPUs) plus its milli-GPUs.
    for (const UnitTemplate& u : out.units) {
      out.capacity[static_cast<std::size_t>(u.resource)] += 1 - u.slots;
    }
  }
  return out;
}

std::vector<std::string> advertised_lines(const ClusterSpec& spec) {
  ResourceNames names;
  std::vector<PoolTemplate> templates;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    templates.push_back(advertise(spec.pools[p], static_cast<int>(p), names));
  }
  std::vector<std::string> out;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    const NodePoolSpec& pool = spec.pools[p];
    std::string line = fmt::format("{}: {} node(s)", pool.name, pool.count);
    if (pool.gpus_per_node > 0) line += fmt::format(" x {} {}", pool.gpus_per_node, pool.gpu_model);
    std::string res;
    for (int r = 0; r < names.size(); ++r) {
      const std::int64_t c = templates[p].capacity_of(r);
      if (c > 0) res += fmt::format("{}{}: {}", res.empty() ? "" : ", ", names.name(r), c);
    }
    out.push_back(res.empty() ? line : fmt::format("{}, advertises {}", line, res));
  }
  return out;
}

Demand demand_on(const PodSpec& pod, const NodePoolSpec& spec, const PoolTemplate& pool,
                 const ResourceNames& names) {
  Demand d;
  d.cpu_milli = pod.cpu_milli;
  d.memory_bytes = pod.memory_bytes;
  std::map<std::string, std::int64_t> requests = pod.gpu_resources;
  // A GPU share (alibabacloud.com/gpu-milli: m, or gpu_milli) is one nvidia.com/gpu of
  // pod.gpu_milli on a fractional pool.
  auto share = requests.find(kGpuShareResource);
  int share_milli = pod.gpu_milli;
  if (share != requests.end()) {
    // A share of a whole GPU or more is a whole GPU (the branch below): clamped before it
    // becomes an int, never truncated.
    if (share_milli == 0) {
      share_milli = static_cast<int>(std::clamp<std::int64_t>(share->second, 0, kMilliPerGpu));
    }
    requests.erase(share);
    if (pool.fractional) {
      requests["nvidia.com/gpu"] = 1;
    } else {
      d.possible = false;
      d.refused_resource = names.find(kGpuShareResource);
      d.refused_name = kGpuShareResource;
    }
  }
  if (requests.empty() && share_milli > 0 && pool.fractional) requests["nvidia.com/gpu"] = 1;
  const bool any_gpu =
      std::any_of(requests.begin(), requests.end(), [](const auto& kv) { return kv.second > 0; });
  if (any_gpu && !pod.gpu_models.empty() &&
      std::find(pod.gpu_models.begin(), pod.gpu_models.end(), spec.gpu_model) ==
          pod.gpu_models.end()) {
    d.possible = false;
    d.model_mismatch = true;
  }
  for (const auto& [key, value] : pod.node_selector) {
    const auto label = spec.labels.find(key);
    if (label == spec.labels.end() || label->second != value) {
      d.possible = false;
      d.model_mismatch = true;
    }
  }
  for (const Taint& taint : spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    // ExtendedResourceToleration: a pod requesting the extended resource tolerates its taint.
    bool tolerated = pod.gpu_resources.count(taint.key) > 0 && pod.gpu_resources.at(taint.key) > 0;
    for (const Toleration& t : pod.tolerations) tolerated = tolerated || t.tolerates(taint);
    if (!tolerated && d.untolerated_taint.empty()) {
      d.possible = false;
      d.untolerated_taint = fmt::format("{}: {}", taint.key, taint.value);
    }
  }
  for (const auto& [name, count] : requests) {
    if (count <= 0) continue;
    const int r = names.find(name);
    const UnitTemplate* unit = nullptr;
    for (const UnitTemplate& u : pool.units) {
      if (u.resource == r) {
        unit = &u;
        break;
      }
    }
    if (r < 0 || unit == nullptr) {
      d.possible = false;
      if (d.refused_resource < 0) {
        d.refused_resource = r;
        d.refused_name = name;
      }
      continue;
    }
    Need n;
    n.resource = r;
    if (pool.fractional) {
      if (share_milli > 0 && share_milli < kMilliPerGpu && count == 1) {
        n.count = 1;
        n.per_unit = share_milli;
        d.gpu_milli_total += share_milli;
      } else {
        n.count = count;
        n.per_unit = kMilliPerGpu;
        d.gpu_milli_total = checked::add_saturating(d.gpu_milli_total,
                                                    checked::mul_saturating(count, kMilliPerGpu));
      }
    } else if (unit->slots == 1) {
      n.count = count;
      n.per_unit = 1;
      d.gpu_milli_total = checked::add_saturating(d.gpu_milli_total,
                                                  checked::mul_saturating(count, unit->gpu_milli));
    } else {
      if (pool.fail_requests_greater_than_one && count > 1 && d.admission_error.empty()) {
        // Scheduled by its count like any request, failed by the kubelet (header).
        d.admission_error = fmt::format(
            "Allocate failed due to rpc error: code = Unknown desc = request for '{}: {}' too "
            "large: maximum request size for shared resources is 1, which is unexpected",
            name, count);
      }
      n.count = count;
      n.per_unit = 1;
      n.spread = true;
      d.gpu_milli_total = checked::add_saturating(
          d.gpu_milli_total, checked::mul_saturating(count, unit->gpu_milli) / unit->slots);
    }
    d.needs.push_back(n);
  }
  return d;
}

ClusterState make_state(const std::vector<NodePoolSpec>& pools,
                        const std::vector<PoolTemplate>& templates) {
  ClusterState s;
  s.unit_begin.push_back(0);
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const NodePoolSpec& spec = pools[p];
    int slots_n = spec.count;
    int active_n = spec.count;
    if (spec.autoscaling) {
      slots_n = std::max(slots_n, spec.autoscaling->max_nodes);
      active_n = std::max(active_n, spec.autoscaling->min_nodes);
    }
    for (int i = 0; i < slots_n; ++i) {
      s.pool.push_back(static_cast<int>(p));
      s.active.push_back(i < active_n);
      s.cpu_free.push_back(templates[p].cpu_allocatable());
      s.memory_free.push_back(templates[p].memory_allocatable());
      for (const UnitTemplate& u : templates[p].units) s.slot_free.push_back(u.slots);
      s.unit_begin.push_back(static_cast<int>(s.slot_free.size()));
      s.pods_on.push_back(0);
      s.version.push_back(0);
      s.node_name.push_back(static_cast<std::size_t>(i) < spec.node_names.size()
                                ? spec.node_names[static_cast<std::size_t>(i)]
                                : fmt::format("{}-{}", spec.name, i));
    }
  }
  return s;
}

bool need_fits(const ClusterState& state, const PoolTemplate& tpl, int node, const Need& need) {
  const int b = state.unit_begin[node];
  const int n = state.units(node);
  std::int64_t found = 0;
  for (int i = 0; i < n; ++i) {
    if (tpl.units[static_cast<std::size_t>(i)].resource != need.resource) continue;
    const int f = state.slot_free[static_cast<std::size_t>(b + i)];
    if (need.spread) {
      found += f;
    } else if (f >= need.per_unit) {
      ++found;
    }
    if (found >= need.count) return true;
  }
  return found >= need.count;
}

bool demand_fits(const ClusterState& state, const PoolTemplate& tpl, int node, const Demand& d) {
  if (!d.possible) return false;
  if (state.cpu_free[node] < d.cpu_milli || state.memory_free[node] < d.memory_bytes) return false;
  for (const Need& n : d.needs) {
    if (!need_fits(state, tpl, node, n)) return false;
  }
  return true;
}

}  // namespace gpumux::cluster
