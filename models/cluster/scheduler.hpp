#pragma once
// The cluster scheduler: filter then score, as kube-scheduler does, over the advertised units of
// models/cluster/node_state.hpp.
//
// Filter (a node is feasible for a pod when all hold): the pool advertises every resource the pod
// asks for (and does not refuse it: failRequestsGreaterThanOne), its GPU model is one of the
// pod's `gpu_models`, free CPU >= request, free memory >= request, and each GPU need fits
// (N units with >= per_unit free slots; for replicas, N free slots among the units).
//
// Score (the feasible node with the highest score wins). Scores are kube-scheduler's integer
// node scores 0..100 (framework.MaxNodeScore; scheduler.node_score: integer, the default) or
// the exact real values behind them (node_score: exact). Ties among equal best scores
// (scheduler.tie_break): the smallest node name (name; the default: the FGD simulator's
// kube-scheduler fork, github.com/mental2008/kubernetes v1.20.5-minor,
// pkg/scheduler/core/generic_scheduler.go selectHost, "for reproducibility, choose the smallest
// lexicographical order"); the first node of a splitmix64 permutation of the nodes seeded by
// scheduler.tie_seed and fixed for the run (permutation: what the FGD simulator's names amount
// to, as it prefixes each with its place in a seeded random permutation,
// pkg/simulator/simulator.go syncClusterResourceList); or the smallest hash of (decision number,
// node, tie_seed) (random: a deterministic stand-in for upstream kube-scheduler's reservoir
// sampling among the best nodes). first_fit takes the first feasible node in index order.
// Within the chosen node, replicas of a shared device (time-slicing / MPS) go to the device with
// the fewest allocated replicas (the device plugin's distributedAlloc), whatever the policy;
// the policies below choose whole units (GPUs, MIG instances, fractional shares).
//  * first_fit: the first feasible node; the first fitting unit(s).
//  * best_fit: the smallest leftover after placement, L = 1/2 free milli-GPUs / G_max + 1/2
//    free CPU / C_max, where G_max and C_max are the largest node's milli-GPUs and CPU
//    (source: kubernetes-scheduler-simulator pkg/simulator/plugin/best_fit_score.go: weights
//    0.5/0.5 over MaxSpecGpu 8000 and MaxSpecCpu 128000, openb's largest node); integer score
//    trunc(100 (1 - L)). Within the node, the fitting unit with the fewest free slots (lowest
//    index among equals: open_gpu_share.go allocateGpuIdBasedOnBestFit).
//  * worst_fit: the largest leftover, trunc(100 L); the unit with the most free slots.
//  * fgd: Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation: Scheduling
//    GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23,
//    https://www.usenix.org/conference/atc23/presentation/weng). The node (and, for a GPU-share
//    pod, the GPU: the first in index order with the best score) that minimises the growth of
//    the node's fragmentation
//      F_n = sum over typical shapes m of p_m * (free milli-GPUs of n that m cannot use),
//    where m cannot use all of n's free GPU capacity if it does not fit n at all, else the free
//    capacity of the units whose free share is below m's per-GPU request. Integer score:
//    trunc(100 sigmoid((F_before - F_after) / 1000)). Source of the exact definition:
//    kubernetes-scheduler-simulator pkg/utils/frag.go (NodeGpuShareFragAmount, GetNodePodFrag,
//    GetGpuFragMilliByNodeResAndPodRes, FragAmountSumExceptQ3) and
//    pkg/simulator/plugin/fgd_score.go (calculateGpuShareFragExtendScore). Typical shapes: the
//    pods' (cpu, per-GPU milli, GPU count, GPU models) from the whole workload, most frequent
//    first, taken in steps of scheduler.fgd_typical_step (1, the experiments' run script) until
//    they cover scheduler.fgd_popularity_threshold % (95) of the pods, renormalised
//    (pkg/utils/frag.go GetTypicalPods; scripts/generate_config_and_run.py); CPU-only pods count
//    (isInvolvedCpuPods: true) and make all of a node's free GPU capacity fragment for their
//    share. Beyond the reference: units of MIG / replica pools count with their milli-GPU share.
// Reported fragmentation (node_fragmentation, fragmentation_total): F restricted to what the
// node's occupancy causes: over the typical shapes that ask for a GPU resource and fit an empty
// node of the pool (renormalised among them), counting only units of a resource the shape
// asks for. 0 on an empty node; CPU-only shapes and shapes the node can never host add nothing.
// Cost of place(): O(nodes) per pod with a per-(node, shape) score cache invalidated by a node's
// version; FGD node fragmentation memoised per node state (nodes in identical states share it).
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/cluster/cluster_spec.hpp"
#include "models/cluster/node_state.hpp"

