#include "models/workload/runtime_fixed_cost.hpp"

#include <cmath>

namespace gpumux {

Nanos runtime_stream_gap(const CatalogRuntime& runtime, const DeviceProfile& gpu) {
  return gpu.modelled_launch(false) + std::llround(runtime.kernel_fixed_cost.value * 1e9);
}

void apply_runtime_kernel_fixed_cost(const CatalogRuntime& runtime, const DeviceProfile& gpu,
                                     std::vector<KernelSpec>& kernels) {
  if (!(runtime.kernel_fixed_cost.value > 0)) return;
  const Nanos gap = runtime_stream_gap(runtime, gpu);
  for (KernelSpec& k : kernels) k.launch_overhead = gap;
}

}  // namespace gpumux
