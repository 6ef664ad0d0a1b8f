#pragma once
// Analytical bounds on what a device can do for its tenants, from the physics of device.hpp and
// kernel_run.hpp, used by `gpumux plan` to prune before simulating and by `gpumux validate` to
// warn. Each is a necessary condition, never an estimate (docs/plan.md, "Bounds"):
// The rates are the contention law's (models/gpu/contention_law.hpp, law 2) for a lone kernel on
// the SMs its client may hold:
//  - SM time: a kernel holding h SMs runs at r <= sigma / busy, busy = 1 - m (serial phases) or
//    its busy share c (overlapped phases: r <= 1 / max(c / sigma, m phi / beta) <= sigma / c),
//    sigma = min(1, h / (f S_gpu)), so while it does work W it holds at least busy f S_gpu W
//    SM-ns; concurrent kernels never hold the same SMs, so a device of S_dev SMs serves at most
//    S_dev SM-ns per ns.
//  - HBM time: sum_k m_k u_k phi_k r_k <= B_dev with phi >= 1: at most B_dev of m u x work per ns
//    (m = t_memory / D for an overlapped kernel: its bytes per solo-ns, law 4).
//  Both stay necessary conditions with overlapped phases because each drops one term of the
//  max (max(a, b) >= a and >= b), as they drop one term of the serial sum; the service and floor
//  below use the lone kernel's exact slowdown, serial or overlapped (a lower bound of its time
//  beside others, whose SMs, HBM and L2 only slow it). Under a law without overlapped phases the
//  kernel is read serially, as the device reads it (contention::serial_phases).
//  - Service: a request alone on the device takes at least sum over its launches of (launch
//    overhead + work x contention::slowdown on its demand w); with max_in_flight requests at
//    a time a tenant can complete at most max_in_flight / E[service] requests per ns.
//  - Latency floor: no request finishes faster than its kernels' minimum durations at that speed.
// Batched (continuous batching), closed-loop and trace tenants have no known offered load and
// are skipped by the load bounds (0); batched and trace tenants have no floor.
#include <cstdint>
#include <vector>

#include "models/gpu/contention_law.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux {

struct DeviceProfile;

/// What one device (a whole GPU or a MIG instance) offers one tenant.
struct DeviceCapacity {
  double gpu_sms = 1;       ///< SMs of the whole GPU (S_gpu: the kernels' sm_fraction base)
  double sms = 1;           ///< SMs of the device (S_dev)
  double client_sms = 1;    ///< SMs one client may hold (MPS active thread percentage)
  double bandwidth = 1;     ///< fraction of the GPU's HBM bandwidth (B_dev)
  std::int64_t memory = 0;  ///< bytes
  double launch_overhead = 0, graph_launch_overhead = 0;  ///< ns
  double kernel_fixed_cost = 0;  ///< ns per kernel of a modelled workload (device_profile.hpp)
  /// The device as the contention law (models/gpu/contention_law.hpp) reads it: the same
  /// S_gpu, S_dev and B_dev as above, and the law's other terms.
  DeviceGeometry geometry;
};

/// A whole GPU, or one of its MIG profiles (by name).
/// `law`: the contention law the scenario runs (nullptr: the default).
DeviceCapacity capacity_of(const DeviceProfile& gpu, const std::string& mig_profile = "",
                           const ContentionLaw* law = nullptr);

/// A tenant's demand, independent of the device.
struct TenantDemand {
  bool open_loop = false;    ///< poisson / constant without batching: offered load known
  bool floor_known = false;  ///< no batching, no trace: a latency floor exists
  double rate_per_s = 0;
  int max_in_flight = 1;
  bool graph = false;
  bool modelled = false;  ///< catalog or LLM card: each kernel also pays kernel_fixed_cost
  struct Kernel {
    double f = 1, m = 0;
    double c = -1;         ///< busy share (overlapped phases; -1: serial)
    double grid = 0;       ///< blocks / blocks per SM (0 = unknown)
    double blocks = 0;     ///< thread blocks (0 = unknown)
    double tau = 0;        ///< throughput share (contention law 2; 0 = rounds only)
    double mean_work = 0;  ///< E[launches] x E[solo ns per launch]
    double mean_launches = 0, min_launches = 0;
    double min_duration = 0;  ///< ns per launch, the smallest the distribution can draw
  };
  std::vector<Kernel> kernels;
};

TenantDemand demand_of(const TenantSpec& tenant);

/// SM-ns and HBM-ns (GPU-bandwidth fraction x ns) per second of arrivals (0 without a known
/// offered load).
double sm_load_per_s(const TenantDemand& d, const DeviceCapacity& c);
double hbm_load_per_s(const TenantDemand& d, const DeviceCapacity& c);
/// Mean service time of one request alone on the device, ns (a lower bound: no queueing, no
/// neighbours).
double service_ns(const TenantDemand& d, const DeviceCapacity& c);
/// Requests per second it could complete at most: max_in_flight / service (inf when unknown).
double solo_capacity_per_s(const TenantDemand& d, const DeviceCapacity& c);
/// The shortest latency any request can have on the device, ns (0 when unknown).
double latency_floor_ns(const TenantDemand& d, const DeviceCapacity& c);

}  // namespace gpumux
