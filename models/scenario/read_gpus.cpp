// Reads a `gpus:` entry: model, count, `mig:` and the `sharing:` block.
#include "models/scenario/loader_parts.hpp"

#include "models/config/mig_names.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;

namespace {

SharingSpec sharing_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"mode", "replicas", "timeslice", "context_switch", "preemption",
                       "preemption_latency", "cache_refill", "active_thread_percentage",
                       "pinned_memory_limit", "max_clients", "interference", "cuda_version"});
  if (const auto f = map.get("interference")) {
    ctx.fail(*f, "was removed: MPS interference now follows from SM residency, fair HBM sharing "
                 "and L2 capacity (set a kernel's working_set; docs/strategies.md)");
  }
  SharingSpec s;
  if (const auto f = map.get("mode")) {
    s.mode = choice_of<SharingMode>(ctx, *f,
                                    {{"exclusive", SharingMode::exclusive},
                                     {"time-slicing", SharingMode::time_slicing},
                                     {"time_slicing", SharingMode::time_slicing},
                                     {"timeslicing", SharingMode::time_slicing},
                                     {"mps", SharingMode::mps}},
                                    {"exclusive", "time-slicing", "mps"}, "sharing mode");
  }
  if (const auto f = map.get("replicas")) s.replicas = int_of(ctx, *f, 1);
  if (const auto f = map.get("timeslice")) s.timeslice = positive_duration_of(ctx, *f);
  if (const auto f = map.get("context_switch")) s.context_switch = duration_of(ctx, *f);
  if (const auto f = map.get("preemption")) {
    s.preemption = choice_of<PreemptionMode>(ctx, *f,
                                             {{"instruction", PreemptionMode::instruction},
                                              {"kernel-boundary", PreemptionMode::kernel_boundary},
                                              {"kernel_boundary", PreemptionMode::kernel_boundary}},
                                             {"instruction", "kernel-boundary"}, "preemption mode");
  }
  if (const auto f = map.get("preemption_latency")) s.preemption_latency = duration_of(ctx, *f);
  if (const auto f = map.get("cache_refill")) s.cache_refill = duration_of(ctx, *f);
  if (const auto f = map.get("active_thread_percentage")) {
    s.active_thread_percentage = fraction_of(ctx, *f, 0, true, 100);
  }
  if (const auto f = map.get("pinned_memory_limit")) s.pinned_memory_limit = size_of(ctx, *f);
  if (const auto f = map.get("max_clients")) s.max_clients = int_of(ctx, *f, 1);
  if (const auto f = map.get("cuda_version")) {
    // "13.1" -> 1301; written as a string or a number (13.1 and 13.10 are the same version).
    const std::string text = text_of(ctx, *f);
    const auto dot = text.find('.');
    int major = -1, minor = 0;
    try {
      std::size_t used = 0;
      major = std::stoi(text.substr(0, dot), &used);
      if (used != text.substr(0, dot).size()) major = -1;
      if (dot != std::string::npos) {
        const std::string rest = text.substr(dot + 1);
        minor = std::stoi(rest, &used);
        if (used != rest.size() || rest.empty()) major = -1;
      }
    } catch (const std::exception&) {
      major = -1;
    }
    if (major < 1 || minor < 0 || minor > 99) {
      ctx.fail(*f, "expected a CUDA version such as 12.6 or 13.1, got '" + text + "'");
    }
    s.cuda_version = major * 100 + minor;
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

GpuSpec gpu_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"name", "model", "count", "mig", "sharing", "cost_per_hour"},
                      {{"mode", "sharing"},
                       {"replicas", "sharing"},
                       {"timeslice", "sharing"},
                       {"context_switch", "sharing"},
                       {"preemption", "sharing"},
                       {"active_thread_percentage", "sharing"}});
  GpuSpec g;
  g.where = ctx.at(field.path, field.mark);
  g.name = name_of(ctx, map.require("name"));
  g.model = non_empty_text(ctx, map.require("model"));
  if (const auto f = map.get("count")) g.count = int_of(ctx, *f, 1);
  if (const auto f = map.get("mig")) g.mig = mig_of(ctx, *f, g.mig_layout_name);
  if (const auto f = map.get("sharing")) g.sharing = sharing_of(ctx, *f);
  if (const auto f = map.get("cost_per_hour")) {
    g.cost_per_hour = number_of(ctx, *f);
    if (g.cost_per_hour < 0) ctx.fail(*f, "must be >= 0, got " + text_of(ctx, *f));
  }
  return g;
}

}  // namespace gpumux::scenario_detail
