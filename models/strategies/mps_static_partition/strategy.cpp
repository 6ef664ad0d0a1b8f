#include "models/strategies/mps_static_partition/strategy.hpp"

#include "models/gpu/concurrent.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/strategies/mps/strategy.hpp"

namespace gpumux {
namespace {

class MpsStaticPartition final : public Strategy {
 public:
  const char* name() const override { return "mps-static-partition"; }
  std::vector<std::string> spellings() const override {
    return {"mps-static-partition", "mps_static_partition"};
  }
  const char* summary() const override {
    return "one MPS server, each of its N clients capped at 1/N of the SMs and of the memory";
  }
  std::unique_ptr<StrategyParams> make_params() const override {
    return std::make_unique<MpsStaticPartitionParams>();
  }

  std::vector<std::string> fill_defaults(StrategyParams& block, int /*replicas*/,
                                         const DeviceProfile& profile) const override {
    params_as<MpsStaticPartitionParams>(block).max_clients =
        mps_default_max_clients(profile, std::nullopt);
    return {"mps_max_clients"};
  }

  void fit_device(StrategyParams& block, const DeviceFit& device) const override {
    auto& p = params_as<MpsStaticPartitionParams>(block);
    p.clients = device.clients;
    p.thread_percentage = mps_equal_thread_percentage(device.clients);
    p.memory_limit = mps_equal_memory_share(device.memory, device.clients);
    if (device.compute_slices > 0) {
      p.max_clients =
          mig_mps_max_clients(p.max_clients, device.compute_slices, device.gpu_compute_slices);
    }
  }

  SharingLimits sharing_limits(const StrategyParams& block) const override {
    const auto& p = params_as<MpsStaticPartitionParams>(block);
    SharingLimits limits;
    if (p.memory_limit > 0) limits.client_memory_limit = p.memory_limit;
    limits.thread_share = p.thread_percentage / 100.0;
    limits.max_clients = p.max_clients;
    limits.shared_server = true;
    limits.interleave_clients = kDefaultInterleavedClients;  // (one MPS server: as `mps`)
    return limits;
  }
  std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                      const StrategyParams& block) const override {
    return std::make_unique<ConcurrentDevice>(sim, std::move(geometry), sharing_limits(block));
  }

  FaultScope fault_scope() const override { return FaultScope::device; }
  const char* fault_note() const override { return " (MPS: every client of the server fails)"; }
};

}  // namespace

const Strategy& mps_static_partition_strategy() {
  static const MpsStaticPartition strategy;
  return strategy;
}

}  // namespace gpumux
