#pragma once
// SharingSpec: a GPU's `sharing:` block as written in a scenario (mode and every mode's
// parameters; unset values are filled from the device profile by resolve_scenario). The strategy
// registry (registry.hpp) turns it into the device limits the physics takes
// (models/gpu/sharing_limits.hpp).
#include <cstdint>
#include <optional>

#include "models/gpu/sharing_limits.hpp"  // PreemptionMode
#include "sim/core/time.hpp"

namespace gpumux {

enum class SharingMode { exclusive, time_slicing, mps };

struct SharingSpec {
  SharingMode mode = SharingMode::exclusive;
  int replicas = 0;  ///< max clients per device; 0 = not set (exclusive: 1; others: unlimited
                     ///< except the MPS client limit)
  // time-slicing (unset = from the device profile)
  std::optional<Nanos> timeslice;
  std::optional<Nanos> context_switch;
  std::optional<Nanos> preemption_latency;
  std::optional<Nanos> cache_refill;  ///< extra time after a switch to a different context
  PreemptionMode preemption = PreemptionMode::instruction;
  // mps
  std::optional<double> active_thread_percentage;   ///< (0,100] per client; default 100
  std::optional<std::int64_t> pinned_memory_limit;  ///< bytes per client; unset = none
  std::optional<int> max_clients;                   ///< MPS client limit; default from profile
  /// CUDA version of the MPS server as major * 100 + minor (`cuda_version: 13.1` -> 1301);
  /// from 13.1 the default client limit is 60 instead of 48 (MPS documentation).
  std::optional<int> cuda_version;
};

}  // namespace gpumux
