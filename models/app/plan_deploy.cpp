#include "models/app/plan_deploy.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <map>

#include "models/cluster/gke_config.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/scenario/emit.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

// A Kubernetes object name (RFC 1123 label: lower case alphanumerics and '-').
std::string k8s_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("tenant") : out.substr(0, 63);
}

// The tenant's body as a pod's `workload:` (the scenario emitter's tenant without placement).
YAML::Node workload_of(const TenantSpec& tenant, const Scenario& setup) {
  Scenario one;
  one.name = setup.name;
  one.seed = setup.seed;
  one.duration = setup.duration;
  one.warmup = setup.warmup;
  one.gpus = setup.gpus;
  one.tenants = {tenant};
  YAML::Node body = YAML::Load(emit_scenario_yaml(one))["tenants"][0];
  for (const char* key : {"name", "device", "replicas", "gpus"}) body.remove(key);
  return body;
}

std::map<std::string, std::string> gke_selector(const PlanNode& node) {
  std::map<std::string, std::string> s;
  s[cluster::kGkeNodePoolLabel] = node.name;
  const std::string type = cluster::gke_accelerator_type(load_device_profile(node.model));
  if (!type.empty()) s[cluster::kGkeAcceleratorLabel] = type;
  if (!node.partition.empty()) s[cluster::kGkePartitionSizeLabel] = node.partition;
  if (node.clients > 0) {
    s[cluster::kGkeSharingStrategyLabel] =
        node.family.find("mps") != std::string::npos ? "mps" : "time-sharing";
    s[cluster::kGkeMaxSharedClientsLabel] = std::to_string(node.clients);
  }
  return s;
}

constexpr const char* kNodeLabel = "gpumux.io/node";

std::string gcloud_command(const PlanNode& node) {
  const std::string type = cluster::gke_accelerator_type(load_device_profile(node.model));
  std::string accelerator =
      fmt::format("type={},count={},gpu-driver-version=latest", type, node.gpus.size());
  if (!node.partition.empty()) accelerator += ",gpu-partition-size=" + node.partition;
  if (node.clients > 0) {
    accelerator += fmt::format(
        ",gpu-sharing-strategy={},max-shared-clients-per-gpu={}",
        node.family.find("mps") != std::string::npos ? "mps" : "time-sharing", node.clients);
  }
  return fmt::format(
      "gcloud container node-pools create {} \\\n  --cluster=\"${{CLUSTER:?set CLUSTER}}\" "
      "--location=\"${{LOCATION:?set LOCATION}}\" \\\n  --machine-type={} --num-nodes=1 \\\n  "
      "--accelerator={}\n",
      node.name, node.machine, accelerator);
}

std::string device_plugin_config(const PlanNode& node) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "flags" << YAML::Value << YAML::BeginMap << YAML::Key << "migStrategy"
      << YAML::Value << (node.partition.empty() ? "none" : "single") << YAML::EndMap;
  if (node.clients > 0) {
    out << YAML::Key << "sharing" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << (node.family.find("mps") != std::string::npos ? "mps" : "timeSlicing")
        << YAML::Value << YAML::BeginMap << YAML::Key << "resources" << YAML::Value
        << YAML::BeginSeq << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value
        << "nvidia.com/gpu" << YAML::Key << "replicas" << YAML::Value << node.clients
        << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndMap;
  return fmt::format("# NVIDIA k8s-device-plugin config of {} ({}): {}\n{}\n", node.name,
                     node.machine, node.family, out.c_str());
}

std::string mig_parted_config(const PlanSetup& setup) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
  out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "all-disabled" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key
      << "devices" << YAML::Value << "all" << YAML::Key << "mig-enabled" << YAML::Value << false
      << YAML::EndMap << YAML::EndSeq;
  for (const PlanNode& node : setup.nodes) {
    if (node.partition.empty()) continue;
    out << YAML::Key << node.name << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "devices" << YAML::Value << "all";
    out << YAML::Key << "mig-enabled" << YAML::Value << true;
    out << YAML::Key << "mig-devices" << YAML::Value << YAML::BeginMap << YAML::Key
        << node.partition << YAML::Value << node.instances << YAML::EndMap;
    out << YAML::EndMap << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  return fmt::format(
      "# nvidia-mig-parted config of the plan's nodes (one per node; "
      "nvidia-mig-parted apply -f mig-parted.yaml -c NODE)\n{}\n",
      out.c_str());
}

