// The strategy registry: the only list of strategies. Adding one = its folder plus one line here.
#include "models/strategies/registry.hpp"

#include <stdexcept>

#include "models/strategies/exclusive/strategy.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/mps_static_partition/strategy.hpp"
#include "models/strategies/time_slicing/strategy.hpp"

namespace gpumux {

const std::vector<const Strategy*>& strategies() {
  static const std::vector<const Strategy*> all{
      &exclusive_strategy(),
      &time_slicing_strategy(),
      &mps_strategy(),
      &mps_static_partition_strategy(),
  };
  return all;
}

const Strategy* find_strategy(const std::string& mode) {
  for (const Strategy* strategy : strategies()) {
    for (const std::string& spelling : strategy->spellings()) {
      if (spelling == mode) return strategy;
    }
  }
  return nullptr;
}

int strategy_rank(const Strategy& strategy) {
  const std::vector<const Strategy*>& all = strategies();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == &strategy) return static_cast<int>(i);
  }
  throw std::logic_error(std::string("strategy not registered: ") + strategy.name());
}

const Strategy& default_strategy() { return *strategies().front(); }

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const Strategy* strategy : strategies()) names.emplace_back(strategy->name());
  return names;
}

std::vector<std::string> compare_strategy_names(bool aliases) {
  std::vector<std::string> names{"as-is"};
  for (const Strategy* strategy : strategies()) {
    for (const std::string& name : strategy->compare().whole_gpu) {
      names.push_back(name);
      if (!aliases) break;
    }
  }
  const Partition& mig = mig_partition();
  names.emplace_back(mig.name);
  for (const Strategy* strategy : strategies()) {
    if (!strategy->compare().inside_mig) continue;
    std::string name = mig.hybrid_prefix;
    name += strategy->name();
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace gpumux
