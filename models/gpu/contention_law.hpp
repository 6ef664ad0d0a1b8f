#pragma once
// The contention law's maths: how the kernels resident on one device (a whole GPU or a MIG
// instance) share it. Pure O(1) functions of a kernel's fields (kernel_run.hpp) and the device's
// geometry; no state, no time. The sharing passes between kernels built on them (grant order,
// guest placement, urgent retirement, the L2 pass, the HBM max-min problem) are the law classes,
// chosen by name (sharing_law.hpp, models/gpu/laws/). Every path that needs a grant, a rate
// bound, an L2 factor or an HBM share asks these functions or a law and none restates them: the
// laws' passes, Device's lazy incremental path and its inline/solo path (device_lazy.cpp,
// device_solo.cpp), the direct runner (models/run/direct.cpp), the planner's bounds
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
// 1b. Block retirement (law "residency"; ResidencyLaw::retire_for_urgent). Resident blocks are
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
//    Staggered retirement (law "staggered" only, an option: ContentionLaw::retirement_spread
//    s > 0; every other law has s = 0, the lock-step rounds above). The block scheduler dispatches
//    block by block as resources free (NVIDIA, "CUDA Pro Tip: Minimize the Tail Effect",
//    https://developer.nvidia.com/blog/cuda-pro-tip-minimize-the-tail-effect/), and blocks of one
//    kernel end at different times; a round's h SMs free uniformly over its last s of a round
//    (assumption: s = 1, the fully desynchronised limit, an upper bound on the effect; no source
//    at hand publishes per-block end times of these kernels). Waiting kernels that want the share
//    q = w / h of a holder's SMs (2 w / h when the holder is an interleaved peer client that still
//    dispatches: the freed SMs alternate between the two clients' pending blocks; q <= 1) get them
//    at round progress
//        dispatching holder:   min(1, max(p, 1 - s) + s q)   (SMs freed before the wait, p, went
//                                                             to its own next blocks)
//        last round:           max(p, 1 - s + s q)           (to any waiting kernel, whatever its
//                                                             priority: nothing is left to
//                                                             dispatch)
//    p the progress of the round when the wait began (the time, once set, stands). In its last
//    round the holder's remaining blocks still end at the round's end: the SMs handed on
//    (KernelRun::retired_sms) count for its rate bound, not for its grant, so a kernel's time
//    with nobody waiting is exactly the lock-step one. [ResidencyLaw::retire_for_urgent,
//    ContentionLaw::next_event]
// 1c. Block co-residency (law "residency"; ResidencyLaw::place_guests). An SM hosts blocks of
//    several kernels at once while its resources allow: per SM, R = (threads T, registers G,
//    shared memory Sh, block slots B) (the profile's sm_limits); a block of kernel k takes
//    phi_k = (32 ceil(t_k / 32), ceil(t_k / 32) ceil(32 r_k / 256) 256, s_k + reserve rounded up
//    to 128 B, 1) (CUDA occupancy rules: warps, per-warp register allocation, 128-byte shared
//    memory units). Blocks of k fitting beside resources U already in use:
//        fit_k(U) = floor(min_r (R_r - U_r) / phi_k,r)          [blocks_fitting]
//    (fit_k(0) is the occupancy calculator's blocks per SM alone, b_k). A kernel whose footprint
//    is unknown (KernelRun::footprint, 0 threads) holds whole SMs as in law 1.
//    Placement (Gilman, Ogden, Guo, Walls, "Demystifying the Placement Policies of the NVIDIA GPU
//    Thread Block Scheduler for Concurrent Kernels", SIGMETRICS PER 2020): the block scheduler
//    places each block on the SM with the most room, so free SMs first, and dispatches a kernel's
//    blocks only after every earlier kernel's are dispatched, into the LEFTOVER resources of SMs
//    still running the earlier kernel's blocks (most-room also spreads a grid breadth-first: an
//    SM of H holds floor(beta_H) or ceil(beta_H) of its blocks). So after law 1's grant of free
//    SMs, a kernel G
//    with a known footprint that still wants SMs becomes a guest on the SMs of one host H (a
//    kernel with a known footprint holding SMs, not itself a guest) when no kernel ahead of G in
//    dispatch order still wants SMs, and H has dispatched every block (it is in its last round)
//    or H yields to G (H less urgent, or another MPS client under interleaved client order,
//    ConcurrentDevice). On each of H's SMs H keeps beta_H = blocks / (W f S_gpu) resident blocks
//    (in [1, b_H]); G places L = min(fit_G(ceil(beta_H) phi_H), beta_G) blocks on every SM of H,
//    or, when none fits there, L = min(fit_G(floor(beta_H) phi_H), beta_G) on the share
//    ceil(beta_H) - beta_H of H's SMs that hold floor(beta_H) [guest_room], and takes as many
//    of those SMs as its demand needs, L / beta_G of its per-SM residency on each (its SM
//    equivalents, KernelRun::co_sms). Among hosts the one with the largest L (most room). When H
//    leaves the device, G keeps its blocks: its SM equivalents become SMs it holds.
//    Sharing an SM's issue slots (the per-SM throughput both kernels' warps draw on): host and
//    guest get shares in proportion to their resident warps (beta_H w_H against L w_G, w = warps
//    per block), each bounded by its own demand, the compute share of its solo per-SM rate,
//    d_H = busy(H) and d_G = busy(G) L / beta_G (busy = 1 - m for serial phases, law 2); what one
//    leaves the other takes (two-party water-filling) [issue_shares]. A kernel of share a
//    progresses on that SM at a / busy(k) of one SM's worth of its solo compute rate (1 when it
//    computes nothing): a memory-bound guest leaves a compute-bound host's issue slots free and
//    neither slows (busy(k) = c for an overlapped kernel: the share of its solo time its SMs
//    issue). Its rate bound (law 2) then takes sigma = sigma(h_whole) h_compute / h_whole,
//    h_whole the SMs its blocks sit on and h_compute their SM equivalents of compute progress, and
//    the per-SM HBM ceiling on h_memory: an SM's port s is shared as its issue slots are (warps,
//    each up to its demand m u / (f S_gpu s), a guest's x L / beta_G; laws/sharing.cpp). A host's
//    SMs that carry guests are not retired early for an urgent kernel (law 1b), a simplification.
// 2. Rate bound on h held SMs. A kernel's solo time splits into an SM phase (its SMs busy:
//    tensor/CUDA-core work, or the busiest SM's latency-bound critical path), which stretches by
//    1/sigma, and a memory phase (HBM traffic), which stretches by phi/beta. Two kinds of kernel:
//    - serial phases (a kernel that gives only m = memory_bound, the share of its solo time bound
//      by HBM: hand-written kernel lists, traces, the fluid law's kernels alike): the phases add,
//        slowdown = (1 - m) / sigma + m phi / beta;
//    - overlapped phases (KernelRun::busy_share c >= 0, `busy_share:`: the catalog's and an LLM
//      card's roofline kernels, duration D = max(busy, t_memory), c = busy / D and m =
//      t_memory / D, so max(c, m) = 1; the catalog's summed decode step stays serial): a pipelined
//      kernel streams its operands while its SMs work, so the solo time is the longer phase and so
//      is the time on h SMs (Williams, Waterman, Patterson, "Roofline: an insightful visual
//      performance model for multicore architectures", CACM 52(4), 2009: attainable time =
//      max(compute time, memory time), the two overlapped):
//        slowdown = max(c / sigma, m phi / beta).
//      E.g. compute-bound (c = 1) with t_memory = D / 8 on an A100 1g.10gb (sigma = 1 when its
//      grid fits the slice's 14 SMs, beta = 1/8): max(1, 8/8) = 1, where the serial reading of
//      the same kernel (m_s = 1/9) gives 8/9 + 8/9 = 1.78. A balanced one (c = m = 1) takes 8
//      there (its bytes need 8 D at 1/8 of the bandwidth), where the serial reading (m_s = 1/2)
//      gives 1/2 + 8/2 = 4.5: the serial reading under-counts the memory phase of a kernel whose
//      phases are both long. Both kinds give 1 alone on the whole GPU (sigma = beta = phi = 1).
//    In both, r_k <= rate_max = 1 / slowdown and
//        sigma = min(1, h / (f S_gpu)),   beta = min(1, B_dev, h s) / u,   u = min(1, f S_gpu s).
//    The SM phase's share of solo time, busy(k) = c (overlapped) or 1 - m (serial), is also the
//    share of its SMs' issue slots it uses alone (law 1c) and the planner's SM-time per solo-ns
//    (models/plan/bounds.cpp). [busy_share, phase_slowdown]
//    Discrete waves (law "residency", a kernel whose grid is known: G = blocks / blocks per SM,
//    KernelRun::grid > 0): its compute phase takes whole waves, ceil(G / floor(h)) on h SMs
//    against ceil(G / S_gpu) alone, so
//        sigma = ceil(G / S_gpu) / ceil(G / floor(h))            (h >= 1; below one SM
//        sigma = h ceil(G / S_gpu) / ceil(G)),
//    e.g. 132 blocks, one per SM, on a 60-SM 3g.40gb: 3 waves, sigma = 1/3, and on a 64-SM
//    4g.40gb also 3. Without a grid (or under "fluid") the fluid sigma above.
//    Throughput-shared rounds (a kernel with a throughput share tau > 0, KernelRun::
//    throughput_share: the catalog's kernels). A round of b resident blocks on one SM does not
//    take the time of one block: the blocks share the SM's issue slots (tensor and CUDA cores)
//    and its L2 port, so the busiest SM's critical path is affine in its blocks,
//        T(n) = ceil(n / r) L + n C,   n = ceil(B / h) blocks on the busiest of h SMs,
//    r resident per SM, L the per-round latency (fill, memory latencies, drain) and C one
//    block's throughput time (catalog_model.hpp, "Latency floor"). With tau = n_S C / T(n_S)
//    its share alone (n_S = ceil(B / S_gpu)) and ceil(n / r) ~ ceil(G / h):
//        1 / sigma = (1 - tau) ceil(G / floor(h)) / ceil(G / S_gpu)
//                  +      tau  ceil(B / floor(h)) / ceil(B / S_gpu)
//    (each term below one SM as above, with B for G in the second). E.g. BERT-large's FFN-down
//    GEMM at batch 1, seq 384, int8 (24 blocks of 128 x 128, two resident per SM, tau = 0.98
//    on the A100) on the 14-SM 1g.10gb: rounds say 1 (12 SM-loads fit 14 SMs), but 10 SMs run
//    two blocks that share their throughput, so 1 / sigma = 0.02 + 0.98 x 2 = 1.98, the
//    catalog's own critical path on 14 SMs (tests/unit/test_catalog_timing.cpp). Source for
//    the sharing: the warps of every resident block issue through the SM's four sub-partitions,
//    one Tensor Core each (NVIDIA A100 Tensor Core GPU Architecture whitepaper, "A100 SM
//    Architecture"). tau = 0 is the rounds law exactly;
//    alone on the whole GPU (h = S_gpu) sigma = 1 for every tau; with r = 1 (G = B) tau
//    changes nothing.
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
//    (a kernel's HBM use; dram_busy is the sum / B_dev). The same for both kinds of law 2: m is
//    the share of its solo time the memory phase takes at u of the bandwidth, so a solo-ns of
//    its work moves m u phi of a ns of the whole GPU's bandwidth, overlapped or not (an
//    overlapped kernel's m = t_memory / D is larger than the serial m_s = t_memory / (busy +
//    t_memory) of the same kernel: it moves the same bytes in less time). The solve is needed only
//    when the demand at the bounds leaves no room. [hbm_use, hbm_room_at_bounds]
//
// Shortcuts and when they are exact (the predicates the fast paths ask):
//  - lazy path (device.hpp "Cost per event"): exact while every kernel holds its demand w_k and
//    runs at rate_max with its lone phi (lone_l2_factor, fixed while it runs), i.e.
//    !l2_law_applies and hbm_room_at_bounds, and no kernel is a guest or a host (law 1c: a
//    co-resident kernel's bound depends on its neighbour);
//  - solo cache (a lone kernel's grant and bound, Device::solo_rates): exact for kernels with the
//    same SoloKey, the fields the lone grant and bound read.
//
// Laws by name (scenario key `contention_law:`, docs/strategies.md; sharing_law.hpp says how to
// add one): "residency" (the default: laws 1-4 with block retirement (1b), block co-residency
// (1c), whole waves, the per-SM ceiling, overlapped phases for kernels with a busy share (law 2)
// and L_ref the whole GPU's L2) and "fluid" (the law of the last release: resident blocks hold
// their SMs until the kernel ends, no per-SM ceiling, s = 0, every kernel's phases serial (a
// kernel with a busy share c read as m_s = m / (c + m): apply_law_phases), and L_ref = L_dev, so
// a lone kernel never feels a MIG slice's L2), and "staggered" (an option: "residency" with law
// 1b's staggered retirement, spread 1). A law is a class (sharing_law.hpp): it puts its
// terms on the device's geometry (set_law_terms), which the functions below read, and it runs
// the sharing passes between kernels.
//
// Cost: each function is O(1) (a handful of flops).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/kernel_run.hpp"

