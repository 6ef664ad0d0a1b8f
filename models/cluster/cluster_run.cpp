// The cluster replay, its scheduling story: pods arrive, are bound by the scheduler (or wait in
// pending queues, or preempt), run, complete or fail at admission; the cluster is sampled; the
// result is assembled. Autoscaling is cluster_autoscaler.cpp; the shared state is
// cluster_replay.hpp.
#include "models/cluster/cluster_run.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "models/cluster/cluster_replay.hpp"
#include "models/cluster/scheduler.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::cluster {

const char* policy_name(SchedulingPolicy policy) {
  switch (policy) {
    case SchedulingPolicy::first_fit:
      return "first-fit";
    case SchedulingPolicy::best_fit:
      return "best-fit";
    case SchedulingPolicy::worst_fit:
      return "worst-fit";
    case SchedulingPolicy::fgd:
      return "fgd";
  }
  return "?";
}

Nanos PodRecord::pending_ns() const { return start >= 0 ? start - arrival : -1; }

namespace detail {

int Replay::key_of(int g) {
  const Group& gr = groups_[static_cast<std::size_t>(g)];
  const PodSpec& p = spec_.pods[static_cast<std::size_t>(gr.spec)];
  const auto k = std::make_tuple(sched_.shape_of_pod(static_cast<std::size_t>(gr.spec)),
                                 static_cast<int>(gr.members.size()), p.priority);
  auto it = key_ids_.find(k);
  if (it != key_ids_.end()) return it->second;
  const int id = static_cast<int>(key_shape_.size());
  key_ids_.emplace(k, id);
  key_shape_.push_back(std::get<0>(k));
  key_members_.push_back(std::get<1>(k));
  queues_.emplace_back();
  return id;
}

bool Replay::try_schedule(int g) {
  Group& gr = groups_[static_cast<std::size_t>(g)];
  const int shape = sched_.shape_of_pod(static_cast<std::size_t>(gr.spec));
  std::size_t placed = 0;
  for (; placed < gr.members.size(); ++placed) {
    Allocation a;
    if (!sched_.choose(shape, a)) break;
    sched_.apply(shape, a);
    inst_[static_cast<std::size_t>(gr.members[placed])].alloc = std::move(a);
  }
  if (placed == gr.members.size()) {
    start_group(g);
    return true;
  }
  for (std::size_t i = placed; i-- > 0;) {  // roll back, last placed first
    Instance& in = inst_[static_cast<std::size_t>(gr.members[i])];
    sched_.release(shape, in.alloc);
    in.alloc = Allocation{};
  }
  return false;
}

void Replay::start_group(int g) {
  Group& gr = groups_[static_cast<std::size_t>(g)];
  const PodSpec& p = spec_.pods[static_cast<std::size_t>(gr.spec)];
  std::set<int> nodes;
  double network = 0;
  double nvlink = 0;
  for (int i : gr.members) {
    const int node = inst_[static_cast<std::size_t>(i)].alloc.node;
    nodes.insert(node);
    const NodePoolSpec& pool =
        spec_.pools[static_cast<std::size_t>(sched_.state().pool[static_cast<std::size_t>(node)])];
    network = network == 0 ? pool.network_bytes_per_s : std::min(network, pool.network_bytes_per_s);
    const double nv =
        pool.nvlink_bytes_per_s > 0 ? pool.nvlink_bytes_per_s : kDefaultNvlinkBytesPerS;
    nvlink = nvlink == 0 ? nv : std::min(nvlink, nv);
  }
  const bool spans = nodes.size() > 1;
  const int members = static_cast<int>(gr.members.size());
  const Nanos step = ring_allreduce_time(p.gang_bytes_per_step, members, spans ? network : nvlink);
  // A workload pod without a duration runs to the end of the replay.
  const bool forever = !p.workload.duration.has_value();
  // Saturating: a run longer than int64 nanoseconds (about 292 years) ends after any horizon,
  // so it is a pod that never completes, not a wrapped (negative) end time.
  const Nanos duration = checked::add_saturating(p.workload.duration.value_or(0),
                                                 checked::mul_saturating(p.gang_steps, step));
  const Nanos completion = checked::add_saturating(now_, duration);
  const ClusterState& st = sched_.state();
  for (int i : gr.members) {
    if (fail_at_admission(i)) continue;
    Instance& in = inst_[static_cast<std::size_t>(i)];
    PodRecord& r = recs_[static_cast<std::size_t>(i)];
    const int node = in.alloc.node;
    const int pool = st.pool[static_cast<std::size_t>(node)];
    const PoolTemplate& tpl = sched_.templates()[static_cast<std::size_t>(pool)];
    const NodePoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
    r.start = now_;
    r.end = -1;
    r.node = node;
    r.node_name = st.node_name[static_cast<std::size_t>(node)];
    r.pool = ps.name;
    r.spans_nodes = spans;
    r.allreduce_step_ns = members > 1 ? step : 0;
    r.node_cost_per_hour = ps.cost_per_hour;
    r.node_gpu_milli = tpl.total_gpu_milli();
    r.node_cpu_milli = tpl.cpu_milli;
    r.gpus.clear();
    r.units.clear();
    double milli = 0;
    double vram = 0;
    double share = 0;
    for (const auto& [u, take] : in.alloc.takes) {
      const UnitTemplate& ut = tpl.units[static_cast<std::size_t>(u - st.unit_begin[node])];
      r.units.push_back(u - st.unit_begin[node]);
      const std::string id =
          ut.profile.empty() ? fmt::format("{}", ut.gpu) : fmt::format("{}:{}", ut.gpu, ut.profile);
      if (r.gpus.find(id) == std::string::npos)
        r.gpus += r.gpus.empty() ? id : fmt::format(",{}", id);
      milli += static_cast<double>(take) * ut.gpu_milli / ut.slots;
      share += static_cast<double>(take) / ut.slots * ut.gpu_fraction;
      vram += static_cast<double>(take) * static_cast<double>(ut.memory_bytes) / ut.slots;
    }
    r.gpu_milli = static_cast<int>(milli + 0.5);
    r.node_gpu_share = tpl.gpus > 0 ? share / tpl.gpus : 0.0;
    r.vram_allocated_bytes = static_cast<std::int64_t>(vram);
    r.vram_used_bytes = p.gpu_memory_bytes > 0 ? p.gpu_memory_bytes : r.vram_allocated_bytes;
    in.running = true;
    in.epoch += 1;
    on_node_[static_cast<std::size_t>(node)].push_back(i);
    ++running_;
    if (!spec_.scheduler.ignore_deletions && !forever && completion < checked::kMaxInt64) {
      push(completion, Kind::completion, i, in.epoch);
    }
  }
}

bool Replay::fail_at_admission(int i) {
  Instance& in = inst_[static_cast<std::size_t>(i)];
  PodRecord& r = recs_[static_cast<std::size_t>(i)];
  const int node = in.alloc.node;
  const std::size_t nn = static_cast<std::size_t>(node);
  const int shape = sched_.shape_of_pod(static_cast<std::size_t>(r.spec_index));
  const std::string& error = sched_.demand(shape, sched_.state().pool[nn]).admission_error;
  if (error.empty()) return false;
  // Bound, then failed by the kubelet: it holds nothing and never runs (node_state.hpp).
  r.node = node;
  r.node_name = sched_.state().node_name[nn];
  r.pool = spec_.pools[static_cast<std::size_t>(sched_.state().pool[nn])].name;
  r.admission_failed = true;
  r.failed_at = now_;
  r.pending_reason = "UnexpectedAdmissionError";
  r.pending_message = error;
  sched_.release(shape, in.alloc);
  in.alloc = Allocation{};
  mark_dirty(node);
  if (sched_.state().pods_on[nn] == 0) node_emptied(node);
  return true;
}

void Replay::stop_instance(int i, bool completed) {
  Instance& in = inst_[static_cast<std::size_t>(i)];
  PodRecord& r = recs_[static_cast<std::size_t>(i)];
  const int node = in.alloc.node;
  const int shape = sched_.shape_of_pod(static_cast<std::size_t>(r.spec_index));
  sched_.release(shape, in.alloc);
  auto& list = on_node_[static_cast<std::size_t>(node)];
  list.erase(std::find(list.begin(), list.end(), i));
  in.running = false;
  in.epoch += 1;  // invalidates a pending completion
  in.alloc = Allocation{};
  --running_;
  if (completed) {
    r.end = now_;
  } else {
    r.evictions += 1;
    r.start = -1;
  }
  mark_dirty(node);
  if (sched_.state().pods_on[static_cast<std::size_t>(node)] == 0) node_emptied(node);
}

void Replay::enqueue(int g, bool) {
  Group& gr = groups_[static_cast<std::size_t>(g)];
  gr.key = key_of(g);
  const PodSpec& p = spec_.pods[static_cast<std::size_t>(gr.spec)];
  queues_[static_cast<std::size_t>(gr.key)].emplace(-p.priority, p.arrival, g);
  nonempty_.insert(gr.key);
  pending_ += static_cast<int>(gr.members.size());
  const int shape = sched_.shape_of_pod(static_cast<std::size_t>(gr.spec));
  const PendingReason why = sched_.explain(shape, static_cast<int>(gr.members.size()));
  for (int i : gr.members) {
    PodRecord& r = recs_[static_cast<std::size_t>(i)];
    r.pending_reason = why.reason;
    r.pending_message = why.message;
    if (r.failed_at < 0) r.failed_at = now_;
  }
  scale_wanted_ = true;
}

void Replay::retry_pending() {
  if (dirty_.empty() || nonempty_.empty()) {
    for (int n : dirty_) dirty_flag_[static_cast<std::size_t>(n)] = false;
    dirty_.clear();
    return;
  }
  // Queues in order of their heads (priority, arrival, group).
  std::vector<std::pair<std::tuple<int, Nanos, int>, int>> heads;
  for (int k : nonempty_) heads.emplace_back(*queues_[static_cast<std::size_t>(k)].begin(), k);
  std::sort(heads.begin(), heads.end());
  const ClusterState& st = sched_.state();
  for (const auto& [head, k] : heads) {
    auto& q = queues_[static_cast<std::size_t>(k)];
    const int shape = key_shape_[static_cast<std::size_t>(k)];
    while (!q.empty()) {
      // Only a node whose capacity grew can host what failed before (gangs: any node, as
      // members may spread over several).
      bool could = key_members_[static_cast<std::size_t>(k)] > 1;
      for (int n : dirty_) {
        if (could) break;
        const int pool = st.pool[static_cast<std::size_t>(n)];
        could = st.active[static_cast<std::size_t>(n)] &&
                demand_fits(st, sched_.templates()[static_cast<std::size_t>(pool)], n,
                            sched_.demand(shape, pool));
      }
      if (!could) break;
      const int g = std::get<2>(*q.begin());
      if (!try_schedule(g)) break;
      q.erase(q.begin());
      pending_ -= static_cast<int>(groups_[static_cast<std::size_t>(g)].members.size());
    }
    if (q.empty()) nonempty_.erase(k);
  }
  for (int n : dirty_) dirty_flag_[static_cast<std::size_t>(n)] = false;
  dirty_.clear();
}

bool Replay::try_preempt(int g) {
  Group& gr = groups_[static_cast<std::size_t>(g)];
  if (gr.members.size() != 1) return false;
  const PodSpec& p = spec_.pods[static_cast<std::size_t>(gr.spec)];
  const int shape = sched_.shape_of_pod(static_cast<std::size_t>(gr.spec));
  const ClusterState& st = sched_.state();
  int best_node = -1;
  std::tuple<int, int, int> best_cost{0, 0, 0};
  std::vector<int> best_victims;
  for (int node = 0; node < st.nodes(); ++node) {
    if (!st.active[static_cast<std::size_t>(node)]) continue;
    if (!sched_.demand(shape, st.pool[static_cast<std::size_t>(node)]).possible) continue;
    std::vector<int> lower;
    for (int i : on_node_[static_cast<std::size_t>(node)]) {
      if (recs_[static_cast<std::size_t>(i)].priority < p.priority) lower.push_back(i);
    }
    if (lower.empty()) continue;
    // Lowest priority first; among equals the latest started first.
    std::stable_sort(lower.begin(), lower.end(), [&](int a, int b) {
      const PodRecord& ra = recs_[static_cast<std::size_t>(a)];
      const PodRecord& rb = recs_[static_cast<std::size_t>(b)];
      if (ra.priority != rb.priority) return ra.priority < rb.priority;
      return ra.start > rb.start;
    });
    std::vector<const Allocation*> freed;
    std::vector<int> victims;
    bool fits = false;
    for (int i : lower) {
      // Members of a gang are not split by preemption.
      if (groups_[static_cast<std::size_t>(inst_[static_cast<std::size_t>(i)].group)]
              .members.size() > 1) {
        continue;
      }
      freed.push_back(&inst_[static_cast<std::size_t>(i)].alloc);
      victims.push_back(i);
      if (sched_.fits_after_release(shape, node, freed)) {
        fits = true;
        break;
      }
    }
    if (!fits) continue;
    int top = 0;
    for (int v : victims) top = std::max(top, recs_[static_cast<std::size_t>(v)].priority);
    const std::tuple<int, int, int> cost{top, static_cast<int>(victims.size()), node};
    if (best_node < 0 || cost < best_cost) {
      best_node = node;
      best_cost = cost;
      best_victims = victims;
    }
  }
  if (best_node < 0) return false;
  for (int v : best_victims) {
    const int vg = inst_[static_cast<std::size_t>(v)].group;
    stop_instance(v, false);
    ++preemptions_;
    enqueue(vg, true);
  }
  Allocation a = sched_.allocate_on(shape, best_node);
  sched_.apply(shape, a);
  inst_[static_cast<std::size_t>(gr.members[0])].alloc = std::move(a);
  start_group(g);
  return true;
}

void Replay::sample() {
  const ClusterState& st = sched_.state();
  ClusterSample s;
  s.time = now_;
  const int nres = std::max(1, sched_.names().size());
  s.unusable_by_resource.assign(static_cast<std::size_t>(nres), 0.0);
  // Pending queues' demands, for the "unusable by any pending pod" measure.
  std::vector<int> pending_shapes;
  for (int k : nonempty_) pending_shapes.push_back(key_shape_[static_cast<std::size_t>(k)]);
  std::sort(pending_shapes.begin(), pending_shapes.end());
  pending_shapes.erase(std::unique(pending_shapes.begin(), pending_shapes.end()),
                       pending_shapes.end());
  for (int n = 0; n < st.nodes(); ++n) {
    const std::size_t nn = static_cast<std::size_t>(n);
    if (!st.active[nn]) continue;
    ++s.active_nodes;
    const int pool = st.pool[nn];
    const PoolTemplate& tpl = sched_.templates()[static_cast<std::size_t>(pool)];
    if (tpl.cpu_milli > 0) {
      s.cpu_total += tpl.cpu_milli;
      s.cpu_allocated += tpl.cpu_milli - st.cpu_free[nn];
    }
    s.gpus_total += tpl.gpus;
    s.gpu_milli_total += tpl.total_gpu_milli();
    std::vector<bool> gpu_used(static_cast<std::size_t>(tpl.gpus), false);
    std::vector<const Demand*> fitting;
    for (int shape : pending_shapes) {
      const Demand& d = sched_.demand(shape, pool);
      if (demand_fits(st, tpl, n, d)) fitting.push_back(&d);
    }
    for (int i = 0; i < st.units(n); ++i) {
      const UnitTemplate& u = tpl.units[static_cast<std::size_t>(i)];
      const int f = st.slot_free[static_cast<std::size_t>(st.unit_begin[n] + i)];
      const double used_milli = static_cast<double>(u.slots - f) * u.gpu_milli / u.slots;
      s.gpu_milli_allocated += static_cast<std::int64_t>(used_milli + 0.5);
      if (f < u.slots) gpu_used[static_cast<std::size_t>(u.gpu)] = true;
      if (f == 0 || pending_shapes.empty()) continue;
      bool usable = false;
      for (const Demand* d : fitting) {
        for (const Need& need : d->needs) {
          usable |= need.resource == u.resource && f >= (need.spread ? 1 : need.per_unit);
        }
      }
      if (!usable) {
        const double m = static_cast<double>(f) * u.gpu_milli / u.slots;
        s.unusable_milli += m;
        s.unusable_by_resource[static_cast<std::size_t>(u.resource)] += m;
      }
    }
    for (bool b : gpu_used) s.gpus_allocated += b ? 1 : 0;
    for (int i : on_node_[nn]) {
      s.gpu_milli_used += recs_[static_cast<std::size_t>(i)].gpu_milli *
                          recs_[static_cast<std::size_t>(i)].gpu_utilization;
    }
  }
  s.fragmentation_by_resource = sched_.fragmentation_by_resource();
  s.fragmentation_milli = 0;
  for (double v : s.fragmentation_by_resource) s.fragmentation_milli += v;
  s.pending = pending_;
  s.running = running_;
  s.arrived_gpu_milli = arrived_milli_;
  samples_.push_back(std::move(s));
}

ClusterResult Replay::run() {
  if (spec_.pools.empty()) throw InputError(spec_.where, "cluster: no node pools");
  const ClusterState& st = sched_.state();
  dirty_flag_.assign(static_cast<std::size_t>(st.nodes()), false);
  on_node_.resize(static_cast<std::size_t>(st.nodes()));
  active_since_.assign(static_cast<std::size_t>(st.nodes()), 0);
  pools_.resize(spec_.pools.size());
  pool_active_.assign(spec_.pools.size(), 0);
  for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
    const NodePoolSpec& ps = spec_.pools[p];
    PoolRecord& r = pools_[p];
    r.name = ps.name;
    r.gpu_model = ps.gpu_model;
    r.currency = ps.currency;
    r.gpus_per_node = ps.gpus_per_node;
    r.cost_per_hour = ps.cost_per_hour;
    r.gpu_memory_bytes = sched_.templates()[p].gpu_memory_bytes;
  }
  for (int n = 0; n < st.nodes(); ++n) {
    if (st.active[static_cast<std::size_t>(n)]) {
      pool_active_[static_cast<std::size_t>(st.pool[static_cast<std::size_t>(n)])] += 1;
    }
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    pools_[p].nodes_initial = pools_[p].nodes_peak = pool_active_[p];
    autoscaled_ |= spec_.pools[p].autoscaling.has_value();
  }
  // Pods -> groups and instances.
  Nanos last_arrival = 0;
  // A gang of N is N consecutive pods with gang N, the same arrival and the same shape (the
  // loader writes `count: K, gang: N` as K pods, K/N gangs).
  for (std::size_t i = 0; i < spec_.pods.size();) {
    const PodSpec& p = spec_.pods[i];
    const int members = std::max(1, p.gang);
    Group g;
    g.spec = static_cast<int>(i);
    for (int m = 0; m < members; ++m) {
      const std::size_t k = i + static_cast<std::size_t>(m);
      if (k >= spec_.pods.size() || spec_.pods[k].gang != p.gang ||
          spec_.pods[k].arrival != p.arrival || sched_.shape_of_pod(k) != sched_.shape_of_pod(i)) {
        throw InputError(p.where, fmt::format("pod {}: gang {} needs {} consecutive identical pods "
                                              "arriving together; found {}",
                                              p.name, p.gang, members, m));
      }
      const PodSpec& q = spec_.pods[k];
      if (!spec_.scheduler.ignore_deletions && !q.workload.duration && !q.workload.tenant) {
        throw InputError(q.where, fmt::format("pod {}: no duration (the replay deletes pods at "
                                              "start + duration; or set ignore_deletions)",
                                              q.name));
      }
      g.members.push_back(static_cast<int>(inst_.size()));
      inst_.push_back(Instance{static_cast<int>(groups_.size()), {}, 0, false});
      PodRecord r;
      r.name = q.name;
      r.pod_class = q.pod_class.empty() ? q.name : q.pod_class;
      r.spec_index = static_cast<int>(k);
      r.member = m;
      r.priority = q.priority;
      r.arrival = q.arrival;
      r.cpu_milli = q.cpu_milli;
      r.gpu_utilization = q.gpu_utilization;
      recs_.push_back(std::move(r));
    }
    groups_.push_back(std::move(g));
    push(p.arrival, Kind::arrival, static_cast<int>(groups_.size() - 1));
    last_arrival = std::max(last_arrival, p.arrival);
    i += static_cast<std::size_t>(members);
  }
  // Autoscaled nodes that start empty may be scaled down.
  for (int n = 0; n < st.nodes(); ++n) {
    if (st.active[static_cast<std::size_t>(n)]) node_emptied(n);
  }
  // Samples every spec_.sample up to the horizon, one queued at a time (the next is pushed when
  // one fires): memory does not grow with horizon / sample.
  const Nanos sample_horizon = spec_.duration > 0 ? spec_.duration : last_arrival;
  if (spec_.sample > 0) push(0, Kind::sample, 0);
  const Nanos stop = spec_.duration > 0 ? spec_.duration : kNever;
  while (!events_.empty()) {
    const Event e = events_.top();
    if (e.time > stop) break;
    events_.pop();
    now_ = e.time;
    ++n_events_;
    if ((n_events_ & 4095) == 0 && interrupt_ != nullptr && interrupt_->load()) {
      throw ClusterInterrupted();
    }
    switch (e.kind) {
      case Kind::arrival: {
        const Group& gr = groups_[static_cast<std::size_t>(e.id)];
        const PodSpec& p = spec_.pods[static_cast<std::size_t>(gr.spec)];
        const int shape = sched_.shape_of_pod(static_cast<std::size_t>(gr.spec));
        arrived_milli_ += static_cast<double>(sched_.gpu_milli_of(shape)) * gr.members.size();
        const int key = key_of(e.id);
        // Pods of a shape already waiting would not fit either: queue behind them.
        const bool blocked = !queues_[static_cast<std::size_t>(key)].empty();
        if (!blocked && try_schedule(e.id)) break;
        if (spec_.scheduler.preemption && p.priority != 0 && try_preempt(e.id)) break;
        enqueue(e.id, true);
        break;
      }
      case Kind::completion: {
        const Instance& in = inst_[static_cast<std::size_t>(e.id)];
        if (!in.running || in.epoch != e.stamp) break;  // evicted since
        stop_instance(e.id, true);
        break;
      }
      case Kind::node_ready: {
        const int pool = st.pool[static_cast<std::size_t>(e.id)];
        inflight_.erase(std::remove(inflight_.begin(), inflight_.end(), e.id), inflight_.end());
        sched_.set_active(e.id, true);
        active_since_[static_cast<std::size_t>(e.id)] = now_;
        pool_active_[static_cast<std::size_t>(pool)] += 1;
        pools_[static_cast<std::size_t>(pool)].nodes_peak =
            std::max(pools_[static_cast<std::size_t>(pool)].nodes_peak,
                     pool_active_[static_cast<std::size_t>(pool)]);
        // Pods that were left to this node and still do not fit are reconsidered.
        scale_wanted_ = true;
        mark_dirty(e.id);
        node_emptied(e.id);
        break;
      }
      case Kind::scale_down: {
        const std::size_t nn = static_cast<std::size_t>(e.id);
        const int pool = st.pool[nn];
        const NodePoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
        if (!st.active[nn] || st.pods_on[nn] != 0 || st.version[nn] != e.stamp) break;
        if (pool_active_[static_cast<std::size_t>(pool)] <= ps.autoscaling->min_nodes) break;
        pools_[static_cast<std::size_t>(pool)].node_seconds += to_seconds(now_ - active_since_[nn]);
        sched_.set_active(e.id, false);
        pool_active_[static_cast<std::size_t>(pool)] -= 1;
        pools_[static_cast<std::size_t>(pool)].scale_downs += 1;
        break;
      }
      case Kind::sample: {
        const Nanos next = checked::add_saturating(now_, spec_.sample);
        if (next <= sample_horizon && next < checked::kMaxInt64) push(next, Kind::sample, 0);
        break;
      }
    }
    // Retry the pending queues once the instant's releases are in (same-time events first).
    if (events_.empty() || events_.top().time != now_ || e.kind == Kind::sample) {
      retry_pending();
      scale_up();
    }
    if (spec_.sample == 0 && e.kind != Kind::sample &&
        (events_.empty() || events_.top().time != now_)) {
      sample();
    } else if (e.kind == Kind::sample) {
      sample();
    }
  }
  const Nanos end = spec_.duration > 0 ? spec_.duration
                                       : (spec_.scheduler.ignore_deletions ? last_arrival : now_);
  ClusterResult out;
  out.policy = policy_name(spec_.scheduler.policy);
  out.ignore_deletions = spec_.scheduler.ignore_deletions;
  out.end_time = end;
  for (int n = 0; n < st.nodes(); ++n) {
    const std::size_t nn = static_cast<std::size_t>(n);
    if (!st.active[nn]) continue;
    pools_[static_cast<std::size_t>(st.pool[nn])].node_seconds +=
        to_seconds(end - active_since_[nn]);
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    pools_[p].nodes_final = pool_active_[p];
    pools_[p].cost = pools_[p].node_seconds / 3600.0 * pools_[p].cost_per_hour;
  }
  out.pods = std::move(recs_);
  out.samples = std::move(samples_);
  out.pools = std::move(pools_);
  for (int r = 0; r < sched_.names().size(); ++r) out.resources.push_back(sched_.names().name(r));
  out.events = n_events_;
  out.fragmentation_states = sched_.memo_states();
  out.preemptions = preemptions_;
  return out;
}

}  // namespace detail

ClusterResult run_cluster(const ClusterSpec& spec, const std::atomic<bool>* interrupt) {
  detail::Replay replay(spec, interrupt);
  return replay.run();
}

}  // namespace gpumux::cluster
