// The workload pods' device simulation (workload_pods.hpp): the scenario of every GPU that hosts
// one, its split into node groups, and the worker processes that simulate the groups.
#include "models/cluster/workload_pods.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "models/cluster/node_state.hpp"
#include "models/cluster/pod_slo.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/work_estimate.hpp"
#include "models/strategies/registry.hpp"

namespace gpumux::cluster {
namespace {

constexpr std::size_t kNoPod = std::numeric_limits<std::size_t>::max();

/// The scenario of every GPU that hosts a workload pod, and where each part of it came from.
struct PodScenario {
  Scenario scenario;
  std::vector<int> gpu_node;            // per scenario GPU: the cluster node it is on
  std::vector<std::size_t> tenant_gpu;  // per tenant: the scenario GPU of its first device
  std::vector<std::size_t> tenant_pod;  // per tenant: the pod it reports for (kNoPod: a copy)
  std::vector<double> tenant_launches;  // per tenant: estimated kernel launches (WorkloadShardPlan)
};

// The work budget's estimate of a tenant's launches while it is active (WorkloadShardPlan).
double estimated_launches(const TenantSpec& tenant, Nanos horizon) {
  Scenario one;
  const Nanos until = tenant.active_until.value_or(horizon);
  one.duration = std::max<Nanos>(0, until - tenant.active_from);
  one.tenants.push_back(tenant);
  const WorkEstimate w = estimate_work(one, {});
  return std::max({1.0, w.launches, w.requests});
}

// ONLY_NODES: build the GPUs and tenants of these cluster nodes alone (nullptr: all); the
// horizon is the whole run's either way.
PodScenario build_scenario(const ClusterSpec& spec, const ClusterResult& result,
                           const std::set<int>* only_nodes = nullptr) {
  PodScenario out;
  std::vector<std::size_t> pods;
  for (std::size_t i = 0; i < result.pods.size(); ++i) {
    const PodRecord& p = result.pods[i];
    if (p.start >= 0 && p.node >= 0 && !p.units.empty() &&
        spec.pods[static_cast<std::size_t>(p.spec_index)].workload.tenant) {
      pods.push_back(i);
    }
  }
  if (pods.empty()) return out;
  std::map<std::string, int> pool_index;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    pool_index[spec.pools[p].name] = static_cast<int>(p);
  }
  ResourceNames names;
  std::vector<PoolTemplate> templates;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    templates.push_back(advertise(spec.pools[p], static_cast<int>(p), names));
  }
  Scenario& s = out.scenario;
  s.name = "cluster-workload-pods";
  s.seed = spec.seed;
  // The cluster loader checked the workload pods' work budget (allow_large there).
  s.allow_large = true;
  s.output.percentiles = spec.percentiles;
  // The horizon: the replay's duration, else the last end of a workload pod; a pod that never
  // ended runs to it. Without either, the last start + 60 s (assumption: the time a workload
  // pod that never ends is measured for).
  Nanos horizon = spec.duration;
  if (horizon <= 0) {
    Nanos last_start = 0;
    for (std::size_t i : pods) {
      horizon = std::max(horizon, result.pods[i].end);
      last_start = std::max(last_start, result.pods[i].start);
    }
    if (horizon <= last_start) horizon = last_start + 60 * kSecond;
  }
  s.duration = horizon;
  s.warmup = std::min(spec.warmup, horizon);
  // Only the tenants' statistics are read: one utilization sample for the whole run (the
  // sampler observes, it changes no number; a day sampled every 100 ms would be 864k rows per
  // GPU).
  s.output.sample = horizon;
  std::map<std::pair<int, int>, std::size_t> gpu_of;  // (node, gpu) -> scenario GPU
  for (std::size_t i : pods) {
    const PodRecord& r = result.pods[i];
    if (r.start >= horizon) continue;  // started after the replay ended: nothing to measure
    if (only_nodes != nullptr && only_nodes->count(r.node) == 0) continue;
    const PodSpec& ps = spec.pods.at(static_cast<std::size_t>(r.spec_index));
    const int pool = pool_index.at(r.pool);
    const NodePoolSpec& pool_spec = spec.pools[static_cast<std::size_t>(pool)];
    const PoolTemplate& tpl = templates[static_cast<std::size_t>(pool)];
    // The pod's devices, in the order of its units: a GPU, or an instance of a MIG GPU.
    std::vector<std::string> devices;
    std::size_t first_gpu = 0;
    for (const int u : r.units) {
      const UnitTemplate& unit = tpl.units.at(static_cast<std::size_t>(u));
      const auto key = std::make_pair(r.node, unit.gpu);
      auto it = gpu_of.find(key);
      if (it == gpu_of.end()) {
        GpuSpec g;
        g.name = fmt::format("{}-gpu{}", r.node_name, unit.gpu);
        g.model = pool_spec.gpu_model;
        for (const UnitTemplate& x : tpl.units) {
          if (x.gpu == unit.gpu && !x.profile.empty()) g.mig.push_back(x.profile);
        }
        g.sharing = pool_spec.sharing.device_sharing;
        // The device plugin's sharing kind, when the pool did not name a device strategy.
        const SharingKind kind = pool_spec.sharing.sharing;
        if (g.sharing.is("exclusive") &&
            (kind == SharingKind::time_slicing || kind == SharingKind::mps)) {
          if (const Strategy* st =
                  find_strategy(kind == SharingKind::mps ? "mps" : "time-slicing")) {
            g.sharing = SharingSpec(*st);
          }
        }
        g.where = pool_spec.where;
        s.gpus.push_back(g);
        out.gpu_node.push_back(r.node);
        it = gpu_of.emplace(key, s.gpus.size() - 1).first;
      }
      std::string device = s.gpus[it->second].name;
      if (!unit.profile.empty()) {
        int instance = 0;
        for (int x = 0; x < u; ++x) {
          if (tpl.units[static_cast<std::size_t>(x)].gpu == unit.gpu) ++instance;
        }
        device = fmt::format("{}/{}", device, instance);
      }
      if (devices.empty()) first_gpu = it->second;
      if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
        devices.push_back(device);
      }
    }
    TenantSpec t = *ps.workload.tenant;
    t.name = r.name;
    t.replicas = 1;
    // The pod is on its GPUs from its start to its end (TenantSpec::active_from/until): its
    // neighbours are the pods placed there at the same time, not every pod the GPU ever hosted.
    t.active_from = r.start;
    t.active_until.reset();
    if (r.end > r.start && r.end < horizon) t.active_until = r.end;
    const SharingSpec& sharing = s.gpus[first_gpu].sharing;
    const bool together =
        devices.size() == 1 ||
        sharing.strategy().multi_gpu_error(static_cast<int>(devices.size())).empty();
    if (together) {
      t.device = devices.front();
      t.devices = devices;
      t.gpus = static_cast<int>(devices.size());
      s.tenants.push_back(t);
      out.tenant_gpu.push_back(first_gpu);
      out.tenant_pod.push_back(i);
      out.tenant_launches.push_back(estimated_launches(t, horizon));
      continue;
    }
    // One copy of the workload per GPU; the pod reports its first.
    for (std::size_t d = 0; d < devices.size(); ++d) {
      TenantSpec copy = t;
      if (d > 0) copy.name = fmt::format("{}@{}", r.name, devices[d]);
      copy.device = devices[d];
      copy.devices = {devices[d]};
      copy.gpus = 1;
      s.tenants.push_back(copy);
      const std::string gpu_name = devices[d].substr(0, devices[d].find('/'));
      std::size_t gpu = first_gpu;
      for (std::size_t g = 0; g < s.gpus.size(); ++g) {
        if (s.gpus[g].name == gpu_name) gpu = g;
      }
      out.tenant_gpu.push_back(gpu);
      out.tenant_pod.push_back(d == 0 ? i : kNoPod);
      out.tenant_launches.push_back(estimated_launches(copy, horizon));
    }
  }
  return out;
}

