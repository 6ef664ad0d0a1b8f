#pragma once
// A runtime's device time per kernel (kernel-families.yaml `runtimes.NAME.kernel_fixed_cost`,
// catalog_model.hpp "Fixed"): the law and where it goes.
//
// Law. A kernel that a runtime launches outside a CUDA graph waits, in its stream, for
//     g = L + F_profile + F_runtime
// after the previous kernel of its stream ends (or after the host issues it, if later): L the
// profile's launch_overhead, F_profile its kernel_fixed_cost (every modelled kernel), F_runtime
// the runtime's kernel_fixed_cost. During g the stream holds its context but no SM: under
// time-slicing the context keeps the device and the gap spends its slice; under MPS or on a MIG
// slice no neighbour stretches it (a launch gap holds no SM, models/run/launch.cpp). A request
// of n kernels whose host issues them faster than the device runs them (GPU-bound) therefore
// takes sum(durations) + n g alone, n F_runtime more than the same kernels from a runtime
// without the term.
//
// Why a runtime term: ONNX Runtime's batch-1 BERT-large server in the Tally artifact is 89 %
// GPU-busy alone (nvidia-smi, 3.6 of 4.05 ms) while the catalog's kernels of the same model sum
// to about 1 ms, and its co-location ratios behave as device time that holds no SM (docs/
// workloads.md, "Runtimes"). No source measures what ONNX Runtime's kernels spend there; the
// value is fitted (calibration/fit/ort_kernel_cost.py, leave-one-source-out).
#include <optional>
#include <vector>

#include "models/workload/workload_catalog.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/workload/kernel_spec.hpp"

namespace gpumux {

/// F_runtime (ns): the tenant's `runtime_kernel_fixed_cost:` when given, else the runtime's
/// kernel_fixed_cost (kernel-families.yaml). O(1).
Nanos runtime_kernel_fixed_ns(const CatalogRuntime& runtime, const std::optional<Nanos>& user);

/// The stream gap g (ns) before each kernel launched outside a CUDA graph on `gpu` by a runtime
/// whose F_runtime is `runtime_fixed_ns`: launch_overhead + the profile's kernel_fixed_cost +
/// F_runtime. O(1).
Nanos runtime_stream_gap(Nanos runtime_fixed_ns, const DeviceProfile& gpu);

/// Gives every kernel of a request the stream gap g as its own launch overhead
/// (KernelSpec::launch_overhead) when F_runtime > 0; leaves the kernels untouched (the
/// profile's gap, the same g at F_runtime = 0) otherwise. F_runtime enters nothing else (not the
/// GEMM's split-K choice, which prices its reduction's launch at the profile's gap), so a
/// request's time depends on it only through g. For requests launched outside a CUDA graph
/// only. O(kernels).
void apply_runtime_kernel_fixed_cost(Nanos runtime_fixed_ns, const DeviceProfile& gpu,
                                     std::vector<KernelSpec>& kernels);

}  // namespace gpumux
