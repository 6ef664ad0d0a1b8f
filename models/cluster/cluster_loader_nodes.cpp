// Reading a cluster scenario's nodes: its pools (`pools:`: GPU model, count, price, network,
// taints, and the sharing each pool's device plugin, GKE flags or mig-parted config gives its
// GPUs), its `scheduler:` and its `autoscaler:`.
#include "models/cluster/cluster_loader_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>
#include <set>

#include "models/cluster/device_plugin_config.hpp"
#include "models/cluster/gke_config.hpp"
#include "models/cluster/input_files.hpp"
#include "models/cluster/mig_parted_config.hpp"
#include "models/cluster/openb_reader.hpp"
#include "models/cluster/quantity.hpp"
#include "models/config/profile_loader.hpp"
#include "models/scenario/override_tree.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/scenario/pod_workload.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::cluster::loader_detail {
namespace {

using namespace yaml;

// Stated maxima, far beyond any real cluster, that keep the expanded spec in memory.
constexpr int kMaxNodesPerPool = 100'000;  // assumption: larger than any published cluster
constexpr int kMaxGpusPerNode = 64;        // assumption: HGX nodes have 8, GB200 NVL72 racks 72/4
// The highest price per node-hour: assumption, a million times an 8-GPU node's ~$30-100/h list
// price; keeps every cost (node-hours x price) finite in the results (1e308 gave inf / null).
constexpr double kMaxCostPerHour = 1e8;

// --- network rates: "100Gbit/s" (bits) or "12.5GB/s" (bytes) -> bytes per second ---

double network_rate_of(Context& ctx, const Field& field) {
  const std::string text = trim(text_of(ctx, field));
  struct BitUnit {
    const char* suffix;
    double bits;
  };
  constexpr BitUnit kBitUnits[] = {
      {"Tbit/s", 1e12}, {"Gbit/s", 1e9}, {"Mbit/s", 1e6}, {"kbit/s", 1e3}, {"bit/s", 1.0}};
  for (const BitUnit& unit : kBitUnits) {
    const std::string suffix = unit.suffix;
    if (text.size() > suffix.size() &&
        text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const auto number = parse_number(trim(text.substr(0, text.size() - suffix.size())));
      if (!number || !std::isfinite(*number) || *number <= 0) {
        ctx.fail(field, fmt::format("expected a positive rate such as 100Gbit/s, got '{}'", text));
      }
      return *number * unit.bits / 8.0;
    }
  }
  const double bytes = with_unit(ctx, field, units::parse_bandwidth_bytes_per_s);
  if (!(bytes > 0)) ctx.fail(field, fmt::format("must be greater than zero, got '{}'", text));
  return bytes;
}

// --- pools ---

const DeviceProfile& profile_of(Context& ctx, const Field& field) {
  const std::string name = trim(non_empty_text(ctx, field));
  try {
    const bool path = name.find('/') != std::string::npos || name.ends_with(".yaml");
    return load_device_profile(path ? ctx.resolve_path(field, name).string() : name);
  } catch (const InputError& e) {
    // The profile's own file errors keep their location; an unknown name is the pool's error.
    if (!e.where().file.empty() && e.where().line > 0) throw;
    ctx.fail(field, e.what());
  }
}

GpuSharingConfig device_plugin_config_of(Context& ctx, const Field& field) {
  if (field.node.IsScalar()) {
    const std::string path = ctx.resolve_path(field, non_empty_text(ctx, field)).string();
    const std::string text = detail::read_text_file(
        path, "device-plugin config", ctx.at(field.path, field.mark), detail::kMaxGpuConfigBytes);
    GpuSharingConfig config = parse_device_plugin_config(text, path);
    config.where = ctx.at(field.path, field.mark);
    return config;
  }
  return read_device_plugin_config(ctx, field);
}

// A device plugin's `devices:` subset is parsed but not modelled (every device of the pool is
// shared): refused, not silently ignored.
GpuSharingConfig without_device_subsets(GpuSharingConfig config) {
  for (const SharedResource& r : config.shared) {
    if (!r.devices.empty()) {
      throw InputError(r.devices_where,
                       fmt::format("sharing only some devices of {} is not modelled: gpumux shares "
                                   "every device of the pool; drop `devices:` (or `devices: all`), "
                                   "or put the unshared GPUs in a pool of their own",
                                   r.name));
    }
  }
  return config;
}

GpuSharingConfig device_plugin_of(Context& ctx, const Field& field) {
  return without_device_subsets(device_plugin_config_of(ctx, field));
}

// Checks a combined device-plugin + MIG layout: what the strategy advertises must exist.
void check_mig_strategy(Context& ctx, const Field& where, const GpuSharingConfig& s) {
  std::set<std::string> profiles(s.mig_devices.begin(), s.mig_devices.end());
  for (const auto& [index, layout] : s.mig_devices_by_index) {
    profiles.insert(layout.begin(), layout.end());
  }
  if (profiles.empty()) return;
  if (s.mig_strategy == MigStrategy::none) {
    ctx.fail(where,
             "the MIG layout needs the device plugin's flags.migStrategy single or mixed "
             "(with none it advertises no MIG device)");
  }
  if (s.mig_strategy == MigStrategy::single && profiles.size() > 1) {
    ctx.fail(where, fmt::format("migStrategy single needs one MIG profile on every GPU of a node; "
                                "the layout has {} ({}): use mixed",
                                profiles.size(), join({profiles.begin(), profiles.end()})));
  }
  if (s.sharing == SharingKind::mps) {
    ctx.fail(where,
             "sharing using MPS is not supported for MIG devices (the NVIDIA device "
             "plugin, internal/plugin/mps.go); use timeSlicing or no MIG layout");
  }
  for (const SharedResource& r : s.shared) {
    if (r.name.rfind("nvidia.com/mig-", 0) == 0 &&
        profiles.count(r.name.substr(std::string("nvidia.com/mig-").size())) == 0) {
      ctx.fail(where, fmt::format("the device plugin shares {} but the MIG layout has no such "
                                  "device (profiles: {})",
                                  r.name, join({profiles.begin(), profiles.end()})));
    }
  }
}

GpuSharingConfig sharing_of(Context& ctx, const Field& field, const DeviceProfile* gpu,
                            int gpus_per_node, std::map<std::string, std::string>& labels) {
  const MapReader map(ctx, field, {"device_plugin", "mig_parted", "gke"});
  const auto plugin = map.get("device_plugin");
  const auto mig = map.get("mig_parted");
  const auto gke = map.get("gke");
  if (gke && (plugin || mig)) {
    ctx.fail(*gke,
             "gke describes the whole GPU setup of a GKE node pool; give it alone, or "
             "device_plugin and/or mig_parted instead");
  }
  const auto need_gpu = [&](const Field& f) -> const DeviceProfile& {
    if (gpu == nullptr) ctx.fail(f, "a pool without GPUs (gpus_per_node: 0) has no GPU sharing");
    return *gpu;
  };
  if (gke) {
    GpuSharingConfig config = read_gke_config(ctx, *gke, need_gpu(*gke), labels);
    return config;
  }
  GpuSharingConfig config;
  config.where = ctx.at(field.path, field.mark);
  if (plugin) {
    need_gpu(*plugin);
    config = device_plugin_of(ctx, *plugin);
  }
  if (mig) {
    const DeviceProfile& profile = need_gpu(*mig);
    const MapReader spec(ctx, *mig, {"file", "config"});
    const Field file_field = spec.require("file");
    const std::string path = ctx.resolve_path(file_field, non_empty_text(ctx, file_field)).string();
    const MigPartedFile file = parse_mig_parted_config(
        detail::read_text_file(path, "mig-parted config", ctx.at(file_field.path, file_field.mark),
                               detail::kMaxGpuConfigBytes),
        path);
    const Field name = spec.require("config");
    apply_mig_parted_config(file, non_empty_text(ctx, name), ctx.at(name.path, name.mark), profile,
                            gpus_per_node, config);
    if (!plugin) {
      // assumption: without a device-plugin config, one profile per node is advertised as
      // nvidia.com/gpu (migStrategy single, the GPU operator's default) and several profiles
      // each as nvidia.com/mig-PROFILE (mixed).
      std::set<std::string> profiles(config.mig_devices.begin(), config.mig_devices.end());
      for (const auto& [index, layout] : config.mig_devices_by_index) {
        profiles.insert(layout.begin(), layout.end());
      }
      config.mig_strategy = profiles.size() > 1 ? MigStrategy::mixed : MigStrategy::single;
    }
    check_mig_strategy(ctx, *mig, config);
    if (plugin) {
      config.source = fmt::format("device-plugin config and {}", config.source);
    }
  }
  return config;
}

// `taints:` items: "KEY=VALUE:EFFECT" (kubectl taint's form) or {key, value, effect}.
Taint taint_of(Context& ctx, const Field& field) {
  Taint t;
  const auto check_effect = [&](const Field& f, const std::string& effect) {
    if (effect != "NoSchedule" && effect != "NoExecute" && effect != "PreferNoSchedule") {
      ctx.fail(f, fmt::format("taint effect '{}': expected NoSchedule, NoExecute or "
                              "PreferNoSchedule",
                              effect));
    }
  };
  if (field.node.IsScalar()) {
    const std::string text = trim(non_empty_text(ctx, field));
    const auto colon = text.rfind(':');
    const std::string head = colon == std::string::npos ? text : text.substr(0, colon);
    if (colon != std::string::npos) t.effect = text.substr(colon + 1);
    const auto eq = head.find('=');
    t.key = head.substr(0, eq);
    if (eq != std::string::npos) t.value = head.substr(eq + 1);
    if (t.key.empty()) ctx.fail(field, fmt::format("taint '{}': expected KEY=VALUE:EFFECT", text));
    check_effect(field, t.effect);
    return t;
  }
  const MapReader map(ctx, field, {"key", "value", "effect"});
  t.key = non_empty_text(ctx, map.require("key"));
  if (const auto f = map.get("value")) t.value = text_of(ctx, *f);
  if (const auto f = map.get("effect")) {
    t.effect = non_empty_text(ctx, *f);
    check_effect(*f, t.effect);
  }
  return t;
}

}  // namespace