namespace gpumux::cluster {

/// The request shape of a pod: pods of equal shape are interchangeable for the scheduler.
struct PodShape {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  std::map<std::string, std::int64_t> gpu_resources;
  int gpu_milli = 0;
  std::vector<std::string> gpu_models;
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  bool operator==(const PodShape& o) const = default;
};

/// What a placed pod holds: the node and (global unit index, slots) pairs.
struct Allocation {
  int node = -1;
  int shape = -1;
  std::vector<std::pair<int, int>> takes;
};

/// Why a pod could not be placed, in kube-scheduler's words.
struct PendingReason {
  /// The dominant reason: "fragmented" (the cluster has enough free capacity of every requested
  /// kind in total, but no single node / GPU fits the pod), else the most frequent per-node
  /// reason: "Insufficient nvidia.com/mig-2g.20gb", "Insufficient cpu", "Insufficient memory",
  /// "node(s) didn't match Pod's node affinity/selector", "no nodes available".
  std::string reason;
  /// kube-scheduler's FailedScheduling event: "0/3 nodes are available: 3 Insufficient cpu."
  std::string message;
};

class Scheduler {
 public:
  /// Builds the pools' advertised units (node_state.hpp), the node state, the pod shapes and, for
  /// fgd, the typical-shape distribution from `spec.pods`. Throws InputError.
  explicit Scheduler(const ClusterSpec& spec);

  const ClusterSpec& spec() const { return *spec_; }
  const ResourceNames& names() const { return names_; }
  const std::vector<PoolTemplate>& templates() const { return templates_; }
  ClusterState& state() { return state_; }
  const ClusterState& state() const { return state_; }

  /// The shape id of spec().pods[i] (dense, in first-appearance order).
  int shape_of_pod(std::size_t pod) const { return pod_shape_[pod]; }
  int shapes() const { return static_cast<int>(shapes_.size()); }
  const PodShape& shape(int id) const { return shapes_[static_cast<std::size_t>(id)]; }
  const Demand& demand(int shape, int pool) const {
    return demands_[static_cast<std::size_t>(shape * pools() + pool)];
  }
  int pools() const { return static_cast<int>(templates_.size()); }
  /// The milli-GPUs a pod of this shape takes (on the first pool that can host it).
  std::int64_t gpu_milli_of(int shape) const;

  /// Chooses a node and units for one pod of `shape` by the policy; false when none is feasible.
  /// Does not change the state. Cost: O(active nodes) with cached scores.
  bool choose(int shape, Allocation& out);
  /// Takes / gives back what `a` holds on its node (updates free slots, CPU, memory, versions and
  /// the fragmentation totals).
  void apply(int shape, const Allocation& a);
  void release(int shape, const Allocation& a);

  /// Why a pod of `shape` (times `members` for a gang) cannot be placed now. O(nodes x units).
  PendingReason explain(int shape, int members = 1) const;

  /// Whether a pod of `shape` fits an empty node of `pool`.
  bool fits_empty(int shape, int pool) const;
  /// Whether it fits node `node` if the allocations `freed` were given back first (preemption).
  bool fits_after_release(int shape, int node, const std::vector<const Allocation*>& freed) const;
  /// Builds the allocation on `node` (which must fit) by the policy's unit choice.
  Allocation allocate_on(int shape, int node) const;

  /// FGD's measure F of node `node` now (what the fgd score differentiates), milli-GPUs.
  double fgd_measure(int node) const;
  /// The reported fragmentation of node `node` now (above), milli-GPUs, summed over resources.
  double node_fragmentation(int node) const;
  /// Reported fragmentation summed over active nodes, and per resource id. O(nodes).
  double fragmentation_total() const;
  std::vector<double> fragmentation_by_resource() const;
  /// The typical shapes FGD weighs (shape id, probability).
  const std::vector<std::pair<int, double>>& typical() const { return typical_; }

  /// Activates / deactivates a node slot (autoscaling); the node must be empty to deactivate.
  void set_active(int node, bool active);

