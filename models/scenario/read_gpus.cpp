// Reads a `gpus:` entry: model, count, `mig:` and the `sharing:` block.
#include "models/scenario/loader_parts.hpp"

#include <algorithm>

#include "models/config/mig_names.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;

namespace {

// The `sharing:` block: `mode` picks the strategy in the registry, `replicas` is common, and
// every other key belongs to a strategy, which reads it (models/strategies/). A key of another
// strategy than the one chosen is still checked (a sweep may switch `mode` with --set and leave
// it) and kept aside, unused (SharingSpec::block_for).
SharingSpec sharing_of(Context& ctx, const Field& field) {
  std::vector<std::string> allowed{"mode", "replicas"};
  for (const Strategy* strategy : strategies()) {
    for (const std::string& key : strategy->keys()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) allowed.push_back(key);
    }
  }
  allowed.emplace_back("interference");
  const MapReader map(ctx, field, allowed);
  if (const auto f = map.get("interference")) {
    ctx.fail(*f,
             "was removed: MPS interference now follows from SM residency, fair HBM sharing "
             "and L2 capacity (set a kernel's working_set; docs/strategies.md)");
  }
  const Strategy* strategy = &default_strategy();
  if (const auto f = map.get("mode")) {
    const std::string text = text_of(ctx, *f);
    strategy = find_strategy(text);
    if (strategy == nullptr) {
      std::vector<std::pair<std::string, const Strategy*>> spellings;
      for (const Strategy* known : strategies()) {
        for (const std::string& spelling : known->spellings())
          spellings.emplace_back(spelling, known);
      }
      const std::string suggestion = closest_choice(text, spellings);
      ctx.fail(*f, "unknown sharing mode '" + text + "'" +
                       (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                       "; use one of: " + join(strategy_names()));
    }
  }
  SharingSpec s(*strategy);
  if (const auto f = map.get("replicas")) s.replicas = int_of(ctx, *f, 1);
  for (const Strategy* each : strategies()) {
    if (each == strategy) {
      each->read(ctx, map, s.params());
    } else {
      const std::vector<std::string> keys = each->keys();
      if (std::none_of(keys.begin(), keys.end(),
                       [&map](const std::string& key) { return map.get(key).has_value(); })) {
        continue;
      }
      std::shared_ptr<StrategyParams> other = each->make_params();
      each->read(ctx, map, *other);
      s.keep_other_block(*each, std::move(other));
    }
  }
  return s;
}

std::vector<std::string> mig_of(Context& ctx, const Field& field, std::string& layout_name) {
  std::vector<std::string> profiles;
  // PROFILE:COUNT repeats a profile (mig-parted / GKE syntax): [3g.40gb:2, 1g.10gb]
  auto append = [&](const Field& where, const std::string& item) {
    try {
      for (std::string& name : expand_profile_count(item)) profiles.push_back(std::move(name));
    } catch (const std::invalid_argument& e) {
      ctx.fail(where, e.what());
    }
  };
  if (field.node.IsSequence()) {
    for (const Field& item : list_of(ctx, field, true)) append(item, non_empty_text(ctx, item));
    return profiles;
  }
  const std::string text = non_empty_text(ctx, field);
  if (text.find(',') == std::string::npos && text.find(':') == std::string::npos) {
    layout_name = trim(text);
    return profiles;
  }
  for (const std::string& part : split(text, ',')) {
    if (trim(part).empty()) ctx.fail(field, "empty MIG profile name in '" + text + "'");
    append(field, trim(part));
  }
  return profiles;
}

}  // namespace

// A `sharing:` key written on the gpus entry itself: "belongs under sharing" (mode, replicas and
// every strategy's keys, from the registry's parameter tables).
static const std::map<std::string, std::string>& sharing_key_hints() {
  static const std::map<std::string, std::string> hints = [] {
    std::map<std::string, std::string> out{{"mode", "sharing"}, {"replicas", "sharing"}};
    for (const Strategy* strategy : strategies()) {
      for (const ParamSpec& p : strategy->parameters()) out.emplace(p.key, "sharing");
    }
    return out;
  }();
  return hints;
}

