#pragma once
// The cluster replay: a discrete-event loop over pod arrivals, completions (start + duration),
// node provisioning and scale-down, driving the scheduler (models/cluster/scheduler.hpp).
//
// Law of the loop:
//  * Events are ordered by (time, kind, sequence): completions and node-ready before arrivals at
//    the same instant (capacity freed at t is usable by a pod arriving at t), then samples.
//  * A gang (`gang: N`: N consecutive pods with gang N, the same arrival and shape, as the loader
//    writes `count: K, gang: N`) is scheduled all or nothing: N members placed one after the other
//    by the policy, rolled back if one does not fit. Its run lasts duration + gang_steps x the ring
//    all-reduce time of gang_bytes_per_step among the N members (scheduler.hpp
//    ring_allreduce_time) over NVLink when all members share a node, else over the slowest
//    pool network among the nodes it spans.
//  * Unplaceable pods wait in a queue per (shape, gang size, priority), ordered by priority then
//    arrival; the queues are retried only against nodes whose capacity grew since (a release, a
//    new node): a queue whose head does not fit any such node stays blocked. Cost per release:
//    O(pending queues x units of the changed nodes), plus a full placement when one fits.
//  * Preemption (scheduler.preemption): a single pod that does not fit evicts, on the node where
//    that costs least (lowest highest-victim priority, then fewest victims, then node index), the
//    lowest-priority pods (latest started first) of strictly lower priority until it fits; the
//    victims go back to the pending queue (their arrival stays; evictions counted).
//  * Autoscaling (cluster-autoscaler's scale-up; cluster_run.cpp Replay::scale_up has the
//    steps and sources): at the end of an instant where pods became pending, the pending pods
//    that nodes being provisioned would host are left to them; for every pool with autoscaling
//    and head-room below max_nodes, cluster-autoscaler's binpacking estimator (First-Fit
//    Decreasing over new nodes of the pool) counts the nodes the rest need; the expander
//    (cluster.autoscaler.expander: random, least-waste, priority, first) picks one pool, which
//    grows by that count; repeated until no pool can help. A node is schedulable after
//    provisioning_delay. A node of such a pool that stays empty for scale_down_after is removed
//    while the pool has more than min_nodes.
//  * ignore_deletions (FGD's replay): pods never leave; a pod that does not fit on arrival is
//    recorded as failed at that time and stays pending to the end.
// Deterministic: random choices (ties, the random expander) are seeded hashes; the same spec gives
// bit-identical results.
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cluster/cluster_spec.hpp"
#include "models/run/slo.hpp"

