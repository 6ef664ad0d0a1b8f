#include "models/cluster/gke_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "models/config/mig_names.hpp"
#include "models/gpu/mig_layout.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::cluster {

using namespace yaml;

namespace {

// assumption: a sanity bound on clients per GPU (GKE's own limit is not restated here).
constexpr int kMaxSharedClients = 1024;

void check_fits(Context& ctx, const Field& field, const DeviceProfile& gpu,
                const std::vector<std::string>& layout) {
  if (gpu.mig_profiles.empty()) {
    ctx.fail(field, fmt::format("{} does not support MIG", gpu.name));
  }
  const MigFitResult fit = fit_mig_layout(gpu, layout);
  if (!fit.fits) ctx.fail(field, fmt::format("does not fit {}: {}", gpu.name, fit.reason));
}

}  // namespace

GpuSharingConfig read_gke_config(Context& ctx, const Field& field, const DeviceProfile& gpu,
                                 std::map<std::string, std::string>& labels) {
  const MapReader map(
      ctx, field,
      {"gpu-sharing-strategy", "max-shared-clients-per-gpu", "gpu-partition-size", "mig-config"});
  GpuSharingConfig config;
  config.where = ctx.at(field.path, field.mark);
  config.source = "gke";
  const auto partition = map.get("gpu-partition-size");
  const auto mig_config = map.get("mig-config");
  if (partition && mig_config) {
    ctx.fail(*mig_config,
             "give gpu-partition-size (one size, GKE) or mig-config (a mixed "
             "layout), not both");
  }
  if (partition) {
    const std::string size = trim(non_empty_text(ctx, *partition));
    const MigProfileSpec* profile = gpu.find_mig_profile(size);
    if (gpu.mig_profiles.empty())
      ctx.fail(*partition, fmt::format("{} does not support MIG", gpu.name));
    if (profile == nullptr) {
      std::vector<std::string> names;
      for (const MigProfileSpec& p : gpu.mig_profiles) names.push_back(p.name);
      ctx.fail(*partition, fmt::format("{} has no partition size '{}'{}; sizes: {}", gpu.name, size,
                                       hint(size, names), join(names)));
    }
    const std::vector<std::string> layout(static_cast<std::size_t>(profile->max_count), size);
    check_fits(ctx, *partition, gpu, layout);
    config.mig_devices = layout;
    config.mig_strategy = MigStrategy::single;
    labels[kGkePartitionSizeLabel] = size;
  }
  if (mig_config) {
    std::string text = trim(non_empty_text(ctx, *mig_config));
    if (text.rfind("--mig-config=", 0) == 0)
      text = text.substr(std::string("--mig-config=").size());
    std::vector<std::string> layout;
    for (const std::string& item : split(text, ',')) {
      try {
        const std::vector<std::string> expanded = expand_profile_count(trim(item));
        layout.insert(layout.end(), expanded.begin(), expanded.end());
      } catch (const std::invalid_argument& e) {
        ctx.fail(*mig_config, fmt::format("{} (got '{}'; write PROFILE:COUNT items separated by "
                                          "commas, e.g. 2g.20gb:1,1g.10gb:4)",
                                          e.what(), item));
      }
    }
    check_fits(ctx, *mig_config, gpu, layout);
    const std::set<std::string> sizes(layout.begin(), layout.end());
    if (sizes.size() > 1) {
      ctx.fail(*mig_config,
               fmt::format("GKE gives a node pool one partition size (cloud.google.com/"
                           "gke-gpu-partition-size; https://cloud.google.com/kubernetes-engine/"
                           "docs/how-to/gpus-multi), this layout has {} ({}); for a mixed layout "
                           "use mig_parted with device_plugin (migStrategy mixed)",
                           sizes.size(), join({sizes.begin(), sizes.end()})));
    }
    // GKE advertises every partition as nvidia.com/gpu (the device plugin's single strategy).
    config.mig_devices = layout;
    config.mig_strategy = MigStrategy::single;
    labels[kGkePartitionSizeLabel] = *sizes.begin();
  }
  const auto strategy = map.get("gpu-sharing-strategy");
  const auto clients = map.get("max-shared-clients-per-gpu");
  if (clients && !strategy) {
    ctx.fail(*clients,
             "max-shared-clients-per-gpu needs gpu-sharing-strategy (time-sharing or "
             "mps)");
  }
  if (strategy) {
    const SharingKind kind = choice_of<SharingKind>(
        ctx, *strategy, {{"time-sharing", SharingKind::time_slicing}, {"mps", SharingKind::mps}},
        {"time-sharing", "mps"}, "gpu-sharing-strategy");
    if (!clients) {
      ctx.fail(Field{field.node, child_path(field.path, "max-shared-clients-per-gpu"), field.mark},
               "missing required key 'max-shared-clients-per-gpu' (gpu-sharing-strategy needs it)");
    }
    const int replicas = int_of(ctx, *clients, 0);
    if (replicas < 2 || replicas > kMaxSharedClients) {
      ctx.fail(*clients, fmt::format("must be from 2 to {} (clients sharing one GPU), got {}",
                                     kMaxSharedClients, replicas));
    }
    if (kind == SharingKind::mps && !config.mig_devices.empty()) {
      ctx.fail(*strategy,
               "mps cannot share MIG partitions (the NVIDIA device plugin: sharing "
               "using MPS is not supported for MIG devices); use time-sharing");
    }
    config.sharing = kind;
    config.fail_requests_greater_than_one = true;
    SharedResource shared;
    shared.name = "nvidia.com/gpu";
    shared.advertised_name = "nvidia.com/gpu";
    shared.replicas = replicas;
    config.shared.push_back(shared);
    config.device_sharing =
        SharingSpec(*find_strategy(kind == SharingKind::mps ? "mps" : "time-slicing"));
    config.device_sharing.replicas = replicas;
    labels[kGkeSharingStrategyLabel] = kind == SharingKind::mps ? "mps" : "time-sharing";
    labels[kGkeMaxSharedClientsLabel] = std::to_string(replicas);
  }
  return config;
}

