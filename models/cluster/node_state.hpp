#pragma once
// What each node of a pool advertises to the Kubernetes scheduler (the NVIDIA device plugin's
// law), and the compact mutable state of every node of a cluster.
//
// The device plugin law (source: NVIDIA k8s-device-plugin README, "Configuration Option Details",
// "Shared Access to GPUs", https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus):
//  * migStrategy none (or MIG off): one `nvidia.com/gpu` device per GPU.
//  * migStrategy single: every GPU carries one MIG profile; each MIG instance is one
//    `nvidia.com/gpu` device.
//  * migStrategy mixed: each MIG instance is one `nvidia.com/mig-<profile>` device.
//  * sharing.timeSlicing / sharing.mps `resources[{name, replicas}]`: every device of resource
//    `name` is advertised `replicas` times, under `rename` (or name + ".shared" with
//    renameByDefault, else the same name). A pod asking for k replicas gets k replicas, which the
//    plugin may place on one device ("requesting more than one replica does not guarantee more
//    access"); with failRequestsGreaterThanOne a request for k > 1 fails at admission: the
//    scheduler sees k of the advertised replicas and binds the pod, then the kubelet's Allocate
//    call to the plugin fails and the kubelet fails the pod (phase Failed, reason
//    UnexpectedAdmissionError; README, "With CUDA Time-Slicing": "Allocate failed due to rpc
//    error: code = Unknown desc = request for 'nvidia.com/gpu: 2' too large: maximum request
//    size for shared resources is 1, which is unexpected"). GKE's time-sharing and MPS set it.
//  * fractional (Alibaba GPU share, the openb trace and FGD's simulator): each GPU is 1000
//    milli-GPUs; a pod with gpu_milli < 1000 takes that share of ONE GPU, a pod with
//    `nvidia.com/gpu: N` takes N GPUs that are wholly free (FGD simulator
//    pkg/type/resource.go AllocateExclusiveGpuId).
//
// Every advertised device is a *unit* with a number of *slots*: 1 (a whole GPU or a MIG
// instance), `replicas` (time-slicing / MPS), or 1000 (fractional milli-GPUs). A node's state is
// its free CPU, free memory and the free slots of each unit, stored in flat arrays (resource
// names are interned to small integers: no strings on the hot path).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster {

/// Alibaba GPU share's extended resource: a pod asking `alibabacloud.com/gpu-milli: m` takes m
/// milli-GPUs of one GPU of a fractional pool (the openb reader writes shares so).
inline constexpr const char* kGpuShareResource = "alibabacloud.com/gpu-milli";

