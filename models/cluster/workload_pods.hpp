#pragma once
// Pods with a `workload:` (a tenant body) run through the device models (models/run) on the
// GPUs the scheduler placed them on, so their latency reflects their neighbours.
//
// Law: after the replay, one Scenario is built of every GPU that hosts a workload pod: the
// pool's GPU model, its MIG layout (when MIG is on), the pool's device sharing
// (GpuSharingConfig::device_sharing: time-slicing or MPS between the pods of one GPU or MIG
// instance). Each workload pod becomes a tenant on the GPUs it holds (or "GPU/INSTANCE" for a
// MIG slice), active from the pod's start to its end (TenantSpec::active_from/until: arrivals
// and memory only then, so a pod's neighbours are the pods on its GPU at the same time). A
// multi-GPU pod is one data-parallel tenant on all its GPUs (each request runs on every GPU;
// its `collective` kernels start on all of them together), except where the GPUs' strategy
// refuses multi-GPU tenants (time-slicing: the device plugin refuses such requests): there it
// runs one copy of its workload per GPU, as independent tenants, and reports its first GPU's.
// The scenario runs to the replay's `duration`, else to the last end of a workload pod (a pod
// still running then stops there), else to the last start + 60 s (assumption). Its percentiles
// follow `cluster.percentiles` (default auto: exact up to 2^20 samples per pod and series);
// `cluster.warmup` is its warmup.
//
// Split by node. Devices interact only through the tenants on them, and a pod's GPUs are on
// one node, so the scenario splits into node groups that share nothing: each is simulated as a
// scenario of its own (`shards`), in this process or in worker processes (`workers`), and every
// pod's numbers are the same as in the one-scenario run (named random streams: a pod's draws do
// not depend on which other pods are simulated beside it; tests/unit/test_cluster_workloads.cpp).
// Scheduling, gangs and preemption are decided by the replay before any device is simulated,
// so they cross the split as its input; a gang's all-reduce is a term of its pods' durations in
// the replay (docs/cluster.md), never a device event. Cost: one simulation of every workload
// pod's events, divided among the workers.
#include <cstdint>
#include <string>
#include <vector>

#include "models/cluster/cluster_run.hpp"
#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster {

struct WorkloadPodOptions {
  /// Node groups the device simulation is split into (each simulated as its own scenario); 0 =
  /// one group per worker. The pods' numbers are the same for every value.
  int shards = 0;
  /// Processes that simulate the groups (fork; 1 = this process, one group after another).
  int workers = 1;
  /// Polled by the simulations (RunOptions::interrupt); once set, simulate_workload_pods throws
  /// ClusterInterrupted (models/cluster/cluster_run.hpp). Worker processes inherit the signal
  /// handlers; the parent checks the flag when they have answered.
  const std::atomic<bool>* interrupt = nullptr;
};

/// A workload pod's numbers from the device simulation (the PodRecord fields of the same
/// names), by index into ClusterResult::pods.
struct PodWorkloadStats {
  std::size_t pod = 0;
  std::string device;  ///< the device(s) it ran on, "GPU[,GPU...]"
  std::int64_t completed = 0;
  std::int64_t latency_p50_ns = -1, latency_p99_ns = -1;
  std::vector<SloCheck> slo;  ///< its verdicts (PodRecord::workload_slo)
};

/// Fills workload_device, workload_completed, latency_p50_ns / latency_p99_ns of the workload
/// pods in `result`. No-op when no placed pod has a tenant. Throws InputError when the built
/// scenario does not resolve (e.g. the pool's GPU model has no device profile).
void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result,
                            const WorkloadPodOptions& options = {});

/// How many node groups the workload pods of `result` split into at most (nodes that host one).
int workload_node_groups(const ClusterSpec& spec, const ClusterResult& result);

/// Node group SHARD of SHARDS simulated alone: the numbers of its pods (for a worker of a
/// split run elsewhere, e.g. a Dask task, after the same replay; not bound in Python yet).
/// Throws InputError as above.
std::vector<PodWorkloadStats> simulate_workload_shard(const ClusterSpec& spec,
                                                      const ClusterResult& result, int shard,
                                                      int shards);

/// Writes the numbers of the pods into `result` (what simulate_workload_pods does with them).
void apply_workload_stats(const std::vector<PodWorkloadStats>& stats, ClusterResult& result);

}  // namespace gpumux::cluster