// `power:` on a gpus entry: `none` (no power cap modelled) or a mapping replacing the profile's
// power terms (models/gpu/power.hpp): tdp, idle, sm_dynamic (W), hbm_energy (pJ/B),
// clock_exponent (a number in [1, 4]), tensor_energy (pJ/FLOP, 0 turns the tensor term off).
static PowerOverrides power_of(Context& ctx, const Field& field) {
  PowerOverrides power;
  if (field.node.IsScalar()) {
    if (text_of(ctx, field) != "none") {
      ctx.fail(field,
               "expected `none` or a mapping {tdp: 300W, idle: 50W, sm_dynamic: 295W, "
               "hbm_energy: 31pJ/B, clock_exponent: 3, tensor_energy: 0.76pJ/FLOP}, got '" +
                   text_of(ctx, field) + "'");
    }
    power.off = true;
    return power;
  }
  const MapReader map(
      ctx, field, {"tdp", "idle", "sm_dynamic", "hbm_energy", "clock_exponent", "tensor_energy"});
  const auto with = [&](const char* key, std::string_view unit, const char* example,
                        double scale) -> std::optional<double> {
    const auto f = map.get(key);
    if (!f) return std::nullopt;
    const std::string text = text_of(ctx, *f);
    const std::optional<double> value = parse_with_unit(text, unit);
    const bool exponent = unit.empty();
    const std::optional<double> plain =
        exponent ? std::optional<double>(number_of(ctx, *f)) : value;
    if (!plain || !(*plain > 0) || (exponent && !(*plain >= 1 && *plain <= 4))) {
      ctx.fail(*f, exponent ? "expected a number in [1, 4], got '" + text + "'"
                            : "expected a value in " + std::string(unit) +
                                  " greater than 0, e.g. " + example + ", got '" + text + "'");
    }
    return *plain * scale;
  };
  power.tdp_w = with("tdp", "W", "300W", 1.0);
  power.idle_w = with("idle", "W", "50W", 1.0);
  power.sm_dynamic_w = with("sm_dynamic", "W", "295W", 1.0);
  power.hbm_picojoules_per_byte = with("hbm_energy", "pJ/B", "31pJ/B", 1.0);
  power.clock_exponent = with("clock_exponent", "", "3", 1.0);
  if (const auto f = map.get("tensor_energy")) {  // >= 0: 0 turns the tensor term off
    const std::string text = text_of(ctx, *f);
    const std::optional<double> value = parse_with_unit(text, "pJ/FLOP");
    if (!value || !(*value >= 0)) {
      ctx.fail(*f,
               "expected a value in pJ/FLOP of at least 0, e.g. 0.76pJ/FLOP, got '" + text + "'");
    }
    power.tensor_picojoules_per_flop = *value;
  }
  return power;
}

GpuSpec gpu_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"name", "model", "count", "mig", "sharing", "cost_per_hour", "power"},
                      sharing_key_hints());
  GpuSpec g;
  g.where = ctx.at(field.path, field.mark);
  g.name = name_of(ctx, map.require("name"));
  g.model = non_empty_text(ctx, map.require("model"));
  if (const auto f = map.get("count")) {
    g.count = int_of(ctx, *f, 1);
    if (g.count > kMaxGpuCount) {
      ctx.fail(*f, "at most " + std::to_string(kMaxGpuCount) + " GPUs per entry, got " +
                       text_of(ctx, *f));
    }
  }
  if (const auto f = map.get("mig")) g.mig = mig_of(ctx, *f, g.mig_layout_name);
  if (const auto f = map.get("sharing")) g.sharing = sharing_of(ctx, *f);
  if (const auto f = map.get("cost_per_hour")) {
    g.cost_per_hour = number_of(ctx, *f);
    if (g.cost_per_hour < 0) ctx.fail(*f, "must be >= 0, got " + text_of(ctx, *f));
    if (g.cost_per_hour > kMaxGpuCostPerHour) {
      ctx.fail(*f, "at most 1e+08 per GPU-hour, got " + text_of(ctx, *f));
    }
  }
  if (const auto f = map.get("power")) g.power = power_of(ctx, *f);
  return g;
}

}  // namespace gpumux::scenario_detail
