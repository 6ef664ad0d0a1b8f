// The strategy registry: sharing mode -> Device subclass. The only place that knows them all.
#include <stdexcept>

#include "models/device.hpp"
#include "models/strategies/concurrent.hpp"
#include "models/strategies/time_slicing.hpp"

namespace gpumux {

std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                    const SharingSpec& sharing) {
  switch (sharing.mode) {
    case SharingMode::exclusive:
      return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), sharing, 1);
    case SharingMode::mps:
      return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), sharing,
                                                sharing.max_clients.value_or(48));
    case SharingMode::time_slicing:
      return std::make_unique<TimeSlicingDevice>(
          sim, std::move(geometry), sharing, sharing.timeslice.value_or(1'024'000),
          sharing.context_switch.value_or(0), sharing.preemption_latency.value_or(0),
          sharing.cache_refill.value_or(0));
  }
  throw std::logic_error("unknown sharing mode");
}

}  // namespace gpumux
