#pragma once
// The typed cluster description (issue 8): node pools with the sharing configuration their
// device plugin advertises, and the pods that ask for it. What the `cluster:` section of a
// scenario (or a cluster file it references, or the Alibaba openb CSVs) becomes before the
// scheduler (models/cluster/scheduler.hpp) runs. Units are resolved: times are integer
// nanoseconds, memory bytes, CPU millicores, GPU shares milli-GPUs (1000 = one whole GPU).
//
// Contract between the input side (cluster_loader, device_plugin_config, mig_parted_config,
// gke_config, quantity, openb_reader) and the engine side (scheduler, cluster_run, metrics).
// Change it only with both sides in view.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/core/time.hpp"

namespace gpumux::cluster {

/// One whole GPU in milli-GPUs (the unit of openb's `gpu_milli` and of FGD's scheduler).
inline constexpr int kMilliPerGpu = 1000;

/// The device plugin's `flags.migStrategy` (NVIDIA k8s-device-plugin): how MIG devices are
/// advertised. none: MIG off (or ignored), whole GPUs as nvidia.com/gpu. single: every GPU of the
/// node has one MIG profile, advertised as nvidia.com/gpu. mixed: each profile as its own
/// resource nvidia.com/mig-<profile> (e.g. nvidia.com/mig-1g.10gb).
enum class MigStrategy { none, single, mixed };

/// How the replicas of a shared resource share the GPU (device plugin `sharing.timeSlicing` /
/// `sharing.mps`; GKE `gpu-sharing-strategy: time-sharing|mps`). `fractional` is Alibaba's
/// GPU-share model used by the openb trace (a pod asks for gpu_milli of one GPU; FGD ATC'23).
enum class SharingKind { none, time_slicing, mps, fractional };

/// One `sharing.*.resources[]` entry of the device plugin config: a resource advertised with
/// `replicas` slots per device (GPU or MIG instance).
struct SharedResource {
  std::string name;  ///< as configured: "nvidia.com/gpu" or "nvidia.com/mig-1g.10gb"
  /// The name pods ask for: `rename` if given, else name + ".shared" when renameByDefault, else
  /// name.
  std::string advertised_name;
  int replicas = 1;  ///< >= 2 for a shared resource
  /// The device plugin's `devices:` selector; empty = all devices of that resource. Parsed as
  /// the plugin does, but a pool refuses a subset (the loader: not modelled, every device of the
  /// pool is shared), at `devices_where`.
  std::vector<std::string> devices;
  SourceLocation devices_where;
};

/// What the device plugin advertises for each GPU of a pool, from a k8s-device-plugin config,
/// a mig-parted config (the MIG layout) and/or GKE flags. Defaults: whole GPUs, no MIG.
struct GpuSharingConfig {
  MigStrategy mig_strategy = MigStrategy::none;
  /// MIG profile names, one per GPU instance, applied to every GPU of the pool (mig-parted's
  /// `mig-devices: {1g.10gb: 7}` or GKE's `--mig-config=2g.20gb:1,1g.10gb:4`, expanded by
  /// models/config/mig_names.hpp). Empty = MIG disabled.
  std::vector<std::string> mig_devices;
  /// Per-GPU layouts when a mig-parted config gives different layouts to different device
  /// indices (`devices: [0,1]` / `devices: all`): index -> profiles. Empty = mig_devices on all.
  std::map<int, std::vector<std::string>> mig_devices_by_index;
  SharingKind sharing = SharingKind::none;
  std::vector<SharedResource> shared;  ///< sharing != none: the shared resources
  /// `failRequestsGreaterThanOne`: a pod asking for more than one replica of a shared resource
  /// is refused (the plugin's documented behaviour) rather than given several replicas.
  bool fail_requests_greater_than_one = false;
  bool rename_by_default = false;
  /// The strategy each GPU (or MIG instance) runs when several pods share it, for pods with a
  /// workload (models/strategies): time-slicing or mps; from `sharing`.
  SharingSpec device_sharing;
  std::string source;    ///< e.g. "device-plugin config FILE", "mig-parted config NAME", "gke"
  SourceLocation where;  ///< the `sharing:` / `device_plugin:` key of the pool
};

/// A node taint (`taints:` of a pool): pods that do not tolerate it are not placed there (effects
/// NoSchedule and NoExecute; PreferNoSchedule is kept but does not filter). GKE GPU pools in a
/// cluster that also has CPU-only pools carry nvidia.com/gpu=present:NoSchedule (gke_config.hpp).
struct Taint {
  std::string key, value, effect = "NoSchedule";
  bool operator==(const Taint&) const = default;
};

/// A pod's toleration (`tolerations:`), as Kubernetes matches it: the same key (or no key with
/// operator Exists: every taint), operator Equal with the same value or Exists, and the same
/// effect (or none: every effect).
struct Toleration {
  std::string key;
  std::string op = "Equal";  ///< Equal | Exists
  std::string value, effect;
  bool operator==(const Toleration&) const = default;
  bool tolerates(const Taint& taint) const;
};

/// Cluster autoscaler bounds for one pool (`autoscaling: {min, max, provisioning_delay}`).
struct AutoscalingSpec {
  int min_nodes = 0;
  int max_nodes = 0;
  /// Time from the scale-up decision to a schedulable node. assumption unless sourced.
  Nanos provisioning_delay = 0;
  /// An empty node above min_nodes is removed after this long idle.
  Nanos scale_down_after = 600 * kSecond;
};

/// A node pool: `count` identical nodes (GKE node pool, or one openb node model).
struct NodePoolSpec {
  std::string name;
  int count = 1;                  ///< nodes at start (autoscaling may change it)
  std::string gpu_model;          ///< device profile name (calibration/profiles), or the trace's
                                  ///< model string when no profile exists (e.g. openb "P100")
  int gpus_per_node = 1;          ///< 0 = a CPU-only pool
  std::int64_t cpu_milli = 0;     ///< allocatable CPU per node, millicores ("64", "1500m")
  std::int64_t memory_bytes = 0;  ///< allocatable memory per node ("256Gi")
  double cost_per_hour = 0.0;     ///< per node
  std::string currency = "USD";
  /// Bandwidth between two nodes of the pool, bytes/s, for a gang whose GPUs span nodes.
  double network_bytes_per_s = 0.0;
  /// (engine) GPU-to-GPU bandwidth within a node, bytes/s, for a gang on one node; 0 = the
  /// scheduler's kDefaultNvlinkBytesPerS (an assumption, sourced there).
  double nvlink_bytes_per_s = 0.0;
  std::optional<AutoscalingSpec> autoscaling;
  GpuSharingConfig sharing;
  /// Node labels, matched by a pod's `nodeSelector` (GKE pools also get the labels GKE sets:
  /// cloud.google.com/gke-nodepool, gke-accelerator and the sharing / partition labels).
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;  ///< `taints:` (and GKE's GPU taint, see Taint)
  /// openb: explicit node names (one per node); empty = POOL-0..POOL-(count-1).
  std::vector<std::string> node_names;
  SourceLocation where;
};

/// What a pod runs once placed.
struct PodWorkload {
  /// The pod runs this long after it starts (openb: deletion_time - scheduled/creation_time).
  /// Neither duration nor tenant (openb files without times, e.g. multigpu50): it never ends.
  std::optional<Nanos> duration;
  /// Or a tenant workload that runs through the device models on the GPU(s) it is placed on, so
  /// its latency reflects its neighbours (the tenant's `device` is filled in at placement).
  std::optional<TenantSpec> tenant;
};

/// A pod (or a gang of identical pods) and its resource requests.
struct PodSpec {
  std::string name;
  /// The pod class pending-time percentiles and costs are reported by (`class:`; openb: the
  /// request shape, e.g. "1x460m", "8x1000m").
  std::string pod_class;
  Nanos arrival = 0;  ///< creation time
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  /// Extended resources as Kubernetes `resources.limits` writes them: "nvidia.com/gpu" -> 2,
  /// "nvidia.com/mig-1g.10gb" -> 1, "nvidia.com/gpu.shared" -> 1.
  std::map<std::string, std::int64_t> gpu_resources;
  /// openb / fractional sharing: milli-GPUs per GPU when num_gpu == 1 and < 1000; 0 otherwise.
  int gpu_milli = 0;
  /// Node GPU models the pod may run on (openb `gpu_spec` "V100M16|V100M32"; nodeSelector);
  /// empty = any.
  std::vector<std::string> gpu_models;
  /// `nodeSelector:` label -> value: the pod goes only to nodes whose pool has every one.
  std::map<std::string, std::string> node_selector;
  /// `tolerations:`; a pod also tolerates a taint whose key is an extended resource it requests
  /// (Kubernetes' ExtendedResourceToleration admission plugin, which GKE runs:
  /// https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/
  /// #extendedresourcetoleration).
  std::vector<Toleration> tolerations;
  int priority = 0;  ///< PriorityClass value: higher may preempt lower
  /// `gang: N`: N pods of this shape scheduled all or nothing (a multi-node job); 1 = no gang.
  int gang = 1;
  /// Bytes a gang member exchanges with the others per step, for the inter-node penalty.
  std::int64_t gang_bytes_per_step = 0;
  /// (engine) Training steps of a gang: the run lasts duration + gang_steps x the ring
  /// all-reduce time of gang_bytes_per_step over the link its placement uses (NVLink within a
  /// node, the pool's network across nodes; models/cluster/scheduler.hpp). 0 = duration only.
  std::int64_t gang_steps = 0;
  /// (engine) Fraction of the allocated GPU share the pod keeps busy, for utilization and cost
  /// by use. assumption: 1.0 (no usage data) unless given.
  double gpu_utilization = 1.0;
  /// (engine) GPU memory the pod uses, bytes, for $/GB-month used; 0 = its allocated share.
  std::int64_t gpu_memory_bytes = 0;
  PodWorkload workload;
  SourceLocation where;
};

/// Scheduling policies (`scheduler.policy`). fgd: Fragmentation Gradient Descent (Weng et al.,
/// "Beware of Fragmentation", USENIX ATC'23): the node whose fragmentation grows least.
enum class SchedulingPolicy { first_fit, best_fit, worst_fit, fgd };
enum class NodeScore { integer, exact };
enum class TieBreak { node_name, permutation, random };

struct SchedulerSpec {
  SchedulingPolicy policy = SchedulingPolicy::best_fit;
  bool preemption = false;  ///< lower-priority pods may be evicted for a higher-priority one
  /// openb replay as FGD does it: pods are never deleted (the cluster fills up); false = pods
  /// leave at arrival + duration.
  bool ignore_deletions = false;
  /// (engine) FGD's typical pods: the most frequent request shapes covering this percentage of
  /// the pods (source: kubernetes-scheduler-simulator scripts/generate_config_and_run.py, the
  /// ATC'23 experiments' `--pod-popularity-threshold` default 95).
  int fgd_popularity_threshold = 95;
  /// (engine) Whether CPU-only pods are among FGD's typical pods (same source:
  /// typicalPodsConfig.isInvolvedCpuPods: true).
  bool fgd_include_cpu_pods = true;
  /// (engine) FGD's typical pods are taken in steps of this many shapes until they cover the
  /// threshold (source: scripts/generate_config_and_run.py `--pod-increase-step` default 1, what
  /// the ATC'23 experiments ran; pkg/type DefaultTypicalPodIncreaseStep 10 applies only when the
  /// config gives none).
  int fgd_typical_step = 1;
  /// (engine) Node scores as kube-scheduler's framework keeps them, an integer 0..100
  /// (framework.MaxNodeScore; FGD: trunc(100 sigmoid(dF / 1000))), or the exact real value.
  NodeScore node_score = NodeScore::integer;
  /// (engine) Among nodes of equal best score: the smallest node name (the FGD simulator's
  /// kube-scheduler, selectHost); the first in a random order of the nodes fixed for the run
  /// (permutation: the FGD simulator prefixes every node name with its place in a seeded random
  /// permutation, so its smallest name is that); or a node drawn anew at every decision
  /// (random: upstream kube-scheduler). `tie_seed` seeds both random forms.
  TieBreak tie_break = TieBreak::node_name;
  /// (engine) Seed of the deterministic tie-break among equal-score nodes (scheduler.hpp).
  std::uint64_t tie_seed = 0;
};

/// cluster-autoscaler's expander (`--expander`): which node group grows when several could
/// host the pending pods
/// (https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md, "What are
/// Expanders?"). first: the first pool in file order (gpumux's own, not an expander of
/// cluster-autoscaler).
enum class Expander { random, least_waste, priority, first };

/// `cluster.autoscaler:` (engine): the scale-up decision for all autoscaled pools.
struct AutoscalerSpec {
  Expander expander = Expander::random;  ///< cluster-autoscaler's default expander
  /// The priority expander's ConfigMap `priorities`: value -> regular expressions matched
  /// against the pool name; the highest matching value wins.
  std::map<int, std::vector<std::string>> priorities;
};

struct ClusterSpec {
  std::vector<NodePoolSpec> pools;
  std::vector<PodSpec> pods;  ///< sorted by arrival (ties: file order)
  SchedulerSpec scheduler;
  AutoscalerSpec autoscaler;
  Nanos duration = 0;  ///< the replay ends here (0 = when the last pod ends)
  /// Workload pods (workload_pods.hpp): requests arriving before this are left out of their
  /// latency statistics, as a scenario's `warmup` (`cluster.warmup`; default 0).
  Nanos warmup = 0;
  Nanos sample = 0;  ///< timeseries period (allocation, fragmentation); 0 = on every event
  /// How the workload pods' latency percentiles are kept (`percentiles:`, as a scenario's
  /// `output.percentiles`): auto (exact up to 2^20 samples per pod and series), exact, or sketch
  /// (bounded memory, within 1/256: a fleet of thousands of pods over a day).
  PercentileMethod percentiles = PercentileMethod::automatic;
  /// The scenario's `seed` (default 1): generated pod arrivals (`arrivals:`) were drawn from it;
  /// the engine seeds pod workloads from it too.
  std::uint64_t seed = 1;
  SourceLocation where;
};

}  // namespace gpumux::cluster
