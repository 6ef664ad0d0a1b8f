#pragma once
// Device profiles: the hardware numbers of one GPU model (SMs, memory, bandwidths, L2, launch
// and switch timings, MIG geometry). This is the data only; models/config/profile_loader.hpp reads
// it from calibration/profiles/NAME.yaml (embedded into the binary at build time) or a path.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/gpu/host_cpu.hpp"
#include "models/gpu/power.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// The MPS server's client limit, the one definition (a profile's `mps_max_clients` default, the
/// `mps` and `mps-static-partition` strategies, the device's refusal message).
/// source: NVIDIA MPS documentation, "Client-Server Connection Limits"
/// (https://docs.nvidia.com/deploy/mps/): 48 clients per device on Volta and later up to CUDA
/// 13.0, 60 from CUDA 13.1. Inside a MIG instance the strategies lower it in proportion to the
/// compute slices (models/strategies/mps/strategy.cpp, mig_mps_max_clients).
inline constexpr int kMpsMaxClients = 48;
inline constexpr int kMpsMaxClientsFromCuda13_1 = 60;

/// One MIG GPU-instance profile, e.g. H100 "3g.40gb".
struct MigProfileSpec {
  std::string name;             ///< "3g.40gb"
  int sms = 0;                  ///< multiprocessors of one instance
  std::int64_t memory = 0;      ///< bytes usable by CUDA in the instance
  int memory_slices = 0;        ///< of the GPU's `memory_slices` (8 on A100/H100/H200)
  int compute_slices = 0;       ///< of the GPU's `compute_slices` (7)
  int max_count = 0;            ///< at most this many instances of this profile per GPU
  std::vector<int> placements;  ///< allowed start memory slices, e.g. {0, 4}
};

/// Per-SM residency limits of the GPU's architecture (`sm_limits:` in a profile; NVIDIA CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability"). They turn a recorded
/// kernel's block size, registers and shared memory into blocks per SM (kernel traces).
struct SmLimits {
  int max_threads = 0;             ///< resident threads per SM; 0 = the profile has no sm_limits
  int max_blocks = 0;              ///< resident blocks per SM
  int registers = 0;               ///< 32-bit registers per SM
  std::int64_t shared_memory = 0;  ///< bytes of shared memory per SM (max carveout)
  std::int64_t shared_reserved_per_block = 0;  ///< bytes the system reserves per block (1 KiB 8.0+)
  bool known() const { return max_threads > 0; }
};

/// Dense (no structured sparsity) peak throughput of the whole GPU per datasheet / NVIDIA
/// architecture whitepaper (`compute_throughput:` in a profile). FLOP/s for the floating-point
/// paths, OP/s for int8; 0 = unknown or not supported (e.g. fp8 on A100). The tensor figures are
/// matrix (Tensor Core) peaks with the accumulate the datasheet quotes; `fp32` is the non-tensor
/// FMA peak. A roofline divides a kernel's operations by one of these, scaled by SMs held / `sms`.
struct ComputeThroughput {
  double fp16_tensor = 0, bf16_tensor = 0, fp8_tensor = 0, int8_tensor = 0, tf32_tensor = 0,
         fp32 = 0;
};

