#include "models/plan/capacity_check.hpp"

#include "models/scenario/catalog_tenant.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "models/plan/bounds.hpp"
#include "models/plan/machine_types.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/strategies/strategy.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

std::string size_text(std::int64_t bytes) {
  return fmt::format("{:.4g} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

std::string device_text(const ResolvedDevice& d) {
  return d.geometry.name + " (" + d.geometry.profile + ")";
}

}  // namespace

std::string CapacityFinding::text() const { return InputError(where, message).what(); }

std::vector<CapacityFinding> capacity_findings(const ResolvedScenario& r) {
  std::vector<CapacityFinding> out;
  const Scenario& s = r.scenario;
  for (std::size_t d = 0; d < r.devices.size(); ++d) {
    const ResolvedDevice& device = r.devices[d];
    const DeviceProfile& gpu = *r.gpu_profiles[static_cast<std::size_t>(device.gpu)];
    DeviceCapacity cap = capacity_of(gpu, device.mig_instance >= 0 ? device.geometry.profile : "",
                                     find_contention_law(s.contention_law));
    // What the strategy allows on the device (Strategy::limits of the block resolve_scenario
    // filled and fitted): the most clients (the MPS server's limit, lowered inside MIG), each
    // client's SM share and pinned memory — for every strategy, as its device applies them.
    const Strategy& strategy = device.sharing.strategy();
    const int clients = static_cast<int>(device.tenants.size());
    DeviceFit fit;
    fit.memory = device.geometry.memory;
    fit.clients = clients;
    fit.replicas = device.sharing.replicas;
    const DeviceLimits allowed = strategy.limits(device.sharing.params(), fit);
    const SharingLimits& limits = allowed.device;
    if (allowed.max_clients > 0 && clients > allowed.max_clients) {
      const GpuSpec& spec = s.gpus[static_cast<std::size_t>(device.gpu)];
      const std::string written = spec.where.key_path + ".sharing.max_clients";
      const std::string key =
          s.locations.count(written) ? written : spec.where.key_path + ".sharing.mode";
      // A warning, not an error: the run simulates what the server does (it turns the clients
      // past its limit away at start, and they report failed requests).
      out.push_back(
          {false, s.locate(key),
           fmt::format("{} tenants are placed on {} but {} takes at most {} clients there{}: "
                       "the clients after the first {} are refused at start (their requests fail)",
                       clients, device_text(device), strategy.name(), allowed.max_clients,
                       limits.shared_server
                           ? fmt::format(" (the MPS server's limit: {} up to CUDA 13.0, {} from "
                                         "13.1, lowered in proportion to a MIG instance's compute "
                                         "slices)",
                                         kMpsMaxClients, kMpsMaxClientsFromCuda13_1)
                           : std::string(),
                       allowed.max_clients)});
    }
    cap.client_sms = client_sm_cap(limits, cap.sms);
    const std::int64_t memory = device.geometry.memory;
    const bool has_pinned = limits.client_memory_limit.has_value();
    const std::int64_t pinned = has_pinned ? *limits.client_memory_limit : memory;
    std::int64_t at_start = 0, at_first_request = 0;
    std::string names;
    double sm = 0, hbm = 0;
    for (const int t : device.tenants) {
      const TenantSpec& tenant = s.tenants[static_cast<std::size_t>(t)];
      const std::string key = tenant.where.key_path;
      const std::int64_t limit = std::min(pinned, memory);
      const char* what = has_pinned && pinned < memory ? "its MPS pinned memory limit on " : "";
      // Where the limit comes from `replicas`, say so: the key means slots under time-slicing
      // but an equal memory share under MPS.
      const std::string why =
          has_pinned && pinned < memory && device.sharing.replicas > 0
              ? fmt::format(
                    " (sharing.replicas: {} under mps pins each client to memory / {}; "
                    "under time-slicing it only counts slots)",
                    device.sharing.replicas, device.sharing.replicas)
              : std::string();
      if (tenant.memory > limit) {
        out.push_back({true, s.locate(key + ".memory"),
                       fmt::format("tenant {} allocates {} at start but {}{} has {}{}: it would "
                                   "be OOM-killed at t = 0",
                                   tenant.name, size_text(tenant.memory), what, device_text(device),
                                   size_text(limit), why)});
      } else if (tenant.workload.memory_per_request > 0 &&
                 tenant.memory + tenant.workload.memory_per_request > limit) {
        out.push_back({true, s.locate(key + ".workload.memory_per_request"),
                       fmt::format("tenant {} needs {} + {} per request = {} but {}{} has {}{}: "
                                   "every request would fail",
                                   tenant.name, size_text(tenant.memory),
                                   size_text(tenant.workload.memory_per_request),
                                   size_text(tenant.memory + tenant.workload.memory_per_request),
                                   what, device_text(device), size_text(limit), why)});
      }
      at_start += tenant.memory;
      at_first_request += tenant.memory + tenant.workload.memory_per_request;
      names += (names.empty() ? "" : ", ") + tenant.name;
      // Offered load against what the device serves with the tenant alone.
      const TenantDemand demand = demand_of(tenant);
      if (demand.open_loop && tenant.devices.size() <= 1) {
        const double most = solo_capacity_per_s(demand, cap);
        if (demand.rate_per_s >= most) {
          out.push_back(
              {false, s.locate(key + ".workload.arrivals.rate"),
               fmt::format("tenant {} offers {:.4g}/s but {} serves at most {:.4g}/s "
                           "with it alone ({} request(s) at a time, each >= {}): its "
                           "queue grows without bound",
                           tenant.name, demand.rate_per_s, device_text(device), most,
                           demand.max_in_flight,
                           units::format_duration(static_cast<Nanos>(service_ns(demand, cap))))});
        }
        sm += sm_load_per_s(demand, cap);
        hbm += hbm_load_per_s(demand, cap);
      }
    }
    const SourceLocation gpu_where =
        s.locate(s.gpus[static_cast<std::size_t>(device.gpu)].where.key_path);
    if (device.tenants.size() > 1 && at_start > memory) {
      out.push_back(
          {false, gpu_where,
           fmt::format("tenants {} allocate {} at start but {} has {}: one is "
                       "OOM-killed at t = 0",
                       names, size_text(at_start), device_text(device), size_text(memory))});
    } else if (device.tenants.size() > 1 && at_first_request > memory) {
      out.push_back({false, gpu_where,
                     fmt::format("tenants {} need {} with one request each but {} has {}: a "
                                 "request will OOM-kill its tenant",
                                 names, size_text(at_first_request), device_text(device),
                                 size_text(memory))});
    }
    if (sm >= cap.sms) {
      out.push_back({false, gpu_where,
                     fmt::format("the tenants of {} offer {:.3g}x its SM time: queues grow "
                                 "without bound",
                                 device_text(device), sm / cap.sms)});
    } else if (hbm >= cap.bandwidth) {
      out.push_back({false, gpu_where,
                     fmt::format("the tenants of {} offer {:.3g}x its HBM bandwidth: queues "
                                 "grow without bound",
                                 device_text(device), hbm / cap.bandwidth)});
    }
  }
  return out;
}

void check_plan_scenario(const Scenario& s) {
  if (!s.plan) return;
  const std::string base =
      s.source_file.empty() ? "" : std::filesystem::path(s.source_file).parent_path().string();
  std::vector<const DeviceProfile*> models;
  for (const PlanGpuSpec& g : s.plan->gpus) {
    try {
      models.push_back(&load_device_profile(g.model, base));
    } catch (const InputError& e) {
      throw InputError(s.locate(g.where.key_path + ".model"), e.what());
    }
  }
  // The machine types a node platform may buy (the planner's own check, so validate agrees).
  std::vector<std::string> names;
  for (const DeviceProfile* m : models) names.push_back(m->name);
  plan_machine_types(*s.plan, names);
  std::int64_t largest = 0;
  std::string largest_name;
  const DeviceProfile* largest_model = nullptr;
  for (const DeviceProfile* m : models) {
    if (m->memory > largest) {
      largest = m->memory;
      largest_name = m->name;
      largest_model = m;
    }
  }
  // Catalog tenants' memory on the largest GPU of the plan (their kernels also build there:
  // a dtype the GPU lacks is refused here).
  const Scenario materialized = largest_model ? with_catalog_kernels(s, *largest_model) : s;
  for (const TenantSpec& t : materialized.tenants) {
    if (!t.device.empty()) continue;
    if (t.memory + t.workload.memory_per_request > largest) {
      throw InputError(s.locate(t.where.key_path + ".memory"),
                       fmt::format("tenant {} needs {} but the largest GPU of the plan, {}, has "
                                   "{}: no setup can hold it",
                                   t.name, size_text(t.memory + t.workload.memory_per_request),
                                   largest_name, size_text(largest)));
    }
  }
}

}  // namespace gpumux
