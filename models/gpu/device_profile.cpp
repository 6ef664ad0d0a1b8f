#include "models/gpu/device_profile.hpp"

namespace gpumux {

const MigProfileSpec* DeviceProfile::find_mig_profile(const std::string& profile_name) const {
  for (const MigProfileSpec& spec : mig_profiles) {
    if (spec.name == profile_name) return &spec;
  }
  return nullptr;
}

}  // namespace gpumux
