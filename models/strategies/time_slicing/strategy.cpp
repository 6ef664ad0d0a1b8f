#include "models/strategies/time_slicing/strategy.hpp"

#include <string>

#include "models/config/sharing_bounds.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/gpu/time_slicing.hpp"

namespace gpumux {
namespace {

using namespace yaml;

// A duration key of the block: the slice (`timeslice`: at least kMinTimeslice) or a switch cost
// (>= 0, at most kMaxSwitchCost; models/config/sharing_bounds.hpp), emitted when set.
template <std::optional<Nanos> TimeSlicingParams::*Member, bool timeslice>
ParamSpec duration_parameter(const char* key, const char* default_text, const char* doc) {
  return ParamSpec{key,
                   "duration",
                   default_text,
                   timeslice ? ">= 1us, e.g. 2ms" : "0 to 1s, e.g. 25us",
                   doc,
                   [](Context& ctx, const Field& f, StrategyParams& p) {
                     const Nanos value = duration_of(ctx, f);
                     if (timeslice && value < kMinTimeslice) {
                       ctx.fail(f, std::string(kTimesliceBoundReason) + ", got " +
                                       units::format_duration(value));
                     }
                     if (!timeslice && value > kMaxSwitchCost) {
                       ctx.fail(f, std::string(kSwitchCostBoundReason) + ", got " +
                                       units::format_duration(value));
                     }
                     params_as<TimeSlicingParams>(p).*Member = value;
                   },
                   [](YAML::Emitter& out, const std::string& name, const StrategyParams& p) {
                     if (const auto& v = params_as<TimeSlicingParams>(p).*Member)
                       out << YAML::Key << name << YAML::Value << units::format_duration(*v);
                   },
                   copy_member<Member>};
}

// The time-slicing keys, declared once (ParamSpec): read, emitted and copied in this order.
const std::vector<ParamSpec>& time_slicing_parameters() {
  static const std::vector<ParamSpec> table = {
      duration_parameter<&TimeSlicingParams::timeslice, true>(
          "timeslice", "profile `timeslice`", "how long one context holds the device"),
      duration_parameter<&TimeSlicingParams::context_switch, false>(
          "context_switch", "profile `context_switch`",
          "time a switch between two contexts takes (the device is busy, not useful)"),
      {"preemption", "choice", "instruction", "instruction | kernel-boundary",
       "how a context gives the device up at the end of its slice: at once (compute "
       "preemption) or when its running kernel ends",
       [](Context& ctx, const Field& f, StrategyParams& p) {
         params_as<TimeSlicingParams>(p).preemption =
             choice_of<PreemptionMode>(ctx, f,
                                       {{"instruction", PreemptionMode::instruction},
                                        {"kernel-boundary", PreemptionMode::kernel_boundary},
                                        {"kernel_boundary", PreemptionMode::kernel_boundary}},
                                       {"instruction", "kernel-boundary"}, "preemption mode");
       },
       [](YAML::Emitter& out, const std::string& key, const StrategyParams& p) {
         out << YAML::Key << key << YAML::Value
             << (params_as<TimeSlicingParams>(p).preemption == PreemptionMode::instruction
                     ? "instruction"
                     : "kernel-boundary");
       },
       copy_member<&TimeSlicingParams::preemption>},
      duration_parameter<&TimeSlicingParams::preemption_latency, false>(
          "preemption_latency", "profile `preemption_latency`",
          "time to save a preempted context's state at the end of its slice"),
      duration_parameter<&TimeSlicingParams::cache_refill, false>(
          "cache_refill", "profile `cache_refill`",
          "extra time after a switch to another context (cold caches)"),
  };
  return table;
}

class TimeSlicing final : public Strategy {
 public:
  const char* name() const override { return "time-slicing"; }
  std::vector<std::string> spellings() const override {
    return {"time-slicing", "time_slicing", "timeslicing"};
  }
  const char* summary() const override {
    return "one context holds the device at a time, round-robin slices, switch costs";
  }
  const std::vector<ParamSpec>& parameters() const override { return time_slicing_parameters(); }
  std::unique_ptr<StrategyParams> make_params() const override {
    return std::make_unique<TimeSlicingParams>();
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
  bool time_sliced() const override { return true; }

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