namespace gpumux {

class ContentionLaw;

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
  bool discrete_waves = false;  ///< law 2: whole waves where the grid is known
  /// law 1c: per-SM resources (the profile's sm_limits under a law with co-residency; unknown:
  /// no kernel is a guest)
  SmLimits sm_limits = {};
  /// law 2: kernels with a busy share run their phases overlapped (false: every kernel serial,
  /// an overlapped one read as m_s = m / (c + m), apply_law_phases)
  bool overlapped_phases = false;
  /// The law that shares this device among its kernels (sharing_law.hpp; set with its terms by
  /// set_law_terms). nullptr (a geometry built by hand): whole-SM residency (FluidLaw's sharing)
  /// with the terms above as they are.
  const ContentionLaw* law = nullptr;
  /// x = f / f_boost, the SM clock the board's power cap leaves (models/gpu/power.hpp): law 2's
  /// sigma is multiplied by it (the SM phase slows, the memory phase does not). 1 = boost.
  double clock_ratio = 1.0;
};

struct DeviceProfile;

/// The registered laws, the default first (the classes: sharing_law.hpp). O(1).
const std::vector<const ContentionLaw*>& contention_laws();
/// Their names, in that order ("residency, fluid, staggered"), for validation and listings.
std::vector<std::string> contention_law_names();
/// The law of that name, or nullptr. O(number of laws).
const ContentionLaw* find_contention_law(std::string_view name);
/// The default law ("residency").
const ContentionLaw& default_contention_law();
/// A scenario's `contention_law:` value: the default law when empty, else the law of that name,
/// or nullptr when none has it. O(number of laws).
const ContentionLaw* contention_law_or_default(std::string_view name);

