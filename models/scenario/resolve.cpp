#include "models/scenario/resolve.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "models/config/mig_names.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/scenario/kernel_trace_model.hpp"

namespace gpumux {
namespace {

std::string base_dir_of(const Scenario& scenario) {
  if (scenario.source_file.empty()) return "";
  return std::filesystem::path(scenario.source_file).parent_path().string();
}

// Fills the unset sharing parameters from the profile; returns the profile keys it used.
std::vector<std::string> fill_sharing_defaults(SharingSpec& sharing, const DeviceProfile& profile) {
  std::vector<std::string> used;
  auto fill = [&used](auto& field, const auto& value, const char* key) {
    if (!field) {
      field = value;
      used.emplace_back(key);
    }
  };
  fill(sharing.timeslice, profile.timeslice, "timeslice");
  fill(sharing.context_switch, profile.context_switch, "context_switch");
  fill(sharing.preemption_latency, profile.preemption_latency, "preemption_latency");
  fill(sharing.cache_refill, profile.cache_refill, "cache_refill");
  if (sharing.mode == SharingMode::mps) {
    // MPS documentation: 48 clients per device up to CUDA 13.0, 60 from CUDA 13.1.
    const bool cuda_13_1 = sharing.cuda_version && *sharing.cuda_version >= 1301;
    fill(sharing.max_clients, cuda_13_1 ? std::max(60, profile.mps_max_clients)
                                        : profile.mps_max_clients,
         "mps_max_clients");
    // `replicas: N` under MPS gives each client an equal share of the threads, as the NVIDIA
    // k8s-device-plugin (the GPU Operator's MPS sharing) and GKE's MPS sharing do; see
    // replica_pinned_memory_limit for the memory half and the citations. The device plugin's
    // mps-control-daemon computes it in integer arithmetic,
    // `fmt.Sprintf("%d", 100/replicasPerDevice)` (cmd/mps-control-daemon/mps/daemon.go,
    // activeThreadPercentage), so 3 replicas get 33 %, not 33.3 %. Above 100 replicas that
    // would be 0 %, not a valid percentage: gpumux keeps 1 %. An explicit
    // `active_thread_percentage` wins. Without replicas: 100 (the MPS default).
    if (!sharing.active_thread_percentage) {
      sharing.active_thread_percentage =
          sharing.replicas > 0 ? static_cast<double>(std::max(1, 100 / sharing.replicas)) : 100.0;
    }
  }
  return used;
}

// The pinned device memory limit `replicas: N` gives each MPS client of a device with `memory`
// bytes, or nothing when the scenario sets its own `pinned_memory_limit` or no replicas.
// NVIDIA k8s-device-plugin README, "With CUDA MPS" (https://github.com/NVIDIA/k8s-device-plugin
// #with-cuda-mps): "the amount of memory allowed per client (i.e. per partition) is managed by
// the MPS control daemon and limited to an equal fraction of the total device memory. In addition
// to controlling the amount of memory that each client can consume, the MPS control daemon also
// limits the amount of compute capacity that can be consumed by a client." Its daemon sends
// `set_default_device_pinned_mem_limit <index> <totalMemory/replicas/1024/1024>M`
// (cmd/mps-control-daemon/mps/daemon.go, perDevicePinnedDeviceMemoryLimits): whole MiB, rounded
// down. The GPU Operator configures MPS through this plugin ("Multi-Process Service in
// Kubernetes",
// https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing-mps.html).
// GKE (https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus): the maximum
// shared containers of a GPU "determines how much of the physical GPU power each container gets,
// in terms of [...] Pinned device memory limit [and] Active thread percentage".
// The device plugin does not support MPS on MIG devices (README: "Sharing with MPS is currently
// not supported on devices with MIG enabled"); gpumux applies the same rule to a MIG instance
// with its own memory, as the one MPS server per instance would be configured (an extrapolation,
// docs/strategies.md).
std::optional<std::int64_t> replica_pinned_memory_limit(const SharingSpec& sharing,
                                                        std::int64_t memory) {
  if (sharing.mode != SharingMode::mps || sharing.replicas <= 0 || sharing.pinned_memory_limit) {
    return sharing.pinned_memory_limit;
  }
  constexpr std::int64_t mib = 1024 * 1024;
  return memory / sharing.replicas / mib * mib;
}

// MPS client limit of one MIG instance. MIG User Guide, "Deployment Considerations" ->
// "Application Considerations" (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
// deployment-considerations.html): "CUDA MPS is supported on top of MIG. The only limitation is
// that the maximum number of clients (48) is lowered proportionally to the Compute Instance
// size." gpumux has one compute instance per GPU instance, so the CI size is the instance's
// compute slices of the GPU's (7 on A100/H100/H200, 4 on A30); the guide gives no rounding, a
// client count is whole: rounded down, at least 1 (1g on H100: 48 x 1/7 -> 6). The CUDA 13.1
// limit of 60 is scaled the same way. Only the profile default is scaled: an explicit
// `max_clients` wins.
int mig_mps_max_clients(int whole_gpu_limit, int ci_compute_slices, int gpu_compute_slices) {
  if (ci_compute_slices <= 0 || gpu_compute_slices <= 0) return whole_gpu_limit;
  return std::max(1, whole_gpu_limit * ci_compute_slices / gpu_compute_slices);
}

// L2 of a device for the capacity law (device.hpp): MIG gives an instance the L2 of its memory
// slices (MIG User Guide: L2 goes with memory slices); rho = HBM / L2 bandwidth, both measured
// where the profile has them.
void set_l2(DeviceGeometry& geometry, const DeviceProfile& profile, double slice_fraction) {
  geometry.l2_bytes = static_cast<double>(profile.l2_cache) * slice_fraction;
  const double hbm = profile.hbm_bandwidth_measured > 0 ? profile.hbm_bandwidth_measured
                                                         : profile.hbm_bandwidth;
  geometry.l2_cost_ratio =
      profile.l2_bandwidth > 0 ? std::min(1.0, hbm / profile.l2_bandwidth) : 1.0;
}

}  // namespace

const char* sharing_mode_name(SharingMode mode) {
  switch (mode) {
    case SharingMode::exclusive:
      return "exclusive";
    case SharingMode::time_slicing:
      return "time-slicing";
    case SharingMode::mps:
      return "mps";
  }
  return "?";
}

// `request: {kernel_trace: ...}`: reads the trace (once per file), converts the selected kernels
// for the tenant's GPU model (rescaled when it was recorded on another), and takes the tenant's
// memory from the trace's allocations when the scenario does not set `memory:`.
static void replay_kernel_trace(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& target,
                         const std::string& base_dir,
                         std::map<std::string, KernelTrace>& cache) {
  const KernelTraceSpec& spec = *tenant.workload.kernel_trace;
  auto found = cache.find(spec.path);
  if (found == cache.end()) {
    found = cache.emplace(spec.path, read_kernel_trace(spec.path, spec.format)).first;
  }
  const DeviceProfile* recorded = &target;
  if (!spec.recorded_on.empty()) {
    SourceLocation where = spec.where;
    where.key_path = tenant.where.key_path + ".workload.request.recorded_on";
    where = scenario.locate(where.key_path);
    try {
      recorded = &load_device_profile(spec.recorded_on, base_dir);
    } catch (const InputError& e) {
      throw InputError(where, e.what());
    }
  }
  std::map<std::string, NcuMetrics> ncu;
  if (!spec.ncu_path.empty()) ncu = read_ncu_metrics(spec.ncu_path);
  KernelTraceSelect select;
  select.stream = spec.stream;
  select.window_start = spec.window_start;
  select.window_end = spec.window_end;
  ConvertedTrace converted = convert_kernel_trace(found->second, select, *recorded, target,
                                                  spec.ncu_path.empty() ? nullptr : &ncu);
  tenant.workload.kernels = std::move(converted.kernels);
  if (converted.peak_memory && !scenario.locations.count(tenant.where.key_path + ".memory")) {
    tenant.memory = *converted.peak_memory;
  }
}

ResolvedScenario resolve_scenario(Scenario scenario) {
  ResolvedScenario out;
  const std::string base_dir = base_dir_of(scenario);
  std::map<std::string, int> device_by_name;
  std::map<std::string, int> mig_gpu_by_name;  // GPUs that have MIG instances
  std::map<std::string, KernelTrace> trace_cache;  // kernel traces by path (replicas share one)

  for (std::size_t g = 0; g < scenario.gpus.size(); ++g) {
    GpuSpec& gpu = scenario.gpus[g];
    const std::string key = gpu.where.key_path;
    const DeviceProfile* profile = nullptr;
    try {
      profile = &load_device_profile(gpu.model, base_dir);
    } catch (const InputError& e) {
      throw InputError(scenario.locate(key + ".model"), e.what());
    }
    out.gpu_profiles.push_back(profile);
    const std::vector<std::string> defaults = fill_sharing_defaults(gpu.sharing, *profile);
    const double gpu_bandwidth = 1.0;

    std::vector<std::string> layout = gpu.mig;
    if (!gpu.mig_layout_name.empty()) {
      try {
        layout = expand_mig_layout(*profile, {gpu.mig_layout_name});
      } catch (const InputError& e) {
        throw InputError(scenario.locate(key + ".mig"), e.what());
      }
    }
    if (layout.empty()) {
      ResolvedDevice device;
      device.geometry = DeviceGeometry{gpu.name, profile->name, profile->sms, profile->sms,
                                       gpu_bandwidth, profile->memory, 1.0};
      set_l2(device.geometry, *profile, 1.0);
      device.sharing = gpu.sharing;
      device.sharing.pinned_memory_limit =
          replica_pinned_memory_limit(gpu.sharing, device.geometry.memory);
      device.gpu = static_cast<int>(g);
      device.cost_per_hour = gpu.cost_per_hour;
      device.profile_defaults = defaults;
      device_by_name[gpu.name] = static_cast<int>(out.devices.size());
      out.devices.push_back(device);
      continue;
    }
    if (profile->mig_profiles.empty()) {
      throw InputError(scenario.locate(key + ".mig"), profile->name + " does not support MIG");
    }
    const MigFitResult fit = fit_mig_layout(*profile, layout);
    if (!fit.fits) {
      throw InputError(scenario.locate(key + ".mig"),
                       "MIG layout does not fit " + profile->name + ": " + fit.reason);
    }
    gpu.mig = layout;
    mig_gpu_by_name[gpu.name] = static_cast<int>(g);
    for (const MigInstancePlacement& placement : fit.placements) {
      const MigProfileSpec& mig = *placement.profile;
      ResolvedDevice device;
      const double slice_fraction =
          static_cast<double>(mig.memory_slices) / std::max(1, profile->memory_slices);
      device.geometry = DeviceGeometry{gpu.name + "/" + std::to_string(placement.index),
                                       mig.name,
                                       profile->sms,
                                       mig.sms,
                                       slice_fraction * gpu_bandwidth,
                                       mig.memory,
                                       slice_fraction};
      set_l2(device.geometry, *profile, slice_fraction);
      device.sharing = gpu.sharing;
      device.sharing.pinned_memory_limit =
          replica_pinned_memory_limit(gpu.sharing, device.geometry.memory);
      if (device.sharing.mode == SharingMode::mps && device.sharing.max_clients &&
          std::find(defaults.begin(), defaults.end(), "mps_max_clients") != defaults.end()) {
        device.sharing.max_clients = mig_mps_max_clients(
            *device.sharing.max_clients, mig.compute_slices, profile->compute_slices);
      }
      device.gpu = static_cast<int>(g);
      device.profile_defaults = defaults;
      device.mig_instance = placement.index;
      device.cost_per_hour = gpu.cost_per_hour * slice_fraction;
      device_by_name[device.geometry.name] = static_cast<int>(out.devices.size());
      out.devices.push_back(device);
    }
  }

  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    const TenantSpec& tenant = scenario.tenants[t];
    const SourceLocation where = scenario.locate(tenant.where.key_path + ".device");
    const std::vector<std::string> names =
        tenant.devices.empty() ? std::vector<std::string>{tenant.device} : tenant.devices;
    std::vector<int> indices;
    for (const std::string& name : names) {
      const auto found = device_by_name.find(name);
      if (found == device_by_name.end()) {
        if (mig_gpu_by_name.count(name)) {
          throw InputError(where, "'" + name + "' is partitioned with MIG: name an instance, e.g. '" +
                                      name + "/0'");
        }
        std::string known;
        for (const auto& [n, index] : device_by_name) known += (known.empty() ? "" : ", ") + n;
        throw InputError(where, "no device '" + name + "' (devices: " + known + ")");
      }
      ResolvedDevice& device = out.devices[static_cast<std::size_t>(found->second)];
      if (names.size() > 1 && device.mig_instance >= 0) {
        // MIG User Guide, "Application Considerations": "NCCL is currently not supported with
        // MIG", "CUDA IPC across GPU instances is not supported", and (R570+) "Only P2P between
        // MIG instances on the same GPU is supported": a data-parallel job's collectives have no
        // GPU path between instances. gpumux refuses rather than modelling host-staged copies
        // (docs/strategies.md, "Data-parallel tenants and MIG").
        throw InputError(where, "tenant '" + tenant.name + "' is data-parallel over " +
                                    std::to_string(names.size()) + " devices but '" + name +
                                    "' is a MIG instance: NCCL does not support MIG and MIG "
                                    "instances have no GPU peer-to-peer path between processes "
                                    "(MIG User Guide); give each replica a whole GPU");
      }
      if (tenant.gpus > 1 && device.sharing.mode == SharingMode::time_slicing) {
        throw InputError(scenario.locate(tenant.where.key_path + ".gpus"),
                         "tenant '" + tenant.name + "' asks for " + std::to_string(tenant.gpus) +
                             " GPUs, but time-shared GPUs only serve requests for one GPU (the "
                             "device plugin rejects multi-GPU requests under time-slicing)");
      }
      device.tenants.push_back(static_cast<int>(t));
      indices.push_back(found->second);
    }
    if (tenant.gpus > static_cast<int>(indices.size())) {
      throw InputError(scenario.locate(tenant.where.key_path + ".gpus"),
                       "tenant '" + tenant.name + "' asks for " + std::to_string(tenant.gpus) +
                           " GPUs: list them, e.g. device: [gpu0-0, gpu0-1]");
    }
    out.tenant_device.push_back(indices.front());
    out.tenant_devices.push_back(indices);
    if (tenant.workload.kernel_trace) {
      const DeviceProfile& target = *out.gpu_profiles[static_cast<std::size_t>(
          out.devices[static_cast<std::size_t>(indices.front())].gpu)];
      replay_kernel_trace(scenario, scenario.tenants[t], target, base_dir, trace_cache);
    }
    const ArrivalSpec& arrivals = tenant.workload.arrivals;
    out.traces.emplace_back();
    if (arrivals.process == ArrivalProcess::trace) {
      out.traces.back() = read_trace(arrivals.trace_file, arrivals.trace_format, arrivals.time_scale);
    }
  }

