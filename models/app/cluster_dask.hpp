#pragma once
// The cluster replay with its workload pods' device simulation on Dask (`gpumux run SCENARIO
// --dask ADDRESS`; docs/cluster.md, "Workload pods on Dask"). The replay runs here; the node
// groups (cluster::plan_workload_shards, balanced by estimated launches) run as Dask tasks
// sent by the Python driver python/gpumux/_dask_cluster.py, started as a child process
// (python3 -m gpumux._dask_cluster ADDRESS) that talks over its stdin and stdout; each group's
// pod numbers are applied as they arrive. The result is bit-identical to simulate_cluster's.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "models/app/application.hpp"

namespace gpumux {

/// One Dask task (node group) as it ran.
struct DaskTask {
  std::size_t nodes = 0, pods = 0;
  double estimated_launches = 0;
  double wall_s = 0, cpu_s = 0;     ///< measured in the task (CPU: its thread)
  std::int64_t peak_rss_bytes = 0;  ///< its worker process's peak resident memory so far
  std::string worker;               ///< the worker's address
};

/// Where the time of a --dask run went.
struct DaskRunReport {
  int workers = 0;      ///< workers the scheduler had when the tasks were sent
  double replay_s = 0;  ///< load + replay, here
  std::vector<DaskTask> tasks;
  /// A signal stopped the tasks after the replay: the run holds the whole replay and the pods
  /// of the tasks that answered before it (written marked status=interrupted).
  bool interrupted = false;
  /// Replay + the longest task: the wall time no number of workers beats.
  double critical_path_s() const;
  /// One line for stderr: tasks, workers, task time, the longest task, the critical path, the
  /// largest worker's peak memory.
  std::string summary_line() const;
};

/// simulate_cluster(load_cluster_request(REQUEST)) with the workload pods' groups as Dask tasks
/// on the scheduler at ADDRESS (tcp://HOST:PORT; `local:N`: a LocalCluster of N workers here;
/// `auto`: $DASK_SCHEDULER_ADDRESS), SHARDS groups (at most one per node; 0: 4 per worker the
/// scheduler has; the numbers are the same for any count). The scheduler is
/// reached before the replay: none there (or no dask.distributed) throws InputError with one
/// line. The tasks carry the scenario's text (named by its absolute path, so relative files
/// resolve as for the file), the overrides and seed, the placement as bytes and their nodes.
/// INTERRUPT as for simulate_cluster (the driver is stopped with SIGTERM): set during the
/// replay, ClusterInterrupted; after it, the run so far and REPORT.interrupted. A driver that stops
/// without answering throws std::runtime_error.
ClusterRun simulate_cluster_on_dask(const ScenarioRequest& request, const std::string& address,
                                    int shards, const std::atomic<bool>* interrupt,
                                    DaskRunReport& report);

}  // namespace gpumux