/// Sets the terms `law` reads on a device of `profile` whose MIG memory slices are
/// `slice_fraction` of the GPU's (1 for a whole GPU): L2 capacity (MIG User Guide: L2 goes with
/// the memory slices) and rho = HBM / L2 bandwidth (achievable_hbm_bandwidth), then the law's own
/// terms (ContentionLaw::set_terms: e.g. the per-SM ceiling s = profile.sm_bandwidth / HBM
/// bandwidth under "residency", 0 under "fluid"), and the law itself (DeviceGeometry::law).
void set_law_terms(DeviceGeometry& g, const DeviceProfile& profile, double slice_fraction,
                   const ContentionLaw& law);

/// The one way a device's geometry is built (the resolver's whole GPUs and MIG instances, the
/// planner's capacities): a device named `name` of profile or MIG profile `profile_name` with
/// `sms` of `gpu`'s SMs, `slice_fraction` of its memory slices (its HBM bandwidth share B_dev and
/// L2; 1 for a whole GPU), `memory` bytes, `reserved_fraction` of the GPU for cost, and `law`'s
/// terms (set_law_terms). O(1).
DeviceGeometry make_geometry(std::string name, std::string profile_name, const DeviceProfile& gpu,
                             int sms, double slice_fraction, std::int64_t memory,
                             double reserved_fraction, const ContentionLaw& law);

