#pragma once
// The contention law: how the kernels resident on one device (a whole GPU or a MIG instance)
// share it. Pure functions of a kernel's fields (kernel_run.hpp) and the device's geometry; no
// state, no time. Every path that needs a grant, a rate bound, an L2 factor or an HBM share asks
// these functions and none restates them: Device's eager recompute, its lazy incremental path
// and its inline/solo path (device.cpp), the direct runner (models/run/direct.cpp), the planner's
// bounds (models/plan/bounds.cpp) and validate's capacity check (through the bounds).
//
// Notation. S_gpu SMs of the whole GPU, S_dev of the device; B_dev its HBM bandwidth as a
// fraction of the whole GPU's; kernel k: f (grid width, share of S_gpu one wave fills),
// m (memory-bound share of its solo time), W (waves alone), WS (working set it re-reads).
//
// 1. SM demand (residency). A kernel wants  w_k = min(f_k S_gpu, S_dev, c_k)  SMs, c_k its
//    client's cap (MPS active thread percentage x S_dev). Resident blocks hold their SMs until
//    the kernel ends; freed SMs go to kernels still dispatching blocks (priority, then launch
//    order: the caller's order). A kernel holding h > 0 is in its last wave, and takes no more,
//    when its remaining blocks fit on what it holds:  (remaining / work) W f S_gpu <= h.
//                                                                           [sm_demand, grant]
// 2. Rate bound on h held SMs (serial roofline phases: the compute share stretches by 1/sigma,
//    the memory share by phi/beta):
//        slowdown = (1 - m) / sigma + m phi / beta,   r_k <= rate_max = 1 / slowdown
//        sigma = min(1, h / (f S_gpu)),   beta = min(1, B_dev).               [slowdown,
//        rate_bound]
// 3. L2 capacity (phi_k >= 1). Beside other memory-touching kernels, a kernel's L2 share is
//    proportional to its HBM traffic t_k = m_k rate_max_k (LRU occupancy follows insertion
//    rates):  L_k = L_dev t_k / sum_j t_j.  With hit(L) = min(1, L / WS), rho = B_HBM / B_L2,
//        c(L) = (1 - hit(L)) + rho hit(L),   phi_k = c(L_k) / c(L_dev)  in [1, 1/rho].
//    It applies when the device has an L2 cheaper than HBM (L_dev > 0, rho < 1), at least two
//    memory-touching kernels hold SMs and one re-reads a working set.    [l2_law_applies,
//    l2_factor]
// 4. HBM, aggregate conserved: kernels share B_dev max-min fairly (sim/core/max_min.hpp) under
//        sum_k m_k phi_k r_k <= B_dev;
//    the solve is needed only when the demand at the bounds leaves no room.   [hbm_room_at_bounds]
//
// Shortcuts and when they are exact (the predicates the fast paths ask):
//  - lazy path (device.hpp "Cost per event"): exact while every kernel holds its demand w_k and
//    runs at rate_max with phi = 1, i.e. !l2_law_applies and hbm_room_at_bounds;
//  - solo cache (a lone kernel's grant and bound, Device::solo_rates): exact for kernels with the
//    same SoloKey, the fields the lone grant and bound read.
//
// Cost: each function is O(1) (a handful of flops).
#include <algorithm>
#include <cstdint>
#include <string>

#include "models/gpu/kernel_run.hpp"