double cost_per_hour_of(Context& ctx, const Field& field) {
  const double price = number_of(ctx, field);
  if (price < 0) ctx.fail(field, "must not be negative");
  if (!(price <= kMaxCostPerHour)) {
    ctx.fail(field, fmt::format("at most {:g} per node-hour, got {:g}", kMaxCostPerHour, price));
  }
  return price;
}

NodePoolSpec pool_of(Context& ctx, const Field& field) {
  const MapReader map(
      ctx, field,
      {"name", "count", "gpu", "gpus_per_node", "cpu", "memory", "cost_per_hour", "currency",
       "network", "nvlink", "autoscaling", "labels", "taints", "sharing"});
  NodePoolSpec pool;
  pool.where = ctx.at(field.path, field.mark);
  pool.name = name_of(ctx, map.require("name"));
  if (const auto f = map.get("count")) {
    pool.count = int_of(ctx, *f, 0);
    if (pool.count > kMaxNodesPerPool) {
      ctx.fail(*f, fmt::format("at most {} nodes per pool, got {}", kMaxNodesPerPool, pool.count));
    }
  }
  if (const auto f = map.get("gpus_per_node")) {
    pool.gpus_per_node = int_of(ctx, *f, 0);
    if (pool.gpus_per_node > kMaxGpusPerNode) {
      ctx.fail(
          *f, fmt::format("at most {} GPUs per node, got {}", kMaxGpusPerNode, pool.gpus_per_node));
    }
  }
  const DeviceProfile* gpu = nullptr;
  if (const auto f = map.get("gpu")) {
    gpu = &profile_of(ctx, *f);
    pool.gpu_model = gpu->name;
    if (pool.gpus_per_node == 0) {
      ctx.fail(*f, "a pool with gpus_per_node: 0 has no GPU model; drop `gpu`");
    }
  } else if (pool.gpus_per_node > 0) {
    map.require("gpu");
  }
  if (const auto f = map.get("cpu")) pool.cpu_milli = cpu_millicores_of(ctx, *f);
  if (const auto f = map.get("memory")) pool.memory_bytes = memory_bytes_of(ctx, *f);
  if (const auto f = map.get("cost_per_hour")) pool.cost_per_hour = cost_per_hour_of(ctx, *f);
  if (const auto f = map.get("currency")) pool.currency = non_empty_text(ctx, *f);
  if (const auto f = map.get("network")) pool.network_bytes_per_s = network_rate_of(ctx, *f);
  if (const auto f = map.get("nvlink")) pool.nvlink_bytes_per_s = network_rate_of(ctx, *f);
  if (const auto f = map.get("autoscaling")) {
    const MapReader a(ctx, *f, {"min", "max", "provisioning_delay", "scale_down_after"});
    AutoscalingSpec spec;
    spec.min_nodes = int_of(ctx, a.require("min"), 0);
    const Field max = a.require("max");
    spec.max_nodes = int_of(ctx, max, 0);
    if (spec.max_nodes < spec.min_nodes) {
      ctx.fail(max, fmt::format("max ({}) is below min ({})", spec.max_nodes, spec.min_nodes));
    }
    if (spec.max_nodes > kMaxNodesPerPool) {
      ctx.fail(max,
               fmt::format("at most {} nodes per pool, got {}", kMaxNodesPerPool, spec.max_nodes));
    }
    if (pool.count < spec.min_nodes || pool.count > spec.max_nodes) {
      ctx.fail(max, fmt::format("count ({}) must lie in [min, max] = [{}, {}]", pool.count,
                                spec.min_nodes, spec.max_nodes));
    }
    if (const auto d = a.get("provisioning_delay")) spec.provisioning_delay = duration_of(ctx, *d);
    if (const auto d = a.get("scale_down_after")) spec.scale_down_after = duration_of(ctx, *d);
    pool.autoscaling = spec;
  }
  if (const auto f = map.get("labels")) {
    ctx.record(*f);
    if (!f->node.IsMap() && !f->node.IsNull()) {
      ctx.fail(*f, fmt::format("expected a mapping of label: value, got {}", kind_of(f->node)));
    }
    for (auto it = f->node.begin(); f->node.IsMap() && it != f->node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const Field value{it->second, child_path(f->path, key),
                        it->second.Mark().line >= 0 ? it->second.Mark() : it->first.Mark()};
      pool.labels[key] = text_of(ctx, value);
    }
  }
  if (const auto f = map.get("taints")) {
    for (const Field& item : list_of(ctx, *f, false)) pool.taints.push_back(taint_of(ctx, item));
  }
  if (const auto f = map.get("sharing")) {
    pool.sharing = sharing_of(ctx, *f, gpu, pool.gpus_per_node, pool.labels);
    if (pool.sharing.source == "gke") add_gke_node_labels(pool, *gpu);
  }
  return pool;
}