namespace contention {

/// Law 2: true when a kernel's phases overlap (its busy share `c` is given, >= 0).
inline bool overlapped(double busy_share) { return busy_share >= 0; }

/// Law 2: busy(k), the share of its solo time a kernel's SMs are busy (memory-bound share `m`,
/// busy share `c`; c < 0: serial phases, 1 - m).
inline double busy_share(double m, double c) { return overlapped(c) ? c : 1.0 - m; }
inline double busy_share(const KernelRun& k) { return busy_share(k.memory_bound, k.busy_share); }

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
  return remaining_blocks > k.occupancy + k.co_sms + k.retired_sms + epsilon;
}

/// Law 1b: the work (solo-ns) one round of `k`'s resident blocks does on the SMs it holds: a
/// full-width wave's work / W, times the share h / (f S_gpu) of its width it holds. 0 when it
/// holds nothing.
inline double round_work(const KernelRun& k, const DeviceGeometry& g) {
  const double full_width = k.sm_fraction * g.gpu_sms;
  if (full_width <= 0 || k.waves <= 0) return 0.0;
  return (k.work / k.waves) * std::min(1.0, (k.occupancy + k.co_sms + k.retired_sms) / full_width);
}

/// Law 1's grant: gives `k` (wanting `demand` = sm_demand SMs) what it may take from `free` SMs of
/// `g` (its client's cap `client_cap`, of which its client holds `held_by_client`); updates
/// k.occupancy, `free` and `held_by_client`. True when it granted something. `epsilon`: SMs
/// below which nothing counts.
inline bool grant(KernelRun& k, const DeviceGeometry& g, double demand, double client_cap,
                  double epsilon, double& free, double& held_by_client) {
  // (co_sms: law 1c, SMs' worth held as a guest; retired_sms: law 1b, its last round's SMs
  // already handed on)
  const double held = k.occupancy + k.co_sms + k.retired_sms;
  if (held >= demand - epsilon) return false;  // holding its full width
  // In its last wave (every remaining block already resident on what it holds) it takes no
  // more. Remaining blocks, in SMs they fill: (remaining / work) W f S_gpu. A preempted or new
  // kernel holds nothing, so it is always dispatching.
  if (held > 0 && !dispatching(k, g, epsilon)) return false;
  const double granted = std::min({demand - held, free, client_cap - held_by_client});
  if (granted <= epsilon) return false;
  k.occupancy += granted;
  held_by_client += granted;
  free -= granted;
  return true;
}

