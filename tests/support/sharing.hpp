#pragma once
// Test access to a SharingSpec's strategy parameter blocks: the block of time-slicing or MPS as
// written (the spec's own, or the one kept aside when `mode` is another strategy; an empty block
// when none was written).
#include "models/scenario/scenario.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/time_slicing/strategy.hpp"

namespace gpumux {

inline const TimeSlicingParams& ts_params(const SharingSpec& sharing) {
  static const TimeSlicingParams none;
  const StrategyParams* block = sharing.block_for(time_slicing_strategy());
  return block ? params_as<TimeSlicingParams>(*block) : none;
}

inline const MpsParams& mps_params(const SharingSpec& sharing) {
  static const MpsParams none;
  const StrategyParams* block = sharing.block_for(mps_strategy());
  return block ? params_as<MpsParams>(*block) : none;
}

}  // namespace gpumux