namespace gpumux::cluster {

/// One pod (one member of a gang) after the replay.
struct PodRecord {
  std::string name;
  std::string pod_class;
  int spec_index = 0;  ///< index into ClusterSpec::pods
  int member = 0;      ///< member index within its gang
  int priority = 0;
  Nanos arrival = 0;
  Nanos start = -1;      ///< -1: never started
  Nanos end = -1;        ///< -1: still running (or never started) when the replay ended
  Nanos failed_at = -1;  ///< first time it did not fit, or its admission failure (-1 = neither)
  int node = -1;
  std::string node_name, pool;
  std::string gpus;   ///< GPU indices on the node, "0,1"; MIG instances "0:2g.20gb"
  int gpu_milli = 0;  ///< milli-GPUs allocated
  std::int64_t vram_allocated_bytes = 0;
  std::int64_t vram_used_bytes = 0;
  std::int64_t cpu_milli = 0;
  double gpu_utilization = 1.0;
  std::string pending_reason;   ///< last reason it waited ("" = never waited), or
                                ///< "UnexpectedAdmissionError" when admission_failed
  std::string pending_message;  ///< kube-scheduler's FailedScheduling text, or the kubelet's
  /// The scheduler bound it (node_name) but the kubelet failed it at admission (node_state.hpp,
  /// failRequestsGreaterThanOne): phase Failed at failed_at, never started, nothing held.
  bool admission_failed = false;
  int evictions = 0;
  bool spans_nodes = false;       ///< a gang whose members are on several nodes
  Nanos allreduce_step_ns = 0;    ///< ring all-reduce time per step for its placement
  double node_cost_per_hour = 0;  ///< price of the node it ran on
  double node_gpu_milli = 0;      ///< the node's milli-GPUs
  /// The share of the node's GPUs the pod holds, for cost: per unit taken, taken slots / slots
  /// x the unit's gpu_fraction (a MIG instance: compute slices / 7), over the node's GPUs.
  double node_gpu_share = 0;
  std::int64_t node_cpu_milli = 0;
  std::vector<int> units;  ///< node-local indices of the advertised units it holds
  // A pod with a `workload:` tenant, simulated on its GPU (models/cluster/workload_pods.hpp):
  std::string workload_device;  ///< the device it ran on in that simulation, "" = none
  std::int64_t workload_completed = 0;
  std::int64_t latency_p50_ns = -1, latency_p99_ns = -1;
  /// p90, p99.9, max and mean of the same latencies (-1: none), as a run's tenant reports them.
  std::int64_t latency_p90_ns = -1, latency_p999_ns = -1, latency_max_ns = -1;
  double latency_mean_ns = -1;
  /// Its latency series as bytes (Percentiles::encode, sim/core/statistics.hpp: the exact
  /// samples in ascending order, or the sketch of `cluster.percentiles`), from which any
  /// percentile of the pod, or of several pods merged, comes back bit for bit
  /// (pod_latency_series, models/cluster/workload_pods.hpp); "" = no workload. About 1-2 KB
  /// per sketched pod, 1-3 B per request of an exact one.
  std::string latency_series;
  /// Its SLO checks (the targets of its workload's `slo:`), judged as a run's (models/run/slo.hpp,
  /// models/cluster/pod_slo.hpp); empty = no SLO or no workload.
  std::vector<SloCheck> workload_slo;
  Nanos pending_ns() const;  ///< start - arrival, or (replay end - arrival) if never started
};

/// The cluster at one instant.
struct ClusterSample {
  Nanos time = 0;
  std::int64_t gpu_milli_total = 0, gpu_milli_allocated = 0;
  int gpus_total = 0, gpus_allocated = 0;  ///< GPUs with any allocation
  double gpu_milli_used = 0;               ///< allocated x the pods' gpu_utilization
  std::int64_t cpu_total = 0, cpu_allocated = 0;
  double fragmentation_milli = 0;                 ///< FGD's measure, summed over nodes
  std::vector<double> fragmentation_by_resource;  ///< per resource id
  double unusable_milli = 0;                      ///< free, on units no pending pod can use now
  std::vector<double> unusable_by_resource;
  int pending = 0, running = 0, active_nodes = 0;
  double arrived_gpu_milli = 0;  ///< cumulative milli-GPUs asked by pods arrived so far
};

struct PoolRecord {
  std::string name, gpu_model, currency;
  int gpus_per_node = 0, nodes_initial = 0, nodes_peak = 0, nodes_final = 0;
  double node_seconds = 0;  ///< active node time
  double cost = 0;          ///< node_seconds / 3600 x cost_per_hour
  double cost_per_hour = 0;
  std::int64_t gpu_memory_bytes = 0;  ///< per GPU
  int scale_ups = 0, scale_downs = 0;
};

struct ClusterResult {
  std::string policy;
  bool ignore_deletions = false;
  Nanos end_time = 0;
  std::vector<PodRecord> pods;
  std::vector<ClusterSample> samples;
  std::vector<PoolRecord> pools;
  std::vector<std::string> resources;  ///< resource id -> advertised name
  std::uint64_t events = 0;
  std::size_t fragmentation_states = 0;  ///< distinct node states FGD evaluated
  int preemptions = 0;
  /// The workload pods' simulated window (workload_pods.hpp): its end and warmup; 0 = not
  /// simulated in this process (their SLO tally then names no duration).
  Nanos workload_duration = 0, workload_warmup = 0;
};

/// A replay (or its workload pods' simulation) stopped by its interrupt flag (the CLI's SIGINT,
/// SIGTERM, SIGHUP): a cluster replay stopped midway has no result to report.
class ClusterInterrupted : public std::runtime_error {
 public:
  ClusterInterrupted() : std::runtime_error("cluster replay interrupted") {}
};

/// Replays the cluster. Throws InputError for a spec that cannot run (no pools, a pod with no
/// duration in a replay that deletes pods, ...), ClusterInterrupted once INTERRUPT is set (polled
/// every 4096 events). Cost: O(events x (pending queues + nodes)).
ClusterResult run_cluster(const ClusterSpec& spec, const std::atomic<bool>* interrupt = nullptr);

const char* policy_name(SchedulingPolicy policy);

}  // namespace gpumux::cluster