// The nodes that host workload pods, dealt into SHARDS groups by estimated work
// (WorkloadShardPlan: Longest Processing Time first).
WorkloadShardPlan plan_groups(const PodScenario& built, int shards) {
  std::map<int, double> work;  // node -> estimated launches
  std::map<int, std::size_t> pods;
  for (const int node : built.gpu_node) work[node] += 0;
  for (std::size_t t = 0; t < built.scenario.tenants.size(); ++t) {
    const int node = built.gpu_node[built.tenant_gpu[t]];
    work[node] += built.tenant_launches[t];
    if (built.tenant_pod[t] != kNoPod) ++pods[node];
  }
  std::vector<std::pair<int, double>> order(work.begin(), work.end());  // by node index
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const int groups = std::clamp(shards, 1, std::max(1, static_cast<int>(order.size())));
  WorkloadShardPlan plan;
  plan.nodes.resize(static_cast<std::size_t>(groups));
  plan.launches.assign(static_cast<std::size_t>(groups), 0.0);
  plan.pods.assign(static_cast<std::size_t>(groups), 0);
  for (const auto& [node, launches] : order) {
    const auto least = std::min_element(plan.launches.begin(), plan.launches.end());
    const auto g = static_cast<std::size_t>(least - plan.launches.begin());
    plan.nodes[g].push_back(node);
    plan.launches[g] += launches;
    plan.pods[g] += pods[node];
  }
  for (std::vector<int>& nodes : plan.nodes) std::sort(nodes.begin(), nodes.end());
  return plan;
}

