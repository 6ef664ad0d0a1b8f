#include "models/strategies/time_slicing/strategy.hpp"

#include "models/gpu/device_profile.hpp"
#include "models/gpu/time_slicing.hpp"

namespace gpumux {
namespace {

using namespace yaml;

class TimeSlicing final : public Strategy {
 public:
  const char* name() const override { return "time-slicing"; }
  std::vector<std::string> spellings() const override {
    return {"time-slicing", "time_slicing", "timeslicing"};
  }
  const char* summary() const override {
    return "one context holds the device at a time, round-robin slices, switch costs";
  }
  std::vector<std::string> keys() const override {
    return {"timeslice", "context_switch", "preemption", "preemption_latency", "cache_refill"};
  }
  std::unique_ptr<StrategyParams> make_params() const override {
    return std::make_unique<TimeSlicingParams>();
  }

  void read(Context& ctx, const MapReader& map, StrategyParams& block) const override {
    auto& s = params_as<TimeSlicingParams>(block);
    if (const auto f = map.get("timeslice")) s.timeslice = positive_duration_of(ctx, *f);
    if (const auto f = map.get("context_switch")) s.context_switch = duration_of(ctx, *f);
    if (const auto f = map.get("preemption")) {
      s.preemption =
          choice_of<PreemptionMode>(ctx, *f,
                                    {{"instruction", PreemptionMode::instruction},
                                     {"kernel-boundary", PreemptionMode::kernel_boundary},
                                     {"kernel_boundary", PreemptionMode::kernel_boundary}},
                                    {"instruction", "kernel-boundary"}, "preemption mode");
    }
    if (const auto f = map.get("preemption_latency")) s.preemption_latency = duration_of(ctx, *f);
    if (const auto f = map.get("cache_refill")) s.cache_refill = duration_of(ctx, *f);
  }

  void emit(YAML::Emitter& out, const StrategyParams& block) const override {
    const auto& s = params_as<TimeSlicingParams>(block);
    auto duration = [&out](const char* key, const std::optional<Nanos>& value) {
      if (value) out << YAML::Key << key << YAML::Value << units::format_duration(*value);
    };
    duration("timeslice", s.timeslice);
    duration("context_switch", s.context_switch);
    out << YAML::Key << "preemption" << YAML::Value
        << (s.preemption == PreemptionMode::instruction ? "instruction" : "kernel-boundary");
    duration("preemption_latency", s.preemption_latency);
    duration("cache_refill", s.cache_refill);
  }

  bool copy_key(const std::string& key, const StrategyParams& from_block,
                StrategyParams& to_block) const override {
    const auto& from = params_as<TimeSlicingParams>(from_block);
    auto& to = params_as<TimeSlicingParams>(to_block);
    if (key == "timeslice")
      to.timeslice = from.timeslice;
    else if (key == "context_switch")
      to.context_switch = from.context_switch;
    else if (key == "preemption")
      to.preemption = from.preemption;
    else if (key == "preemption_latency")
      to.preemption_latency = from.preemption_latency;
    else if (key == "cache_refill")
      to.cache_refill = from.cache_refill;
    else
      return false;
    return true;
  }

  std::vector<std::string> fill_defaults(StrategyParams& block, int /*replicas*/,
                                         const DeviceProfile& profile) const override {
    auto& s = params_as<TimeSlicingParams>(block);
    std::vector<std::string> used;
    auto fill = [&used](std::optional<Nanos>& field, Nanos value, const char* key) {
      if (!field) {
        field = value;
        used.emplace_back(key);
      }
    };
    fill(s.timeslice, profile.timeslice, "timeslice");
    fill(s.context_switch, profile.context_switch, "context_switch");
    fill(s.preemption_latency, profile.preemption_latency, "preemption_latency");
    fill(s.cache_refill, profile.cache_refill, "cache_refill");
    return used;
  }

  std::string multi_gpu_error(int gpus) const override {
    if (gpus <= 1) return "";
    return "asks for " + std::to_string(gpus) +
           " GPUs, but time-shared GPUs only serve requests for one GPU (the device plugin "
           "rejects multi-GPU requests under time-slicing)";
  }

  SharingLimits sharing_limits(const StrategyParams& block) const override {
    const auto& s = params_as<TimeSlicingParams>(block);
    SharingLimits limits;  // (its defaults: an unfilled block, as the profile's defaults)
    if (s.timeslice) limits.timeslice = *s.timeslice;
    limits.context_switch = s.context_switch.value_or(0);
    limits.preemption_latency = s.preemption_latency.value_or(0);
    limits.cache_refill = s.cache_refill.value_or(0);
    limits.preemption = s.preemption;
    return limits;
  }
  std::unique_ptr<Device> make_device(Simulator& sim, DeviceGeometry geometry,
                                      const StrategyParams& block) const override {
    return std::make_unique<TimeSlicingDevice>(sim, std::move(geometry), sharing_limits(block));
  }

  std::vector<std::pair<std::string, std::string>> profile_keys() const override {
    return {{"timeslice", "timeslice"},
            {"context_switch", "context_switch"},
            {"preemption_latency", "preemption_latency"},
            {"cache_refill", "cache_refill"}};
  }
};

}  // namespace

const Strategy& time_slicing_strategy() {
  static const TimeSlicing strategy;
  return strategy;
}

}  // namespace gpumux
