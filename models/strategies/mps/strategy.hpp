#pragma once
// The MPS strategy (`mode: mps`): its parameter block and descriptor. The device is a
// ConcurrentDevice (models/gpu/concurrent.hpp: the law of MPS sharing, the client cap).
// Keys: active_thread_percentage (per client, (0, 100]), pinned_memory_limit (per client),
// max_clients (the server's client limit), cuda_version (13.1+: limit 60 instead of 48).
// Defaults (docs/strategies.md, "Device-plugin semantics"): `replicas: N` gives each client
// floor(100 / N) % of the threads (at least 1) and floor(device memory / N) in whole MiB unless
// set; the client limit comes from the profile (`mps_max_clients`; 60 from CUDA 13.1) and,
// inside a MIG instance, is lowered in proportion to its compute slices unless set. A fatal fault
// kills every client of the server (fault scope: the device).
#include <optional>

#include "models/strategies/strategy.hpp"

namespace gpumux {

struct MpsParams : ParamsOf<MpsParams> {
  std::optional<double> active_thread_percentage;   ///< (0,100] per client; default 100
  std::optional<std::int64_t> pinned_memory_limit;  ///< bytes per client; unset = none
  std::optional<int> max_clients;                   ///< MPS client limit; default from profile
  /// CUDA version of the MPS server as major * 100 + minor (`cuda_version: 13.1` -> 1301);
  /// from 13.1 the default client limit is 60 instead of 48 (MPS documentation).
  std::optional<int> cuda_version;
  /// `client_order`: how the block scheduler orders equally urgent kernels of different clients
  /// (SharingLimits::interleave_clients): interleaved (true) or launch order (false); unset =
  /// kDefaultInterleavedClients (docs/strategies.md, "MPS client order").
  std::optional<bool> interleaved_clients;
};

/// `active_thread_percentage` when neither it nor `replicas` is set: 100, every client may use
/// all the threads (the MPS default; MPS documentation, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).
inline constexpr double kDefaultActiveThreadPercentage = 100.0;

/// The MPS client order when a scenario does not say (an assumption, docs/strategies.md).
inline constexpr bool kDefaultInterleavedClients = true;

const Strategy& mps_strategy();

// The MPS rules, shared with strategies built on an MPS server (mps_static_partition/).

/// MPS client limit of one MIG instance (MIG User Guide): the whole-GPU limit lowered in
/// proportion to the instance's compute slices, rounded down, at least 1.
int mig_mps_max_clients(int whole_gpu_limit, int ci_compute_slices, int gpu_compute_slices);
/// The default client limit of an MPS server: the profile's, or at least 60 from CUDA 13.1.
int mps_default_max_clients(const DeviceProfile& profile, std::optional<int> cuda_version);
/// The device plugin's per-client memory for N clients of a device: floor(memory / N) in whole
/// MiB (k8s-device-plugin mps-control-daemon).
std::int64_t mps_equal_memory_share(std::int64_t memory, int clients);
/// The device plugin's per-client thread percentage for N clients: floor(100 / N), at least 1.
double mps_equal_thread_percentage(int clients);

}  // namespace gpumux
