#pragma once
// The contention law: how the kernels resident on one device (a whole GPU or a MIG instance) share
// it. Pure functions of a kernel's fields (kernel_run.hpp) and the device's geometry; no state, no
// time. Every path that needs a grant, a rate bound, an L2 factor or an HBM share asks these
// functions and none restates them: Device's eager recompute, its lazy incremental path and its
// inline/solo path (device.cpp), the direct runner (models/run/direct.cpp), the planner's bounds
// (models/plan/bounds.cpp) and validate's capacity check (through the bounds).
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
//    [sm_demand, grant, dispatching]
// 1b. Block retirement (law "residency"; DeviceGeometry::block_retirement). Resident blocks are
//    never preempted, but a kernel's blocks retire at the end of each round (a wave on the SMs it
//    holds: block time = solo duration / W, so a round does (work / W) h / (f S_gpu) of work),
//    and the block scheduler then dispatches pending blocks of more urgent streams or MPS clients
//    first (CUDA Programming Guide, "Stream Priorities"; MPS CUDA_MPS_CLIENT_PRIORITY). So while a
//    more urgent kernel waits for SMs, a less urgent kernel that still has blocks to dispatch
//    gives up, at the end of its current round, the SMs the urgent one wants (least urgent first)
//    and re-dispatches its remaining blocks on SMs freed later. An urgent kernel thus waits at
//    most one round; an equally urgent newcomer still waits for the older kernel's last round
//    (launch order), and a kernel in its last round keeps its SMs. [dispatching, round_work;
//    Device::retire_for_urgent]
// 2. Rate bound on h held SMs (serial roofline phases: the compute share stretches by 1/sigma,
//    the memory share by phi/beta):
//        slowdown = (1 - m) / sigma + m phi / beta,   r_k <= rate_max = 1 / slowdown,
//        sigma = min(1, h / (f S_gpu)),   beta = min(1, B_dev, h s) / u,   u = min(1, f S_gpu s).
//    Discrete waves (law "residency", a kernel whose grid is known: G = blocks / blocks per SM,
//    KernelRun::grid > 0): its compute phase takes whole waves, ceil(G / floor(h)) on h SMs
//    against ceil(G / S_gpu) alone, so
//        sigma = ceil(G / S_gpu) / ceil(G / floor(h))            (h >= 1; below one SM
//        sigma = h ceil(G / S_gpu) / ceil(G)),
//    e.g. 132 blocks, one per SM, on a 60-SM 3g.40gb: 3 waves, sigma = 1/3, and on a 64-SM
//    4g.40gb also 3. Without a grid (or under "fluid") the fluid sigma above.
//    s is the per-SM HBM ceiling (DeviceGeometry::sm_bandwidth: one SM's bandwidth as a fraction
//    of the whole GPU's; 0 = none, then u = 1 and beta = min(1, B_dev)): every byte a kernel
//    moves passes through the L1/L2 port of the SM that asked for it, so its HBM throughput is at
//    most h s. Alone on its full width on the whole GPU, where its solo time was defined, it drew
//    u of the HBM bandwidth in its memory phase; beta is its memory speed relative to that
//    (beta <= 1 since h <= f S_gpu). [hbm_draw, memory_speed, slowdown, rate_bound]
// 3. L2 capacity (phi_k >= 1). Solo durations are defined on the whole GPU's L2, L_ref
//    (DeviceGeometry::l2_reference; 0 = the device's own L2, L_ref = L_dev). With
//    hit(L) = min(1, L / WS) and rho = B_HBM / B_L2 (an L2 hit costs rho of a miss),
//        c(L) = (1 - hit(L)) + rho hit(L),   phi = c(L_k) / c(L_ref)  in [1, 1/rho],
//    L_k the L2 the kernel keeps:
//    - alone (or beside kernels that do not trigger the shared case), L_k = L_dev: a lone kernel
//      on a MIG slice keeps only the slice's L2 (phi > 1 when WS > L_dev); [lone_l2_factor]
//    - beside other memory-touching kernels, its share is proportional to its HBM traffic
//      t_k = m_k u_k phi_k rate_max_k (LRU occupancy follows insertion rates):
//      L_k = L_dev t_k / sum_j t_j. This applies when the device has an L2 cheaper than HBM
//      (L_dev > 0, rho < 1), at least two memory-touching kernels hold SMs and one re-reads a
//      working set. [l2_law_applies, l2_factor]
// 4. HBM, aggregate conserved: kernels share B_dev max-min fairly (sim/core/max_min.hpp) under
//        sum_k m_k u_k phi_k r_k <= B_dev
//    (a kernel's HBM use; dram_busy is the sum / B_dev). The solve is needed only when the
//    demand at the bounds leaves no room. [hbm_use, hbm_room_at_bounds]
//
// Shortcuts and when they are exact (the predicates the fast paths ask):
//  - lazy path (device.hpp "Cost per event"): exact while every kernel holds its demand w_k and
//    runs at rate_max with its lone phi (lone_l2_factor, fixed while it runs), i.e.
//    !l2_law_applies and hbm_room_at_bounds;
//  - solo cache (a lone kernel's grant and bound, Device::solo_rates): exact for kernels with the
//    same SoloKey, the fields the lone grant and bound read.
//
// Laws by name (scenario key `contention_law:`, docs/strategies.md; CONTRIBUTING.md says how to
// add one): "residency" (the default: laws 1-4 with block retirement (1b), whole waves, the
// per-SM ceiling and L_ref the whole GPU's L2) and "fluid" (the law of the last release: resident
// blocks hold their SMs until the kernel ends, no per-SM ceiling, s = 0, and L_ref = L_dev, so a
// lone kernel never feels a MIG slice's L2). A law is the set of terms it
// puts on the device's geometry (set_law_terms); the functions below read only the geometry.
//
// Cost: each function is O(1) (a handful of flops).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  /// s: one SM's HBM bandwidth as a fraction of the whole GPU's (law 2); 0 = no per-SM ceiling.
  double sm_bandwidth = 0;
  /// L_ref: the L2 (bytes) on which solo durations were defined, the whole GPU's (law 3); 0 =
  /// this device's own (the fluid law: a lone kernel never feels a MIG slice's smaller L2).
  double l2_reference = 0;
  bool discrete_waves = false;    ///< law 2: whole waves where the grid is known
  bool block_retirement = false;  ///< law 1b: resident blocks retire at wave boundaries
};

