#include "models/strategies/strategy.hpp"

#include <algorithm>

namespace gpumux {

const std::vector<ParamSpec>& Strategy::parameters() const {
  static const std::vector<ParamSpec> none;
  return none;
}

std::vector<std::string> Strategy::keys() const {
  std::vector<std::string> names;
  for (const ParamSpec& p : parameters()) names.push_back(p.key);
  return names;
}

void Strategy::read(yaml::Context& ctx, const yaml::MapReader& map, StrategyParams& params) const {
  for (const ParamSpec& p : parameters()) {
    if (const auto field = map.get(p.key)) p.read(ctx, *field, params);
  }
}

void Strategy::emit(YAML::Emitter& out, const StrategyParams& params) const {
  for (const ParamSpec& p : parameters()) p.emit(out, p.key, params);
}

bool Strategy::copy_key(const std::string& key, const StrategyParams& from,
                        StrategyParams& to) const {
  const std::vector<ParamSpec>& table = parameters();
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const ParamSpec& p) { return p.key == key; });
  if (it == table.end()) return false;
  it->copy(from, to);
  return true;
}

DeviceLimits Strategy::limits(const StrategyParams& params, const DeviceFit& device) const {
  DeviceLimits out;
  out.device = sharing_limits(params);
  out.max_clients = out.device.max_clients;
  if (device.replicas > 0 && (out.max_clients == 0 || device.replicas < out.max_clients)) {
    out.max_clients = device.replicas;
  }
  out.time_sliced = time_sliced();
  out.shared_fault_domain = fault_scope() == FaultScope::device;
  return out;
}

DeviceLimits default_limits(const Strategy& strategy, const DeviceProfile& profile,
                            DeviceFit device) {
  const std::unique_ptr<StrategyParams> params = strategy.make_params();
  const std::vector<std::string> used = strategy.fill_defaults(*params, device.replicas, profile);
  device.profile_defaults = &used;
  strategy.fit_device(*params, device);
  return strategy.limits(*params, device);
}

}  // namespace gpumux
