#include "models/strategies/sharing_spec.hpp"

#include "models/strategies/registry.hpp"

namespace gpumux {

SharingSpec::SharingSpec() : SharingSpec(default_strategy()) {}
SharingSpec::SharingSpec(const Strategy& strategy)
    : strategy_(&strategy), params_(strategy.make_params()) {}
SharingSpec::SharingSpec(const SharingSpec& other)
    : replicas(other.replicas),
      strategy_(other.strategy_),
      params_(other.params_->clone()),
      others_(other.others_) {}
SharingSpec& SharingSpec::operator=(const SharingSpec& other) {
  if (this != &other) {
    replicas = other.replicas;
    strategy_ = other.strategy_;
    params_ = other.params_->clone();
    others_ = other.others_;
  }
  return *this;
}
SharingSpec::~SharingSpec() = default;
const char* SharingSpec::mode_name() const { return strategy_->name(); }

const StrategyParams* SharingSpec::block_for(const Strategy& strategy) const {
  if (&strategy == strategy_) return params_.get();
  for (const auto& [owner, block] : others_) {
    if (owner == &strategy) return block.get();
  }
  return nullptr;
}

void SharingSpec::keep_other_block(const Strategy& strategy,
                                   std::shared_ptr<const StrategyParams> block) {
  others_.emplace_back(&strategy, std::move(block));
}

}  // namespace gpumux