// Node -> group of PLAN.
std::map<int, int> group_of_node(const WorkloadShardPlan& plan) {
  std::map<int, int> group;
  for (std::size_t g = 0; g < plan.nodes.size(); ++g) {
    for (const int node : plan.nodes[g]) group[node] = static_cast<int>(g);
  }
  return group;
}

std::map<int, int> node_groups(const PodScenario& built, int shards) {
  return group_of_node(plan_groups(built, shards));
}

// The tenants of group SHARD, simulated as their own scenario.
std::vector<PodWorkloadStats> simulate_group(const PodScenario& built,
                                             const std::map<int, int>& group, int shard,
                                             const std::atomic<bool>* interrupt = nullptr) {
  std::vector<PodWorkloadStats> stats;
  Scenario s = built.scenario;
  s.gpus.clear();
  s.tenants.clear();
  for (std::size_t g = 0; g < built.scenario.gpus.size(); ++g) {
    if (group.at(built.gpu_node[g]) == shard) s.gpus.push_back(built.scenario.gpus[g]);
  }
  std::map<std::string, std::size_t> pod_of;  // tenant name -> pod
  for (std::size_t t = 0; t < built.scenario.tenants.size(); ++t) {
    if (group.at(built.gpu_node[built.tenant_gpu[t]]) != shard) continue;
    s.tenants.push_back(built.scenario.tenants[t]);
    if (built.tenant_pod[t] != kNoPod) pod_of[s.tenants.back().name] = built.tenant_pod[t];
  }
  if (s.tenants.empty()) return stats;
  RunOptions options;  // only the tenants' statistics are read: no per-request memory
  options.record_requests = false;
  options.record_kernels = false;
  options.interrupt = interrupt;
  std::vector<std::string> series;  // per tenant: its latency series as bytes
  options.latency_series = &series;
  const RunResult run = simulate(resolve_scenario(s), options);
  if (run.status == "interrupted") throw ClusterInterrupted();
  for (std::size_t t = 0; t < run.tenants.size(); ++t) {
    const TenantResult& tr = run.tenants[t];
    const auto it = pod_of.find(tr.name);
    if (it == pod_of.end()) continue;
    PodWorkloadStats p;
    p.pod = it->second;
    p.device = tr.device;
    p.completed = tr.completed;
    p.latency_p50_ns = tr.latency.p50;
    p.latency_p99_ns = tr.latency.p99;
    p.latency_p90_ns = tr.latency.p90;
    p.latency_p999_ns = tr.latency.p999;
    p.latency_max_ns = tr.latency.max;
    p.latency_mean_ns = tr.latency.mean;
    p.latency_series = std::move(series.at(t));
    p.slo = evaluate_slo(tr).checks;
    stats.push_back(std::move(p));
  }
  return stats;
}

