#pragma once
// Strategy variants for `gpumux compare`: the same tenants and arrivals (same seed, same stream
// names, so the same arrival times) re-placed under another sharing strategy.
//
//   as-is                 the scenario as written
//   time-slicing | mps    every GPU shared whole under that mode; MIG layouts are dropped and
//                         tenants on "gpuX/i" move to "gpuX"; replicas limits are lifted
//   exclusive | dedicated every tenant gets its own GPU of its GPU's model (the baseline: no
//                         sharing, more GPUs — cost rises accordingly)
//   mig                   the scenario's MIG layouts, with the scenario's sharing inside
//   mig+time-slicing | mig+mps | mig+exclusive   the MIG layouts with that mode inside
// The names come from the strategy registry (models/strategies/registry.hpp: each strategy's
// CompareVariants, the MIG partition); compare_strategy_names() lists them all.
// `--set gpus.N.sharing.KEY` overrides (applied to the file before this) are re-applied to the
// variant's GPUs that come from gpus.N, so a strategy that rebuilds `sharing:` keeps them; one
// that sets `mode` to something else than the strategy's is refused (InputError naming the key).
// The dedicated baseline (exclusive) gets new unshared GPUs: sharing overrides do not apply.
// Throws InputError for an unknown name, or `mig…` on a scenario without MIG layouts.
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace gpumux {

Scenario apply_strategy(const Scenario& scenario, const std::string& strategy);

/// Splits "a,b,c" (spaces trimmed); throws InputError for an empty list or a name listed twice.
std::vector<std::string> parse_strategy_list(const std::string& text);

}  // namespace gpumux
