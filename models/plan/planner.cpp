// gpumux plan (planner.hpp): the entry point plan_scenario, the Planner's construction (the
// input's checks: tenant count, single-GPU tenants, known strategy families, GPU models loaded
// and sorted by price) and the small text helpers the planner's parts share. The search itself
// is spread over planner_*.cpp (see planner_internal.hpp for which file owns what).
#include "models/plan/planner_internal.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "models/config/profile_loader.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/scenario/catalog_tenant.hpp"

namespace gpumux {
namespace planner_detail {

int family_of(const std::string& name) {
  for (int f = 0; f < kFamilies; ++f) {
    if (name == kFamilyNames[f]) return f;
  }
  return -1;
}

std::string join_names(const std::vector<TenantSpec>& tenants, Mask mask) {
  std::string out;
  for (int t = 0; t < 64 && (mask >> t) != 0; ++t) {
    if (!(mask >> t & 1u)) continue;
    if (!out.empty()) out += ',';
    out += tenants[static_cast<std::size_t>(t)].name;
  }
  return out;
}

std::string format_ms(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  return fmt::format("{:.3g} us", ns / 1e3);
}

std::string format_gib(double bytes) {
  return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024));
}

Planner::Planner(const Scenario& scenario, const PlanOptions& options)
    : scenario_(scenario), options_(options), plan_(*scenario.plan) {
  n_ = static_cast<int>(scenario_.tenants.size());
  if (n_ == 0) throw InputError(scenario_.locate("tenants"), "no tenants to plan");
  if (n_ > kMaxTenants) {
    throw InputError(
        scenario_.locate("tenants"),
        fmt::format("gpumux plan handles up to {} tenants, the scenario has {}", kMaxTenants, n_));
  }
  for (const TenantSpec& t : scenario_.tenants) {
    if (t.gpus > 1 || t.devices.size() > 1) {
      throw InputError(scenario_.locate(t.where.key_path + ".gpus"),
                       "tenant '" + t.name + "': gpumux plan places single-GPU tenants only");
    }
    demands_.push_back(demand_of(t));
  }
  for (const std::string& name : plan_.strategies) {
    const int f = family_of(name);
    if (f < 0) throw InputError(plan_.where, "unknown strategy '" + name + "'");
    allowed_[f] = true;
  }
  const std::string base_dir = scenario_.source_file.empty()
                                   ? std::string()
                                   : std::string(scenario_.source_file.substr(
                                         0, scenario_.source_file.rfind('/') == std::string::npos
                                                ? 0
                                                : scenario_.source_file.rfind('/')));
  for (std::size_t i = 0; i < plan_.gpus.size(); ++i) {
    ModelInfo m;
    m.spec = plan_.gpus[i];
    try {
      m.profile = &load_device_profile(m.spec.model, base_dir);
    } catch (const InputError& e) {
      throw InputError(scenario_.locate(m.spec.where.key_path + ".model"), e.what());
    }
    build_layouts(m);
    models_.push_back(std::move(m));
  }
  std::sort(models_.begin(), models_.end(), [](const ModelInfo& a, const ModelInfo& b) {
    return a.spec.cost_per_hour < b.spec.cost_per_hour;
  });
  platform_ = plan_.platform == "gke"             ? Platform::gke
              : plan_.platform == "device-plugin" ? Platform::device_plugin
              : plan_.platform == "mig-parted"    ? Platform::mig_parted
                                                  : Platform::bare;
  // MPS inside MIG only where the platform runs it: the NVIDIA device plugin refuses to share
  // MIG devices with MPS (k8s-device-plugin, "sharing using MPS is not supported for MIG
  // devices"; models/cluster/cluster_loader.cpp refuses it too) and GKE, which runs it, too.
  if ((platform_ == Platform::gke || platform_ == Platform::device_plugin) && allowed_[kMigMps]) {
    allowed_[kMigMps] = false;
    platform_notes_.push_back(fmt::format(
        "mig+mps left out: {} does not share MIG partitions with MPS (the NVIDIA device plugin: "
        "\"sharing using MPS is not supported for MIG devices\")",
        plan_.platform));
  }
  bool any = false;
  for (bool a : allowed_) any = any || a;
  if (!any) {
    throw InputError(plan_.where, fmt::format("plan.strategies: nothing left that platform {} runs",
                                              plan_.platform));
  }
  build_machines();
  jobs_ = options_.jobs > 0 ? options_.jobs
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  faults_of_.assign(static_cast<std::size_t>(n_), false);
  for (const FaultSpec& f : scenario_.faults) {
    for (int t = 0; t < n_; ++t) {
      if (scenario_.tenants[static_cast<std::size_t>(t)].name == f.tenant) {
        faults_of_[static_cast<std::size_t>(t)] = true;
      }
    }
  }
}

}  // namespace planner_detail

PlanResult plan_scenario(const Scenario& scenario, const PlanOptions& options) {
  if (!scenario.plan) {
    throw InputError(SourceLocation{scenario.source_file, 0, 0, "plan"},
                     "no search space: add `plan: {gpus: [{model: h100-sxm-80gb, cost_per_hour: "
                     "4.0}], max_gpus: 8}` or give --gpus MODEL=PRICE");
  }
  if (scenario.plan->gpus.empty()) {
    throw InputError(scenario.plan->where, "plan.gpus: no GPU model to buy");
  }
  // Catalog tenants get their kernels and memory on the plan's first GPU model for the bounds
  // and memory checks; every candidate run resolves them again on its own GPU.
  const std::string base = scenario.source_file.empty()
                               ? ""
                               : std::filesystem::path(scenario.source_file).parent_path().string();
  const DeviceProfile* first = nullptr;
  try {
    first = &load_device_profile(scenario.plan->gpus.front().model, base);
  } catch (const InputError& e) {
    throw InputError(scenario.locate(scenario.plan->gpus.front().where.key_path + ".model"),
                     e.what());
  }
  const Scenario materialized = with_catalog_kernels(scenario, *first);
  planner_detail::Planner planner(materialized, options);
  return planner.run();
}

}  // namespace gpumux
