#include "models/strategies/mps/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/gpu/concurrent.hpp"
#include "models/gpu/device_profile.hpp"

namespace gpumux {

// MIG User Guide, "Deployment Considerations" -> "Application Considerations"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/deployment-considerations.html):
// "CUDA MPS is supported on top of MIG. The only limitation is that the maximum number of clients
// (48) is lowered proportionally to the Compute Instance size." gpumux has one compute instance
// per GPU instance, so the CI size is the instance's compute slices of the GPU's (7 on
// A100/H100/H200, 4 on A30); the guide gives no rounding, a client count is whole: rounded down,
// at least 1 (1g on H100: 48 x 1/7 -> 6). The CUDA 13.1 limit of 60 is scaled the same way. Only
// the profile default is scaled: an explicit `max_clients` wins.
int mig_mps_max_clients(int whole_gpu_limit, int ci_compute_slices, int gpu_compute_slices) {
  if (ci_compute_slices <= 0 || gpu_compute_slices <= 0) return whole_gpu_limit;
  return std::max(1, whole_gpu_limit * ci_compute_slices / gpu_compute_slices);
}

// MPS documentation: 48 clients per device up to CUDA 13.0, 60 from CUDA 13.1 (kMpsMaxClients,
// models/gpu/device_profile.hpp).
int mps_default_max_clients(const DeviceProfile& profile, std::optional<int> cuda_version) {
  const bool cuda_13_1 = cuda_version && *cuda_version >= 1301;
  return cuda_13_1 ? std::max(kMpsMaxClientsFromCuda13_1, profile.mps_max_clients)
                   : profile.mps_max_clients;
}

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
std::int64_t mps_equal_memory_share(std::int64_t memory, int clients) {
  constexpr std::int64_t mib = 1024 * 1024;
  return memory / std::max(1, clients) / mib * mib;
}

// The device plugin's mps-control-daemon computes the share in integer arithmetic,
// `fmt.Sprintf("%d", 100/replicasPerDevice)` (cmd/mps-control-daemon/mps/daemon.go,
// activeThreadPercentage), so 3 replicas get 33 %, not 33.3 %. Above 100 replicas that would be
// 0 %, not a valid percentage: gpumux keeps 1 %.
double mps_equal_thread_percentage(int clients) {
  return static_cast<double>(std::max(1, 100 / std::max(1, clients)));
}

namespace {

using namespace yaml;

// fmt's "{}": the shortest text that reads back as the same double (emit.cpp's rule).
std::string fmt_number(double value) { return fmt::format("{}", value); }
// "13.1" -> 1301; written as a string or a number (13.1 and 13.10 are the same version).
int cuda_version_of(Context& ctx, const Field& f) {
  const std::string text = text_of(ctx, f);
  const auto dot = text.find('.');
  int major = -1, minor = 0;
  try {
    std::size_t used = 0;
    major = std::stoi(text.substr(0, dot), &used);
    if (used != text.substr(0, dot).size()) major = -1;
    if (dot != std::string::npos) {
      const std::string rest = text.substr(dot + 1);
      minor = std::stoi(rest, &used);
      if (used != rest.size() || rest.empty()) major = -1;
    }
  } catch (const std::exception&) {
    major = -1;
  }
  if (major < 1 || minor < 0 || minor > 99) {
    ctx.fail(f, "expected a CUDA version such as 12.6 or 13.1, got '" + text + "'");
  }
  return major * 100 + minor;
}

// The MPS keys, declared once (ParamSpec): read, emitted and copied in this order.
const std::vector<ParamSpec>& mps_parameters() {
  static const std::vector<ParamSpec> table = {
      {"active_thread_percentage", "%",
       fmt::format("{} (with `replicas: N`: floor(100 / N), at least 1)",
                   kDefaultActiveThreadPercentage),
       "(0, 100]",
       "SMs one client's kernels may hold together, as a share of the device's "
       "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<MpsParams>(p).active_thread_percentage = fraction_of(ctx, f, 0, true, 100);
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         if (const auto& v = params_as<MpsParams>(p).active_thread_percentage)
           out << YAML::Key << key << YAML::Value << fmt_number(*v);
       },
       copy_member<&MpsParams::active_thread_percentage>},
      {"pinned_memory_limit", "bytes",
       "none (with `replicas: N`: floor(device memory / N) in whole MiB)", "a size, e.g. 10GiB",
       "memory one client may allocate on the device (MPS pinned device memory limit)",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<MpsParams>(p).pinned_memory_limit = size_of(ctx, f);
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         if (const auto& v = params_as<MpsParams>(p).pinned_memory_limit)
           out << YAML::Key << key << YAML::Value << units::format_size(*v);
       },
       copy_member<&MpsParams::pinned_memory_limit>},
      {"max_clients", "count",
       "profile `mps_max_clients` (48; 60 from CUDA 13.1), lowered in proportion to a MIG "
       "instance's compute slices",
       ">= 1", "clients the MPS server accepts; the next one is refused",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<MpsParams>(p).max_clients = int_of(ctx, f, 1);
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         if (const auto& v = params_as<MpsParams>(p).max_clients)
           out << YAML::Key << key << YAML::Value << *v;
       },
       copy_member<&MpsParams::max_clients>},
      {"cuda_version", "version", "none (the profile's client limit)", "MAJOR.MINOR, e.g. 13.1",
       "CUDA version of the MPS server: from 13.1 the default client limit is 60",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<MpsParams>(p).cuda_version = cuda_version_of(ctx, f);
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         if (const auto& v = params_as<MpsParams>(p).cuda_version)
           out << YAML::Key << key << YAML::Value
               << (std::to_string(*v / 100) + "." + std::to_string(*v % 100));
       },
       copy_member<&MpsParams::cuda_version>},
      {"client_order", "choice", kDefaultInterleavedClients ? "interleaved" : "launch_order",
       "interleaved | launch_order",
       "block dispatch between equally urgent kernels of different clients",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<MpsParams>(p).interleaved_clients = choice_of<bool>(
             ctx, f, {{"interleaved", true}, {"launch_order", false}, {"launch-order", false}},
             {"interleaved", "launch_order"}, "MPS client order");
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         if (const auto& v = params_as<MpsParams>(p).interleaved_clients)
           out << YAML::Key << key << YAML::Value << (*v ? "interleaved" : "launch_order");
       },
       copy_member<&MpsParams::interleaved_clients>},
  };
  return table;
}

