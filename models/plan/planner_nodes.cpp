// Node platforms of gpumux plan (gke, device-plugin, mig-parted; docs/plan.md, "Platforms"): the
// machine types a group may be bought as, the variants of a node (one configuration for all its
// GPUs: whole GPUs or one MIG partition size, one sharing mode and one client count), and the
// balanced split of a group over the node's devices.
//
// The placement law (models/cluster/scheduler.hpp, the device plugin's): a pod asking one
// nvidia.com/gpu goes, on its node, to the device with the most free replicas (ties: the lowest
// index), and an exclusive device is taken in index order. So the pods of a node end up
// balanced over its D devices: with s pods, min(s, D) devices hold floor(s/d) or ceil(s/d) each.
// That law is gpumux's replay, not a guarantee: Kubernetes promises no device order (the kubelet
// takes any free slot, and a restarted pod can move). So a shared node variant is feasible iff
// every block any assignment can make (Planner::assignable_blocks: each set of its pods that
// fits one device's slots) is a feasible unit, and a balanced split of them is what the plan
// shows and the replay reproduces (PlanNode::pod_order). An exclusive variant (dedicated, MIG)
// puts each pod alone on one of identical devices: any assignment is the same.
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/gpu/device_profile.hpp"
#include "models/plan/machine_types.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux {
namespace planner_detail {

double Planner::option_price(int o) const {
  if (node_mode()) return machines_[static_cast<std::size_t>(o)].price;
  return models_[static_cast<std::size_t>(o)].spec.cost_per_hour;
}

int Planner::option_model(int o) const {
  return node_mode() ? machines_[static_cast<std::size_t>(o)].model : o;
}

std::vector<Variant> Planner::variants_for(Mask group, int option,
                                           const std::vector<bool>& families) const {
  return node_mode() ? node_variants(group, option, families) : variants(group, families);
}

void Planner::build_machines() {
  std::vector<std::string> names;
  for (const ModelInfo& m : models_) names.push_back(m.profile->name);
  for (const MachineType* type : plan_machine_types(plan_, names)) {
    for (std::size_t m = 0; m < models_.size(); ++m) {
      if (models_[m].profile->name != type->gpu_model) continue;
      Machine machine;
      machine.name = type->name;
      machine.model = static_cast<int>(m);
      machine.gpus = type->gpus;
      machine.price = type->host_cost_per_hour + type->gpus * models_[m].spec.cost_per_hour;
      machines_.push_back(machine);
    }
  }
  std::stable_sort(machines_.begin(), machines_.end(),
                   [](const Machine& a, const Machine& b) { return a.price < b.price; });
}

int Planner::instances_per_gpu(int model, int profile) const {
  const ModelInfo& m = models_[static_cast<std::size_t>(model)];
  int k = -1;
  for (std::size_t i = 0; i < m.mig.size(); ++i) {
    if (m.mig[i] == profile) k = static_cast<int>(i);
  }
  if (k < 0) return 0;
  int count = 0;
  for (int layout = 0; layout >= 0;) {
    layout = m.next[static_cast<std::size_t>(layout)][static_cast<std::size_t>(k)];
    if (layout >= 0) ++count;
  }
  return count;
}

int Planner::devices_of(int machine, const Variant& v) const {
  const Machine& m = machines_[static_cast<std::size_t>(machine)];
  return m.gpus * (v.profile < 0 ? 1 : instances_per_gpu(m.model, v.profile));
}

std::vector<Variant> Planner::node_variants(Mask group, int machine,
                                            const std::vector<bool>& families) const {
  std::vector<Variant> out;
  const Machine& m = machines_[static_cast<std::size_t>(machine)];
  const int size = popcount(group);
  const auto clients = [&](int devices) { return (size + devices - 1) / devices; };
  const int max_clients = platform_ == Platform::gke ? kGkeMaxSharedClients : 1 << 20;
  if (size <= m.gpus && (families[kDedicated] || size == 1)) out.push_back({kDedicated, 0, -1});
  const int whole = clients(m.gpus);
  if (whole >= 2 && whole <= max_clients) {
    if (families[kTimeSlicing]) out.push_back({kTimeSlicing, whole, -1});
    if (families[kMps]) out.push_back({kMps, whole, -1});
  }
  for (const int p : models_[static_cast<std::size_t>(m.model)].mig) {
    const int devices = m.gpus * instances_per_gpu(m.model, p);
    if (devices == 0) continue;
    if (families[kMig] && size <= devices) out.push_back({kMig, 0, p});
    const int n = clients(devices);
    if (n < 2 || n > max_clients) continue;
    if (families[kMigTs]) out.push_back({kMigTs, n, p});
    // MPS inside MIG: only where the platform runs it (not the NVIDIA device plugin, not GKE).
    if (families[kMigMps] && platform_ == Platform::mig_parted) out.push_back({kMigMps, n, p});
  }
  return out;
}

bool Planner::search_split(Mask remaining, int big_left, int big, int small, int machine,
                           const Variant& v, bool optimistic, std::vector<Block>& blocks,
                           std::vector<UnitKey>& pending, std::string& reason,
                           std::set<std::pair<Mask, int>>& failed) {
  if (remaining == 0) return true;
  if (failed.count({remaining, big_left})) return false;
  const int model = machines_[static_cast<std::size_t>(machine)].model;
  const int first = lowest(remaining);
  const Mask rest = remaining & ~(Mask{1} << first);
  std::vector<int> sizes;
  if (big_left > 0) sizes.push_back(big);
  if (small > 0 && small != big && popcount(remaining) - big_left * big > 0) sizes.push_back(small);
  for (const int size : sizes) {
    for (Mask s = rest;; s = (s - 1) & rest) {
      if (popcount(s) == size - 1) {
        const Mask block = s | (Mask{1} << first);
        const UnitKey key = unit_key(block, model, v.profile, v);
        const UnitInfo& info = unit(key);
        if (info.verdict == Verdict::pruned || info.verdict == Verdict::infeasible) {
          const int rank = 1 + (info.verdict == Verdict::infeasible ? 1 : 0);
          if (rank > reason_rank_) {
            reason_rank_ = rank;
            simulated_failure_ = info.verdict == Verdict::infeasible;
            reason = std::string(kFamilyNames[v.family]) + " " + device_label(key) + "{" +
                     join_names(scenario_.tenants, block) + "}: " + info.reason;
          }
        } else if (info.verdict == Verdict::feasible || optimistic) {
          blocks.push_back({block, v.profile, 0});
          const std::size_t pending_size = pending.size();
          if (info.verdict == Verdict::unknown) pending.push_back(key);
          if (search_split(remaining & ~block, big_left - (size == big ? 1 : 0), big, small,
                           machine, v, optimistic, blocks, pending, reason, failed)) {
            return true;
          }
          blocks.pop_back();
          pending.resize(pending_size);
        }
      }
      if (s == 0) break;
    }
  }
  failed.insert({remaining, big_left});
  return false;
}

std::vector<Mask> Planner::assignable_blocks(Mask group, int machine, const Variant& v) const {
  std::vector<Mask> out;
  if (&strategy_of(v) == &exclusive_strategy() || v.replicas <= 0) return out;
  const int pods = popcount(group), devices = devices_of(machine, v), clients = v.replicas;
  const int fewest = std::max(1, pods - (devices - 1) * clients);
  for (Mask b = group; b != 0; b = (b - 1) & group) {
    const int size = popcount(b);
    if (size >= fewest && size <= clients) out.push_back(b);
  }
  return out;
}

void Planner::place_blocks(Config& config) const {
  std::stable_sort(config.blocks.begin(), config.blocks.end(), [](const Block& a, const Block& b) {
    return popcount(a.tenants) > popcount(b.tenants);
  });
  const Machine& m = machines_[static_cast<std::size_t>(config.machine)];
  const int per_gpu =
      config.variant.profile < 0 ? 1 : instances_per_gpu(m.model, config.variant.profile);
  for (std::size_t j = 0; j < config.blocks.size(); ++j) {
    config.blocks[j].gpu = static_cast<int>(j) / std::max(per_gpu, 1);
  }
}

namespace {

// The balanced split's recursion step: calls visit(block, big_left after it) for every block
// that holds REMAINING's lowest tenant and has a size the split still allows (BIG while
// BIG_LEFT > 0; SMALL while the rest still needs a small block). Cost: one pass over the
// subsets of the rest.
template <class Visit>
void for_each_first_block(Mask remaining, int big_left, int big, int small, Visit&& visit) {
  const int first = lowest(remaining);
  const Mask rest = remaining & ~(Mask{1} << first);
  std::vector<int> sizes;
  if (big_left > 0) sizes.push_back(big);
  if (small != big && popcount(remaining) - big_left * big > 0) sizes.push_back(small);
  for (const int sz : sizes) {
    for (Mask s = rest;; s = (s - 1) & rest) {
      if (popcount(s) == sz - 1) visit(s | (Mask{1} << first), big_left - (sz == big ? 1 : 0));
      if (s == 0) break;
    }
  }
}

}  // namespace

double Planner::count_node_configs(Mask group, int machine, const Variant& v, bool surviving) {
  const int size = popcount(group);
  const int d = std::min(size, devices_of(machine, v));
  if (d <= 0) return 0;
  const int small = size / d, big = small + (size % d ? 1 : 0), bigs = size % d ? size % d : d;
  const int model = machines_[static_cast<std::size_t>(machine)].model;
  std::map<std::pair<Mask, int>, double> memo;
  std::function<double(Mask, int)> count = [&](Mask remaining, int big_left) -> double {
    if (remaining == 0) return 1;
    const auto key = std::pair{remaining, big_left};
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
    double total = 0;
    for_each_first_block(remaining, big_left, big, small, [&](Mask block, int left) {
      if (!surviving || unit(unit_key(block, model, v.profile, v)).verdict != Verdict::pruned) {
        total += count(remaining & ~block, left);
      }
    });
    memo[key] = total;
    return total;
  };
  return count(group, big == small ? d : bigs);
}

void Planner::enumerate_node_configs(Mask group, int machine, const Variant& v,
                                     std::vector<Config>& out) {
  const int size = popcount(group);
  const int d = std::min(size, devices_of(machine, v));
  if (d <= 0) return;
  const int small = size / d, big = small + (size % d ? 1 : 0), bigs = size % d ? size % d : d;
  const int model = machines_[static_cast<std::size_t>(machine)].model;
  std::vector<Block> blocks;
  std::function<void(Mask, int)> rec = [&](Mask remaining, int big_left) {
    if (remaining == 0) {
      Config c{model, v, blocks, machine};
      place_blocks(c);
      out.push_back(c);
      return;
    }
    for_each_first_block(remaining, big_left, big, small, [&](Mask block, int left) {
      blocks.push_back({block, v.profile, 0});
      rec(remaining & ~block, left);
      blocks.pop_back();
    });
  };
  rec(group, big == small ? d : bigs);
}

Scenario Planner::node_scenario(const Config& config, const std::string& prefix) const {
  const Machine& machine = machines_[static_cast<std::size_t>(config.machine)];
  const ModelInfo& model = models_[static_cast<std::size_t>(machine.model)];
  const Variant& v = config.variant;
  const Strategy& strategy = strategy_of(v);
  const int per_gpu = v.profile < 0 ? 1 : instances_per_gpu(machine.model, v.profile);
  Scenario s = run_settings();
  int used_gpus = 0;
  for (const Block& b : config.blocks) used_gpus = std::max(used_gpus, b.gpu + 1);
  for (int g = 0; g < machine.gpus; ++g) {
    GpuSpec gpu;
    gpu.name = fmt::format("{}-gpu{}", prefix, g);
    gpu.model = model.profile->name;
    gpu.cost_per_hour = machine.price / machine.gpus;
    gpu.where.key_path = fmt::format("gpus.{}", g);
    gpu.sharing = SharingSpec(strategy);
    if (&strategy != &exclusive_strategy()) gpu.sharing.replicas = v.replicas;
    if (v.profile >= 0) {
      const std::string name =
          model.profile->mig_profiles[static_cast<std::size_t>(v.profile)].name;
      gpu.mig.assign(static_cast<std::size_t>(per_gpu), name);
    }
    s.gpus.push_back(gpu);
  }
  for (std::size_t j = 0; j < config.blocks.size(); ++j) {
    const Block& b = config.blocks[j];
    for (int t = 0; t < n_; ++t) {
      if (!(b.tenants >> t & 1u)) continue;
      TenantSpec spec = scenario_.tenants[static_cast<std::size_t>(t)];
      spec.device = s.gpus[static_cast<std::size_t>(b.gpu)].name;
      if (v.profile >= 0) {
        spec.device = fmt::format("{}/{}", spec.device, static_cast<int>(j) % std::max(per_gpu, 1));
      }
      spec.devices = {spec.device};
      spec.gpus = 1;
      s.tenants.push_back(spec);
    }
  }
  // The scenario order of the tenants (their random streams are named, the order only lists).
  std::stable_sort(s.tenants.begin(), s.tenants.end(),
                   [&](const TenantSpec& a, const TenantSpec& b) {
                     return tenant_index(a.name) < tenant_index(b.name);
                   });
  for (const FaultSpec& f : scenario_.faults) {
    for (const TenantSpec& t : s.tenants) {
      if (t.name == f.tenant) s.faults.push_back(f);
    }
  }
  (void)used_gpus;
  return s;
}

int Planner::tenant_index(const std::string& name) const {
  for (int t = 0; t < n_; ++t) {
    if (scenario_.tenants[static_cast<std::size_t>(t)].name == name) return t;
  }
  return n_;
}

std::vector<int> Planner::pod_order(const Config& config) const {
  // Round robin over the devices in index order: the r-th member of every block that has one,
  // for r = 0, 1, ...; with the largest blocks first, the device plugin's law (most free
  // replicas, ties to the lowest index) gives pod k of the order the device it was planned on.
  std::vector<std::vector<int>> members;
  for (const Block& b : config.blocks) {
    members.emplace_back();
    for (int t = 0; t < n_; ++t) {
      if (b.tenants >> t & 1u) members.back().push_back(t);
    }
  }
  std::vector<int> order;
  for (std::size_t r = 0;; ++r) {
    bool any = false;
    for (const auto& m : members) {
      if (r < m.size()) {
        order.push_back(m[r]);
        any = true;
      }
    }
    if (!any) break;
  }
  return order;
}

}  // namespace planner_detail
}  // namespace gpumux