/// Law 1c: per-SM resources in use, in the units blocks_fitting compares: threads (whole warps),
/// registers (as allocated), shared memory (128-byte units) and block slots.
struct SmUse {
  double threads = 0, registers = 0, shared_units = 0, blocks = 0;
};

/// Law 1c: warps of one block of `b`.
inline double block_warps(const BlockFootprint& b) { return std::ceil(b.threads / 32.0); }

/// Law 1c: what `count` blocks of `b` take on one SM under `limits` (registers per warp in
/// units of 256, shared memory plus the per-block reserve in 128-byte units).
inline SmUse block_use(const BlockFootprint& b, const SmLimits& limits, double count) {
  const double warps = block_warps(b);
  const double registers =
      b.registers > 0 ? warps * std::ceil(b.registers * 32.0 / 256.0) * 256.0 : 0.0;
  const double shared =
      static_cast<double>(b.shared_memory) + static_cast<double>(limits.shared_reserved_per_block);
  const double units = shared > 0 ? std::ceil(shared / 128.0) : 0.0;
  return SmUse{count * warps * 32.0, count * registers, count * units, count};
}

/// Law 1c: fit_k(U), the blocks of `b` that fit on one SM of `limits` beside `used` (0 when the
/// footprint or the limits are unknown, or a block exceeds the SM). With nothing used it is the
/// occupancy calculator's blocks per SM (kernel_trace_model.hpp's blocks_per_sm calls it).
inline int blocks_fitting(const SmLimits& limits, const SmUse& used, const BlockFootprint& b) {
  if (!limits.known() || b.threads <= 0 || b.threads > limits.max_threads) return 0;
  const SmUse one = block_use(b, limits, 1.0);
  double fit = std::min(std::floor(limits.max_blocks - used.blocks),
                        std::floor((limits.max_threads - used.threads) / one.threads));
  if (one.registers > 0) {
    // Whole warps' registers, then whole blocks of warps (the allocation granularity).
    const double per_warp = one.registers / block_warps(b);
    fit = std::min(fit, std::floor(std::floor((limits.registers - used.registers) / per_warp) /
                                   block_warps(b)));
  }
  if (one.shared_units > 0) {
    const double units = std::floor(static_cast<double>(limits.shared_memory) / 128.0);
    fit = std::min(fit, std::floor((units - used.shared_units) / one.shared_units));
  }
  return static_cast<int>(std::max(0.0, fit));
}

