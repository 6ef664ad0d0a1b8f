#include "models/strategies/mig/mig.hpp"

#include "models/gpu/device_profile.hpp"

namespace gpumux {
namespace {

std::string mig_assumption_note(const std::string& gpu, const DeviceProfile& profile) {
  for (const std::string& key : profile.assumed) {
    if (key.rfind("mig.", 0) == 0) {
      return gpu + ": some MIG numbers of " + profile.name + " are assumptions (e.g. " + key +
             "; see calibration/README.md)";
    }
  }
  return "";
}

}  // namespace

const Partition& mig_partition() {
  static const Partition partition{"mig", "mig+", mig_assumption_note};
  return partition;
}

}  // namespace gpumux