// A time-shared pod's GPU-memory budget: what it may allocate so that every assignment of the
// pool's pods fits its devices (docs/plan.md, "Memory budgets").
//   MPS: the pinned device memory limit the MPS control daemon gives each client, device memory
//        / clients in whole MiB (GKE, https://cloud.google.com/kubernetes-engine/docs/how-to/
//        nvidia-mps-gpus; NVIDIA k8s-device-plugin, mps_equal_memory_share), written as
//        CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=<MiB>M" (NVIDIA MPS documentation, "Environment
//        Variables": the limit per visible device) and the active thread percentage, 100 / clients
//        (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). The simulation enforces the same limits (MPS
//        replicas).
//   time-sharing: nothing enforces a limit (GKE, "Time-sharing GPUs on GKE", limitations: no
//        memory isolation), so the budget is the tenant's `memory:`, the bytes the simulation
//        allocates, whose sum the plan checked on every block the kubelet can make; it is passed as
//        GPUMUX_GPU_MEMORY_BUDGET_MIB and GPUMUX_GPU_MEMORY_FRACTION (of the device) for the
//        serving process to apply (e.g. vLLM --gpu-memory-utilization, PyTorch
//        torch.cuda.set_per_process_memory_fraction).
struct MemoryBudget {
  std::vector<std::pair<std::string, std::string>> env;
  std::string note;  ///< one comment line, empty when the pod does not share a device
};

MemoryBudget memory_budget(const TenantSpec& tenant, const PlanNode& node) {
  MemoryBudget out;
  if (node.clients <= 0) return out;
  const DeviceProfile& profile = load_device_profile(node.model);
  std::int64_t device_memory = profile.memory;
  for (const MigProfileSpec& mig : profile.mig_profiles) {
    if (mig.name == node.partition) device_memory = mig.memory;
  }
  constexpr double mib = 1024.0 * 1024.0;
  if (node.family.find("mps") != std::string::npos) {
    const std::int64_t limit = mps_equal_memory_share(device_memory, node.clients);
    const auto limit_mib = static_cast<std::int64_t>(static_cast<double>(limit) / mib);
    out.env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", fmt::format("0={}M", limit_mib));
    out.env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                         fmt::format("{}", mps_equal_thread_percentage(node.clients)));
    out.note = fmt::format(
        "# GPU-memory budget: {} MiB, the MPS pinned device memory limit of each of the {} "
        "clients (enforced by MPS, and by the simulation).",
        limit_mib, node.clients);
    return out;
  }
  const auto budget_mib =
      static_cast<std::int64_t>(std::ceil(static_cast<double>(tenant.memory) / mib));
  out.env.emplace_back("GPUMUX_GPU_MEMORY_BUDGET_MIB", std::to_string(budget_mib));
  out.env.emplace_back("GPUMUX_GPU_MEMORY_FRACTION",
                       fmt::format("{:.4f}", static_cast<double>(tenant.memory) /
                                                 static_cast<double>(device_memory)));
  out.note = fmt::format(
      "# GPU-memory budget: {} MiB ({:.1f} % of the device). Time-sharing enforces no limit: the "
      "serving process must\n# keep to it (e.g. vLLM --gpu-memory-utilization, PyTorch "
      "torch.cuda.set_per_process_memory_fraction).",
      budget_mib, 100.0 * static_cast<double>(tenant.memory) / static_cast<double>(device_memory));
  return out;
}

std::string pod_manifest(const std::string& name, const TenantSpec& tenant,
                         const std::string& device, const PlanNode& node,
                         const std::map<std::string, std::string>& selector, bool gke) {
  const MemoryBudget budget = memory_budget(tenant, node);
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Pod";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << name << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key
      << "app.kubernetes.io/name" << YAML::Value << name << YAML::EndMap << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : selector)
    out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  out << YAML::EndMap;
  out << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::Flow << YAML::BeginMap
      << YAML::Key << "key" << YAML::Value << "nvidia.com/gpu" << YAML::Key << "operator"
      << YAML::Value << "Exists" << YAML::Key << "effect" << YAML::Value << "NoSchedule"
      << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "image" << YAML::Value << "REPLACE-WITH-THE-SERVING-IMAGE";
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits"
      << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "nvidia.com/gpu" << YAML::Value
      << 1 << YAML::EndMap << YAML::EndMap;
  if (!budget.env.empty()) {
    out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
    for (const auto& [key, value] : budget.env) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << key << YAML::Key
          << "value" << YAML::Value << YAML::DoubleQuoted << value << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;
  const std::string where =
      node.clients > 0
          ? fmt::format(
                "# Any assignment of the pool's pods to its devices meets every SLO (gpumux "
                "checked "
                "each set of pods\n# the kubelet may put on one device), so the pods may be "
                "created in any order and may move.\n{}\n",
                budget.note)
          : std::string("# Each device holds one pod alone: any device of the pool will do.\n");
  return fmt::format("# gpumux plan: tenant {} on {} ({}, {}), simulated on device {}.\n{}{}\n",
                     tenant.name, node.name, node.machine,
                     gke ? "GKE node pool " + node.name : "device plugin", device, where,
                     out.c_str());
}

}  // namespace