// A worker's answer on its pipe: "ok" or "error", then the stats (or the error's text).
void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}
using wire::put;
using wire::take;
}  // namespace

std::string encode_workload_stats(const std::vector<PodWorkloadStats>& stats) {
  std::string out;
  put(out, static_cast<std::uint64_t>(stats.size()));
  for (const PodWorkloadStats& p : stats) {
    put(out, static_cast<std::uint64_t>(p.pod));
    put(out, static_cast<std::uint64_t>(p.device.size()));
    out += p.device;
    put(out, p.completed);
    put(out, p.latency_p50_ns);
    put(out, p.latency_p99_ns);
    put(out, p.latency_p90_ns);
    put(out, p.latency_p999_ns);
    put(out, p.latency_max_ns);
    put(out, p.latency_mean_ns);
    put(out, static_cast<std::uint64_t>(p.latency_series.size()));
    out += p.latency_series;
    append_slo_checks(out, p.slo);
  }
  return out;
}
std::vector<PodWorkloadStats> decode_workload_stats(const std::string& in) {
  std::size_t at = 0;
  const std::uint64_t count = take<std::uint64_t>(in, at);
  if (count > in.size() / 80) throw std::runtime_error("workload stats: corrupt count");
  std::vector<PodWorkloadStats> stats(count);
  for (PodWorkloadStats& p : stats) {
    p.pod = take<std::uint64_t>(in, at);
    const std::size_t size = take<std::uint64_t>(in, at);
    if (at + size > in.size()) throw std::runtime_error("workload worker: short answer");
    p.device = in.substr(at, size);
    at += size;
    p.completed = take<std::int64_t>(in, at);
    p.latency_p50_ns = take<std::int64_t>(in, at);
    p.latency_p99_ns = take<std::int64_t>(in, at);
    p.latency_p90_ns = take<std::int64_t>(in, at);
    p.latency_p999_ns = take<std::int64_t>(in, at);
    p.latency_max_ns = take<std::int64_t>(in, at);
    p.latency_mean_ns = take<double>(in, at);
    const std::size_t series = take<std::uint64_t>(in, at);
    if (series > in.size() - at) throw std::runtime_error("workload worker: short answer");
    p.latency_series = in.substr(at, series);
    at += series;
    p.slo = read_slo_checks(in, at);
  }
  return stats;
}

namespace {

// A pod whose workload the device simulation runs (build_scenario's first filter).
bool placed_workload_pod(const ClusterSpec& spec, const PodRecord& p) {
  return p.start >= 0 && p.node >= 0 && !p.units.empty() &&
         spec.pods.at(static_cast<std::size_t>(p.spec_index)).workload.tenant;
}

using wire::put_text;
using wire::take_text;

}  // namespace

std::string encode_workload_placement(const ClusterSpec& spec, const ClusterResult& result) {
  std::string out;
  put(out, static_cast<std::uint64_t>(result.pods.size()));
  std::uint64_t placed = 0;
  for (const PodRecord& p : result.pods) placed += placed_workload_pod(spec, p) ? 1 : 0;
  put(out, placed);
  for (std::size_t i = 0; i < result.pods.size(); ++i) {
    const PodRecord& p = result.pods[i];
    if (!placed_workload_pod(spec, p)) continue;
    put(out, static_cast<std::uint64_t>(i));
    put(out, p.start);
    put(out, p.end);
    put(out, p.node);
    put(out, p.spec_index);
    put_text(out, p.name);
    put_text(out, p.node_name);
    put_text(out, p.pool);
    put(out, static_cast<std::uint64_t>(p.units.size()));
    for (const int u : p.units) put(out, u);
  }
  return out;
}