/// Law 1c: true when `k` may take part in co-residency on `g` (the device knows its SMs'
/// resources, which a law without co-residency leaves unknown, and the kernel its footprint and
/// grid).
inline bool co_resident_capable(const KernelRun& k, const DeviceGeometry& g) {
  return g.sm_limits.known() && k.footprint.known() && k.blocks > 0;
}

/// Law 1c: beta_k, the blocks of `k` resident on each SM it holds in a full wave alone:
/// blocks / (W f S_gpu), within [1, b_k].
inline double blocks_per_held_sm(const KernelRun& k, const DeviceGeometry& g) {
  const double alone = blocks_fitting(g.sm_limits, SmUse{}, k.footprint);
  const double width = std::max(1e-12, k.waves * k.sm_fraction * g.gpu_sms);
  return std::clamp(k.blocks / width, 1.0, std::max(1.0, alone));
}

/// Law 1c: where a guest fits on a host's SMs. Most-room placement spreads the host's blocks
/// breadth-first, so its SMs hold floor(beta_H) or ceil(beta_H) of them (a share
/// ceil(beta_H) - beta_H of its SMs the fewer). `blocks` = L, the guest's blocks per SM it uses
/// (at most its own beta_G), `share` = the share of the host's SMs that take them: all of them
/// when L >= 1 fits beside ceil(beta_H) blocks, else those with floor(beta_H) (0: none fits).
struct GuestRoom {
  double blocks = 0, share = 0;
};
inline GuestRoom guest_room(const KernelRun& host, const KernelRun& guest,
                            const DeviceGeometry& g) {
  const double beta = blocks_per_held_sm(host, g);
  const double own = blocks_per_held_sm(guest, g);
  const double fuller = blocks_fitting(
      g.sm_limits, block_use(host.footprint, g.sm_limits, std::ceil(beta)), guest.footprint);
  if (fuller >= 1) return {std::min(fuller, own), 1.0};
  const double emptier = blocks_fitting(
      g.sm_limits, block_use(host.footprint, g.sm_limits, std::floor(beta)), guest.footprint);
  if (emptier >= 1 && std::ceil(beta) > beta)
    return {std::min(emptier, own), std::ceil(beta) - beta};
  return {};
}

/// Law 1c: the issue shares of a host (warps `host_warps`, demand `host_demand` in [0, 1]) and a
/// guest on one SM: in proportion to warps, each bounded by its demand, the rest to the other.
struct IssueShares {
  double host = 0, guest = 0;
};
inline IssueShares issue_shares(double host_warps, double host_demand, double guest_warps,
                                double guest_demand) {
  const double total = host_warps + guest_warps;
  const double host_part = total > 0 ? host_warps / total : 0.5;
  if (host_demand <= host_part) return {host_demand, std::min(guest_demand, 1.0 - host_demand)};
  if (guest_demand <= 1.0 - host_part) {
    return {std::min(host_demand, 1.0 - guest_demand), guest_demand};
  }
  return {host_part, 1.0 - host_part};
}

/// Law 1c: SM equivalents of compute progress the host and the guest make on one shared SM
/// (the guest places `guest_blocks` L there): {host, guest}, each share / (1 - m); a kernel that
/// computes nothing progresses at its residency (1 for the host, L / beta_G for the guest).
inline IssueShares co_resident_progress(const KernelRun& host, const KernelRun& guest,
                                        double guest_blocks, const DeviceGeometry& g) {
  const double beta_h = blocks_per_held_sm(host, g);
  const double beta_g = blocks_per_held_sm(guest, g);
  const double residency = guest_blocks / beta_g;
  const double busy_g = busy_share(guest);
  const double d_h = busy_share(host);
  const double d_g = busy_g * residency;
  const IssueShares a = issue_shares(beta_h * block_warps(host.footprint), d_h,
                                     guest_blocks * block_warps(guest.footprint), d_g);
  return {d_h > 0 ? a.host / d_h : 1.0, busy_g > 0 ? a.guest / busy_g : residency};
}

