#pragma once
// GKE node pool GPU settings (the `gcloud container node-pools create --accelerator` keys) ->
// GpuSharingConfig, and the node labels GKE puts on such nodes.
//
//   gke:
//     gpu-sharing-strategy: time-sharing | mps    (needs max-shared-clients-per-gpu)
//     max-shared-clients-per-gpu: N               (N >= 2)
//     gpu-partition-size: 1g.10gb                 (MIG: every GPU cut into the most instances of
//                                                  that size that fit; advertised as
//                                                  nvidia.com/gpu)
//     mig-config: "2g.20gb:2"                     (gpumux extension, not a GKE flag: fewer
//                                                  partitions of ONE size than
//                                                  gpu-partition-size cuts; advertised as
//                                                  nvidia.com/gpu like it; a mixed layout is
//                                                  refused: GKE has one size per pool)
//
// What GKE documents (and gpumux follows):
// - source: GKE, "About GPU time-sharing" (https://cloud.google.com/kubernetes-engine/docs/
//   concepts/timesharing-gpus): each GPU of the pool is shared by at most
//   max-shared-clients-per-gpu containers; nodes carry the labels
//   cloud.google.com/gke-gpu-sharing-strategy: time-sharing and
//   cloud.google.com/gke-max-shared-clients-per-gpu: "N"; a container asking for more than one
//   nvidia.com/gpu on such a node fails ("at most 1 nvidia.com/gpu can be requested"), so
//   fail_requests_greater_than_one is true. Pods keep asking for nvidia.com/gpu (no rename) and
//   select shared nodes with a nodeSelector on those labels.
// - source: GKE, "Share GPUs with NVIDIA MPS" (https://cloud.google.com/kubernetes-engine/docs/
//   how-to/nvidia-mps-gpus): gpu-sharing-strategy=mps with max-shared-clients-per-gpu.
// - source: GKE, "Running multi-instance GPUs" (https://cloud.google.com/kubernetes-engine/docs/
//   how-to/gpus-multi): gpu-partition-size=[compute]g.[memory]gb on A100 (40GB, 80GB) and H100
//   (80GB); each partition is advertised as one nvidia.com/gpu and pods select the size with the
//   node label cloud.google.com/gke-gpu-partition-size. The partition count per GPU is the
//   profile's max_count in the device profile (e.g. 7 for 1g.10gb on A100-80GB), checked with
//   the MIG placement search. Time-sharing (not MPS) may share the partitions: every partition
//   of the pool is shared by at most max-shared-clients-per-gpu containers (GKE, "Share GPUs
//   with multiple workloads using time-sharing", https://cloud.google.com/kubernetes-engine/
//   docs/how-to/timesharing-gpus, with gpu-partition-size next to the sharing flags).
// - source: GKE, "Run GPUs in GKE Standard node pools" (https://cloud.google.com/
//   kubernetes-engine/docs/how-to/gpus): a GPU node carries cloud.google.com/gke-accelerator
//   (the accelerator type) and cloud.google.com/gke-nodepool; when the cluster also has
//   non-GPU pools, GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule and the
//   ExtendedResourceToleration admission controller gives pods that request nvidia.com/gpu the
//   toleration (models/cluster/cluster_spec.hpp: Toleration).
// Refused: mps together with MIG (the NVIDIA device plugin: "sharing using MPS is not supported
// for MIG devices"); gpu-partition-size and mig-config together; a profile the GPU lacks.
// Every error is an InputError "FILE:LINE:COLUMN: KEY.PATH: message". Cost: linear in the keys.
#include <map>
#include <string>
#include <vector>

#include "models/cluster/cluster_spec.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/gpu/device_profile.hpp"

namespace gpumux::cluster {

/// Node labels GKE sets on GPU nodes (the keys a pod's nodeSelector uses).
inline constexpr const char* kGkeSharingStrategyLabel = "cloud.google.com/gke-gpu-sharing-strategy";
inline constexpr const char* kGkeMaxSharedClientsLabel =
    "cloud.google.com/gke-max-shared-clients-per-gpu";
inline constexpr const char* kGkePartitionSizeLabel = "cloud.google.com/gke-gpu-partition-size";
inline constexpr const char* kGkeAcceleratorLabel = "cloud.google.com/gke-accelerator";
inline constexpr const char* kGkeNodePoolLabel = "cloud.google.com/gke-nodepool";

/// Reads a `gke:` mapping for a pool of `gpu`. Fills mig_strategy, mig_devices, sharing, shared
/// (one nvidia.com/gpu resource with `replicas` = max-shared-clients-per-gpu), device_sharing,
/// fail_requests_greater_than_one, source and where; adds the GKE node labels to `labels`.
GpuSharingConfig read_gke_config(yaml::Context& ctx, const yaml::Field& field,
                                 const DeviceProfile& gpu,
                                 std::map<std::string, std::string>& labels);

/// GKE's accelerator type of a device profile ("nvidia-h100-80gb"), "" when GKE has none.
std::string gke_accelerator_type(const DeviceProfile& gpu);

/// The labels GKE sets on every node of a GKE pool: gke-nodepool (its name) and
/// gke-accelerator.
void add_gke_node_labels(NodePoolSpec& pool, const DeviceProfile& gpu);

/// GKE's taint nvidia.com/gpu=present:NoSchedule on every GKE GPU pool, when the cluster has a
/// pool without GPUs (GKE taints GPU nodes added next to CPU-only ones).
void add_gke_gpu_taints(std::vector<NodePoolSpec>& pools);

}  // namespace gpumux::cluster
