#pragma once
// A shipped profile's kernel launch overhead (`launch_overhead`, ns) as a double, for closed
// forms: the time a hand-written kernel waits between its launch and its start
// (models/gpu/device_profile.hpp). Loads the profile on each call (tests only).
#include <string>

#include "models/config/profile_loader.hpp"

namespace gpumux {

inline double launch_ns(const std::string& model = "h100-sxm-80gb") {
  return static_cast<double>(load_device_profile(model).launch_overhead);
}

}  // namespace gpumux
