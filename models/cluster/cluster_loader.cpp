#include "models/cluster/cluster_loader.hpp"

#include "models/cluster/cluster_loader_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>
#include <set>

#include "models/cluster/device_plugin_config.hpp"
#include "models/cluster/gke_config.hpp"
#include "models/cluster/input_files.hpp"
#include "models/cluster/mig_parted_config.hpp"
#include "models/cluster/openb_reader.hpp"
#include "models/cluster/quantity.hpp"
#include "models/config/profile_loader.hpp"
#include "models/scenario/override_tree.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/pod_workload.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::cluster {
namespace {

using namespace yaml;
using loader_detail::autoscaler_of;
using loader_detail::cost_per_hour_of;
using loader_detail::pool_of;
using loader_detail::scheduler_of;

// Stated maxima, far beyond any real cluster, that keep the expanded spec in memory.
constexpr int kMaxPodsPerEntry = 1'000'000;  // count or arrivals.count of one pods[] entry
// --- pods ---

void requests_of(Context& ctx, const Field& field, PodSpec& pod) {
  ctx.record(field);
  if (!field.node.IsMap()) {
    ctx.fail(field,
             fmt::format("expected a mapping of resource: quantity, got {}", kind_of(field.node)));
  }
  std::set<std::string> seen;
  for (auto it = field.node.begin(); it != field.node.end(); ++it) {
    const std::string key = it->first.Scalar();
    const Field key_field{it->first, child_path(field.path, key), it->first.Mark()};
    const Field value{it->second, key_field.path,
                      it->second.Mark().line >= 0 ? it->second.Mark() : it->first.Mark()};
    if (!seen.insert(key).second) ctx.fail(key_field, fmt::format("duplicate key '{}'", key));
    if (key == "cpu") {
      pod.cpu_milli = cpu_millicores_of(ctx, value);
    } else if (key == "memory") {
      pod.memory_bytes = memory_bytes_of(ctx, value);
    } else if (key.find('/') != std::string::npos) {
      const std::int64_t count = resource_count_of(ctx, value);
      if (key.rfind("nvidia.com/mig-", 0) == 0) {
        const std::string profile = key.substr(std::string("nvidia.com/mig-").size());
        if (profile.find("g.") == std::string::npos || profile.find("gb") == std::string::npos) {
          ctx.fail(key_field,
                   fmt::format("'{}' is not a MIG resource name (nvidia.com/mig-1g.10gb)", key));
        }
      }
      if (count > 0) pod.gpu_resources[key] = count;
    } else {
      ctx.fail(key_field, fmt::format("unknown resource '{}'{}; requests take cpu, memory and "
                                      "extended resources such as nvidia.com/gpu",
                                      key, hint(key, {"cpu", "memory"})));
    }
  }
}

struct PodEntry {
  PodSpec pod;
  int count = 1;
  // Generated arrivals (`arrivals:`): process, rate, count, start.
  bool generated = false;
  bool poisson = true;
  double rate_per_s = 0;
  Nanos start = 0;
  SourceLocation count_where;     // `count` or `arrivals.count` (else the entry): the work budget
  SourceLocation arrivals_where;  // `arrivals:`, for a drawn arrival beyond the int64 horizon
  SourceLocation duration_where;  // `duration:`, for an arrival + duration beyond it
};

PodEntry pod_entry_of(Context& ctx, const Field& field) {
  const MapReader map(
      ctx, field,
      {"name", "class", "arrival", "arrivals", "count", "requests", "gpu_milli", "gpu_models",
       "priority", "gang", "gang_bytes_per_step", "gang_steps", "gpu_utilization", "gpu_memory",
       "duration", "workload", "nodeSelector", "tolerations"},
      {{"limits", "requests"},
       {"cpu", "requests"},
       {"memory", "requests"},
       {"node_selector", "nodeSelector"}});
  PodEntry e;
  PodSpec& pod = e.pod;
  pod.where = ctx.at(field.path, field.mark);
  e.count_where = pod.where;
  pod.name = name_of(ctx, map.require("name"));
  pod.pod_class = pod.name;
  if (const auto f = map.get("class")) pod.pod_class = non_empty_text(ctx, *f);
  const auto arrival = map.get("arrival");
  const auto arrivals = map.get("arrivals");
  if (arrival && arrivals) ctx.fail(*arrivals, "give arrival (one time) or arrivals, not both");
  if (arrival) pod.arrival = duration_of(ctx, *arrival);
  if (const auto f = map.get("count")) {
    if (arrivals) ctx.fail(*f, "with arrivals, the number of pods is arrivals.count");
    e.count = int_of(ctx, *f, 1);
    e.count_where = ctx.at(f->path, f->mark);
    if (e.count > kMaxPodsPerEntry) {
      ctx.fail(*f, fmt::format("at most {} pods per entry, got {}", kMaxPodsPerEntry, e.count));
    }
  }
  if (arrivals) {
    const MapReader a(ctx, *arrivals, {"process", "rate", "count", "start"});
    e.generated = true;
    e.arrivals_where = ctx.at(arrivals->path, arrivals->mark);
    if (const auto f = a.get("process")) {
      e.poisson = choice_of<bool>(ctx, *f, {{"poisson", true}, {"constant", false}},
                                  {"poisson", "constant"}, "arrival process");
    }
    e.rate_per_s = rate_of(ctx, a.require("rate"));
    const Field count = a.require("count");
    e.count = int_of(ctx, count, 1);
    e.count_where = ctx.at(count.path, count.mark);
    if (e.count > kMaxPodsPerEntry) {
      ctx.fail(count, fmt::format("at most {} pods per entry, got {}", kMaxPodsPerEntry, e.count));
    }
    if (const auto f = a.get("start")) e.start = duration_of(ctx, *f);
  }
  if (const auto f = map.get("requests")) requests_of(ctx, *f, pod);
  if (const auto f = map.get("gpu_milli")) {
    pod.gpu_milli = int_of(ctx, *f, 1);
    if (pod.gpu_milli >= kMilliPerGpu) {
      ctx.fail(*f, fmt::format("a share of one GPU is 1-{} milli-GPUs; ask for whole GPUs with "
                               "nvidia.com/gpu",
                               kMilliPerGpu - 1));
    }
    const bool one_gpu_or_none =
        pod.gpu_resources.empty() ||
        (pod.gpu_resources.size() == 1 && pod.gpu_resources.count("nvidia.com/gpu") == 1 &&
         pod.gpu_resources.at("nvidia.com/gpu") == 1);
    if (!one_gpu_or_none) {
      ctx.fail(*f,
               "gpu_milli is a share of one GPU: request nvidia.com/gpu: 1 or no GPU "
               "resource with it");
    }
    pod.gpu_resources["nvidia.com/gpu"] = 1;
  }
  if (const auto f = map.get("gpu_models")) {
    if (f->node.IsSequence()) {
      for (const Field& item : list_of(ctx, *f, false)) {
        pod.gpu_models.push_back(non_empty_text(ctx, item));
      }
    } else {
      pod.gpu_models.push_back(non_empty_text(ctx, *f));
    }
  }
  if (const auto f = map.get("nodeSelector")) {
    ctx.record(*f);
    if (!f->node.IsMap()) {
      ctx.fail(*f, fmt::format("expected a mapping of label: value, got {}", kind_of(f->node)));
    }
    for (auto it = f->node.begin(); it != f->node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const Field value{it->second, child_path(f->path, key),
                        it->second.Mark().line >= 0 ? it->second.Mark() : it->first.Mark()};
      pod.node_selector[key] = text_of(ctx, value);
    }
  }
  if (const auto f = map.get("tolerations")) {
    for (const Field& item : list_of(ctx, *f, false)) {
      const MapReader t(ctx, item, {"key", "operator", "value", "effect"});
      Toleration tol;
      if (const auto k = t.get("key")) tol.key = text_of(ctx, *k);
      if (const auto o = t.get("operator")) {
        tol.op = choice_of<std::string>(ctx, *o, {{"Equal", "Equal"}, {"Exists", "Exists"}},
                                        {"Equal", "Exists"}, "toleration operator");
      }
      if (const auto v = t.get("value")) tol.value = text_of(ctx, *v);
      if (const auto e = t.get("effect")) tol.effect = text_of(ctx, *e);
      if (tol.key.empty() && tol.op != "Exists") {
        ctx.fail(item,
                 "a toleration without key needs operator: Exists (it tolerates every taint)");
      }
      pod.tolerations.push_back(tol);
    }
  }
  if (const auto f = map.get("priority")) {
    const std::int64_t value = integer_of(ctx, *f, -2'000'000'000);
    // source: Kubernetes PriorityClass values are 32-bit integers up to 1e9 for user classes
    // (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/).
    if (value > 1'000'000'000) ctx.fail(*f, fmt::format("at most 1000000000, got {}", value));
    pod.priority = static_cast<int>(value);
  }
  if (const auto f = map.get("gang")) {
    pod.gang = int_of(ctx, *f, 1);
    if (e.count % pod.gang != 0) {
      ctx.fail(*f, fmt::format("gang {} must divide the number of pods ({}): each gang is {} "
                               "identical pods",
                               pod.gang, e.count, pod.gang));
    }
  }
  if (const auto f = map.get("gang_bytes_per_step")) pod.gang_bytes_per_step = size_of(ctx, *f);
  if (const auto f = map.get("gang_steps")) pod.gang_steps = integer_of(ctx, *f, 0);
  if (const auto f = map.get("gpu_utilization")) {
    pod.gpu_utilization = fraction_of(ctx, *f, 0.0, false, 1.0);
  }
  if (const auto f = map.get("gpu_memory")) pod.gpu_memory_bytes = memory_bytes_of(ctx, *f);
  const auto duration = map.get("duration");
  const auto workload = map.get("workload");
  if (duration && workload) ctx.fail(*workload, "give duration or workload, not both");
  if (duration) {
    pod.workload.duration = positive_duration_of(ctx, *duration);
    e.duration_where = ctx.at(duration->path, duration->mark);
  }
  if (workload) pod.workload.tenant = read_pod_workload(ctx, *workload, pod.name);
  if (!duration && !workload) {
    ctx.fail(Field{field.node, child_path(field.path, "duration"), field.mark},
             "missing required key 'duration' (or `workload`): what the pod runs once placed");
  }
  return e;
}

// Expands one pods[] entry into its pods: NAME-0 .. NAME-(N-1) when more than one; arrivals
// drawn from a stream seeded by the scenario seed and the entry index.
void expand(const PodEntry& e, std::uint64_t seed, std::size_t entry_index,
            std::vector<PodSpec>& out) {
  std::mt19937_64 random(seed ^ (0x9E3779B97F4A7C15ULL * (entry_index + 1)));
  std::exponential_distribution<double> gap(e.generated ? e.rate_per_s : 1.0);
  double time_ns = static_cast<double>(e.start);
  for (int k = 0; k < e.count; ++k) {
    PodSpec pod = e.pod;
    if (e.count > 1) pod.name = fmt::format("{}-{}", e.pod.name, k);
    if (pod.workload.tenant) pod.workload.tenant->name = pod.name;
    if (e.generated) {
      if (k > 0) time_ns += e.poisson ? gap(random) * 1e9 : 1e9 / e.rate_per_s;
      if (!(time_ns < static_cast<double>(checked::kMaxInt64))) {
        throw InputError(e.arrivals_where,
                         fmt::format("arrival {} of {} falls beyond {} s (int64 nanoseconds, "
                                     "about 292 years): raise rate or lower count",
                                     k + 1, e.count, checked::kMaxInt64 / kSecond));
      }
      pod.arrival = checked::nanos_saturating(time_ns);
    }
    // The pod's end, arrival + duration, must be a time too (the replay never wraps it).
    if (pod.workload.duration && *pod.workload.duration > checked::kMaxInt64 - pod.arrival) {
      throw InputError(e.duration_where.file.empty() ? pod.where : e.duration_where,
                       fmt::format("pod {}: arrival ({} s) + duration ({} s) is beyond {} s "
                                   "(int64 nanoseconds, about 292 years)",
                                   pod.name, pod.arrival / kSecond,
                                   *pod.workload.duration / kSecond, checked::kMaxInt64 / kSecond));
    }
    out.push_back(std::move(pod));
  }
}

void openb_of(Context& ctx, const Field& field, ClusterSpec& spec, bool allow_large) {
  const MapReader map(ctx, field, {"nodes", "pods", "cost_per_hour"});
  const Field nodes = map.require("nodes");
  const Field pods = map.require("pods");
  spec.pools = load_openb_nodes(ctx.resolve_path(nodes, non_empty_text(ctx, nodes)).string(),
                                ctx.at(nodes.path, nodes.mark));
  spec.pods = load_openb_pods(
      ctx.resolve_path(pods, non_empty_text(ctx, pods)).string(), ctx.at(pods.path, pods.mark),
      allow_large ? SIZE_MAX : static_cast<std::size_t>(kWorkBudgetClusterPods));
  if (const auto f = map.get("cost_per_hour")) {
    ctx.record(*f);
    if (!f->node.IsMap()) {
      ctx.fail(*f, fmt::format("expected a mapping of GPU model: price per node-hour, got {}",
                               kind_of(f->node)));
    }
    for (auto it = f->node.begin(); it != f->node.end(); ++it) {
      const std::string model = it->first.Scalar();
      const Field value{it->second, child_path(f->path, model),
                        it->second.Mark().line >= 0 ? it->second.Mark() : it->first.Mark()};
      const double price = cost_per_hour_of(ctx, value);
      bool used = false;
      for (NodePoolSpec& pool : spec.pools) {
        if (pool.gpu_model == model) {
          pool.cost_per_hour = price;
          used = true;
        }
      }
      if (!used) {
        std::set<std::string> models;
        for (const NodePoolSpec& pool : spec.pools) models.insert(pool.gpu_model);
        ctx.fail(Field{it->first, value.path, it->first.Mark()},
                 fmt::format("no node of model '{}' in the node list; models: {}", model,
                             join({models.begin(), models.end()})));
      }
    }
  }
}

std::string sci(double value) { return fmt::format("{:.3g}", value); }

// The work budget's pods (models/scenario/work_estimate.hpp): the sum over all entries, refused
// at the entry with the most pods before any is expanded.
void check_pod_budget(const std::vector<PodEntry>& entries, bool allow_large) {
  double total = 0;
  const PodEntry* largest = nullptr;
  for (const PodEntry& e : entries) {
    total += e.count;
    if (largest == nullptr || e.count > largest->count) largest = &e;
  }
  if (allow_large || total <= kWorkBudgetClusterPods) return;
  throw InputError(
      largest->count_where,
      fmt::format("the cluster asks for {} pods over {} pods[] entries (budget {} pods, "
                  "about {} GB at {} B per pod); lower count or set allow_large: true "
                  "to run it anyway",
                  sci(total), entries.size(), sci(kWorkBudgetClusterPods),
                  sci(kWorkBudgetClusterPods * kClusterBytesPerPod / 1e9),
                  sci(kClusterBytesPerPod)));
}

// The time a workload pod is measured for: the replay's duration, else the last arrival + 60 s
// (models/cluster/workload_pods.hpp; arrival stands in for the start, not known before the
// replay).
constexpr Nanos kWorkloadTail = 60 * kSecond;

// The work budget of the workload pods: each runs its tenant from its arrival to the horizon;
// the requests and launches of all of them, estimated as for a scenario's tenants
// (estimate_work, linear in the time: one estimate per entry over its pods' summed time).
// A catalog workload's kernels are built on the GPU a pod lands on (resolve_scenario), unknown
// here: the estimate takes each pool's GPU and keeps the most work (the fastest GPU gives a
// closed loop the most requests). Without kernels a closed loop would be estimated at one
// request per microsecond.
WorkEstimate pod_work(const Scenario& one, const std::vector<NodePoolSpec>& pools) {
  const TenantSpec& tenant = one.tenants.front();
  if (!tenant.workload.catalog || !tenant.workload.kernels.empty()) return estimate_work(one, {});
  WorkEstimate most;
  bool any = false;
  std::set<std::string> seen;
  for (const NodePoolSpec& pool : pools) {
    if (pool.gpus_per_node == 0 || !seen.insert(pool.gpu_model).second) continue;
    try {
      Scenario built = one;
      apply_catalog(built, built.tenants.front(), load_device_profile(pool.gpu_model));
      const WorkEstimate w = estimate_work(built, {});
      if (!any || w.launches > most.launches) most = w;
      any = true;
    } catch (const InputError&) {
      // A GPU the entry cannot run on (or no profile: an openb model string): not this one.
    }
  }
  return any ? most : estimate_work(one, {});
}

/// The work budget's refusal, located at ENTRY's `workload` key.
[[noreturn]] void refuse_workload(const PodEntry& entry, const std::string& why) {
  SourceLocation where = entry.pod.where;
  where.key_path += ".workload";
  throw InputError(where, why);
}

void check_workload_budget(const std::vector<PodEntry>& entries,
                           const std::vector<std::vector<Nanos>>& arrivals, Nanos horizon,
                           const std::vector<NodePoolSpec>& pools, bool allow_large) {
  if (allow_large) return;
  double requests = 0;
  double launches = 0;
  const PodEntry* worst = nullptr;
  double worst_launches = -1;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const PodEntry& e = entries[i];
    if (!e.pod.workload.tenant) continue;
    double active_ns = 0;
    for (const Nanos a : arrivals[i])
      active_ns += static_cast<double>(std::max<Nanos>(0, horizon - a));
    Scenario one;
    one.duration = static_cast<Nanos>(std::min(active_ns, 9.2e18));
    one.tenants.push_back(*e.pod.workload.tenant);
    const WorkEstimate w = pod_work(one, pools);
    requests += w.requests;
    launches += w.launches;
    if (w.launches > worst_launches) {
      worst_launches = w.launches;
      worst = &e;
    }
  }
  // Samples: the pods' GPUs and tenants are sampled once per horizon (workload_pods.cpp) until
  // the last request drains, so one pod whose requests drain for years (a kernel of 100000h, a
  // typo for 100000us) made every series record ~1e8 rows: minutes of run. Estimated as a
  // scenario's (estimate_work) with the pods' sampling: the longest drain over every series.
  double pods = 0;
  double rows = 0;  // per series: 1 + the longest drain / horizon
  const PodEntry* drains = nullptr;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const PodEntry& e = entries[i];
    if (!e.pod.workload.tenant || arrivals[i].empty()) continue;
    pods += static_cast<double>(arrivals[i].size());
    Scenario one;
    one.duration = std::max<Nanos>(1, horizon);
    one.output.sample = one.duration;
    one.tenants.push_back(*e.pod.workload.tenant);
    const double entry_rows = pod_work(one, pools).samples;  // one series
    if (entry_rows > rows) {
      rows = entry_rows;
      drains = &e;
    }
  }
  const double samples = 2 * pods * rows;  // a tenant and (at most) a GPU series per pod
  if (samples > kWorkBudgetSamples) {
    refuse_workload(
        *drains, fmt::format("the workload pods would record about {} timeseries samples (budget "
                             "{}): this entry's requests take about {} s to drain after the "
                             "replay's {} s (a kernel duration typo for a shorter unit?); set "
                             "allow_large: true to run it anyway",
                             sci(samples), sci(kWorkBudgetSamples),
                             sci((rows - 1) * static_cast<double>(horizon) / kSecond),
                             sci(static_cast<double>(horizon) / kSecond)));
  }
  if (requests <= kWorkBudgetRequests && launches <= kWorkBudgetLaunches) return;
  refuse_workload(
      *worst, fmt::format("the workload pods ask for about {} requests and {} kernel "
                          "launches from their arrival to {} s (budget {} requests, {} "
                          "launches); lower the rate, the pod count or the duration, or "
                          "set allow_large: true to run it anyway",
                          sci(requests), sci(launches), sci(static_cast<double>(horizon) / kSecond),
                          sci(kWorkBudgetRequests), sci(kWorkBudgetLaunches)));
}

ClusterSpec read_cluster(Context& ctx, const Field& field, std::uint64_t seed, bool allow_large) {
  const MapReader map(ctx, field,
                      {"pools", "pods", "openb", "scheduler", "autoscaler", "duration", "warmup",
                       "sample", "percentiles"});
  ClusterSpec spec;
  spec.where = ctx.at(field.path, field.mark);
  spec.seed = seed;
  std::vector<PodEntry> entries;
  std::vector<std::vector<Nanos>> entry_arrivals;
  if (const auto f = map.get("openb")) {
    for (const char* key : {"pools", "pods"}) {
      if (const auto other = map.get(key)) {
        ctx.fail(*other, fmt::format("openb gives the {}; drop `{}` or `openb`", key, key));
      }
    }
    openb_of(ctx, *f, spec, allow_large);
  } else {
    std::set<std::string> pool_names;
    for (const Field& item : list_of(ctx, map.require("pools"), true)) {
      NodePoolSpec pool = pool_of(ctx, item);
      if (!pool_names.insert(pool.name).second) {
        ctx.fail_at(child_path(item.path, "name"),
                    fmt::format("duplicate pool name '{}'", pool.name));
      }
      spec.pools.push_back(std::move(pool));
    }
    std::set<std::string> pod_names;
    const std::vector<Field> items = list_of(ctx, map.require("pods"), true);
    for (const Field& item : items) entries.push_back(pod_entry_of(ctx, item));
    check_pod_budget(entries, allow_large);
    for (std::size_t index = 0; index < entries.size(); ++index) {
      const std::size_t first = spec.pods.size();
      expand(entries[index], seed, index, spec.pods);
      entry_arrivals.emplace_back();
      for (std::size_t i = first; i < spec.pods.size(); ++i) {
        if (!pod_names.insert(spec.pods[i].name).second) {
          ctx.fail_at(child_path(items[index].path, "name"),
                      fmt::format("duplicate pod name '{}' (count/arrivals N > 1 names copies "
                                  "NAME-0 .. NAME-(N-1))",
                                  spec.pods[i].name));
        }
        if (spec.pods[i].workload.tenant) entry_arrivals.back().push_back(spec.pods[i].arrival);
      }
    }
    spec.pods = sorted_by_arrival(std::move(spec.pods));
  }
  if (const auto f = map.get("scheduler")) spec.scheduler = scheduler_of(ctx, *f);
  if (const auto f = map.get("autoscaler")) spec.autoscaler = autoscaler_of(ctx, *f);
  if (const auto f = map.get("duration")) spec.duration = positive_duration_of(ctx, *f);
  if (const auto f = map.get("warmup")) spec.warmup = duration_of(ctx, *f);
  add_gke_gpu_taints(spec.pools);
  const Nanos last_arrival = spec.pods.empty() ? 0 : spec.pods.back().arrival;
  if (const auto f = map.get("sample")) {
    spec.sample = positive_duration_of(ctx, *f);
    // One sample every `sample` to the horizon (models/cluster/cluster_run.cpp), each a row kept
    // to the end: the work budget's timeseries samples.
    const Nanos horizon = spec.duration > 0 ? spec.duration : last_arrival;
    const double samples = static_cast<double>(horizon / spec.sample) + 1;
    if (!allow_large && samples > kWorkBudgetSamples) {
      ctx.fail(*f, fmt::format("about {} samples over {} s (budget {}); raise sample or set "
                               "allow_large: true to run it anyway",
                               sci(samples), sci(static_cast<double>(horizon) / kSecond),
                               sci(kWorkBudgetSamples)));
    }
  }
  if (const auto f = map.get("percentiles")) {
    spec.percentiles =
        choice_of<PercentileMethod>(ctx, *f,
                                    {{"auto", PercentileMethod::automatic},
                                     {"exact", PercentileMethod::exact},
                                     {"sketch", PercentileMethod::sketch}},
                                    {"auto", "exact", "sketch"}, "percentile method");
  }
  const Nanos horizon =
      spec.duration > 0 ? spec.duration : checked::add_saturating(last_arrival, kWorkloadTail);
  if (!entries.empty()) {
    check_workload_budget(entries, entry_arrivals, horizon, spec.pools, allow_large);
  }
  return spec;
}

// The scenario's `allow_large` (default false), read without the scenario's schema.
bool allow_large_of_root(Context& ctx, const YAML::Node& root) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "allow_large") {
      return bool_of(ctx, Field{it->second, "allow_large", it->second.Mark()});
    }
  }
  return false;
}

