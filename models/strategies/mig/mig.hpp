#pragma once
// MIG: a partition of a GPU into instances (the `mig:` layout of a gpus entry), not a `mode:`.
// Each instance is a device of its own (its SMs, memory, bandwidth and L2 share; geometry and
// placement rules from the profile, models/gpu/mig_layout.hpp) running one registered
// strategy inside: the hybrids mig+exclusive, mig+time-slicing, mig+mps, ... are the
// composition. A fault never crosses instances (each is its own device; the inner strategy's
// fault scope applies inside). `compare` offers `mig` (the layouts as written) and `mig+NAME`
// for every strategy whose CompareVariants::inside_mig is set.
#include <string>

namespace gpumux {

struct DeviceProfile;

struct Partition {
  const char* name;           ///< "mig": the compare variant with the layouts as written
  const char* hybrid_prefix;  ///< "mig+": `mig+NAME` runs strategy NAME inside every instance
  /// The note of a result on a MIG GPU whose profile marks some MIG numbers as assumptions
  /// (the first such key, e.g. mig.profiles.2.sms), or "" when none is.
  std::string (*assumption_note)(const std::string& gpu, const DeviceProfile& profile);
};

const Partition& mig_partition();

}  // namespace gpumux
