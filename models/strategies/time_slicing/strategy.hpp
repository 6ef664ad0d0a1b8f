#pragma once
// The time-slicing strategy (`mode: time-slicing`; GKE time-sharing, the default CUDA behaviour
// between processes): its parameter block and descriptor. The device and its law:
// models/gpu/time_slicing.hpp.
// Keys: timeslice, context_switch, preemption (instruction | kernel-boundary),
// preemption_latency, cache_refill; unset durations come from the device profile (the profile
// keys of the same names, listed in a result's notes when they are assumptions). A fault kills
// only the faulting context. Tenants asking for more than one GPU are refused (the device plugin
// rejects multi-GPU requests under time-slicing).
#include <optional>

#include "models/gpu/sharing_limits.hpp"  // PreemptionMode
#include "models/strategies/strategy.hpp"

namespace gpumux {

struct TimeSlicingParams : ParamsOf<TimeSlicingParams> {
  std::optional<Nanos> timeslice;           ///< slice length; default: profile `timeslice`
  std::optional<Nanos> context_switch;      ///< C; default: profile
  std::optional<Nanos> preemption_latency;  ///< P; default: profile
  std::optional<Nanos> cache_refill;        ///< extra time after a switch to another context
  PreemptionMode preemption = PreemptionMode::instruction;
};

const Strategy& time_slicing_strategy();

}  // namespace gpumux