ClusterResult decode_workload_placement(const std::string& bytes) {
  std::size_t at = 0;
  const std::uint64_t pods = take<std::uint64_t>(bytes, at);
  const std::uint64_t placed = take<std::uint64_t>(bytes, at);
  // Each placed pod takes at least 64 bytes; the other pods are default records.
  if (placed > bytes.size() / 64 || pods < placed || pods > (std::uint64_t{1} << 32)) {
    throw std::runtime_error("workload placement: corrupt counts");
  }
  ClusterResult result;
  result.pods.resize(pods);
  for (std::uint64_t k = 0; k < placed; ++k) {
    const std::uint64_t index = take<std::uint64_t>(bytes, at);
    if (index >= pods) throw std::runtime_error("workload placement: pod index out of range");
    PodRecord& p = result.pods[index];
    p.start = take<Nanos>(bytes, at);
    p.end = take<Nanos>(bytes, at);
    p.node = take<int>(bytes, at);
    p.spec_index = take<int>(bytes, at);
    p.name = take_text(bytes, at);
    p.node_name = take_text(bytes, at);
    p.pool = take_text(bytes, at);
    const std::uint64_t units = take<std::uint64_t>(bytes, at);
    if (units > (bytes.size() - at) / sizeof(int)) {
      throw std::runtime_error("workload placement: short buffer");
    }
    p.units.resize(units);
    for (int& u : p.units) u = take<int>(bytes, at);
  }
  if (at != bytes.size()) throw std::runtime_error("workload placement: trailing bytes");
  return result;
}

