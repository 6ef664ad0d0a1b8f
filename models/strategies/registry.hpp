#pragma once
// The strategy registry: every sharing strategy gpumux knows, found by name. The one list of
// strategies (registry.cpp); the loader, resolver, runner, emitter, `compare`, the CLI and the
// Python bindings ask it instead of naming strategies themselves.
#include <string>
#include <vector>

#include "models/strategies/mig/mig.hpp"
#include "models/strategies/strategy.hpp"

namespace gpumux {

/// Every registered strategy, in registration order (exclusive first: the default).
const std::vector<const Strategy*>& strategies();

/// The strategy one of whose spellings is `mode`, or nullptr.
const Strategy* find_strategy(const std::string& mode);

/// The position of `strategy` in strategies() (exclusive: 0): an order that does not depend on
/// addresses. O(strategies).
int strategy_rank(const Strategy& strategy);

/// `sharing.mode` when none is written: exclusive.
const Strategy& default_strategy();

/// Canonical names, in registration order ("exclusive, time-slicing, mps, ...").
std::vector<std::string> strategy_names();

/// Every name `gpumux compare --strategies` accepts, in the order help texts list them:
/// as-is, each strategy's whole-GPU variant names, mig, mig+NAME for each strategy. Without
/// `aliases`, only the first whole-GPU name of each strategy (exclusive, not also dedicated).
std::vector<std::string> compare_strategy_names(bool aliases = true);

}  // namespace gpumux
