#pragma once
// What a resolved scenario's kernels are and where each parameter came from (`gpumux inspect`,
// gpumux.inspect in Python): per tenant and kernel class, the solo duration, sm_fraction, waves,
// memory_bound, working set, repeat, launch mode and the tenant's memory, each with its origin:
// the grid (blocks, resident blocks per SM) and, for catalog tenants, how each kernel is
// implemented, the runtime and the tenant's host gap per launch;
// `user` (written in the scenario), `default` (the loader's fallback: sm_fraction 1,
// memory_bound 0, waves 1, working_set 0, repeat 1, stream launch), `catalog:NAME` (the workload
// catalog, docs/workloads.md), `trace` (a recorded kernel trace) or `ncu` (Nsight Compute metrics
// joined to it). A kernel class is the kernels of one request with the same name, values and
// origins (e.g. BERT's twelve `layer.qkv`). Cost: O(kernels) per call; read from the origins the
// loader and resolver record (WorkloadSpec::kernel_origins), never from the run.
#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario/resolve.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux {

/// One kernel class of one tenant.
struct InspectRow {
  std::string tenant;
  std::string device;
  std::string kernel;      ///< KernelSpec::name
  int count = 0;           ///< kernels of the request in this class
  double duration_ns = 0;  ///< mean solo duration on the whole GPU of the tenant's model
  double sm_fraction = 1, waves = 1, memory_bound = 0;
  double busy_share = -1;  ///< overlapped phases' busy share (KernelSpec::busy_share); -1 serial
  std::int64_t working_set = 0;
  std::string repeat;                   ///< "1", "12", "output_tokens"
  std::string launch;                   ///< "stream" or "graph"
  std::int64_t memory = 0;              ///< tenant start-up memory, bytes
  std::int64_t memory_per_request = 0;  ///< bytes
  int blocks = 0;                       ///< thread blocks of its grid (0 = unknown)
  int blocks_per_sm = 0;                ///< resident blocks per SM (0 = unknown)
  std::string implementation;  ///< how the catalog implements it ("gemm 64x64 split-K 4"), or ""
  std::string runtime;         ///< catalog tenants: the runtime that launches the kernels, or ""
  /// A catalog tenant with a seq_len distribution: the distribution, its mean, how many lengths
  /// have kernels, the length the rows show and the one memory_per_request is at; "" otherwise.
  std::string lengths;
  double host_gap_ns = 0;  ///< the tenant's CPU time per kernel launch
  /// Time alone beyond the kernels' own durations (docs/calibration.md), per tenant:
  double launch_gap_ns = 0;    ///< stream gap before each kernel: launch + kernel_fixed_cost
  double kernel_fixed_ns = 0;  ///< the profile's kernel_fixed_cost it pays (modelled kernels)
  double block_round_ns = 0;   ///< the profile's block_round_cost in its latency floors
  double host_request_ns = 0;  ///< host time per request: host_per_request of its runtime
  double copy_ns = 0;          ///< its input and output over the host link (pcie_bandwidth)
  /// Its serving front end's time per request, T_fe = L_fe + payload / W_fe (host_time.hpp),
  /// and the front end's name ("" = none).
  double front_end_ns = 0;
  std::string serving;
  /// Its benchmark harness's host time per request, T_h (host_time.hpp), and the harness's name
  /// ("" = none).
  double harness_ns = 0;
  std::string harness;
  /// Catalog tenants: where each host term came from, "per_request user, bytes catalog, link
  /// profile, per_op runtime" ("user" = the tenant's host: block); "" otherwise.
  std::string host_origin;
  /// Where those came from: "profile NAME (fitted)", "(source)", "(assumption)" or "none".
  std::string time_alone_origin;
  /// A batched engine's CPU time per iteration (EngineCpu, models/workload/engine_cpu.hpp):
  /// its engine ("vllm-v0", "none", "custom"; "" when not batched) and its two terms, ns.
  std::string engine_cpu;
  double engine_cpu_iteration_ns = 0, engine_cpu_sequence_ns = 0;
  std::string engine_cpu_origin;  ///< "user" or "default"
  /// A modelled tenant's host CPU (models/gpu/host_cpu.hpp): its name ("" = a speed the user
  /// wrote as a number), its speed relative to the reference host (0 = not a modelled tenant)
  /// and where it came from ("user" or "profile NAME").
  std::string host_cpu;
  double host_cpu_speed = 0;
  std::string host_cpu_origin;
  // Origins as printed: "user", "default", "catalog:resnet50", "trace", "ncu".
  std::string duration_origin, sm_fraction_origin, waves_origin, memory_bound_origin,
      busy_share_origin, working_set_origin, repeat_origin, launch_origin, memory_origin,
      memory_per_request_origin, runtime_origin, host_gap_origin;
};

/// Every tenant's kernel classes, in tenant order and first-launch order.
std::vector<InspectRow> inspect_kernels(const ResolvedScenario& resolved);

/// The origin label of `origin` for a tenant's workload ("catalog:NAME" names its model).
std::string origin_label(ParamOrigin origin, const WorkloadSpec& workload);

/// One line per tenant whose sm_fraction or memory_bound rests on the loader's default, e.g.
/// "api: sm_fraction not given for 3 kernels: assumed full grid (see gpumux inspect)"; empty
/// when every kernel has them from the scenario, the catalog, a trace or ncu.
std::vector<std::string> default_warnings(const Scenario& scenario);

}  // namespace gpumux