SchedulerSpec scheduler_of(Context& ctx, const Field& field) {
  const MapReader map(
      ctx, field,
      {"policy", "preemption", "ignore_deletions", "fgd_popularity_threshold",
       "fgd_include_cpu_pods", "fgd_typical_step", "node_score", "tie_break", "tie_seed"});
  SchedulerSpec s;
  if (const auto f = map.get("policy")) {
    s.policy = choice_of<SchedulingPolicy>(ctx, *f,
                                           {{"best-fit", SchedulingPolicy::best_fit},
                                            {"first-fit", SchedulingPolicy::first_fit},
                                            {"worst-fit", SchedulingPolicy::worst_fit},
                                            {"fgd", SchedulingPolicy::fgd},
                                            {"best_fit", SchedulingPolicy::best_fit},
                                            {"first_fit", SchedulingPolicy::first_fit},
                                            {"worst_fit", SchedulingPolicy::worst_fit}},
                                           {"best-fit", "first-fit", "worst-fit", "fgd"},
                                           "scheduling policy");
  }
  if (const auto f = map.get("preemption")) s.preemption = bool_of(ctx, *f);
  if (const auto f = map.get("ignore_deletions")) s.ignore_deletions = bool_of(ctx, *f);
  if (const auto f = map.get("fgd_popularity_threshold")) {
    s.fgd_popularity_threshold = int_of(ctx, *f, 1);
    if (s.fgd_popularity_threshold > 100) {
      ctx.fail(*f,
               fmt::format("a percentage of the pods, 1-100, got {}", s.fgd_popularity_threshold));
    }
  }
  if (const auto f = map.get("fgd_include_cpu_pods")) s.fgd_include_cpu_pods = bool_of(ctx, *f);
  if (const auto f = map.get("fgd_typical_step")) {
    s.fgd_typical_step = int_of(ctx, *f, 1);
    if (s.fgd_typical_step > 1000) {
      ctx.fail(*f, fmt::format("shapes per step, 1-1000, got {}", s.fgd_typical_step));
    }
  }
  if (const auto f = map.get("node_score")) {
    s.node_score = choice_of<NodeScore>(
        ctx, *f, {{"integer", NodeScore::integer}, {"exact", NodeScore::exact}},
        {"integer", "exact"}, "node score");
  }
  if (const auto f = map.get("tie_break")) {
    s.tie_break = choice_of<TieBreak>(ctx, *f,
                                      {{"name", TieBreak::node_name},
                                       {"permutation", TieBreak::permutation},
                                       {"random", TieBreak::random}},
                                      {"name", "permutation", "random"}, "tie-break");
  }
  if (const auto f = map.get("tie_seed")) s.tie_seed = yaml::seed_of(ctx, *f);
  return s;
}

