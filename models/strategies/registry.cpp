// The strategy registry: sharing mode -> Device subclass. The only place that knows them all.
#include "models/strategies/registry.hpp"

#include <stdexcept>

#include "models/gpu/concurrent.hpp"
#include "models/gpu/time_slicing.hpp"

namespace gpumux {

std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                    const SharingSpec& sharing) {
  SharingLimits limits;
  limits.client_memory_limit = sharing.pinned_memory_limit;
  switch (sharing.mode) {
    case SharingMode::exclusive:
      limits.max_clients = 1;
      return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), limits);
    case SharingMode::mps:
      limits.max_clients = sharing.max_clients.value_or(48);
      limits.shared_server = true;
      limits.thread_share = sharing.active_thread_percentage.value_or(100.0) / 100.0;
      return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), limits);
    case SharingMode::time_slicing:
      limits.timeslice = sharing.timeslice.value_or(1'024'000);
      limits.context_switch = sharing.context_switch.value_or(0);
      limits.preemption_latency = sharing.preemption_latency.value_or(0);
      limits.cache_refill = sharing.cache_refill.value_or(0);
      limits.preemption = sharing.preemption;
      return std::make_unique<TimeSlicingDevice>(sim, std::move(geometry), limits);
  }
  throw std::logic_error("unknown sharing mode");
}

}  // namespace gpumux