class Mps final : public Strategy {
 public:
  const char* name() const override { return "mps"; }
  const char* summary() const override {
    return "all clients' kernels at once on one MPS server: SM residency, thread and memory caps";
  }
  const std::vector<ParamSpec>& parameters() const override { return mps_parameters(); }
  std::unique_ptr<StrategyParams> make_params() const override {
    return std::make_unique<MpsParams>();
  }

  std::vector<std::string> fill_defaults(StrategyParams& block, int replicas,
                                         const DeviceProfile& profile) const override {
    auto& s = params_as<MpsParams>(block);
    std::vector<std::string> used;
    if (!s.max_clients) {
      s.max_clients = mps_default_max_clients(profile, s.cuda_version);
      used.emplace_back("mps_max_clients");
    }
    // `replicas: N` gives each client an equal share of the threads, as the NVIDIA
    // k8s-device-plugin (the GPU Operator's MPS sharing) and GKE's MPS sharing do. An explicit
    // `active_thread_percentage` wins. Without replicas: 100 (the MPS default).
    if (!s.active_thread_percentage) {
      s.active_thread_percentage =
          replicas > 0 ? mps_equal_thread_percentage(replicas) : kDefaultActiveThreadPercentage;
    }
    return used;
  }

  void fit_device(StrategyParams& block, const DeviceFit& device) const override {
    auto& s = params_as<MpsParams>(block);
    // The memory half of the `replicas` rule, per device (a MIG instance: its own memory).
    if (device.replicas > 0 && !s.pinned_memory_limit) {
      s.pinned_memory_limit = mps_equal_memory_share(device.memory, device.replicas);
    }
    const bool limit_from_profile =
        device.profile_defaults != nullptr &&
        std::find(device.profile_defaults->begin(), device.profile_defaults->end(),
                  "mps_max_clients") != device.profile_defaults->end();
    if (device.compute_slices > 0 && s.max_clients && limit_from_profile) {
      s.max_clients =
          mig_mps_max_clients(*s.max_clients, device.compute_slices, device.gpu_compute_slices);
    }
  }

  SharingLimits sharing_limits(const StrategyParams& block) const override {
    const auto& s = params_as<MpsParams>(block);
    SharingLimits limits;
    limits.client_memory_limit = s.pinned_memory_limit;
    limits.thread_share =
        s.active_thread_percentage.value_or(kDefaultActiveThreadPercentage) / 100.0;
    limits.max_clients = s.max_clients.value_or(kMpsMaxClients);
    limits.shared_server = true;
    limits.interleave_clients = s.interleaved_clients.value_or(kDefaultInterleavedClients);
    return limits;
  }
  std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                      const StrategyParams& block) const override {
    return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), sharing_limits(block));
  }

  FaultScope fault_scope() const override { return FaultScope::device; }
  const char* fault_note() const override { return " (MPS: every client of the server fails)"; }
};

}  // namespace

const Strategy& mps_strategy() {
  static const Mps strategy;
  return strategy;
}

}  // namespace gpumux
