// Units and their analytic pruning in gpumux plan: a unit's device capacity and label, the
// constraints that define feasibility beyond the percentiles (isolation, sustainable load), the
// physical necessary conditions (memory, MPS client limit, latency floor), and the unit cache's
// entry point unit() (pruned here, or left unknown for simulation).
#include "models/plan/planner_internal.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/gpu/device_profile.hpp"

namespace gpumux {
namespace planner_detail {

// ---------------------------------------------------------------------------------------------
// Units: bounds

DeviceCapacity Planner::capacity(const UnitKey& u) const {
  const DeviceProfile& gpu = *models_[static_cast<std::size_t>(u.model)].profile;
  DeviceCapacity c = capacity_of(
      gpu,
      u.profile < 0 ? std::string() : gpu.mig_profiles[static_cast<std::size_t>(u.profile)].name,
      find_contention_law(scenario_.contention_law));
  // The SMs one client may hold, as its device grants them (MPS with replicas R: 100/R % of
  // the threads, integer percent, >= 1; Strategy::limits).
  c.client_sms = client_sm_cap(limits(u).device, c.sms);
  return c;
}

DeviceLimits Planner::limits(const UnitKey& u) const {
  const DeviceProfile& gpu = *models_[static_cast<std::size_t>(u.model)].profile;
  DeviceFit fit;
  fit.memory = gpu.memory;
  fit.gpu_compute_slices = gpu.compute_slices;
  if (u.profile >= 0) {
    const MigProfileSpec& p = gpu.mig_profiles[static_cast<std::size_t>(u.profile)];
    fit.memory = p.memory;
    fit.compute_slices = p.compute_slices;
  }
  fit.clients = popcount(u.tenants);
  fit.replicas = u.replicas;
  return default_limits(*u.strategy, gpu, fit);
}

std::string Planner::device_label(const UnitKey& u) const {
  const ModelInfo& m = models_[static_cast<std::size_t>(u.model)];
  if (u.profile < 0) return m.profile->name;
  return m.profile->mig_profiles[static_cast<std::size_t>(u.profile)].name;
}

// plan.shared_tenant_memory: a tenant holding more than that fraction of the device's memory
// does not share memory (time-slicing, MPS without pinned limits) with a tenant that has SLOs.
std::optional<std::string> Planner::large_tenant_beside_slos(const UnitKey& u,
                                                             const DeviceCapacity& cap) const {
  const bool shares_memory = limits(u).clients_share_memory();
  if (!shares_memory || popcount(u.tenants) < 2 || plan_.shared_tenant_memory >= 1.0) {
    return std::nullopt;
  }
  const double most = plan_.shared_tenant_memory * static_cast<double>(cap.memory);
  for (int large = 0; large < n_; ++large) {
    if (!(u.tenants >> large & 1u)) continue;
    const TenantSpec& big = scenario_.tenants[static_cast<std::size_t>(large)];
    if (static_cast<double>(big.memory) <= most) continue;
    for (int t = 0; t < n_; ++t) {
      if (t == large || !(u.tenants >> t & 1u)) continue;
      const TenantSpec& other = scenario_.tenants[static_cast<std::size_t>(t)];
      if (other.best_effort || !other.slo.any()) continue;
      return fmt::format(
          "{} holds {:.0f} % of {}'s memory, above plan.shared_tenant_memory ({:.0f} %): it "
          "does not share memory with SLO tenant {} (set plan.shared_tenant_memory: 1 to allow "
          "it)",
          big.name, 100.0 * static_cast<double>(big.memory) / static_cast<double>(cap.memory),
          device_label(u), 100.0 * plan_.shared_tenant_memory, other.name);
    }
  }
  return std::nullopt;
}

// Constraints that define feasibility beyond the simulated percentiles: isolation, and a
// sustainable load (a setup whose SLO tenants offer more SM time or HBM time per second than the
// device has is overloaded: its queues grow without bound, whatever a finite run shows).
std::optional<std::string> Planner::constraint_violation(const UnitKey& u) const {
  const int count = popcount(u.tenants);
  const DeviceLimits limit = limits(u);
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u) || count < 2) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    // On a node platform a shared device is a pool of slots: any pod of the pool may take the
    // one beside the tenant (the kubelet picks devices; a restarted pod can move), so memory
    // isolation there means an exclusive device (dedicated or a MIG instance), pinned MPS limits
    // included.
    if (spec.isolation.memory && node_mode() && limit.max_clients != 1) {
      return spec.name + " needs memory isolation: on a " + plan_.platform +
             " node pool any of the pool's pods may be given a slot of its GPU";
    }
    if (spec.isolation.memory && limit.clients_share_memory()) {
      return spec.name + " needs memory isolation: " +
             (limit.time_sliced ? "time-slicing" : "MPS without pinned limits") + " shares memory";
    }
    if (spec.isolation.fault && limit.shared_fault_domain) {
      return spec.name + " needs fault isolation: one MPS server is shared";
    }
  }
  const DeviceCapacity cap = capacity(u);
  if (const auto crowded = large_tenant_beside_slos(u, cap)) return crowded;
  double sm_load = 0, bw_load = 0;
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    const TenantDemand& demand = demands_[static_cast<std::size_t>(t)];
    if (spec.best_effort || !demand.open_loop) continue;
    const double sm = sm_load_per_s(demand, cap);
    if (sm > cap.client_sms && cap.client_sms < cap.sms) {
      return fmt::format("{} offers {:.2f}x the SMs its MPS share ({:.0f} % of {}) has", spec.name,
                         sm / cap.client_sms, 100.0 * cap.client_sms / cap.sms, device_label(u));
    }
    const double most = solo_capacity_per_s(demand, cap);
    if (demand.rate_per_s >= most) {
      return fmt::format(
          "{} offers {:.2f}x what {} can serve ({} request(s) at a time, each >= {})", spec.name,
          demand.rate_per_s / most, device_label(u), demand.max_in_flight,
          format_ms(service_ns(demand, cap)));
    }
    sm_load += sm;
    bw_load += hbm_load_per_s(demand, cap);
  }
  const double sm_dev = cap.sms, bw_dev = cap.bandwidth;
  if (sm_load >= sm_dev) {
    return fmt::format("offered load needs {:.2f}x the SM time of {}", sm_load / sm_dev,
                       device_label(u));
  }
  if (bw_load >= bw_dev) {
    return fmt::format("offered load needs {:.2f}x the HBM bandwidth of {}", bw_load / bw_dev,
                       device_label(u));
  }
  return std::nullopt;
}

