#pragma once
// Pods with a `workload:` (a tenant body) run through the device models (models/run) on the
// GPUs the scheduler placed them on, so their latency reflects their neighbours.
//
// Law: after the replay, one Scenario is built of every GPU that hosts a workload pod: the
// pool's GPU model, its MIG layout (when MIG is on), the pool's device sharing
// (GpuSharingConfig::device_sharing: time-slicing or MPS between the pods of one GPU or MIG
// instance). Each workload pod becomes a tenant on its GPU (or "GPU/INSTANCE" for a MIG slice;
// a multi-GPU pod on its first GPU), active from the pod's start to its end
// (TenantSpec::active_from/until: arrivals and memory only then, so a pod's neighbours are the
// pods on its GPU at the same time). The scenario runs to the replay's `duration`, else to the
// last end of a workload pod (a pod still running then stops there), else to the last start +
// 60 s (assumption); `cluster.warmup` is its warmup. A multi-GPU pod's replicas on its other
// GPUs are not simulated. Cost: one
// simulation.
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster {

/// Fills workload_device, workload_completed, latency_p50_ns / latency_p99_ns of the workload
/// pods in `result`. No-op when no placed pod has a tenant. Throws InputError when the built
/// scenario does not resolve (e.g. the pool's GPU model has no device profile).
void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result);

}  // namespace gpumux::cluster
