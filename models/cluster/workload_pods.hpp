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
#include "sim/core/statistics.hpp"

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
  std::int64_t latency_p90_ns = -1, latency_p999_ns = -1, latency_max_ns = -1;
  double latency_mean_ns = -1;
  std::string latency_series;  ///< PodRecord::latency_series: its latency series as bytes
  std::vector<SloCheck> slo;   ///< its verdicts (PodRecord::workload_slo)
};

/// Latency series (PodRecord::latency_series; "" adds nothing) merged in that order
/// (Percentiles::merge): one pod's gives its percentiles at any q, several pods' give their
/// requests' percentiles together (a class, a pool, the fleet); exact while every series is,
/// else a sketch. The same bytes give the same result bit for bit, and a pod's bytes are the
/// same whichever way it was simulated (one process, --workers N, Dask). Throws
/// std::runtime_error on a corrupt series. O(the series' bytes).
Percentiles merge_latency_series(const std::vector<std::string>& series);

/// Fills workload_device, workload_completed, the latency fields (p50, p90, p99, p99.9, max,
/// mean, the series) and the SLO checks of the workload pods in `result`. No-op when no placed pod
/// has a tenant. Throws InputError when the built scenario does not resolve (e.g. the pool's GPU
/// model has no device profile).
void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result,
                            const WorkloadPodOptions& options = {});

/// How many node groups the workload pods of `result` split into at most (nodes that host one).
int workload_node_groups(const ClusterSpec& spec, const ClusterResult& result);

/// Node group SHARD of SHARDS (plan_workload_shards) simulated alone: the numbers of its pods
/// (for a worker of a split run elsewhere after the same replay). Throws InputError as above.
std::vector<PodWorkloadStats> simulate_workload_shard(const ClusterSpec& spec,
                                                      const ClusterResult& result, int shard,
                                                      int shards);

/// The node groups of a split run, balanced by estimated work rather than node count.
/// Law: a tenant's work is the work budget's estimate of its kernel launches
/// (models/scenario/work_estimate.hpp, estimate_work) over the time it is active (its pod's
/// start to its end or the horizon); launches less than requests (a catalog workload, whose
/// kernels are built later) count as requests, and every tenant counts at least 1. A node's
/// work is the sum over the tenants whose first device is on it. Nodes are dealt by Longest
/// Processing Time first (Graham 1969: the largest node to the least-loaded group; ties: the
/// lower node index, the lower group), into min(SHARDS, nodes) groups, none empty; the
/// largest group is then within 4/3 of the best split. Deterministic. Cost: one build of the
/// pods' scenario and one estimate per tenant, O(tenants + nodes log nodes).
struct WorkloadShardPlan {
  std::vector<std::vector<int>> nodes;  ///< per group: cluster node indices, ascending
  std::vector<double> launches;         ///< per group: estimated kernel launches
  std::vector<std::size_t> pods;        ///< per group: workload pods reported
  /// The pods' simulated window (ClusterResult::workload_duration / workload_warmup, which
  /// the SLO tally's "run longer" hint reads): a run that gathers the groups from elsewhere
  /// writes them into its result (apply_workload_window), as simulate_workload_pods does.
  Nanos duration = 0, warmup = 0;
};
WorkloadShardPlan plan_workload_shards(const ClusterSpec& spec, const ClusterResult& result,
                                       int shards);

/// The workload pods on the cluster NODES (indices into the replay's nodes; typically a group
/// of plan_workload_shards) simulated alone: the numbers of their pods, the same as in the
/// whole run for any set of nodes (a Dask task's work: python/gpumux/_dask_cluster.py). RESULT
/// needs only the placement (decode_workload_placement). Throws InputError as above.
std::vector<PodWorkloadStats> simulate_workload_nodes(const ClusterSpec& spec,
                                                      const ClusterResult& result,
                                                      const std::vector<int>& nodes);

/// The replay's placement of the workload pods (per placed workload pod: its index, start,
/// end, node, spec index, names, units) as bytes: what a task that simulates some nodes needs
/// beside the scenario. decode gives a ClusterResult with those fields of those pods (the other
/// pods default: never started), enough for plan_workload_shards / simulate_workload_nodes.
/// decode throws std::runtime_error on a corrupt buffer. Size: about 60 B + names per pod.
std::string encode_workload_placement(const ClusterSpec& spec, const ClusterResult& result);
ClusterResult decode_workload_placement(const std::string& bytes);

/// PodWorkloadStats as bytes (little-endian on the machines gpumux runs on: a process or a
/// Dask task hands them back), and back. decode throws std::runtime_error on a short buffer.
std::string encode_workload_stats(const std::vector<PodWorkloadStats>& stats);
std::vector<PodWorkloadStats> decode_workload_stats(const std::string& bytes);

/// Writes the numbers of the pods into `result` (what simulate_workload_pods does with them).
void apply_workload_stats(const std::vector<PodWorkloadStats>& stats, ClusterResult& result);
/// Writes PLAN's simulated window into `result` (what simulate_workload_pods does before it
/// simulates): a run whose groups answer from elsewhere (Dask) then reports the same SLO tally,
/// "run longer" hint included, as the single-process run. No-op for a plan without groups.
void apply_workload_window(const WorkloadShardPlan& plan, ClusterResult& result);

}  // namespace gpumux::cluster