// The scenario's `seed` (default 1, as the scenario loader), read without the scenario's schema.
std::uint64_t seed_of_root(Context& ctx, const YAML::Node& root) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "seed") {
      return yaml::seed_of(ctx, Field{it->second, "seed", it->second.Mark()});
    }
  }
  return 1;
}

// The overrides for the cluster: `cluster.*` (and `seed`, which draws generated arrivals when
// `with_seed`). The others edit the scenario's own keys, which the scenario loader applies.
std::vector<Override> cluster_overrides(const std::vector<Override>& overrides, bool with_seed) {
  std::vector<Override> selected;
  for (const Override& o : overrides) {
    if (o.key_path.rfind("cluster.", 0) == 0 || (with_seed && o.key_path == "seed")) {
      selected.push_back(o);
    }
  }
  return selected;
}

}  // namespace

ClusterSpec load_cluster_text(const std::string& yaml_text, const std::string& source_name,
                              const std::vector<Override>& overrides) {
  YAML::Node root = yaml::parse(yaml_text, source_name);
  std::map<std::string, SourceLocation> locations;
  Context ctx(source_name, locations);
  const YAML::Node& read_only = root;
  if (!root.IsMap() || !read_only["cluster"]) {
    throw InputError(SourceLocation{source_name, 0, 0, "cluster"},
                     "no `cluster:` section in this scenario");
  }
  const YAML::Node cluster = read_only["cluster"];
  std::vector<Override> scenario_level = cluster_overrides(overrides, true);
  if (cluster.IsScalar()) {  // `cluster: FILE`: cluster.* edit that file (below)
    std::erase_if(scenario_level, [](const Override& o) { return o.key_path != "seed"; });
  }
  apply_overrides(root, ctx, scenario_level);
  const std::uint64_t seed = seed_of_root(ctx, root);
  const bool allow_large = allow_large_of_root(ctx, root);
  // Find the key's own mark for the field (the value's mark when there is one).
  YAML::Mark mark;
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "cluster") {
      mark = it->second.Mark().line >= 0 ? it->second.Mark() : it->first.Mark();
    }
  }
  const Field field{read_only["cluster"], "cluster", mark};
  if (!field.node.IsScalar()) return read_cluster(ctx, field, seed, allow_large);

  // `cluster: FILE`: the cluster file holds the mapping at its root or under `cluster:`.
  const std::string path = ctx.resolve_path(field, non_empty_text(ctx, field)).string();
  const std::string text = detail::read_text_file(path, "cluster file", ctx.at(field.path, mark));
  YAML::Node file_root = yaml::parse(text, path);
  std::map<std::string, SourceLocation> file_locations;
  Context file_ctx(path, file_locations);
  const YAML::Node& file_read_only = file_root;
  const bool wrapped = file_root.IsMap() && file_read_only["cluster"];
  apply_overrides(file_root, file_ctx, cluster_overrides(overrides, false),
                  wrapped ? "" : "cluster.");
  const YAML::Node body = wrapped ? YAML::Node(file_read_only["cluster"]) : file_root;
  return read_cluster(file_ctx, Field{body, wrapped ? "cluster" : "", body.Mark()}, seed,
                      allow_large);
}

ClusterSpec load_cluster(const std::string& scenario_file, const std::vector<Override>& overrides) {
  return load_cluster_text(detail::read_text_file(scenario_file, "scenario file"), scenario_file,
                           overrides);
}

}  // namespace gpumux::cluster
