#include "models/workload/runtime_fixed_cost.hpp"

#include <cmath>

namespace gpumux {

Nanos runtime_kernel_fixed_ns(const CatalogRuntime& runtime, const std::optional<Nanos>& user) {
  if (user) return *user;
  return runtime.kernel_fixed_cost.value > 0 ? std::llround(runtime.kernel_fixed_cost.value * 1e9)
                                             : 0;
}

Nanos runtime_stream_gap(Nanos runtime_fixed_ns, const DeviceProfile& gpu) {
  return gpu.modelled_launch(false) + runtime_fixed_ns;
}

void apply_runtime_kernel_fixed_cost(Nanos runtime_fixed_ns, const DeviceProfile& gpu,
                                     std::vector<KernelSpec>& kernels) {
  if (runtime_fixed_ns <= 0) return;
  const Nanos gap = runtime_stream_gap(runtime_fixed_ns, gpu);
  for (KernelSpec& k : kernels) k.launch_overhead = gap;
}

}  // namespace gpumux