struct DeviceProfile;

/// A contention law by name: which terms of the laws below it includes.
struct ContentionLaw {
  std::string_view name;
  std::string_view summary;       ///< one line, for docs and --help
  bool per_sm_bandwidth = false;  ///< law 2's per-SM HBM ceiling s
  bool own_l2 = false;  ///< law 3 against the whole GPU's L2 (a MIG slice keeps only its own)
  bool discrete_waves = false;    ///< law 2's whole waves for kernels with a known grid
  bool block_retirement = false;  ///< law 1b: urgent kernels take SMs at wave boundaries
};

/// The registered laws, the default first. O(1).
const std::vector<ContentionLaw>& contention_laws();
/// The law of that name, or nullptr. O(number of laws).
const ContentionLaw* find_contention_law(std::string_view name);
/// The default law ("residency").
const ContentionLaw& default_contention_law();

/// Sets the terms `law` reads on a device of `profile` whose MIG memory slices are
/// `slice_fraction` of the GPU's (1 for a whole GPU): L2 capacity (MIG User Guide: L2 goes with
/// the memory slices) and rho = HBM / L2 bandwidth (measured where the profile has them), and the
/// per-SM ceiling s = profile.sm_bandwidth / HBM bandwidth when the law has it (else 0).
void set_law_terms(DeviceGeometry& g, const DeviceProfile& profile, double slice_fraction,
                   const ContentionLaw& law);

