#pragma once
// SharingSpec: a GPU's `sharing:` block — the strategy `mode` names (found in the registry,
// registry.hpp), the `replicas` key common to all, and that strategy's own parameter block
// (strategy.hpp). resolve_scenario fills and fits the block; the strategy turns it into the
// limits the physics takes (models/gpu/sharing_limits.hpp).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/strategies/params.hpp"

namespace gpumux {

/// A GPU's `sharing:` block: the strategy (found by name in models/strategies/registry.hpp),
/// the common `replicas` key, and the strategy's own parameter block (strategy.hpp). Copies are
/// deep (the block is cloned).
class SharingSpec {
 public:
  SharingSpec();                                   ///< exclusive, nothing set
  explicit SharingSpec(const Strategy& strategy);  ///< that strategy, nothing set
  SharingSpec(const SharingSpec& other);
  SharingSpec& operator=(const SharingSpec& other);
  SharingSpec(SharingSpec&&) noexcept = default;
  SharingSpec& operator=(SharingSpec&&) noexcept = default;
  ~SharingSpec();

  const Strategy& strategy() const { return *strategy_; }
  /// The canonical mode name ("exclusive", "time-slicing", "mps", ...).
  const char* mode_name() const;
  bool is(const std::string& mode) const { return mode == mode_name(); }
  StrategyParams& params() { return *params_; }
  const StrategyParams& params() const { return *params_; }
  /// The block of `strategy` as written: params() for this spec's own strategy, else the keys
  /// of that strategy the file or --set wrote although `mode` is another one (checked, kept
  /// aside, never used or emitted; `compare` carries --set overrides to the strategy they
  /// belong to), or nullptr when none were written.
  const StrategyParams* block_for(const Strategy& strategy) const;
  void keep_other_block(const Strategy& strategy, std::shared_ptr<const StrategyParams> block);

  int replicas = 0;  ///< max clients per device; 0 = not set (exclusive: 1; others: unlimited
                     ///< except the strategy's client limit)

 private:
  const Strategy* strategy_;
  std::unique_ptr<StrategyParams> params_;
  std::vector<std::pair<const Strategy*, std::shared_ptr<const StrategyParams>>> others_;
};

}  // namespace gpumux