struct DeviceProfile {
  std::string name;          ///< file stem, e.g. "h100-sxm-80gb"
  std::string display_name;  ///< e.g. "NVIDIA H100 SXM5 80GB"
  /// Names `nvidia-smi --query-gpu=name` prints for this model (`nvidia_smi_name:` in the
  /// profile, with its source), e.g. "NVIDIA H100 80GB HBM3"; accepted as `model:` aliases.
  std::vector<std::string> nvidia_smi_names;
  int sms = 0;                        ///< SMs enabled on the whole GPU (non-MIG)
  std::int64_t memory = 0;            ///< bytes usable on the whole GPU
  double hbm_bandwidth = 0;           ///< bytes/s, datasheet peak
  double hbm_bandwidth_measured = 0;  ///< bytes/s, measured achievable (0 = unknown)
  std::int64_t l2_cache = 0;          ///< bytes
  double l2_bandwidth = 0;            ///< bytes/s, measured L2 read plateau (L2 capacity law)
  /// bytes/s one SM can move to and from HBM (`sm_bandwidth:`; the per-SM ceiling of
  /// models/gpu/contention_law.hpp). Absent from the file: l2_bandwidth / sms (an assumption,
  /// recorded in `assumed`; docs/strategies.md, "Per-SM bandwidth"). 0 = no ceiling.
  double sm_bandwidth = 0;
  /// Per kernel in a stream: time between a kernel becoming launchable (its predecessor done,
  /// its CPU issue reached) and its start, ns (models/workload docs; gpu-benches intercept).
  Nanos launch_overhead = 0;
  Nanos graph_launch_overhead = 0;  ///< the same for kernels of a CUDA graph (`cuda_graph: true`)
  /// Per modelled kernel (catalog, LLM card), ns of stream time beyond the launch overhead in
  /// which the kernel holds no SM: the launch-to-first-block latency and the drain and memory
  /// flush after its last block (`kernel_fixed_cost:`, usually `fitted:` by `gpumux
  /// calibrate`). Not added to kernel-trace kernels (their recorded gaps hold it) nor to
  /// hand-written kernels (their durations are the user's). 0 = none.
  Nanos kernel_fixed_cost = 0;
  /// Per round of resident blocks on a modelled kernel's busiest SM, ns of SM time beyond the
  /// round's memory latencies and work: block dispatch, prologue (index and descriptor set-up)
  /// and the epilogue's barrier (`block_round_cost:`, usually fitted). 0 = none.
  Nanos block_round_cost = 0;
  /// Host <-> GPU copy bandwidth per direction, bytes/s (`pcie_bandwidth:`): a catalog
  /// inference request's input (H2D) and output (D2H) cross it. 0 = copies not modelled.
  double pcie_bandwidth = 0;
  /// Host time per inference request by runtime name (`host_per_request: {tensorrt: ...}`),
  /// ns: pre/post-processing, the framework's call and its synchronisations, beyond the
  /// per-operator dispatch (kernel-families `host_per_op`). A runtime not listed: 0.
  std::map<std::string, Nanos> host_per_request;
  /// Host time per inference request of a benchmark harness around the runtime, by harness name
  /// (`harness_per_request: {mlperf-loadgen: ...}`), ns: the load generator's issue and
  /// completion of a query and the harness's own path to and from the runtime, paid by a catalog
  /// request whose workload names it (`workload.harness:`, host_time.hpp T_h). A harness not
  /// listed cannot be named on this profile.
  std::map<std::string, Nanos> harness_per_request;
  /// The host CPU beside the GPU (`host_cpu:`, a name of models/gpu/host_cpu.hpp) and its
  /// single-thread speed relative to the DGX A100's host: the host time of the model's fitted
  /// terms scales by 1 / speed (host_cpu.hpp); `host_per_request` is this host's already.
  /// Absent from the file: generic, speed 1.
  std::string host_cpu = kDefaultHostCpu;
  double host_cpu_speed = 1.0;
  /// The stream gap a modelled kernel pays before it starts: the launch overhead (stream or
  /// graph) plus kernel_fixed_cost. O(1).
  Nanos modelled_launch(bool cuda_graph) const {
    return (cuda_graph ? graph_launch_overhead : launch_overhead) + kernel_fixed_cost;
  }
  /// Boost SM clock in MHz (`boost_clock:`); 0 = not in the profile. With `sms` it scales the
  /// compute part of a kernel recorded on another model (kernel traces).
  double boost_clock_mhz = 0;
  /// Base SM clock in MHz (`base_clock:`); 0 = not in the profile. The floor of a power-capped
  /// clock (models/gpu/power.hpp).
  double base_clock_mhz = 0;
  /// The power law's terms (`tdp:` and `power:`; models/gpu/power.hpp), its clocks copied from
  /// boost_clock and base_clock. power.modelled() false: the clock never drops.
  PowerParams power;
  std::string compute_capability;  ///< "8.0", "9.0" (`compute_capability:`), "" = unknown
  SmLimits sm_limits;
  ComputeThroughput compute;  ///< peak compute per precision; all 0 when the profile has none
  // time-slicing defaults
  Nanos timeslice = 0;
  Nanos context_switch = 0;
  Nanos preemption_latency = 0;
  Nanos cache_refill = 0;
  // MPS defaults
  int mps_max_clients = kMpsMaxClients;
  // MIG geometry; mig_profiles empty = the GPU does not support MIG
  int memory_slices = 0;
  int compute_slices = 0;
  std::vector<MigProfileSpec> mig_profiles;
  std::map<std::string, std::vector<std::string>> mig_layouts;  ///< named layouts (mig-parted)

  /// Key paths of the values marked `assumption:` rather than `source:` ("context_switch",
  /// "mig.profiles.2.sms", ...), so results can say which of their inputs are unmeasured.
  std::vector<std::string> assumed;
  /// Key paths of the values marked `fitted:` ("kernel_fixed_cost", ...): fitted by `gpumux
  /// calibrate` on a declared calibration set (docs/calibration.md).
  std::vector<std::string> fitted;
  std::string source_path;   ///< file it came from, or "embedded:NAME"
  std::string content_hash;  ///< FNV-1a 64 of the file text, 16 hex digits

  /// Lookup by name; nullptr when the GPU has no such MIG profile.
  const MigProfileSpec* find_mig_profile(const std::string& profile_name) const;
};

/// The HBM bandwidth (bytes/s) kernels achieve on `gpu`: the measured one where the profile has
/// it (`hbm_bandwidth_measured`, what a streaming kernel reaches), else the nominal one derated
/// by `nominal_efficiency` (1: none; an LLM card's `memory_efficiency`, its own estimate of the
/// same achievable share, applies only where no measurement exists). The one rule every reader
/// of a profile's bandwidth asks (the contention law's rho and per-SM ceiling, the workload
/// catalog, the LLM card). O(1).
double achievable_hbm_bandwidth(const DeviceProfile& gpu, double nominal_efficiency = 1.0);

}  // namespace gpumux
