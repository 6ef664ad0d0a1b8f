// Cost over the measured window [warmup, end]. Attributed GPU time: a tenant's SM occupancy on
// each of its devices as a share of the physical GPU (a 1g instance holds 1/8 of it), in
// seconds. Cost: each device's share of its GPU's price (`cost_per_hour`) over the window, split
// evenly among the device's tenants (what each tenant's reservation costs); the GPUs' cost is
// every GPU's price over the window.
#include <algorithm>

#include "models/run/run.hpp"

namespace gpumux::run {

void Run::fill_tenant_cost(const Tenant& t, Nanos end, TenantResult& tr) const {
  const double window = measured_window(end);
  for (int d : resolved.tenant_devices[static_cast<std::size_t>(t.index())]) {
    const ResolvedDevice& rd = resolved.devices[static_cast<std::size_t>(d)];
    const Device& device = *devices[static_cast<std::size_t>(d)];
    const auto& clients = device.clients();
    const auto slot = static_cast<std::size_t>(
        std::find(clients.begin(), clients.end(), t.index()) - clients.begin());
    if (slot < clients.size()) {
      const double sm_ns = device.client_sm_integral(t.index(), end) -
                           warm_client_sm_[static_cast<std::size_t>(d)][slot];
      tr.gpu_seconds += sm_ns / std::max(1, rd.geometry.sms) * rd.geometry.reserved_fraction * 1e-9;
    }
    const double sharing = static_cast<double>(std::max<std::size_t>(1, rd.tenants.size()));
    tr.cost += rd.cost_per_hour * (window * 1e-9 / 3600.0) / sharing;
  }
}

void Run::fill_gpu_cost(Nanos end) {
  const double window = measured_window(end);
  for (const GpuSpec& gpu : scenario.gpus) {
    result.gpu_cost += gpu.cost_per_hour * (window * 1e-9 / 3600.0);
  }
}

}  // namespace gpumux::run