namespace {

// Groups simulated by WORKERS forked processes (worker w: groups w, w + workers, ...).
std::vector<PodWorkloadStats> simulate_in_workers(const PodScenario& built,
                                                  const std::map<int, int>& group, int groups,
                                                  int workers, const std::atomic<bool>* interrupt) {
  struct Worker {
    pid_t pid;
    int fd;
  };
  std::vector<Worker> running;
  const pid_t parent = ::getpid();
  for (int w = 0; w < workers; ++w) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("workload workers: pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("workload workers: fork failed");
    if (pid == 0) {
      // A worker never outlives gpumux: killed (SIGKILL included) or gone, it takes its workers
      // with it (the second signal's _exit, an OOM kill), instead of leaving them simulating.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);  // it died before the line above
      ::close(fds[0]);
      std::string answer;
      try {
        std::vector<PodWorkloadStats> mine;
        for (int g = w; g < groups; g += workers) {
          std::vector<PodWorkloadStats> part = simulate_group(built, group, g, interrupt);
          mine.insert(mine.end(), part.begin(), part.end());
        }
        answer = "ok" + encode_workload_stats(mine);
      } catch (const UserError& e) {
        answer = std::string("ue") + e.what();
      } catch (const std::exception& e) {
        answer = std::string("er") + e.what();
      }
      write_all(fds[1], answer.data(), answer.size());
      ::close(fds[1]);
      ::_exit(0);
    }
    ::close(fds[1]);
    running.push_back(Worker{pid, fds[0]});
  }
  std::vector<PodWorkloadStats> stats;
  std::string failure;
  bool user_error = false;
  bool forwarded = false;  // the stop flag passed on to the workers (SIGTERM to this process only)
  for (const Worker& w : running) {
    std::string answer;
    char buffer[1 << 16];
    for (;;) {
      if (interrupt != nullptr && interrupt->load() && !forwarded) {
        for (const Worker& other : running) ::kill(other.pid, SIGTERM);  // not reaped yet
        forwarded = true;
      }
      struct pollfd ready {};
      ready.fd = w.fd;
      ready.events = POLLIN;
      const int polled = ::poll(&ready, 1, interrupt != nullptr && !forwarded ? 100 : -1);
      if (polled == 0 || (polled < 0 && errno == EINTR)) continue;
      const ssize_t n = ::read(w.fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(w.fd);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (answer.rfind("ok", 0) == 0) {
      const std::vector<PodWorkloadStats> part = decode_workload_stats(answer.substr(2));
      stats.insert(stats.end(), part.begin(), part.end());
    } else if (failure.empty()) {
      user_error = answer.rfind("ue", 0) == 0;
      failure = answer.size() > 2 ? answer.substr(2) : "a workload worker stopped without answer";
    }
  }
  // A signal reaches the workers too (the terminal's process group, or forwarded above; they
  // inherit the handlers), so their failure is then the interruption.
  if (interrupt != nullptr && interrupt->load()) throw ClusterInterrupted();
  if (!failure.empty()) {
    if (user_error) throw InputError(failure);
    throw std::runtime_error(failure);
  }
  return stats;
}

}  // namespace

int workload_node_groups(const ClusterSpec& spec, const ClusterResult& result) {
  const PodScenario built = build_scenario(spec, result);
  return static_cast<int>(std::set<int>(built.gpu_node.begin(), built.gpu_node.end()).size());
}

std::vector<PodWorkloadStats> simulate_workload_shard(const ClusterSpec& spec,
                                                      const ClusterResult& result, int shard,
                                                      int shards) {
  const PodScenario built = build_scenario(spec, result);
  if (built.scenario.tenants.empty()) return {};
  return simulate_group(built, node_groups(built, shards), shard);
}

WorkloadShardPlan plan_workload_shards(const ClusterSpec& spec, const ClusterResult& result,
                                       int shards) {
  const PodScenario built = build_scenario(spec, result);
  if (built.scenario.tenants.empty()) return {};
  WorkloadShardPlan plan = plan_groups(built, shards);
  plan.duration = built.scenario.duration;
  plan.warmup = built.scenario.warmup;
  return plan;
}

std::vector<PodWorkloadStats> simulate_workload_nodes(const ClusterSpec& spec,
                                                      const ClusterResult& result,
                                                      const std::vector<int>& nodes) {
  const std::set<int> only(nodes.begin(), nodes.end());
  const PodScenario built = build_scenario(spec, result, &only);
  if (built.scenario.tenants.empty()) return {};
  std::map<int, int> group;
  for (const int node : built.gpu_node) group[node] = 0;
  return simulate_group(built, group, 0);
}

void apply_workload_stats(const std::vector<PodWorkloadStats>& stats, ClusterResult& result) {
  for (const PodWorkloadStats& p : stats) {
    PodRecord& r = result.pods.at(p.pod);
    r.workload_device = p.device;
    r.workload_completed = p.completed;
    r.latency_p50_ns = p.latency_p50_ns;
    r.latency_p99_ns = p.latency_p99_ns;
    r.latency_p90_ns = p.latency_p90_ns;
    r.latency_p999_ns = p.latency_p999_ns;
    r.latency_max_ns = p.latency_max_ns;
    r.latency_mean_ns = p.latency_mean_ns;
    r.latency_series = p.latency_series;
    r.workload_slo = p.slo;
  }
}

Percentiles merge_latency_series(const std::vector<std::string>& series) {
  Percentiles merged(PercentileMethod::exact);
  for (const std::string& bytes : series) {
    if (bytes.empty()) continue;
    std::size_t at = 0;
    const Percentiles one = Percentiles::decode(bytes, at);
    if (at != bytes.size()) throw std::runtime_error("latency series: trailing bytes");
    merged.merge(one);
  }
  return merged;
}

void apply_workload_window(const WorkloadShardPlan& plan, ClusterResult& result) {
  if (plan.nodes.empty()) return;
  result.workload_duration = plan.duration;
  result.workload_warmup = plan.warmup;
}

void simulate_workload_pods(const ClusterSpec& spec, ClusterResult& result,
                            const WorkloadPodOptions& options) {
  const PodScenario built = build_scenario(spec, result);
  if (built.scenario.tenants.empty()) return;
  result.workload_duration = built.scenario.duration;
  result.workload_warmup = built.scenario.warmup;
  const int workers = std::max(1, options.workers);
  const int shards = options.shards > 0 ? options.shards : workers;
  const std::map<int, int> group = node_groups(built, shards);
  int groups = 0;
  for (const auto& [node, g] : group) groups = std::max(groups, g + 1);
  if (workers > 1 && groups > 1) {
    apply_workload_stats(
        simulate_in_workers(built, group, groups, std::min(workers, groups), options.interrupt),
        result);
    return;
  }
  for (int g = 0; g < groups; ++g) {
    apply_workload_stats(simulate_group(built, group, g, options.interrupt), result);
  }
}

}  // namespace gpumux::cluster
