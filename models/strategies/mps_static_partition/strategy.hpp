#pragma once
// The mps-static-partition strategy (`mode: mps-static-partition`): one MPS server whose N
// clients (the tenants placed on the device) each get an equal, fixed share of the device — the
// NVIDIA k8s-device-plugin's MPS sharing with `replicas` equal to the clients actually there, as
// a named strategy. Law, per device of S SMs and M bytes with N clients:
//   active thread percentage  p = floor(100 / N)  (at least 1; CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
//                                                  as the plugin's daemon sets it)
//   SMs one client may hold   h_c <= p / 100 x S  (sum over clients <= S: a static partition of
//                                                  the SMs by count; nobody takes a share left
//                                                  idle)
//   pinned memory per client  floor(M / N) in whole MiB (the plugin's pinned memory limit)
// HBM bandwidth and L2 stay shared as under `mps` (the plugin partitions neither). So one client
// behaves exactly as `exclusive`; N clients each running full-grid compute kernels each see N x
// their solo time (1/N of the SMs), never waiting for a neighbour's blocks. The MPS client limit
// (48; scaled down inside a MIG instance) and fault scope (every client of the server) are those
// of `mps` (models/strategies/mps/). No keys of its own: everything follows from N.
// Source of the arithmetic: docs/strategies.md, "Device-plugin semantics".
#include "models/gpu/device_profile.hpp"  // kMpsMaxClients
#include "models/strategies/strategy.hpp"

namespace gpumux {

struct MpsStaticPartitionParams : ParamsOf<MpsStaticPartitionParams> {
  // Derived at resolution (fit_device), never written in a scenario:
  int clients = 0;                   ///< N, the tenants placed on the device
  double thread_percentage = 100;    ///< floor(100 / N)
  std::int64_t memory_limit = 0;     ///< floor(M / N) in whole MiB; 0 = not fitted yet
  int max_clients = kMpsMaxClients;  ///< the MPS server's client limit
};

const Strategy& mps_static_partition_strategy();

}  // namespace gpumux
