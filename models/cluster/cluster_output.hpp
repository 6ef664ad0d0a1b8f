#pragma once
// Writing a cluster replay: the text summary, the JSON summary and the HDF5 file.
//
// HDF5 layout (written atomically through sim/io replace_file_atomically; tables are packed 1-D
// compound datasets with `units` / `description` JSON attributes, strings fixed-length UTF-8):
//   root attributes: gpumux_version, kind = "cluster", status ("complete", or "interrupted": a
//     signal stopped the workload pods' simulation after the replay; the replay's tables are
//     whole, workload_pods lists the pods whose node group finished), policy, ignore_deletions
//     (int64), end_time_ns (int64), events (uint64)
//   /summary              scalar string: cluster_summary_json
//   /cluster/pods         name, class, pool, node, gpus (str), priority i32, arrival_ns,
//                         start_ns, end_ns, failed_at_ns (i64, -1 = none), gpu_milli i32,
//                         vram_allocated_bytes, vram_used_bytes i64, gpu_utilization f64,
//                         evictions i32, spans_nodes i8, allreduce_step_ns i64,
//                         pending_reason, pending_message (str)
//   /cluster/timeseries   time_ns, gpu_milli_total, gpu_milli_allocated (i64), gpus_total,
//                         gpus_allocated (i32), gpu_milli_used, fragmentation_milli,
//                         unusable_milli (f64), pending, running, active_nodes (i32),
//                         arrived_gpu_milli (f64), plus frag_<resource> / unusable_<resource>
//   /cluster/pools        name, gpu_model (str), gpus_per_node, nodes_initial, nodes_peak,
//                         nodes_final, scale_ups, scale_downs (i32), node_seconds, cost_per_hour,
//                         cost (f64)
//   /cluster/pod_gpu      per pod and interval, what DCGM would export per container:
//                         pod u32, start_ns, end_ns (i64), gpu_milli i32, gpu_util f64 (the
//                         pod's gpu_utilization), fb_used_bytes i64 (vram_used_bytes)
#include <string>

#include <nlohmann/json.hpp>

#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_run.hpp"

namespace gpumux::cluster {

/// INTERRUPTED: a signal stopped the workload pods' simulation (see `status` above).
nlohmann::ordered_json cluster_summary_json(const ClusterResult& result,
                                            const ClusterMetrics& metrics,
                                            bool interrupted = false);
std::string cluster_summary_table(const ClusterResult& result, const ClusterMetrics& metrics,
                                  bool interrupted = false);
/// Throws OutputError (one line) when the file cannot be written.
void write_cluster_h5(const std::string& path, const ClusterResult& result,
                      const ClusterMetrics& metrics, bool interrupted = false);

}  // namespace gpumux::cluster