namespace contention {

/// w_k (law 1): SMs a kernel of grid width `f` wants on `g` under its client's cap `client_cap`.
inline double sm_demand(double f, const DeviceGeometry& g, double client_cap) {
  const double sms = g.sms;
  return std::min({f * g.gpu_sms, sms, client_cap});
}

/// Law 1: true while `k` has blocks left to dispatch beyond those resident on the `occupancy`
/// SMs it holds, (remaining / work) W f S_gpu > h: it is not in its last round.
inline bool dispatching(const KernelRun& k, const DeviceGeometry& g, double epsilon) {
  const double full_width = k.sm_fraction * g.gpu_sms;
  const double remaining_blocks = k.work > 0 ? (k.remaining / k.work) * k.waves * full_width : 0.0;
  return remaining_blocks > k.occupancy + epsilon;
}

/// Law 1b: the work (solo-ns) one round of `k`'s resident blocks does on the SMs it holds: a
/// full-width wave's work / W, times the share h / (f S_gpu) of its width it holds. 0 when it
/// holds nothing.
inline double round_work(const KernelRun& k, const DeviceGeometry& g) {
  const double full_width = k.sm_fraction * g.gpu_sms;
  if (full_width <= 0 || k.waves <= 0) return 0.0;
  return (k.work / k.waves) * std::min(1.0, k.occupancy / full_width);
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
  if (k.occupancy > 0 && !dispatching(k, g, epsilon)) return false;
  const double granted = std::min({demand - k.occupancy, free, client_cap - held_by_client});
  if (granted <= epsilon) return false;
  k.occupancy += granted;
  held_by_client += granted;
  free -= granted;
  return true;
}

/// Law 2: u, the share of the whole GPU's HBM bandwidth a kernel of grid width `f` draws in its
/// memory phase alone on its full width (1 without a per-SM ceiling).
inline double hbm_draw(double f, const DeviceGeometry& g) {
  return g.sm_bandwidth > 0 ? std::min(1.0, f * g.gpu_sms * g.sm_bandwidth) : 1.0;
}

/// Law 2: beta, the memory phase's speed on `held_sms` SMs of `g` relative to alone.
inline double memory_speed(double f, double held_sms, const DeviceGeometry& g) {
  if (!(g.sm_bandwidth > 0)) return std::min(1.0, g.bandwidth);
  return std::min({1.0, g.bandwidth, held_sms * g.sm_bandwidth}) / hbm_draw(f, g);
}

/// Law 2: sigma, the compute phase's speed on `held_sms` > 0 SMs relative to alone, for a
/// kernel of grid width `f` and grid `grid` (0 = unknown).
inline double compute_speed(double f, double grid, double held_sms, const DeviceGeometry& g) {
  if (!(grid > 0) || !g.discrete_waves) return std::min(1.0, held_sms / (f * g.gpu_sms));
  const double tolerance = 1e-9;  // (grids and SM counts are integers; shares are not exact)
  const double alone = std::ceil(grid / g.gpu_sms - tolerance);
  const double whole = std::floor(held_sms + tolerance);
  if (whole < 1) return std::min(1.0, held_sms * alone / std::ceil(grid - tolerance));
  return std::min(1.0, alone / std::ceil(grid / whole - tolerance));
}

/// Law 2: the slowdown of a kernel (f, m, l2_factor phi, grid G) on `held_sms` > 0 SMs of `g`
/// relative to alone on the whole GPU (>= 1).
inline double slowdown(double f, double m, double l2_factor, double held_sms,
                       const DeviceGeometry& g, double grid = 0) {
  const double sigma = compute_speed(f, grid, held_sms, g);
  const double beta = memory_speed(f, held_sms, g);
  return (1.0 - m) / sigma + m * l2_factor / beta;
}

/// Law 2: rate_max = 1 / slowdown (0 when it holds no SMs or the device has no bandwidth).
inline double rate_bound(double f, double m, double l2_factor, double held_sms,
                         const DeviceGeometry& g, double grid = 0) {
  if (!(held_sms > 0) || !(g.bandwidth > 0)) return 0.0;
  return 1.0 / slowdown(f, m, l2_factor, held_sms, g, grid);
}

/// Law 2, for SM-time bounds: the least SM-ns a kernel (f, grid) holds per solo-ns of its
/// compute phase on any number of SMs, min over h of h / sigma(h): f S_gpu (fluid), and with
/// whole waves G / ceil(G / S_gpu) (h ceil(G / h) >= G).
inline double min_sms_per_compute(double f, double grid, const DeviceGeometry& g) {
  const double fluid = f * g.gpu_sms;
  if (!(grid > 0) || !g.discrete_waves) return fluid;
  return std::min(fluid, grid / std::ceil(grid / g.gpu_sms - 1e-9));
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

/// Law 3: L_ref, the L2 solo durations were defined on.
inline double l2_reference(const DeviceGeometry& g) {
  return g.l2_reference > 0 ? g.l2_reference : g.l2_bytes;
}

/// Law 3: phi_k of a kernel whose HBM traffic is `traffic` of the memory kernels' `total`.
inline double l2_factor(double traffic, double total, double working_set, const DeviceGeometry& g) {
  const double share = g.l2_bytes * traffic / total;
  return l2_cost(share, working_set, g.l2_cost_ratio) /
         l2_cost(l2_reference(g), working_set, g.l2_cost_ratio);
}

/// Law 3 alone: phi of `k` keeping the device's whole L2 (1 when that is the reference L2, the
/// kernel re-reads nothing, or L2 is no cheaper than HBM).
inline double lone_l2_factor(const KernelRun& k, const DeviceGeometry& g) {
  if (!(g.l2_reference > g.l2_bytes) || !(k.working_set > 0) || !(k.memory_bound > 0) ||
      !(g.l2_cost_ratio < 1.0))
    return 1.0;
  return l2_cost(g.l2_bytes, k.working_set, g.l2_cost_ratio) /
         l2_cost(g.l2_reference, k.working_set, g.l2_cost_ratio);
}

/// Law 4: HBM use (fraction of the whole GPU's bandwidth) of a kernel running at `rate` on `g`:
/// m u phi rate.
inline double hbm_use(const KernelRun& k, double rate, const DeviceGeometry& g) {
  const double draw = k.memory_bound * hbm_draw(k.sm_fraction, g);
  return draw * k.l2_factor * rate;
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
  double sm_fraction = -1, memory_bound = -1, working_set = -1, grid = -1;
  bool operator==(const SoloKey&) const = default;
};
inline SoloKey solo_key(const KernelRun& k) {
  return SoloKey{k.sm_fraction, k.memory_bound, k.working_set, k.grid};
}

}  // namespace contention
}  // namespace gpumux
