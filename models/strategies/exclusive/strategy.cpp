#include "models/strategies/exclusive/strategy.hpp"

#include "models/gpu/concurrent.hpp"

namespace gpumux {
namespace {

class Exclusive final : public Strategy {
 public:
  const char* name() const override { return "exclusive"; }
  const char* summary() const override {
    return "one client per device (a dedicated GPU or MIG instance)";
  }
  std::unique_ptr<StrategyParams> make_params() const override {
    return std::make_unique<ExclusiveParams>();
  }
  std::string placement_error(const std::string& device, int clients) const override {
    if (clients <= 1) return "";
    return device + " is exclusive but has " + std::to_string(clients) +
           " tenants; use sharing.mode time-slicing or mps, or MIG";
  }
  SharingLimits sharing_limits(const StrategyParams& /*params*/) const override {
    SharingLimits limits;
    limits.max_clients = 1;
    return limits;
  }
  std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                      const StrategyParams& params) const override {
    return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), sharing_limits(params));
  }
  CompareVariants compare() const override { return {{"exclusive", "dedicated"}, true, true}; }
};

}  // namespace

const Strategy& exclusive_strategy() {
  static const Exclusive strategy;
  return strategy;
}

}  // namespace gpumux
