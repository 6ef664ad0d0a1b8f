#include "models/cluster/workload_pods.hpp"

#include <map>

#include <fmt/format.h>

#include "models/cluster/node_state.hpp"
#include "models/run/runner.hpp"
#include "models/strategies/registry.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux::cluster {

void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result) {
  std::vector<std::size_t> pods;
  for (std::size_t i = 0; i < result.pods.size(); ++i) {
    const PodRecord& p = result.pods[i];
    if (p.start >= 0 && p.node >= 0 && !p.units.empty() &&
        spec.pods[static_cast<std::size_t>(p.spec_index)].workload.tenant) {
      pods.push_back(i);
    }
  }
  if (pods.empty()) return;
  std::map<std::string, int> pool_index;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    pool_index[spec.pools[p].name] = static_cast<int>(p);
  }
  ResourceNames names;
  std::vector<PoolTemplate> templates;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    templates.push_back(advertise(spec.pools[p], static_cast<int>(p), names));
  }
  Scenario s;
  s.name = "cluster-workload-pods";
  s.seed = spec.seed;
  // The horizon: the replay's duration, else the last end of a workload pod; a pod that never
  // ended runs to it. Without either, the last start + 60 s (assumption: the time a workload
  // pod that never ends is measured for).
  Nanos horizon = spec.duration;
  if (horizon <= 0) {
    Nanos last_start = 0;
    for (std::size_t i : pods) {
      horizon = std::max(horizon, result.pods[i].end);
      last_start = std::max(last_start, result.pods[i].start);
    }
    if (horizon <= last_start) horizon = last_start + 60 * kSecond;
  }
  std::map<std::pair<int, int>, std::string> gpu_names;  // (node, gpu) -> scenario GPU name
  for (std::size_t i : pods) {
    PodRecord& r = result.pods[i];
    if (r.start >= horizon) continue;  // started after the replay ended: nothing to measure
    const PodSpec& ps = spec.pods[static_cast<std::size_t>(r.spec_index)];
    const int pool = pool_index.at(r.pool);
    const NodePoolSpec& pool_spec = spec.pools[static_cast<std::size_t>(pool)];
    const PoolTemplate& tpl = templates[static_cast<std::size_t>(pool)];
    const UnitTemplate& unit = tpl.units[static_cast<std::size_t>(r.units.front())];
    const auto key = std::make_pair(r.node, unit.gpu);
    auto it = gpu_names.find(key);
    if (it == gpu_names.end()) {
      GpuSpec g;
      g.name = fmt::format("{}-gpu{}", r.node_name, unit.gpu);
      g.model = pool_spec.gpu_model;
      for (const UnitTemplate& u : tpl.units) {
        if (u.gpu == unit.gpu && !u.profile.empty()) g.mig.push_back(u.profile);
      }
      g.sharing = pool_spec.sharing.device_sharing;
      // The device plugin's sharing kind, when the pool did not name a device strategy.
      const SharingKind kind = pool_spec.sharing.sharing;
      if (g.sharing.is("exclusive") &&
          (kind == SharingKind::time_slicing || kind == SharingKind::mps)) {
        if (const Strategy* st = find_strategy(kind == SharingKind::mps ? "mps" : "time-slicing")) {
          g.sharing = SharingSpec(*st);
        }
      }
      g.where = pool_spec.where;
      s.gpus.push_back(g);
      it = gpu_names.emplace(key, g.name).first;
    }
    TenantSpec t = *ps.workload.tenant;
    t.name = r.name;
    t.device = it->second;
    if (!unit.profile.empty()) {
      int instance = 0;
      for (int u = 0; u < r.units.front(); ++u) {
        if (tpl.units[static_cast<std::size_t>(u)].gpu == unit.gpu) ++instance;
      }
      t.device = fmt::format("{}/{}", it->second, instance);
    }
    t.devices = {t.device};
    t.gpus = 1;
    t.replicas = 1;
    // The pod is on its GPU from its start to its end (TenantSpec::active_from/until): its
    // neighbours are the pods placed there at the same time, not every pod the GPU ever hosted.
    t.active_from = r.start;
    t.active_until.reset();
    if (r.end > r.start && r.end < horizon) t.active_until = r.end;
    r.workload_device = t.device;
    s.tenants.push_back(t);
  }
  s.duration = horizon;
  s.warmup = std::min(spec.warmup, horizon);
  RunOptions options;  // only the tenants' statistics are read: no per-request memory
  options.record_requests = false;
  options.record_kernels = false;
  const RunResult run = simulate(resolve_scenario(s), options);
  std::map<std::string, const TenantResult*> by_name;
  for (const TenantResult& t : run.tenants) by_name[t.name] = &t;
  for (std::size_t i : pods) {
    PodRecord& r = result.pods[i];
    auto it = by_name.find(r.name);
    if (it == by_name.end()) continue;
    r.workload_completed = it->second->completed;
    r.latency_p50_ns = it->second->latency.p50;
    r.latency_p99_ns = it->second->latency.p99;
  }
}

}  // namespace gpumux::cluster
