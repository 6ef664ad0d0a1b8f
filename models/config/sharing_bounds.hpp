#pragma once
// The range of a time-sliced GPU's durations, read from a scenario's `sharing:` block
// (models/strategies/time_slicing) and a device profile (profile_loader.cpp).
//
// timeslice >= kMinTimeslice. source: the NVIDIA driver sets a channel group's slice in whole
// microseconds (open-gpu-kernel-modules, kfifoChannelGroupSetTimeslice_IMPL(..., NvU64
// timesliceUs, ...), src/nvidia/src/kernel/gpu/fifo/kernel_fifo.c,
// https://github.com/NVIDIA/open-gpu-kernel-modules): no slice shorter than 1 us can be set.
// A shorter one (1ns for 1ms) made every slice a context switch: the run simulated ~50 us of
// switching per nanosecond of work, one event each, for minutes (a 2 s scenario drained for
// 4,000 simulated seconds).
//
// context_switch, preemption_latency, cache_refill <= kMaxSwitchCost. assumption: measured
// switch and preemption costs are tens of microseconds (the profiles' 25-50 us; Volta+ compute
// preemption), so a second is a unit typo, not a GPU; 100000h used to overflow the simulated
// clock (exit 3, "event scheduled in the past").
#include "sim/core/time.hpp"

namespace gpumux {

inline constexpr Nanos kMinTimeslice = 1'000;           ///< 1 us
inline constexpr Nanos kMaxSwitchCost = 1'000'000'000;  ///< 1 s

/// The reasons a value outside these bounds is refused, the same wherever it is read.
inline constexpr const char* kTimesliceBoundReason =
    "at least 1us (the driver sets a time slice in whole microseconds)";
inline constexpr const char* kSwitchCostBoundReason =
    "at most 1s (measured switch costs are tens of microseconds: a unit typo?)";

}  // namespace gpumux
