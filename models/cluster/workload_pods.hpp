#pragma once
// Pods with a `workload:` (a tenant body) run through the device models (models/run) on the
// GPUs the scheduler placed them on, so their latency reflects their neighbours.
//
// Law: after the replay, one Scenario is built of every GPU that hosts a workload pod: the
// pool's GPU model, its MIG layout (when MIG is on), the pool's device sharing
// (GpuSharingConfig::device_sharing: time-slicing or MPS between the pods of one GPU or MIG
// instance). Each workload pod becomes a tenant on its GPU (or "GPU/INSTANCE" for a MIG slice;
// a multi-GPU pod on its first GPU). The scenario runs for the longest time a workload pod ran
// (its duration, else 60 s -- assumption), all tenants active together: pods that were not on
// the GPU at the same time are simulated as if they were (the engine has no tenant start/stop
// windows yet), so the result is an upper bound on interference. Cost: one simulation.
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster {

/// Fills workload_device, workload_completed, latency_p50_ns / latency_p99_ns of the workload
/// pods in `result`. No-op when no placed pod has a tenant. Throws InputError when the built
/// scenario does not resolve (e.g. the pool's GPU model has no device profile).
void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result);

}  // namespace gpumux::cluster