/// Law 2's per-SM ceiling: what `held_sms` SMs may draw of `bandwidth` when each SM's port passes
/// at most `per_sm` (the same unit: a fraction of the GPU's, or bytes/s; `per_sm` <= 0: no
/// ceiling): min(bandwidth, held_sms x per_sm). The catalog's grid bandwidth calls it too
/// (models/workload/catalog_timing.cpp).
inline double sm_port_limit(double bandwidth, double held_sms, double per_sm) {
  return per_sm > 0 ? std::min(bandwidth, held_sms * per_sm) : bandwidth;
}

/// Law 2: u, the share of the whole GPU's HBM bandwidth a kernel of grid width `f` draws in its
/// memory phase alone on its full width (1 without a per-SM ceiling).
inline double hbm_draw(double f, const DeviceGeometry& g) {
  return sm_port_limit(1.0, f * g.gpu_sms, g.sm_bandwidth);
}

/// Law 2: beta, the memory phase's speed on `held_sms` SMs of `g` relative to alone.
inline double memory_speed(double f, double held_sms, const DeviceGeometry& g) {
  if (!(g.sm_bandwidth > 0)) return std::min(1.0, g.bandwidth);
  return sm_port_limit(std::min(1.0, g.bandwidth), held_sms, g.sm_bandwidth) / hbm_draw(f, g);
}

/// Law 2, whole waves: the speed of a compute phase of `count` SM-loads (G, or B for the
/// per-block part) on `held_sms` > 0 SMs relative to alone on the GPU's S_gpu:
/// ceil(count / S_gpu) / ceil(count / floor(h)), below one SM h ceil(count / S_gpu) /
/// ceil(count); at most 1.
inline double wave_speed(double count, double held_sms, const DeviceGeometry& g) {
  const double tolerance = 1e-9;  // (grids and SM counts are integers; shares are not exact)
  const double alone = std::ceil(count / g.gpu_sms - tolerance);
  const double whole = std::floor(held_sms + tolerance);
  if (whole < 1) return std::min(1.0, held_sms * alone / std::ceil(count - tolerance));
  return std::min(1.0, alone / std::ceil(count / whole - tolerance));
}

/// Law 2: sigma, the compute phase's speed on `held_sms` > 0 SMs relative to alone, for a
/// kernel of grid width `f`, grid `grid` (G; 0 = unknown), `blocks` (B; 0 = unknown) and
/// throughput share `tau` (throughput-shared rounds; 0 = rounds only, or B unknown).
/// Times the clock ratio x (DeviceGeometry::clock_ratio; exactly the SM speed when x = 1).
inline double compute_speed(double f, double grid, double held_sms, const DeviceGeometry& g,
                            double blocks = 0, double tau = 0) {
  const double x = g.clock_ratio;
  if (!(grid > 0) || !g.discrete_waves) return std::min(1.0, held_sms / (f * g.gpu_sms)) * x;
  const double rounds = wave_speed(grid, held_sms, g);
  if (!(tau > 0) || !(blocks > 0)) return rounds * x;
  const double t = std::min(1.0, tau);
  return x / ((1.0 - t) / rounds + t / wave_speed(blocks, held_sms, g));
}

/// Law 2 on a device whose law has no overlapped phases (the fluid law): an overlapped kernel
/// (m, c) read as serial phases of the same solo time, m_s = m / (c + m) (its memory time's
/// share of the sum of its phase times, what the catalog gave before overlapped phases) and
/// c = -1. Idempotent; a serial kernel, or any kernel under a law with overlapped phases, is
/// left as it is. Every kernel entering a device passes here (Device::start_running, its solo
/// probe) and the planner's bounds do the same (models/plan/bounds.cpp).
inline void serial_phases(double& m, double& c) {
  if (!overlapped(c)) return;
  m = c + m > 0 ? m / (c + m) : 0.0;
  c = -1;
}
inline void apply_law_phases(KernelRun& k, const DeviceGeometry& g) {
  if (!g.overlapped_phases) serial_phases(k.memory_bound, k.busy_share);
}

/// Law 2: the slowdown of a kernel whose SM phase runs at `sigma` (> 0 where it has one) and
/// memory phase at `beta` / `l2_factor` of alone: serial (c < 0)
/// (1 - m) / sigma + m phi / beta, overlapped max(c / sigma, m phi / beta). A phase of zero
/// share adds nothing whatever its speed.
inline double phase_slowdown(double m, double c, double l2_factor, double sigma, double beta) {
  const double busy = busy_share(m, c);
  const double sm_phase = busy > 0 ? busy / sigma : 0.0;
  const double memory_phase = m > 0 ? m * l2_factor / beta : 0.0;
  return overlapped(c) ? std::max(sm_phase, memory_phase) : sm_phase + memory_phase;
}