  for (const ResolvedDevice& device : out.devices) {
    const int count = static_cast<int>(device.tenants.size());
    const GpuSpec& gpu = scenario.gpus[static_cast<std::size_t>(device.gpu)];
    const SourceLocation where = scenario.locate(gpu.where.key_path + ".sharing");
    if (device.sharing.mode == SharingMode::exclusive && count > 1) {
      throw InputError(where, device.geometry.name + " is exclusive but has " +
                                  std::to_string(count) +
                                  " tenants; use sharing.mode time-slicing or mps, or MIG");
    }
    if (device.sharing.replicas > 0 && count > device.sharing.replicas) {
      throw InputError(scenario.locate(gpu.where.key_path + ".sharing.replicas"),
                       device.geometry.name + " allows " +
                           std::to_string(device.sharing.replicas) + " clients (replicas) but " +
                           std::to_string(count) + " tenants are placed on it");
    }
  }

  std::map<std::string, int> tenant_by_name;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    tenant_by_name[scenario.tenants[t].name] = static_cast<int>(t);
  }
  for (const FaultSpec& fault : scenario.faults) {
    if (!tenant_by_name.count(fault.tenant)) {
      throw InputError(scenario.locate(fault.where.key_path + ".tenant"),
                       "no tenant '" + fault.tenant + "'");
    }
  }
  out.scenario = std::move(scenario);
  return out;
}

}  // namespace gpumux
