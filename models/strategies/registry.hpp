#pragma once
// The strategy registry: a sharing mode and its parameters (SharingSpec, as resolved) -> the
// Device that simulates it, with the limits its physics takes (models/gpu/sharing_limits.hpp).
#include <memory>

#include "models/gpu/device.hpp"
#include "models/strategies/sharing_spec.hpp"

namespace gpumux {

/// Builds the device for a sharing mode.
std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                    const SharingSpec& sharing);

}  // namespace gpumux
