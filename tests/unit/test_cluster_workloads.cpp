// Workload pods through the device models (models/cluster/workload_pods.hpp): split by node into
// groups simulated as scenarios of their own, in this process or in worker processes, every
// pod's numbers equal the one-scenario run's; a multi-GPU pod runs on every GPU it holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/workload_pods.hpp"

namespace gpumux::cluster {
namespace {

// Four pools of two 2-GPU nodes: dedicated, MIG (all-balanced), time-sliced x2, MPS x2; pods of
// every kind, a 2-GPU pod on the dedicated pool and on the time-sliced one, pods that start
// late (a gang of two) and one that ends early (its duration).
const char* kFleet = R"(
name: small-fleet
seed: 5
cluster:
  duration: 3s
  pools:
    - {name: dedicated, count: 2, gpu: h100-sxm-80gb, gpus_per_node: 2, cpu: "64", memory: 512Gi}
    - name: mig
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      cpu: "64"
      memory: 512Gi
      sharing:
        device_plugin: {version: v1, flags: {migStrategy: mixed}}
        mig_parted:
          file: MIGPARTED
          config: all-balanced
    - name: ts
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      cpu: "64"
      memory: 512Gi
      sharing:
        device_plugin:
          version: v1
          sharing:
            timeSlicing:
              resources: [{name: nvidia.com/gpu, rename: nvidia.com/gpu.shared, replicas: 2}]
    - name: mps
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      cpu: "64"
      memory: 512Gi
      sharing:
        device_plugin:
          version: v1
          sharing:
            mps:
              resources: [{name: nvidia.com/gpu, rename: nvidia.com/gpu.mps, replicas: 2}]
  scheduler: {policy: worst-fit}  # spreads the time-sliced pods: "wide" then spans two GPUs
  pods:
    - name: pair
      arrival: 0s
      requests: {cpu: "1", nvidia.com/gpu: 2}
      workload:
        memory: 4GiB
        workload:
          arrivals: {process: poisson, rate: 200/s}
          request:
            kernels:
              - {name: step, duration: 500us, sm_fraction: 1.0}
              - {name: allreduce, duration: 100us, sm_fraction: 0.2, memory_bound: 1.0, collective: true}
    - {name: solo, count: 2, arrival: 0s, requests: {cpu: "1", nvidia.com/gpu: 1}, workload: &w
        {memory: 4GiB, workload: {arrivals: {process: poisson, rate: 300/s}, request: {kernels: [
          {name: a, duration: {lognormal: {median: 400us, sigma: 0.5}}, sm_fraction: 0.7, memory_bound: 0.4},
          {name: b, duration: 200us, sm_fraction: 1.0, memory_bound: 0.2}]}}}}
    - {name: small, count: 6, arrival: 0s, requests: {cpu: "1", nvidia.com/mig-1g.10gb: 1}, workload: *w}
    - {name: mid, count: 2, arrival: 500ms, requests: {cpu: "1", nvidia.com/mig-3g.40gb: 1}, workload: *w}
    - {name: shared, count: 4, arrival: 0s, requests: {cpu: "1", nvidia.com/gpu.shared: 1}, workload: *w}
    - {name: wide, arrival: 100ms, requests: {cpu: "1", nvidia.com/gpu.shared: 2}, workload: *w}
    - {name: client, count: 6, arrival: 0s, requests: {cpu: "1", nvidia.com/gpu.mps: 1}, workload: *w}
    - {name: gang, count: 2, gang: 2, arrival: 1s, requests: {cpu: "1", nvidia.com/gpu.mps: 1}, workload: *w}
)";

std::string fleet_yaml() {
  std::string yaml = kFleet;
  const std::string path = std::string(GPUMUX_SOURCE_DIR) + "/scenarios/cluster/mig-parted.yaml";
  yaml.replace(yaml.find("MIGPARTED"), 9, path);
  return yaml;
}

// name -> (device, completed, p50, p99, p90, p999, max, mean, latency series bytes) of every
// simulated workload pod.
using PodNumbers =
    std::map<std::string,
             std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                        std::int64_t, std::int64_t, double, std::string>>;

PodNumbers numbers_of(const ClusterResult& result) {
  PodNumbers numbers;
  for (const PodRecord& p : result.pods) {
    if (p.workload_device.empty()) continue;
    numbers[p.name] = {p.workload_device, p.workload_completed, p.latency_p50_ns,
                       p.latency_p99_ns,  p.latency_p90_ns,     p.latency_p999_ns,
                       p.latency_max_ns,  p.latency_mean_ns,    p.latency_series};
  }
  return numbers;
}

ClusterResult simulated(const ClusterSpec& spec, int shards, int workers) {
  ClusterResult result = run_cluster(spec);
  WorkloadPodOptions options;
  options.shards = shards;
  options.workers = workers;
  simulate_workload_pods(spec, result, options);
  return result;
}

PodNumbers run(const ClusterSpec& spec, int shards, int workers) {
  return numbers_of(simulated(spec, shards, workers));
}

TEST(ClusterWorkloads, SplitByNodeGivesEveryPodTheSameNumbers) {
  const ClusterSpec spec = load_cluster_text(fleet_yaml(), "small-fleet.yaml");
  const PodNumbers one = run(spec, 1, 1);
  ASSERT_EQ(one.size(), 24U);  // every pod placed and simulated
  for (const auto& [name, n] : one) {
    EXPECT_GT(std::get<1>(n), 100) << name;  // each completed requests (~300/s x 2-3 s)
  }
  const ClusterResult placed = run_cluster(spec);
  EXPECT_EQ(workload_node_groups(spec, placed), 8);
  // Node groups simulated one after the other, and in worker processes (more groups than
  // workers, and as many): the same numbers, bit for bit.
  for (const auto& [shards, workers] :
       std::vector<std::pair<int, int>>{{2, 1}, {8, 1}, {3, 2}, {8, 8}, {0, 3}}) {
    EXPECT_EQ(run(spec, shards, workers), one) << shards << " groups, " << workers << " workers";
  }
  // A shard alone is that group's part of the whole.
  std::size_t pods = 0;
  for (int g = 0; g < 4; ++g) {
    for (const PodWorkloadStats& s : simulate_workload_shard(spec, placed, g, 4)) {
      const auto& n = one.at(placed.pods.at(s.pod).name);
      EXPECT_EQ(s.completed, std::get<1>(n));
      EXPECT_EQ(s.latency_p99_ns, std::get<3>(n));
      ++pods;
    }
  }
  EXPECT_EQ(pods, one.size());
}

TEST(ClusterWorkloads, AMultiGpuPodRunsOnEveryGpuItHolds) {
  const ClusterSpec spec = load_cluster_text(fleet_yaml(), "small-fleet.yaml");
  const PodNumbers numbers = run(spec, 1, 1);
  // The data-parallel pod: one tenant on both GPUs of its dedicated node ("NODE-gpu0,NODE-gpu1"),
  // each request a step on both and then the collective: at least 500 + 100 us, two launches.
  const auto& pair = numbers.at("pair");
  const std::string& devices = std::get<0>(pair);
  ASSERT_NE(devices.find(','), std::string::npos) << devices;
  EXPECT_EQ(devices.substr(0, devices.find('-')), "dedicated");
  EXPECT_GT(std::get<1>(pair), 300);
  EXPECT_GE(std::get<2>(pair), 600 * kMicrosecond);
  // Time-slicing refuses multi-GPU tenants (the device plugin refuses such requests): the pod's
  // workload runs once per GPU it holds, and the pod reports its first GPU's copy.
  const ClusterResult placed = run_cluster(spec);
  for (const PodRecord& p : placed.pods) {
    if (p.name == "wide") {
      EXPECT_NE(p.gpus.find(','), std::string::npos) << p.gpus;
    }
  }
  const std::string& wide = std::get<0>(numbers.at("wide"));
  EXPECT_EQ(wide.find(','), std::string::npos) << wide;
  EXPECT_EQ(wide.substr(0, wide.find('-')), "ts");
}

TEST(ClusterWorkloads, ShardsAreBalancedByEstimatedLaunchesAndPartitionTheNodes) {
  // The same fleet with the 2-GPU pod 100 times as busy: its node has more work than the other
  // seven together (80,000 launches/s against about 13,000).
  std::string yaml = fleet_yaml();
  yaml.replace(yaml.find("rate: 200/s"), 11, "rate: 20000/s");
  const ClusterSpec spec = load_cluster_text(yaml, "busy-fleet.yaml");
  const ClusterResult placed = run_cluster(spec);
  for (const int shards : {1, 2, 3, 5, 8, 20}) {
    const WorkloadShardPlan plan = plan_workload_shards(spec, placed, shards);
    ASSERT_EQ(plan.nodes.size(), static_cast<std::size_t>(std::min(shards, 8)));
    // A partition of the 8 nodes that host workload pods, no group empty.
    std::set<int> seen;
    std::size_t pods = 0;
    for (std::size_t g = 0; g < plan.nodes.size(); ++g) {
      EXPECT_FALSE(plan.nodes[g].empty());
      for (const int node : plan.nodes[g]) EXPECT_TRUE(seen.insert(node).second) << node;
      pods += plan.pods[g];
    }
    EXPECT_EQ(seen.size(), 8U);
    EXPECT_EQ(pods, 24U);
    // Each node's work alone (a plan of 8 groups has one node each): LPT keeps every pair of
    // groups within the largest node's work of each other.
    const WorkloadShardPlan single = plan_workload_shards(spec, placed, 8);
    const double largest = *std::max_element(single.launches.begin(), single.launches.end());
    const auto [low, high] = std::minmax_element(plan.launches.begin(), plan.launches.end());
    EXPECT_LE(*high - *low, largest * (1 + 1e-12)) << shards;
    if (shards == 2) {
      // The busy node alone in one group, the seven others in the other (dealt by node count,
      // each group would get four nodes).
      const std::size_t alone = plan.nodes[0].size() == 1 ? 0 : 1;
      EXPECT_EQ(plan.nodes[alone].size(), 1U);
      EXPECT_EQ(plan.nodes[1 - alone].size(), 7U);
      EXPECT_EQ(plan.launches[alone], largest);
    }
  }
}

TEST(ClusterWorkloads, ThePlacementAsBytesSimulatesEachGroupAsTheWholeRunDoes) {
  const ClusterSpec spec = load_cluster_text(fleet_yaml(), "small-fleet.yaml");
  const PodNumbers one = run(spec, 1, 1);
  const ClusterResult replayed = run_cluster(spec);
  const ClusterResult placed = decode_workload_placement(encode_workload_placement(spec, replayed));
  ASSERT_EQ(placed.pods.size(), replayed.pods.size());
  const WorkloadShardPlan plan = plan_workload_shards(spec, placed, 3);
  EXPECT_EQ(plan.launches, plan_workload_shards(spec, replayed, 3).launches);
  ClusterResult gathered = replayed;
  for (const std::vector<int>& nodes : plan.nodes) {
    const std::string bytes = encode_workload_stats(simulate_workload_nodes(spec, placed, nodes));
    apply_workload_stats(decode_workload_stats(bytes), gathered);
  }
  EXPECT_EQ(numbers_of(gathered), one);
  // The simulated window travels with the gathering process's plan (the SLO tally's "run
  // longer" hint reads it): the same as the whole run writes; a plan without groups, nothing.
  ClusterResult whole = run_cluster(spec);
  simulate_workload_pods(spec, whole);
  ASSERT_GT(whole.workload_duration, 0);
  EXPECT_EQ(gathered.workload_duration, 0);
  apply_workload_window(WorkloadShardPlan{}, gathered);
  EXPECT_EQ(gathered.workload_duration, 0);
  apply_workload_window(plan_workload_shards(spec, replayed, 3), gathered);
  EXPECT_EQ(gathered.workload_duration, whole.workload_duration);
  EXPECT_EQ(gathered.workload_warmup, whole.workload_warmup);
  // Corrupt bytes are an error, never a read past the end.
  const std::string bytes = encode_workload_placement(spec, replayed);
  EXPECT_THROW(decode_workload_placement(bytes.substr(0, bytes.size() - 3)), std::runtime_error);
  EXPECT_THROW(decode_workload_placement(bytes + "x"), std::runtime_error);
  EXPECT_THROW(decode_workload_stats(std::string(8, '\xff')), std::runtime_error);
}

// Each pod's latency series (PodRecord::latency_series) gives its reported percentiles and any
// other, exact under `auto` for these short runs and a sketch under `sketch`; its bytes are the
// same whichever way the pods were simulated (one process, worker processes, node groups from
// the placement as bytes: a Dask task's way), so any merge of them is too; the merge of every
// pod holds every completed request, and its quantiles lie between the pods' own (a property
// of nearest rank over a union).
TEST(ClusterWorkloads, APodsLatencySeriesGivesEveryPercentileTheSameOnEverySplit) {
  for (const char* mode : {"auto", "sketch"}) {
    std::string yaml = fleet_yaml();
    const std::string duration = "  duration: 3s";
    yaml.replace(yaml.find(duration), duration.size(), duration + "\n  percentiles: " + mode);
    const ClusterSpec spec = load_cluster_text(yaml, "small-fleet.yaml");
    const bool exact = std::string(mode) == "auto";
    const ClusterResult whole = simulated(spec, 1, 1);
    std::vector<std::string> all;
    std::int64_t completed = 0;
    std::vector<std::int64_t> medians;
    for (const PodRecord& p : whole.pods) {
      if (p.workload_device.empty()) continue;
      ASSERT_FALSE(p.latency_series.empty()) << p.name;
      const Percentiles one = merge_latency_series({p.latency_series});
      EXPECT_EQ(one.exact(), exact) << mode;
      ASSERT_EQ(static_cast<std::int64_t>(one.count()), p.workload_completed) << p.name;
      Percentiles copy = one;
      EXPECT_EQ(copy.quantile(0.5), p.latency_p50_ns) << p.name;
      EXPECT_EQ(copy.quantile(0.9), p.latency_p90_ns) << p.name;
      EXPECT_EQ(copy.quantile(0.99), p.latency_p99_ns) << p.name;
      EXPECT_EQ(copy.quantile(0.999), p.latency_p999_ns) << p.name;
      EXPECT_EQ(copy.max(), p.latency_max_ns) << p.name;
      EXPECT_LE(p.latency_p50_ns, p.latency_p90_ns);
      EXPECT_LE(p.latency_p999_ns, p.latency_max_ns);
      all.push_back(p.latency_series);
      completed += p.workload_completed;
      medians.push_back(p.latency_p50_ns);
    }
    ASSERT_EQ(all.size(), 24U);
    Percentiles fleet = merge_latency_series(all);
    EXPECT_EQ(static_cast<std::int64_t>(fleet.count()), completed);
    EXPECT_EQ(fleet.exact(), exact);
    if (exact) {  // nearest rank over a union: between the parts' own quantiles
      const std::int64_t median = fleet.quantile(0.5);
      EXPECT_GE(median, *std::min_element(medians.begin(), medians.end()));
      EXPECT_LE(median, *std::max_element(medians.begin(), medians.end()));
    }
    // Every split: the same bytes for every pod, so the same merge.
    const PodNumbers one = numbers_of(whole);
    for (const auto& [shards, workers] : std::vector<std::pair<int, int>>{{3, 1}, {8, 3}}) {
      EXPECT_EQ(run(spec, shards, workers), one) << mode << " " << shards << "/" << workers;
    }
    const ClusterResult placed = decode_workload_placement(encode_workload_placement(spec, whole));
    ClusterResult gathered = run_cluster(spec);
    for (const std::vector<int>& nodes : plan_workload_shards(spec, placed, 5).nodes) {
      apply_workload_stats(decode_workload_stats(
                               encode_workload_stats(simulate_workload_nodes(spec, placed, nodes))),
                           gathered);
    }
    EXPECT_EQ(numbers_of(gathered), one) << mode;
    std::vector<std::string> again;
    for (const PodRecord& p : gathered.pods) {
      if (!p.latency_series.empty()) again.push_back(p.latency_series);
    }
    Percentiles split = merge_latency_series(again);
    for (const double q : {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0}) {
      EXPECT_EQ(split.quantile(q), fleet.quantile(q)) << mode << " q " << q;
    }
    // A corrupt series is an error, never a read past the end.
    const std::string& bytes = all.front();
    EXPECT_THROW(merge_latency_series({bytes.substr(0, bytes.size() - 1)}), std::runtime_error);
    EXPECT_THROW(merge_latency_series({bytes + "x"}), std::runtime_error);
  }
}

}  // namespace
}  // namespace gpumux::cluster
