#pragma once
// Internal to the cluster replay (models/cluster/cluster_run.cpp, cluster_autoscaler.cpp): the
// event loop's state, shared by the scheduling story (arrivals, binding, preemption, completion,
// sampling: cluster_run.cpp) and the autoscaling story (cluster-autoscaler's scale-up and
// scale-down: cluster_autoscaler.cpp). Not a public header: run_cluster (cluster_run.hpp) is the
// entry point.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "models/cluster/cluster_run.hpp"
#include "models/cluster/scheduler.hpp"

namespace gpumux::cluster::detail {

enum class Kind : int { completion = 0, node_ready = 1, scale_down = 2, arrival = 3, sample = 4 };

struct Event {
  Nanos time;
  Kind kind;
  std::uint64_t seq;
  int id;
  std::uint64_t stamp;  // completion: the instance's epoch; scale_down: the node's version
  bool operator>(const Event& o) const {
    return std::tie(time, kind, seq) > std::tie(o.time, o.kind, o.seq);
  }
};

struct Group {
  int spec = 0;
  std::vector<int> members;  // instance ids
  int key = -1;
};

struct Instance {
  int group = 0;
  Allocation alloc;
  std::uint64_t epoch = 0;
  bool running = false;
};

class Replay {
 public:
  Replay(const ClusterSpec& spec, const std::atomic<bool>* interrupt)
      : spec_(spec), sched_(spec), interrupt_(interrupt) {}

  ClusterResult run();

 private:
  void push(Nanos t, Kind k, int id, std::uint64_t stamp = 0) {
    events_.push(Event{t, k, seq_++, id, stamp});
  }
  int key_of(int g);
  bool try_schedule(int g);
  void start_group(int g);
  void stop_instance(int i, bool completed);
  /// A bound pod its kubelet refuses (Demand::admission_error): recorded failed, released.
  bool fail_at_admission(int i);
  void enqueue(int g, bool at_back);
  void retry_pending();
  bool try_preempt(int g);
  void scale_up();
  bool autoscaled_ = false;                    // some pool has autoscaling
  std::vector<signed char> key_autoscalable_;  // per pending key: -1 unknown, 0 no, 1 yes
  bool scale_wanted_ = false;  // a pod became pending (or a node ready) since the last decision
  std::uint64_t scale_decisions_ = 0;
  void node_emptied(int node);
  void sample();
  void mark_dirty(int node) {
    if (!dirty_flag_[static_cast<std::size_t>(node)]) {
      dirty_flag_[static_cast<std::size_t>(node)] = true;
      dirty_.push_back(node);
    }
  }

  const ClusterSpec& spec_;
  Scheduler sched_;
  const std::atomic<bool>* interrupt_;  ///< polled every 4096 events (nullptr: never stops)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::uint64_t seq_ = 0;
  Nanos now_ = 0;
  std::vector<Group> groups_;
  std::vector<Instance> inst_;
  std::vector<PodRecord> recs_;
  // Pending queues: key -> ordered set of (−priority, arrival, group).
  std::map<std::tuple<int, int, int>, int> key_ids_;  // (shape, members, priority) -> key
  std::vector<int> key_shape_, key_members_;
  std::vector<std::set<std::tuple<int, Nanos, int>>> queues_;
  std::set<int> nonempty_;
  std::vector<int> dirty_;
  std::vector<bool> dirty_flag_;
  std::vector<std::vector<int>> on_node_;  // instances per node
  // Autoscaling: the node slots being provisioned.
  std::vector<int> inflight_;
  std::vector<Nanos> active_since_;
  std::vector<PoolRecord> pools_;
  std::vector<int> pool_active_;
  int running_ = 0, pending_ = 0, preemptions_ = 0;
  double arrived_milli_ = 0;
  std::uint64_t n_events_ = 0;
  std::vector<ClusterSample> samples_;
};

}  // namespace gpumux::cluster::detail