/// Law 2: the slowdown of a kernel (f, m, busy share c (< 0: serial), l2_factor phi, grid G) on
/// `held_sms` > 0 SMs of `g` relative to alone on the whole GPU (>= 1).
inline double slowdown(double f, double m, double c, double l2_factor, double held_sms,
                       const DeviceGeometry& g, double grid = 0, double blocks = 0,
                       double tau = 0) {
  const double sigma = compute_speed(f, grid, held_sms, g, blocks, tau);
  const double beta = memory_speed(f, held_sms, g);
  return phase_slowdown(m, c, l2_factor, sigma, beta);
}

/// Law 2: rate_max = 1 / slowdown (0 when it holds no SMs or the device has no bandwidth).
inline double rate_bound(double f, double m, double c, double l2_factor, double held_sms,
                         const DeviceGeometry& g, double grid = 0, double blocks = 0,
                         double tau = 0) {
  if (!(held_sms > 0) || !(g.bandwidth > 0)) return 0.0;
  const double slow = slowdown(f, m, c, l2_factor, held_sms, g, grid, blocks, tau);
  return slow > 0 ? 1.0 / slow : 0.0;
}

/// Laws 1c and 2: the rate bound of a co-resident kernel (a host or a guest) whose blocks sit on
/// `h_whole` SMs, making `h_compute` SM equivalents of compute progress there and drawing HBM
/// through `h_memory`: sigma = sigma(h_whole) h_compute / h_whole (0 when it sits on nothing).
inline double co_resident_bound(double f, double m, double c, double l2_factor, double h_whole,
                                double h_compute, double h_memory, const DeviceGeometry& g,
                                double grid = 0, double blocks = 0, double tau = 0) {
  if (!(h_whole > 0) || !(g.bandwidth > 0)) return 0.0;
  const double sigma = compute_speed(f, grid, h_whole, g, blocks, tau) * (h_compute / h_whole);
  const double beta = memory_speed(f, h_memory, g);
  const double slow = phase_slowdown(m, c, l2_factor, sigma, beta);
  return slow > 0 ? 1.0 / slow : 0.0;
}

/// Law 2, for SM-time bounds: the least SM-ns a kernel (f, grid) holds per solo-ns of its
/// compute phase on any number of SMs, min over h of h / sigma(h): f S_gpu (fluid), and with
/// whole waves G / ceil(G / S_gpu) (h ceil(G / h) >= G); with throughput-shared rounds (tau > 0)
/// at least (1 - tau) G / ceil(G / S_gpu) + tau B / ceil(B / S_gpu) (each term's bound).
inline double min_sms_per_compute(double f, double grid, const DeviceGeometry& g, double blocks = 0,
                                  double tau = 0) {
  const double fluid = f * g.gpu_sms;
  if (!(grid > 0) || !g.discrete_waves) return fluid;
  const double rounds = grid / std::ceil(grid / g.gpu_sms - 1e-9);
  if (!(tau > 0) || !(blocks > 0)) return std::min(fluid, rounds);
  const double t = std::min(1.0, tau);
  return std::min(fluid, (1.0 - t) * rounds + t * blocks / std::ceil(blocks / g.gpu_sms - 1e-9));
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
  double sm_fraction = -1, memory_bound = -1, busy_share = -2, working_set = -1, grid = -1,
         blocks = -1, throughput_share = -1;
  bool operator==(const SoloKey&) const = default;
};
/// (B enters the bound only with tau > 0: kernels without a throughput share keep one key per
/// grid G, whatever their blocks.)
inline SoloKey solo_key(const KernelRun& k) {
  const bool shared = k.throughput_share > 0;
  return SoloKey{k.sm_fraction,
                 k.memory_bound,
                 k.busy_share,
                 k.working_set,
                 k.grid,
                 shared ? k.blocks : 0.0,
                 shared ? k.throughput_share : 0.0};
}

}  // namespace contention
}  // namespace gpumux