namespace gpumux {

/// Static description of a device, fixed at build time.
struct DeviceGeometry {
  std::string name;                ///< "gpu0" or "gpu0/1"
  std::string profile;             ///< "h100-sxm-80gb" or "1g.10gb"
  int gpu_sms = 0;                 ///< SMs of the whole GPU (S_gpu)
  int sms = 0;                     ///< SMs of this device (S_dev)
  double bandwidth = 1.0;          ///< fraction of the whole GPU's HBM bandwidth (B_dev)
  std::int64_t memory = 0;         ///< bytes
  double reserved_fraction = 1.0;  ///< share of the physical GPU this device reserves (cost)
  double l2_bytes = 0;         ///< L2 capacity of this device (a MIG instance: its slices' share)
  double l2_cost_ratio = 1.0;  ///< rho = HBM bandwidth / L2 bandwidth, in (0, 1]
};

namespace contention {

/// w_k (law 1): SMs a kernel of grid width `f` wants on `g` under its client's cap `client_cap`.
inline double sm_demand(double f, const DeviceGeometry& g, double client_cap) {
  const double sms = g.sms;
  return std::min({f * g.gpu_sms, sms, client_cap});
}

/// Law 1's grant: gives `k` what it may take from `free` SMs of `g` (its client's cap
/// `client_cap`, of which its client holds `held_by_client`); updates k.occupancy, `free` and
/// `held_by_client`. True when it granted something. `epsilon`: SMs below which nothing counts.
inline bool grant(KernelRun& k, const DeviceGeometry& g, double client_cap, double epsilon,
                  double& free, double& held_by_client) {
  const double full_width = k.sm_fraction * g.gpu_sms;
  const double sms = g.sms;
  const double demand = std::min({full_width, sms, client_cap});
  if (k.occupancy >= demand - epsilon) return false;  // holding its full width
  // In its last wave (every remaining block already resident on what it holds) it takes no
  // more. Remaining blocks, in SMs they fill: (remaining / work) W f S_gpu. A preempted or new
  // kernel holds nothing, so it is always dispatching.
  const double remaining_blocks = k.work > 0 ? (k.remaining / k.work) * k.waves * full_width : 0.0;
  if (k.occupancy > 0 && remaining_blocks <= k.occupancy + epsilon) return false;
  const double granted = std::min({demand - k.occupancy, free, client_cap - held_by_client});
  if (granted <= epsilon) return false;
  k.occupancy += granted;
  held_by_client += granted;
  free -= granted;
  return true;
}

/// Law 2: the slowdown of a kernel (f, m, l2_factor phi) on `held_sms` SMs of `g` relative to
/// alone on the whole GPU (>= 1 on its full width; +inf when it holds nothing).
inline double slowdown(double f, double m, double l2_factor, double held_sms,
                       const DeviceGeometry& g) {
  const double sigma = std::min(1.0, held_sms / (f * g.gpu_sms));
  const double beta = std::min(1.0, g.bandwidth);
  return (1.0 - m) / sigma + m * l2_factor / beta;
}

/// Law 2: rate_max = 1 / slowdown (0 when it holds no SMs or the device has no bandwidth).
inline double rate_bound(double f, double m, double l2_factor, double held_sms,
                         const DeviceGeometry& g) {
  const double sigma = std::min(1.0, held_sms / (f * g.gpu_sms));
  const double beta = std::min(1.0, g.bandwidth);
  if (sigma <= 0 || beta <= 0) return 0.0;
  return 1.0 / slowdown(f, m, l2_factor, held_sms, g);
}

/// Law 3's trigger on a device where `memory_kernels` memory-touching kernels hold SMs and
/// `any_reuse` says whether one of them re-reads a working set.
inline bool l2_law_applies(const DeviceGeometry& g, int memory_kernels, bool any_reuse) {
  return g.l2_bytes > 0 && g.l2_cost_ratio < 1.0 && memory_kernels >= 2 && any_reuse;
}

/// Law 3: c(L) for `cache` bytes of L2 and a working set of `working_set` bytes (> 0).
inline double l2_cost(double cache, double working_set, double rho) {
  const double hit = std::min(1.0, cache / working_set);
  return (1.0 - hit) + rho * hit;
}

/// Law 3: phi_k of a kernel whose HBM traffic is `traffic` of the memory kernels' `total`.
inline double l2_factor(double traffic, double total, double working_set, const DeviceGeometry& g) {
  const double share = g.l2_bytes * traffic / total;
  return l2_cost(share, working_set, g.l2_cost_ratio) /
         l2_cost(g.l2_bytes, working_set, g.l2_cost_ratio);
}

/// Law 4: HBM use (fraction of the whole GPU's bandwidth) of a kernel running at `rate`.
inline double hbm_use(const KernelRun& k, double rate) {
  return k.memory_bound * k.l2_factor * rate;
}

/// Law 4's shortcut: true when a total HBM `demand` at the kernels' bounds leaves room on `g`,
/// so the max-min solution is every kernel at its bound. Progressive filling
/// (sim/core/max_min.cpp) freezes a variable at exactly its bound unless the constraint
/// saturates first (remaining <= 1e-12 max(1, C)), which cannot happen when the demand leaves
/// 1e-9 max(1, C) free (far above the filling's rounding).
inline bool hbm_room_at_bounds(double demand, const DeviceGeometry& g) {
  const double capacity = g.bandwidth;
  return capacity > 0 && demand <= capacity - 1e-9 * std::max(1.0, capacity);
}

/// The fields of a kernel a lone kernel's grant and bound read (law 1 and 2 with phi = 1, the
/// client's cap fixed): two kernels with equal keys get the same solo grant and bound.
struct SoloKey {
  double sm_fraction = -1, memory_bound = -1;
  bool operator==(const SoloKey&) const = default;
};
inline SoloKey solo_key(const KernelRun& k) { return SoloKey{k.sm_fraction, k.memory_bound}; }

}  // namespace contention
}  // namespace gpumux