std::string gke_accelerator_type(const DeviceProfile& gpu) {
  // source: GCP, "GPU machine types" (https://cloud.google.com/compute/docs/gpus): the
  // accelerator names gcloud's --accelerator type= and the node label take.
  static const std::pair<const char*, const char*> kTypes[] = {
      {"h100-sxm-80gb", "nvidia-h100-80gb"}, {"a100-sxm4-40gb", "nvidia-tesla-a100"},
      {"a100-80gb", "nvidia-a100-80gb"},     {"l4-24gb", "nvidia-l4"},
      {"h200-141gb", "nvidia-h200-141gb"},
  };
  for (const auto& [profile, type] : kTypes) {
    if (gpu.name == profile) return type;
  }
  return "";
}

void add_gke_node_labels(NodePoolSpec& pool, const DeviceProfile& gpu) {
  pool.labels[kGkeNodePoolLabel] = pool.name;
  const std::string type = gke_accelerator_type(gpu);
  if (!type.empty()) pool.labels[kGkeAcceleratorLabel] = type;
}

void add_gke_gpu_taints(std::vector<NodePoolSpec>& pools) {
  const bool cpu_pool = std::any_of(pools.begin(), pools.end(),
                                    [](const NodePoolSpec& p) { return p.gpus_per_node == 0; });
  if (!cpu_pool) return;
  const Taint gpu_taint{"nvidia.com/gpu", "present", "NoSchedule"};
  for (NodePoolSpec& pool : pools) {
    if (pool.sharing.source != "gke" || pool.gpus_per_node == 0) continue;
    if (std::find(pool.taints.begin(), pool.taints.end(), gpu_taint) == pool.taints.end()) {
      pool.taints.push_back(gpu_taint);
    }
  }
}

}  // namespace gpumux::cluster
