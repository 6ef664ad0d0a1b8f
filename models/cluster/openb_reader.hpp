#pragma once
// The Alibaba GPU cluster trace "openb" (cluster-trace-gpu-v2023; Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
// ATC'23) -> node pools and pods. Copies of the files: scenarios/traces/alibaba-openb/ (SOURCE.md
// there: origin, commit, terms, citation). Column meanings and units (source: data/README.md of
// github.com/hkust-adsl/kubernetes-scheduler-simulator, commit 8f3d6417): cpu_milli in
// millicores, memory_mib in MiB, times in seconds.
//
// Nodes (sn,cpu_milli,memory_mib,gpu,model): one NodePoolSpec per distinct (model, gpu,
// cpu_milli, memory_mib), in order of first appearance, named "openb-MODEL-<gpus>x-<n>" with
// count = its nodes and node_names = their `sn`; gpu_model = the trace's model string (P100,
// T4, V100M16, V100M32, A10, G2, G3, ...: no gpumux device profile); sharing.sharing =
// fractional (Alibaba GPU sharing: any pod may take part of a GPU); labels {"model": MODEL}.
// A node with gpu 0 (a CPU node, model empty) gives a pool with gpus_per_node 0.
//
// Pods: the documented mapping rule (docs/cluster.md, "Alibaba openb"):
//   num_gpu = 0                      -> a CPU-only pod (no GPU resource)
//   num_gpu = 1, 0 < gpu_milli < 1000 -> gpu_milli = that share of one GPU, with
//                                      gpu_resources["nvidia.com/gpu"] = 1 (the one GPU it shares)
//   num_gpu >= 1, gpu_milli = 1000   -> num_gpu whole GPUs (gpu_resources["nvidia.com/gpu"])
//   anything else (num_gpu > 1 with a share, gpu_milli 0 or > 1000 with num_gpu > 0, negative
//   values) is refused as corrupt.
//   gpu_spec "V100M16|V100M32" -> gpu_models; empty = any.
//   pod_class = the request shape "<num_gpu>x<gpu_milli>m" ("1x460m", "8x1000m", "0x0m" for CPU).
//   arrival = creation_time; duration = deletion_time - creation_time (> 0 or refused);
//   priority 0; qos, pod_phase and scheduled_time are read and checked but not used (the
//   simulator schedules; FGD's simulator does the same).
// Rows are sorted by creation_time (stable). A corrupt row is an InputError
// "FILE:LINE:COLUMN: COLUMN_NAME: message". Cost: linear; the 8,152-pod default file parses in
// about 25 ms (tests/unit/test_cluster_openb.cpp measures it).
#include <cstdint>
#include <string>
#include <vector>

#include "models/cluster/cluster_spec.hpp"

namespace gpumux::cluster {

/// `pods` in order of arrival, ties in their given order (stable). Moves each pod once.
std::vector<PodSpec> sorted_by_arrival(std::vector<PodSpec> pods);

/// Parses an openb node list (openb_node_list_*.csv). Throws InputError.
std::vector<NodePoolSpec> parse_openb_nodes(const std::string& csv_text,
                                            const std::string& source_name);
/// Parses an openb pod list (openb_pod_list_*.csv); sorted by arrival. Throws InputError, also
/// (before parsing any row) for a file of more than `max_pods` data lines: the work budget
/// (kWorkBudgetClusterPods), located at `budget_where` (the key naming the file) when given.
std::vector<PodSpec> parse_openb_pods(const std::string& csv_text, const std::string& source_name,
                                      std::size_t max_pods = SIZE_MAX,
                                      const SourceLocation& budget_where = {});

/// The same from files; `referenced_from` is where the path was written (for a missing file).
std::vector<NodePoolSpec> load_openb_nodes(const std::string& path,
                                           const SourceLocation& referenced_from = {});
std::vector<PodSpec> load_openb_pods(const std::string& path,
                                     const SourceLocation& referenced_from = {},
                                     std::size_t max_pods = SIZE_MAX);

}  // namespace gpumux::cluster
