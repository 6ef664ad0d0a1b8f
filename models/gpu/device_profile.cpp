#include "models/gpu/device_profile.hpp"

namespace gpumux {

const MigProfileSpec* DeviceProfile::find_mig_profile(const std::string& profile_name) const {
  for (const MigProfileSpec& spec : mig_profiles) {
    if (spec.name == profile_name) return &spec;
  }
  return nullptr;
}

double achievable_hbm_bandwidth(const DeviceProfile& gpu, double nominal_efficiency) {
  return gpu.hbm_bandwidth_measured > 0 ? gpu.hbm_bandwidth_measured
                                        : gpu.hbm_bandwidth * nominal_efficiency;
}

}  // namespace gpumux
