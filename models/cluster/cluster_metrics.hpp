#pragma once
// What a cluster replay reports (docs/metrics.md "Cluster metrics" defines each):
//  * pending time per pod class: p50 / p90 / p99 / max of start - arrival (nearest rank, as
//    sim/core/statistics.hpp) over the pods that arrived by the end of the replay; a pod that
//    never started is right-censored at the end (its wait is at least end - arrival). A
//    quantile whose rank reaches a censored wait is a lower bound (flagged `censored`): the
//    waits below it are exact, so the true quantile is at least the value shown; `censored`
//    counts the censored pods;
//  * GPU allocation ratio: allocated / total milli-GPUs, and GPUs with any allocation / GPUs,
//    at the end and time-weighted over the replay; utilization: allocated x the pods'
//    gpu_utilization (an assumption of 1.0 unless given) / total;
//  * fragmentation: FGD's expected unusable GPU capacity (scheduler.hpp) and the "free but no
//    pending pod can use it" measure, per resource, as milli-GPUs and as a fraction of the free
//    milli-GPUs, at the end and time-weighted;
//  * cost: per pool node-hours x price; per pod class by allocation (the pod's share of its
//    node's GPUs, PodRecord::node_gpu_share: a MIG instance holds compute slices / 7 of its GPU
//    as in the tenant layer -- CPU share on a CPU-only node -- x node price x run time) and by use
//    (x gpu_utilization); the part of the pools' cost no pod was allocated;
//  * VRAM $/GB-month: the GPU pools' cost divided by the GB-months of VRAM provisioned, of VRAM
//    allocated to pods (the memory of their GPUs / MIG slices / replicas / milli-GPU shares) and
//    of VRAM the pods use (gpu_memory_bytes, else their allocated share). GB = 1e9 bytes; a
//    month = 730 h (8,760 h / 12).
// Cost: O(pods log pods + samples).
#include <map>
#include <string>
#include <vector>

#include "models/cluster/cluster_run.hpp"

namespace gpumux::cluster {

struct PendingStats {
  std::string pod_class;
  int pods = 0, started = 0, waited = 0, never_started = 0;
  /// Pods that arrived but had not started when the replay ended (waits censored at the end);
  /// never_started also counts the pods that arrive after the end (not in the quantiles).
  int censored = 0;
  double p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
  /// Whether each quantile is a lower bound (its rank reaches a censored wait).
  bool p50_censored = false, p90_censored = false, p99_censored = false, max_censored = false;
  double cost_allocated = 0, cost_used = 0;
  double gpu_hours = 0;  ///< allocated GPU-hours (milli-GPUs / 1000 x hours)
};

struct ClusterMetrics {
  std::vector<PendingStats> classes;  ///< sorted by class name
  PendingStats all;
  double allocation_final = 0, allocation_mean = 0;          ///< milli-GPUs
  double gpu_allocation_final = 0, gpu_allocation_mean = 0;  ///< GPUs with any allocation
  double utilization_mean = 0;
  double fragmentation_final_milli = 0, fragmentation_mean_milli = 0;
  double fragmentation_final_ratio = 0;  ///< of the free milli-GPUs at the end
  double unusable_final_milli = 0, unusable_mean_milli = 0;
  std::map<std::string, double> fragmentation_final_by_resource;
  std::map<std::string, double> unusable_final_by_resource;
  double cost_total = 0, cost_allocated = 0, cost_used = 0;
  std::string currency = "USD";
  double vram_gb_months_provisioned = 0, vram_gb_months_allocated = 0, vram_gb_months_used = 0;
  double gpu_pool_cost = 0;  ///< cost of pools with GPUs
  double usd_per_gb_month_provisioned = 0, usd_per_gb_month_allocated = 0,
         usd_per_gb_month_used = 0;
  std::vector<std::pair<std::string, int>> pending_reasons;  ///< pods per reason, most first
  int failed = 0;  ///< pods that did not fit on arrival (admission failures not included)
  /// Pods bound to a node and failed by its kubelet at admission (PodRecord::admission_failed),
  /// per kubelet message: they neither wait nor run (not in pending, waits or pending_reasons).
  std::vector<std::pair<std::string, int>> admission_failures;
  int admission_failed = 0;
};

ClusterMetrics cluster_metrics(const ClusterResult& result);

}  // namespace gpumux::cluster
