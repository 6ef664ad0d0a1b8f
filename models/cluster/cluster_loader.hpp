#pragma once
// The `cluster:` section of a scenario file -> ClusterSpec (models/cluster/cluster_spec.hpp).
// Schema, units and examples: docs/cluster.md, "The cluster: section". In short:
//
//   cluster:                       (a mapping, or the path of a cluster file: `cluster: c.yaml`,
//                                   relative to the scenario; that file holds the same mapping,
//                                   at its root or under its own `cluster:` key)
//     pools: [{name, count, gpu, gpus_per_node, cpu, memory, cost_per_hour, currency, network,
//              autoscaling: {min, max, provisioning_delay, scale_down_after}, labels,
//              sharing: {device_plugin | mig_parted | gke}}]
//     pods:  [{name, class, arrival | arrivals: {process, rate, count, start}, count,
//              requests: {cpu, memory, nvidia.com/...: N}, gpu_milli, gpu_models, priority, gang,
//              gang_bytes_per_step, duration | workload}]
//     openb: {nodes: CSV, pods: CSV, cost_per_hour: {MODEL: price}}   (instead of pools/pods)
//     scheduler: {policy: best-fit|first-fit|worst-fit|fgd, preemption, ignore_deletions}
//     duration: 1h
//     sample: 10s
//
// Units in the result: integer nanoseconds, bytes, millicores, bytes/s (cluster_spec.hpp).
// Sizes and CPU are Kubernetes quantities (quantity.hpp); durations and rates as in scenarios.
// `--set cluster.KEY=VALUE` edits the section (or the referenced cluster file) before it is read,
// e.g. --set cluster.openb.pods=traces/alibaba-openb/openb_pod_list_gpushare40.csv.
//
// Errors: every bad input is an InputError whose message is one line
// "FILE:LINE:COLUMN: KEY.PATH: message" (FILE is the file the value is in: the scenario, the
// cluster file, a device-plugin or mig-parted file, an openb CSV; `--set` for a value given on
// the command line). The CLI maps it to exit code 2.
// Cost: linear in the files (device profiles are loaded once per process and cached; a MIG
// layout costs one placement search); generated arrivals are O(count).
#include <string>
#include <vector>

#include "models/cluster/cluster_spec.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux::cluster {

/// Loads the cluster description of scenario file `scenario_file`: its `cluster:` section or the
/// cluster file that section names, with `--set` overrides whose key starts with `cluster.`.
/// Throws InputError (file missing or unreadable, no `cluster:` key, syntax, schema, units,
/// device-plugin / mig-parted / GKE settings, openb CSV rows).
ClusterSpec load_cluster(const std::string& scenario_file,
                         const std::vector<Override>& overrides = {});

/// The same from YAML text (tests, Python); `source_name` names it in errors and its directory
/// resolves relative paths.
ClusterSpec load_cluster_text(const std::string& yaml_text, const std::string& source_name,
                              const std::vector<Override>& overrides = {});

}  // namespace gpumux::cluster
