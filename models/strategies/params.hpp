#pragma once
// The base of every strategy's parameter block (strategy.hpp): the typed values of the
// `sharing:` keys one strategy owns. SharingSpec (models/scenario/scenario.hpp) holds one, with
// value semantics through clone().
#include <memory>

namespace gpumux {

class Strategy;

struct StrategyParams {
  virtual ~StrategyParams() = default;
  virtual std::unique_ptr<StrategyParams> clone() const = 0;
};

}  // namespace gpumux