/// Interned resource names ("nvidia.com/gpu" -> 0, ...). Ids are dense and stable.
class ResourceNames {
 public:
  int intern(const std::string& name);
  /// -1 when the name was never advertised.
  int find(const std::string& name) const;
  const std::string& name(int id) const { return names_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> ids_;
};

/// One advertised device of a node (a GPU, or one MIG instance of a GPU).
struct UnitTemplate {
  int resource = 0;  ///< interned advertised name
  int gpu = 0;       ///< GPU index within the node
  int slots = 1;     ///< capacity: 1, replicas, or kMilliPerGpu (fractional)
  /// Milli-GPUs one unit stands for: 1000 for a whole GPU, compute_slices/7 x 1000 for a MIG
  /// instance (NVIDIA MIG user guide: an A100/H100 has 7 compute slices).
  int gpu_milli = kMilliPerGpu;
  /// The exact share of its GPU the unit holds, for cost: 1 for a whole GPU, the MIG
  /// instance's compute slices / the GPU's (mig_cost_fraction, models/gpu/mig_layout.hpp; the
  /// tenant layer prices MIG devices by the same rule).
  double gpu_fraction = 1.0;
  std::int64_t memory_bytes = 0;  ///< VRAM of the unit (0 = unknown GPU model)
  std::string profile;            ///< MIG profile name, "" for a whole GPU
};

/// What one node of a pool advertises (identical for every node of the pool).
struct PoolTemplate {
  int pool = 0;
  std::vector<UnitTemplate> units;
  int gpus = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t gpu_memory_bytes = 0;  ///< per whole GPU; 0 = unknown model
  bool fractional = false;
  bool fail_requests_greater_than_one = false;
  /// Per resource id (size = ResourceNames::size() at build time, padded on lookup): the
  /// advertised capacity in devices x replicas, as `kubectl describe node` lists it.
  std::vector<std::int64_t> capacity;
  std::int64_t capacity_of(int resource) const {
    return resource >= 0 && resource < static_cast<int>(capacity.size())
               ? capacity[static_cast<std::size_t>(resource)]
               : 0;
  }
  int total_gpu_milli() const { return gpus * kMilliPerGpu; }
  /// What the filter compares against: a pool that does not state its CPU (or memory), 0, does
  /// not constrain it (kUnstated).
  static constexpr std::int64_t kUnstated = std::int64_t{1} << 60;
  std::int64_t cpu_allocatable() const { return cpu_milli > 0 ? cpu_milli : kUnstated; }
  std::int64_t memory_allocatable() const { return memory_bytes > 0 ? memory_bytes : kUnstated; }
};

/// VRAM of a GPU model in bytes: an embedded device profile (calibration/profiles), else the
/// openb model table (source: FGD simulator pkg/type/open-gpu-share/utils/const.go
/// MapGpuTypeMemoryMiB, https://github.com/hkust-adsl/kubernetes-scheduler-simulator), else 0.
std::int64_t gpu_model_memory_bytes(const std::string& gpu_model);

/// Builds the advertised units of one pool by the device plugin law above; interns names.
/// Throws InputError for a MIG profile the GPU model does not have (when the model has a
/// profile) or a malformed profile name.
PoolTemplate advertise(const NodePoolSpec& pool, int pool_index, ResourceNames& names);

/// One line per pool: "NAME: N node(s) x GPU_MODEL, advertises nvidia.com/gpu: 8, ..." (per
/// node, as `kubectl describe node` lists allocatable). Throws InputError as advertise().
std::vector<std::string> advertised_lines(const ClusterSpec& spec);

/// One GPU resource need of a pod on one pool, resolved by that pool's semantics.
struct Need {
  int resource = -1;
  /// Units (whole / fractional / MIG) or replicas (spread), as the pod asks: 64-bit, a request
  /// beyond a node's capacity never fits (the pod stays pending) and is never truncated.
  std::int64_t count = 0;
  int per_unit = 0;  ///< slots each of the `count` units must have free and gives up
  /// Replica semantics (time-slicing / MPS): `count` slots anywhere on units of the resource.
  bool spread = false;
};

/// A pod shape's demand on one pool. `possible` = false when the pool can never host it (a
/// resource it does not advertise, a GPU model or nodeSelector mismatch, a taint it does not
/// tolerate).
struct Demand {
  bool possible = true;
  /// The pod's gpu_models or nodeSelector exclude the pool.
  bool model_mismatch = false;
  /// "key: value" of a NoSchedule / NoExecute taint of the pool the pod does not tolerate.
  std::string untolerated_taint;
  int refused_resource = -1;  ///< the resource that is not advertised / refused, -1 = none
  std::string refused_name;   ///< its name (for a resource the cluster never advertises)
  /// Set when the scheduler may bind the pod to the pool but its kubelet fails it at admission
  /// (failRequestsGreaterThanOne with more than one shared replica): the kubelet event's
  /// message (PodRecord::pending_message of the failed pod). Empty = admitted.
  std::string admission_error;
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  std::vector<Need> needs;
  /// Milli-GPUs the pod takes (for allocation metrics); INT64_MAX when the request's product
  /// overflows (such a pod never fits).
  std::int64_t gpu_milli_total = 0;
};

/// Resolves a pod's requests against a pool. Cost: O(resources requested).
Demand demand_on(const PodSpec& pod, const NodePoolSpec& spec, const PoolTemplate& pool,
                 const ResourceNames& names);

/// The mutable state of every node slot (active or not): flat arrays indexed by node, units in
/// [unit_begin[n], unit_begin[n + 1]).
struct ClusterState {
  std::vector<int> pool;  ///< per node
  std::vector<bool> active;
  std::vector<std::int64_t> cpu_free, memory_free;
  std::vector<int> unit_begin;         ///< size nodes + 1
  std::vector<int> slot_free;          ///< per unit
  std::vector<int> pods_on;            ///< pods placed per node
  std::vector<std::uint32_t> version;  ///< bumped on every change of the node
  std::vector<std::string> node_name;

  int nodes() const { return static_cast<int>(pool.size()); }
  int units(int node) const { return unit_begin[node + 1] - unit_begin[node]; }
};

/// Builds the node slots: per pool max(count, autoscaling.max_nodes) nodes, the first `count`
/// (at least autoscaling.min_nodes) active.
ClusterState make_state(const std::vector<NodePoolSpec>& pools,
                        const std::vector<PoolTemplate>& templates);

/// Whether the need fits on the node with its current free slots. Cost: O(units of the node).
bool need_fits(const ClusterState& state, const PoolTemplate& tpl, int node, const Need& need);

/// Whether the whole demand fits node `node` now (CPU, memory, every need). O(units).
bool demand_fits(const ClusterState& state, const PoolTemplate& tpl, int node, const Demand& d);

}  // namespace gpumux::cluster