  /// Free milli-GPU capacity of a unit (free slots x its milli-GPU share).
  double unit_free_milli(int global_unit, int node) const;

  /// Memoised fragmentation states and lookups (for the benchmark's report).
  std::size_t memo_states() const { return memo_index_.size(); }

 private:
  double score(int shape, int node, Allocation* best);
  /// The fgd node score of a placement taking the node's F from `before` to `after`.
  double fgd_score(double before, double after) const;
  void choose_units(const Demand& d, int node, const int* frees,
                    std::vector<std::pair<int, int>>& takes) const;
  /// fits_raw's `mem` when memory is not checked (FGD's resource has no memory).
  static constexpr std::int64_t kNoMemoryLimit = std::numeric_limits<std::int64_t>::max();
  bool fits_raw(const Demand& d, const PoolTemplate& tpl, std::int64_t cpu, std::int64_t mem,
                const int* frees) const;
  /// F and the reported fragmentation per resource of a hypothetical state of a node of `pool`
  /// (2 x resources values). Memoised.
  const double* frag_of(int pool, std::int64_t cpu, const int* frees);
  void refresh_frag(int node);

  const ClusterSpec* spec_;
  ResourceNames names_;
  std::vector<PoolTemplate> templates_;
  ClusterState state_;
  std::vector<PodShape> shapes_;
  std::vector<int> pod_shape_;
  std::vector<Demand> demands_;  ///< [shape * pools + pool]
  std::vector<std::pair<int, double>> typical_;
  // Score cache per shape: [node] -> (version + 1, score); 0 = not computed.
  struct Cached {
    std::uint32_t version = 0;
    double score = 0;
  };
  std::vector<std::vector<Cached>> cache_;
  // FGD memo: state key -> offset into memo_values_ (2 x names_.size() doubles each: F per
  // resource, then the reported fragmentation per resource).
  std::unordered_map<std::string, std::size_t> memo_index_;
  std::vector<double> memo_values_;
  std::vector<double> node_frag_;    ///< FGD's F per node x resource, current
  std::vector<double> node_report_;  ///< reported fragmentation per node x resource
  /// Per pool x typical shape: the shape's weight in the reported fragmentation (0: left out).
  std::vector<double> report_weight_;
  std::int64_t max_cpu_milli_ = 0, max_gpu_milli_ = 0;  ///< largest node, best/worst-fit
  std::vector<std::uint64_t> tie_rank_;  ///< node -> place in the tie order (name, permutation)
  std::vector<std::uint32_t> node_frag_version_;
  std::vector<double> frag_by_resource_;
  std::string key_buffer_;
  std::uint64_t calls_ = 0;  ///< choose() calls, for the tie-break hash
};

/// fgd's node score for a placement that lowers the node's F by `gain` milli-GPUs (negative:
/// raises it): the gain itself (exact), or kube-scheduler's integer
/// trunc(100 / (1 + exp(-gain / 1000))) (FGDScorePlugin; 50 for no change, 73 for a whole GPU
/// less fragmented, 26 for a whole GPU more).
double fgd_node_score(double gain, NodeScore mode);
/// best-fit's (worst-fit's) node score for the normalised leftover L in [0, 1] (scheduler
/// policies above): -L (L) exact; trunc(100 (1 - L)) (trunc(100 L)) integer.
double fit_node_score(double leftover, bool best_fit, NodeScore mode);

/// The time a ring all-reduce of `bytes` among `members` takes at `bandwidth` bytes/s:
/// 2 (n - 1) / n x bytes / bandwidth (source: Patarasuk & Yuan, "Bandwidth optimal all-reduce
/// algorithms for clusters of workstations", JPDC 2009; the NCCL ring algorithm's bus-bandwidth
/// law, https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md). Nanoseconds.
Nanos ring_allreduce_time(std::int64_t bytes, int members, double bandwidth_bytes_per_s);

/// assumption: NVLink bandwidth within a node when the GPU profile gives none: 300e9 bytes/s
/// (A100 SXM4 NVLink 3 "600 GB/s" bidirectional = 300 GB/s per direction; source: NVIDIA A100
/// datasheet, https://www.nvidia.com/en-us/data-center/a100/). A parameter of the run.
inline constexpr double kDefaultNvlinkBytesPerS = 300e9;

}  // namespace gpumux::cluster