// Physical necessary conditions (what a simulation would also show): memory, the MPS client
// limit, and the latency floor (every request takes at least its kernels alone on the device).
std::optional<std::string> Planner::physical_violation(const UnitKey& u) const {
  const ModelInfo& model = models_[static_cast<std::size_t>(u.model)];
  const DeviceProfile& gpu = *model.profile;
  std::int64_t memory = gpu.memory;
  if (u.profile >= 0) memory = gpu.mig_profiles[static_cast<std::size_t>(u.profile)].memory;
  // The strategy's caps on this device (the MPS server's client limit, lowered inside a MIG
  // instance; the pinned memory of MPS replicas): Strategy::limits, as validate asks it.
  const DeviceLimits limit = limits(u);
  const int max_clients = limit.device.max_clients;
  const int count = popcount(u.tenants);
  if (limit.device.shared_server && max_clients > 0 && count > max_clients) {
    return fmt::format("{} MPS clients > the limit of {} on {}", count, max_clients,
                       device_label(u));
  }
  std::int64_t total = 0;
  const std::int64_t pinned = limit.device.client_memory_limit.value_or(memory);
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    if (spec.memory > pinned) {
      return fmt::format("{} needs {} > {}{} of {}", spec.name,
                         format_gib(static_cast<double>(spec.memory)),
                         format_gib(static_cast<double>(pinned)),
                         pinned < memory ? " (MPS pinned limit)" : "", device_label(u));
    }
    total += spec.memory;
  }
  if (total > memory) {
    return fmt::format("memory {} > {} of {}", format_gib(static_cast<double>(total)),
                       format_gib(static_cast<double>(memory)), device_label(u));
  }
  const DeviceCapacity cap = capacity(u);
  for (int t = 0; t < n_; ++t) {
    if (!(u.tenants >> t & 1u)) continue;
    const TenantSpec& spec = scenario_.tenants[static_cast<std::size_t>(t)];
    if (spec.best_effort || !spec.slo.any()) continue;
    const double floor = latency_floor_ns(demands_[static_cast<std::size_t>(t)], cap);
    const double allowed = 1.0 - plan_.headroom;
    for (const auto& [q, target] :
         {std::pair{"p50", spec.slo.p50}, std::pair{"p90", spec.slo.p90},
          std::pair{"p99", spec.slo.p99}, std::pair{"p999", spec.slo.p999}}) {
      if (target && static_cast<double>(*target) * allowed < floor) {
        return fmt::format("{} {} target {} < {}, its kernels alone on {}", spec.name, q,
                           format_ms(static_cast<double>(*target) * allowed), format_ms(floor),
                           device_label(u));
      }
    }
  }
  return std::nullopt;
}

const UnitInfo& Planner::unit(const UnitKey& u) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = units_.try_emplace(u);
  if (inserted) {
    ++stats_.units;
    std::optional<std::string> why = constraint_violation(u);
    if (!why) why = physical_violation(u);
    if (why) {
      ++stats_.units_pruned;
      it->second.verdict = Verdict::pruned;
      it->second.reason = *why;
    }
  }
  return it->second;
}

}  // namespace planner_detail
}  // namespace gpumux