// `autoscaler: {expander: random|least-waste|priority|first, priorities: {10: [regex, ...]}}`
AutoscalerSpec autoscaler_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"expander", "priorities"});
  AutoscalerSpec a;
  if (const auto f = map.get("expander")) {
    a.expander = choice_of<Expander>(ctx, *f,
                                     {{"random", Expander::random},
                                      {"least-waste", Expander::least_waste},
                                      {"priority", Expander::priority},
                                      {"first", Expander::first}},
                                     {"random", "least-waste", "priority", "first"}, "expander");
  }
  if (const auto f = map.get("priorities")) {
    ctx.record(*f);
    if (!f->node.IsMap()) {
      ctx.fail(*f, fmt::format("expected a mapping of priority: [pool-name regex, ...], got {}",
                               kind_of(f->node)));
    }
    for (auto it = f->node.begin(); it != f->node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const Field value{it->second, child_path(f->path, key), it->first.Mark()};
      const Field key_field{it->first, child_path(f->path, key), it->first.Mark()};
      const int priority = int_of(ctx, key_field, 1);
      std::vector<std::string>& patterns = a.priorities[priority];
      for (const Field& item : list_of(ctx, value, true)) {
        const std::string pattern = text_of(ctx, item);
        try {
          (void)std::regex(pattern);
        } catch (const std::regex_error& e) {
          ctx.fail(item, fmt::format("not a regular expression: {}", e.what()));
        }
        patterns.push_back(pattern);
      }
    }
    if (a.priorities.empty()) ctx.fail(*f, "no priorities (give at least one value: [regex])");
  }
  if (a.expander == Expander::priority && a.priorities.empty()) {
    ctx.fail(field, "the priority expander needs `priorities: {10: [pool-name regex, ...]}`");
  }
  return a;
}

}  // namespace gpumux::cluster::loader_detail