std::vector<PlanFile> plan_deployment_files(const PlanResult& result,
                                            const std::string& scenario_path) {
  std::vector<PlanFile> files;
  const PlanSetup& best = result.ranked.front();
  files.push_back({"best.yaml", fmt::format("# gpumux plan {}: the cheapest setup found "
                                            "(`gpumux run` reproduces it)\n{}",
                                            scenario_path, result.best_yaml)});
  if (best.nodes.empty()) return files;
  const bool gke = result.platform == "gke";
  const bool plugin = result.platform == "device-plugin";
  bool any_mig = false;
  for (const PlanNode& node : best.nodes) any_mig = any_mig || !node.partition.empty();
  if (any_mig && !gke) files.push_back({"mig-parted.yaml", mig_parted_config(best)});
  if (!gke && !plugin) return files;

  const Scenario& setup = best.scenario;
  std::string script;
  if (gke) {
    script = fmt::format(
        "#!/bin/sh\n# gpumux plan {}: the GKE node pools of the best setup ({:.2f} {}/h), one "
        "node each.\n# GPU flags: https://cloud.google.com/kubernetes-engine/docs/how-to/"
        "timesharing-gpus, .../gpus-multi, .../nvidia-mps-gpus\nset -e\n",
        scenario_path, best.cost_per_hour, result.currency);
  } else {
    script = fmt::format(
        "#!/bin/sh\n# gpumux plan {}: label each GPU node for its device-plugin and mig-parted "
        "config\n# (GPU operator: nvidia.com/device-plugin.config, nvidia.com/mig.config) and "
        "for the pods' nodeSelector.\n# NODE0, NODE1, ...: your node names, in plan order.\n"
        "set -e\n",
        scenario_path);
  }
  YAML::Emitter cluster;
  cluster << YAML::BeginMap;
  cluster << YAML::Key << "name" << YAML::Value << setup.name + "-cluster";
  cluster << YAML::Key << "description" << YAML::Value
          << fmt::format(
                 "gpumux plan {} ({}): the best setup's nodes and pods, replayed "
                 "through the cluster layer",
                 scenario_path, result.platform);
  cluster << YAML::Key << "seed" << YAML::Value << setup.seed;
  cluster << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  cluster << YAML::Key << "duration" << YAML::Value << units::format_duration(setup.duration);
  cluster << YAML::Key << "warmup" << YAML::Value << units::format_duration(setup.warmup);
  cluster << YAML::Key << "pools" << YAML::Value << YAML::BeginSeq;
  std::vector<std::map<std::string, std::string>> selectors;
  for (std::size_t n = 0; n < best.nodes.size(); ++n) {
    const PlanNode& node = best.nodes[n];
    cluster << YAML::BeginMap;
    cluster << YAML::Key << "name" << YAML::Value << node.name;
    cluster << YAML::Key << "count" << YAML::Value << 1;
    cluster << YAML::Key << "gpu" << YAML::Value << node.model;
    cluster << YAML::Key << "gpus_per_node" << YAML::Value << node.gpus.size();
    cluster << YAML::Key << "cost_per_hour" << YAML::Value << node.cost_per_hour;
    cluster << YAML::Key << "currency" << YAML::Value << result.currency;
    if (gke) {
      script += gcloud_command(node);
      selectors.push_back(gke_selector(node));
      cluster << YAML::Key << "sharing" << YAML::Value << YAML::BeginMap << YAML::Key << "gke"
              << YAML::Value << YAML::Flow << YAML::BeginMap;
      if (!node.partition.empty()) {
        cluster << YAML::Key << "gpu-partition-size" << YAML::Value << node.partition;
      }
      if (node.clients > 0) {
        cluster << YAML::Key << "gpu-sharing-strategy" << YAML::Value
                << (node.family.find("mps") != std::string::npos ? "mps" : "time-sharing");
        cluster << YAML::Key << "max-shared-clients-per-gpu" << YAML::Value << node.clients;
      }
      cluster << YAML::EndMap << YAML::EndMap;
    } else {
      const std::string config_file = "device-plugin-" + node.name + ".yaml";
      files.push_back({config_file, device_plugin_config(node)});
      script += fmt::format(
          "kubectl label node \"${{NODE{0}:?set NODE{0}}}\" --overwrite {1}={2} "
          "nvidia.com/device-plugin.config={2} nvidia.com/mig.config={3}\n",
          n, kNodeLabel, node.name, node.partition.empty() ? "all-disabled" : node.name);
      selectors.push_back({{kNodeLabel, node.name}});
      cluster << YAML::Key << "labels" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
              << kNodeLabel << YAML::Value << node.name << YAML::EndMap;
      cluster << YAML::Key << "sharing" << YAML::Value << YAML::BeginMap;
      cluster << YAML::Key << "device_plugin" << YAML::Value << config_file;
      if (!node.partition.empty()) {
        cluster << YAML::Key << "mig_parted" << YAML::Value << YAML::Flow << YAML::BeginMap
                << YAML::Key << "file" << YAML::Value << "mig-parted.yaml" << YAML::Key << "config"
                << YAML::Value << node.name << YAML::EndMap;
      }
      cluster << YAML::EndMap;
    }
    cluster << YAML::EndMap;
  }
  cluster << YAML::EndSeq;
  cluster << YAML::Key << "pods" << YAML::Value << YAML::BeginSeq;
  for (std::size_t n = 0; n < best.nodes.size(); ++n) {
    const PlanNode& node = best.nodes[n];
    for (const int t : node.pod_order) {
      const TenantSpec& tenant = setup.tenants[static_cast<std::size_t>(t)];
      const std::string name = k8s_name(tenant.name);
      files.push_back({fmt::format("pods/{}.yaml", name),
                       pod_manifest(name, tenant, tenant.device, node, selectors[n], gke)});
      cluster << YAML::BeginMap;
      cluster << YAML::Key << "name" << YAML::Value << tenant.name;
      cluster << YAML::Key << "arrival" << YAML::Value << "0s";
      cluster << YAML::Key << "requests" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
              << "nvidia.com/gpu" << YAML::Value << 1 << YAML::EndMap;
      cluster << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
      for (const auto& [k, v] : selectors[n]) {
        cluster << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
      }
      cluster << YAML::EndMap;
      cluster << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::Flow
              << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "nvidia.com/gpu"
              << YAML::Key << "operator" << YAML::Value << "Exists" << YAML::Key << "effect"
              << YAML::Value << "NoSchedule" << YAML::EndMap << YAML::EndSeq;
      cluster << YAML::Key << "workload" << YAML::Value << workload_of(tenant, setup);
      cluster << YAML::EndMap;
    }
  }
  cluster << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  if (!gke) {
    // The GPU operator reads per-node device-plugin configs from one ConfigMap, a key per
    // config, and picks a node's by its nvidia.com/device-plugin.config label.
    std::string from_files;
    for (const PlanNode& node : best.nodes) {
      from_files += fmt::format(" \\\n  --from-file={0}=device-plugin-{0}.yaml", node.name);
    }
    script += fmt::format(
        "# The configs, for the GPU operator's ClusterPolicy devicePlugin.config.name: "
        "gpumux-device-plugin\n# (and the MIG layouts: migManager.config.name with "
        "mig-parted.yaml, when written):\nkubectl create configmap gpumux-device-plugin "
        "-n \"${{NAMESPACE:-gpu-operator}}\"{}\n",
        from_files);
  }
  files.push_back({gke ? "node-pools.sh" : "nodes.sh", script});
  files.push_back(
      {"cluster.yaml", fmt::format("# gpumux plan {}: the best setup as a cluster scenario "
                                   "(`gpumux run cluster.yaml`)\n{}\n",
                                   scenario_path, cluster.c_str())});
  return files;
}

bool plan_output_entry(const std::string& relative) {
  auto yaml_file = [](const std::string& name) {
    return name.size() > 5 && name.ends_with(".yaml") && name.find('/') == std::string::npos;
  };
  if (relative == "best.yaml" || relative == "cluster.yaml" || relative == "node-pools.sh" ||
      relative == "nodes.sh" || relative == "mig-parted.yaml" || relative == "pods/") {
    return true;
  }
  if (relative.starts_with("device-plugin-")) return yaml_file(relative);
  if (relative.starts_with("pods/")) return yaml_file(relative.substr(5));
  return false;
}

}  // namespace gpumux
