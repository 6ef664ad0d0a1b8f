// The `cluster:` section (models/cluster/cluster_loader.hpp): a scenario with every kind of pool
// sharing loads into the documented ClusterSpec; a referenced cluster file and the openb CSVs
// load, with `--set cluster.*`; the scenario loader accepts and skips `cluster:`; every error is
// one line naming file:line:column and key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/cluster/cluster_loader.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "sim/util/units.hpp"

namespace gpumux::cluster {
namespace {

std::string data(const std::string& name) {
  return std::string(GPUMUX_SOURCE_DIR) + "/tests/data/cluster/" + name;
}

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

const NodePoolSpec& pool_named(const ClusterSpec& c, const std::string& name) {
  for (const NodePoolSpec& p : c.pools) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pool " + name);
}

const PodSpec& pod_named(const ClusterSpec& c, const std::string& name) {
  for (const PodSpec& p : c.pods) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pod " + name);
}

TEST(ClusterLoader, ScenarioWithEveryKindOfPool) {
  const ClusterSpec c = load_cluster(data("cluster-scenario.yaml"));
  ASSERT_EQ(c.pools.size(), 5u);
  EXPECT_EQ(c.seed, 11u);
  EXPECT_EQ(c.scheduler.policy, SchedulingPolicy::fgd);
  EXPECT_TRUE(c.scheduler.preemption);
  EXPECT_FALSE(c.scheduler.ignore_deletions);
  EXPECT_EQ(c.scheduler.fgd_popularity_threshold, 90);
  EXPECT_TRUE(c.scheduler.fgd_include_cpu_pods);
  EXPECT_EQ(c.scheduler.tie_seed, 5u);
  EXPECT_EQ(c.duration, 3600 * kSecond);
  EXPECT_EQ(c.sample, 10 * kSecond);

  const NodePoolSpec& mig = pool_named(c, "a100-mig");
  EXPECT_EQ(mig.count, 4);
  EXPECT_EQ(mig.gpu_model, "a100-80gb");
  EXPECT_EQ(mig.gpus_per_node, 8);
  EXPECT_EQ(mig.cpu_milli, 96000);
  EXPECT_EQ(mig.memory_bytes, 1360 * kGi);
  EXPECT_DOUBLE_EQ(mig.cost_per_hour, 32.77);
  EXPECT_DOUBLE_EQ(mig.network_bytes_per_s, 12.5e9);  // 100 Gbit/s
  EXPECT_DOUBLE_EQ(mig.nvlink_bytes_per_s, 600e9);
  ASSERT_TRUE(mig.autoscaling.has_value());
  EXPECT_EQ(mig.autoscaling->min_nodes, 1);
  EXPECT_EQ(mig.autoscaling->max_nodes, 10);
  EXPECT_EQ(mig.autoscaling->provisioning_delay, 240 * kSecond);
  EXPECT_EQ(mig.labels.at("team"), "inference");
  EXPECT_EQ(mig.sharing.mig_devices, std::vector<std::string>(7, "1g.10gb"));
  EXPECT_EQ(mig.sharing.mig_strategy, MigStrategy::single);
  EXPECT_NE(mig.sharing.source.find("all-1g.10gb"), std::string::npos);
  EXPECT_EQ(mig.where.line, 6);

  const NodePoolSpec& shared = pool_named(c, "h100-shared");
  EXPECT_EQ(shared.cpu_milli, 208000);
  EXPECT_EQ(shared.sharing.sharing, SharingKind::time_slicing);
  ASSERT_EQ(shared.sharing.shared.size(), 1u);
  EXPECT_EQ(shared.sharing.shared[0].replicas, 10);
  EXPECT_EQ(shared.sharing.where.line, 26);  // the device_plugin key's value

  const NodePoolSpec& gke = pool_named(c, "gke-mig");
  EXPECT_EQ(gke.count, 1);
  EXPECT_EQ(gke.gpus_per_node, 1);
  EXPECT_EQ(gke.sharing.mig_devices, std::vector<std::string>(3, "2g.20gb"));
  EXPECT_EQ(gke.sharing.sharing, SharingKind::time_slicing);
  EXPECT_EQ(gke.labels.at("cloud.google.com/gke-gpu-partition-size"), "2g.20gb");

  const NodePoolSpec& mixed = pool_named(c, "mixed");
  EXPECT_EQ(mixed.sharing.mig_strategy, MigStrategy::mixed);
  EXPECT_EQ(mixed.sharing.mig_devices, std::vector<std::string>(4, "1g.10gb"));
  ASSERT_EQ(mixed.sharing.shared.size(), 1u);
  EXPECT_EQ(mixed.sharing.shared[0].name, "nvidia.com/mig-1g.10gb");

  const NodePoolSpec& cpu = pool_named(c, "cpu");
  EXPECT_EQ(cpu.gpus_per_node, 0);
  EXPECT_TRUE(cpu.gpu_model.empty());

  ASSERT_EQ(c.pods.size(), 105u);
  for (std::size_t i = 1; i < c.pods.size(); ++i) {
    EXPECT_LE(c.pods[i - 1].arrival, c.pods[i].arrival);
  }
  const PodSpec& infer = pod_named(c, "infer-2");
  EXPECT_EQ(infer.pod_class, "inference");
  EXPECT_EQ(infer.arrival, 30 * kSecond);
  EXPECT_EQ(infer.cpu_milli, 1500);
  EXPECT_EQ(infer.memory_bytes, 30 * kGi);
  EXPECT_EQ(infer.gpu_resources.at("nvidia.com/mig-1g.10gb"), 1);
  EXPECT_EQ(infer.priority, 100);
  ASSERT_TRUE(infer.workload.tenant.has_value());
  EXPECT_FALSE(infer.workload.duration.has_value());
  EXPECT_EQ(infer.workload.tenant->name, "infer-2");
  EXPECT_EQ(infer.workload.tenant->memory, 8 * kGi);
  ASSERT_EQ(infer.workload.tenant->workload.kernels.size(), 1u);
  EXPECT_EQ(infer.workload.tenant->workload.kernels[0].name, "gemm");
  EXPECT_TRUE(infer.workload.tenant->devices.empty());

  const PodSpec& train = pod_named(c, "train-1");
  EXPECT_EQ(train.gang, 2);
  EXPECT_EQ(train.gang_bytes_per_step, kGi);
  EXPECT_EQ(train.gang_steps, 1000);
  EXPECT_DOUBLE_EQ(train.gpu_utilization, 0.8);
  EXPECT_EQ(train.gpu_memory_bytes, 60 * kGi);
  EXPECT_EQ(train.gpu_resources.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(*train.workload.duration, 1800 * kSecond);
  EXPECT_EQ(train.pod_class, "training");

  // 100 Poisson arrivals at 2/min from 0: increasing, mean gap 30 s (loose bounds: 100 draws).
  const PodSpec& first = pod_named(c, "batch-0");
  const PodSpec& last = pod_named(c, "batch-99");
  EXPECT_EQ(first.arrival, 0);
  const double mean_gap_s = static_cast<double>(last.arrival) / 99 / 1e9;
  EXPECT_GT(mean_gap_s, 20.0);
  EXPECT_LT(mean_gap_s, 40.0);
  EXPECT_EQ(first.gpu_models, std::vector<std::string>{"h100-sxm-80gb"});
  // The same seed draws the same arrivals.
  EXPECT_EQ(pod_named(load_cluster(data("cluster-scenario.yaml")), "batch-57").arrival,
            pod_named(c, "batch-57").arrival);
}

TEST(ClusterLoader, ScenarioLoaderAcceptsAndSkipsTheClusterSection) {
  const Scenario s = load_scenario_file(data("cluster-scenario.yaml"));
  EXPECT_TRUE(s.has_cluster);
  EXPECT_EQ(s.name, "cluster-example");
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.tenants.empty());
  EXPECT_EQ(s.duration, 0);
  EXPECT_TRUE(load_scenario_file(data("cluster-file-scenario.yaml")).has_cluster);
  // --set cluster.KEY on a file reference is for the cluster loader, not a scenario error.
  EXPECT_NO_THROW(load_scenario_file(data("cluster-file-scenario.yaml"),
                                     {{"cluster.scheduler.policy", "worst-fit"}}));
  // Resolving it as GPUs and tenants is refused with one line (the cluster replay runs it).
  try {
    resolve_scenario(load_scenario_file(data("cluster-scenario.yaml")));
    FAIL() << "a cluster-only scenario must not resolve as GPUs and tenants";
  } catch (const InputError& e) {
    // file:line:column: key, then the reason (the line and column of its `cluster:` key).
    EXPECT_NE(std::string(e.what()).find("cluster-scenario.yaml:5:3: cluster: this scenario has "
                                         "a cluster: section and no gpus or tenants"),
              std::string::npos)
        << e.what();
  }
  // Without `cluster:`, gpus and tenants stay required.
  try {
    load_scenario_text("name: x\nduration: 1s\n", "s.yaml");
    FAIL() << "gpus must be required without cluster:";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "s.yaml:1:1: gpus: missing required key 'gpus'");
  }
}

TEST(ClusterLoader, ReferencedClusterFileAndOverrides) {
  const ClusterSpec c = load_cluster(data("cluster-file-scenario.yaml"));
  ASSERT_EQ(c.pools.size(), 1u);
  EXPECT_EQ(c.pools[0].sharing.sharing, SharingKind::mps);
  EXPECT_EQ(c.pods.size(), 5u);
  EXPECT_EQ(c.scheduler.policy, SchedulingPolicy::first_fit);
  EXPECT_NE(c.pools[0].where.file.find("cluster-pools.yaml"), std::string::npos);
  const ClusterSpec worst =
      load_cluster(data("cluster-file-scenario.yaml"), {{"cluster.scheduler.policy", "worst-fit"}});
  EXPECT_EQ(worst.scheduler.policy, SchedulingPolicy::worst_fit);
  // Overrides of the scenario's own keys are the scenario loader's; seed draws the arrivals.
  EXPECT_NO_THROW(load_cluster(data("cluster-file-scenario.yaml"), {{"output.sample", "1s"}}));
  const ClusterSpec reseeded = load_cluster(data("cluster-scenario.yaml"), {{"seed", "12"}});
  EXPECT_EQ(reseeded.seed, 12u);
  EXPECT_NE(pod_named(reseeded, "batch-57").arrival,
            pod_named(load_cluster(data("cluster-scenario.yaml")), "batch-57").arrival);
  const ClusterSpec inline_set =
      load_cluster(data("cluster-scenario.yaml"), {{"cluster.pools.a100-mig.count", "2"}});
  EXPECT_EQ(pool_named(inline_set, "a100-mig").count, 2);
  try {
    load_cluster(data("cluster-file-scenario.yaml"), {{"cluster.scheduler.policy", "best-fitt"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set scheduler.policy: unknown scheduling policy "
                                          "'best-fitt' (did you mean 'best-fit'?)",
                                          0),
              0u)
        << e.what();
  }
}

TEST(ClusterLoader, OpenbScenarioAndVariantBySet) {
  const ClusterSpec c = load_cluster(data("cluster-openb-scenario.yaml"));
  EXPECT_EQ(c.pools.size(), 15u);
  EXPECT_EQ(c.pods.size(), 8152u);
  EXPECT_TRUE(c.scheduler.ignore_deletions);
  EXPECT_EQ(c.scheduler.policy, SchedulingPolicy::fgd);
  const ClusterSpec multi =
      load_cluster(data("cluster-openb-scenario.yaml"),
                   {{"cluster.openb.pods",
                     std::string(GPUMUX_SOURCE_DIR) +
                         "/scenarios/traces/alibaba-openb/openb_pod_list_multigpu50.csv"}});
  EXPECT_EQ(multi.pods.size(), 9061u);
  EXPECT_TRUE(
      load_scenario_file(data("cluster-openb-scenario.yaml"), {{"cluster.openb.pods", "x.csv"}})
          .has_cluster);
}

// Each bad input and the one line it must give: "FILE:LINE:COLUMN: KEY: ..." (a prefix).
struct ErrorCase {
  const char* yaml;
  const char* message_prefix;
};

class ClusterLoaderErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ClusterLoaderErrors, OneLocatedLine) {
  const ErrorCase& c = GetParam();
  try {
    load_cluster_text(c.yaml, data("s.yaml"));
    FAIL() << "expected an InputError: " << c.message_prefix;
  } catch (const InputError& e) {
    std::string message = e.what();
    const std::string dir = data("");
    for (std::size_t at; (at = message.find(dir)) != std::string::npos;)
      message.erase(at, dir.size());
    EXPECT_EQ(message.rfind(c.message_prefix, 0), 0u) << "message: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

#define POOL "cluster:\n  pools:\n    - name: p\n      gpu: h100-sxm-80gb\n"
#define PODS "  pods:\n    - {name: q, duration: 1s}\n"

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterLoaderErrors,
    ::testing::Values(
        ErrorCase{"name: x\n", "s.yaml: cluster: no `cluster:` section"},
        ErrorCase{
            "cluster:\n  pool: []\n",
            "s.yaml:2:3: cluster.pool: unknown key 'pool' in cluster (did you mean 'pools'?)"},
        ErrorCase{"cluster:\n  pods: []\n",
                  "s.yaml:2:3: cluster.pools: missing required key 'pools'"},
        ErrorCase{POOL "      gpus_per_node: 100\n" PODS,
                  "s.yaml:5:22: cluster.pools.0.gpus_per_node: at most 64 GPUs per node"},
        ErrorCase{POOL "      count: 1000000\n" PODS,
                  "s.yaml:5:14: cluster.pools.0.count: at most 100000 nodes per pool"},
        ErrorCase{"cluster:\n  pools:\n    - {name: p, gpu: h101}\n" PODS,
                  "s.yaml:3:22: cluster.pools.0.gpu: "},
        ErrorCase{"cluster:\n  pools:\n    - {name: p}\n" PODS,
                  "s.yaml:3:7: cluster.pools.0.gpu: missing required key 'gpu'"},
        ErrorCase{
            "cluster:\n  pools:\n    - {name: p, gpus_per_node: 0, gpu: a100-80gb}\n" PODS,
            "s.yaml:3:40: cluster.pools.0.gpu: a pool with gpus_per_node: 0 has no GPU model"},
        ErrorCase{POOL "      cpu: 0.0001\n" PODS,
                  "s.yaml:5:12: cluster.pools.0.cpu: CPU finer than 1m"},
        ErrorCase{POOL "      memory: 500m\n" PODS,
                  "s.yaml:5:15: cluster.pools.0.memory: 'm' is milli"},
        ErrorCase{POOL "      network: fast\n" PODS, "s.yaml:5:16: cluster.pools.0.network: "},
        ErrorCase{POOL "      cost_per_hour: -1\n" PODS,
                  "s.yaml:5:22: cluster.pools.0.cost_per_hour: must not be negative"},
        ErrorCase{POOL "      autoscaling: {min: 3, max: 2}\n" PODS,
                  "s.yaml:5:34: cluster.pools.0.autoscaling.max: max (2) is below min (3)"},
        ErrorCase{POOL "      autoscaling: {min: 2, max: 5}\n" PODS,
                  "s.yaml:5:34: cluster.pools.0.autoscaling.max: count (1) must lie in [min, max] "
                  "= [2, 5]"},
        ErrorCase{POOL "      autoscaling: {max: 5}\n" PODS,
                  "s.yaml:5:20: cluster.pools.0.autoscaling.min: missing required key 'min'"},
        ErrorCase{POOL "      labels: [a]\n" PODS,
                  "s.yaml:5:15: cluster.pools.0.labels: expected a mapping"},
        ErrorCase{"cluster:\n  pools:\n    - {name: p, gpu: h100-sxm-80gb}\n    - {name: p, gpu: "
                  "h100-sxm-80gb}\n" PODS,
                  "s.yaml:4:14: cluster.pools.1.name: duplicate pool name 'p'"},
        ErrorCase{POOL "      sharing: {device_plugin: nowhere.yaml}\n" PODS,
                  "s.yaml:5:32: cluster.pools.0.sharing.device_plugin: cannot open device-plugin "
                  "config nowhere.yaml: No such file or directory"},
        ErrorCase{POOL "      sharing: {device_plugin: {flags: {migStrategy: all}}}\n" PODS,
                  "s.yaml:5:54: cluster.pools.0.sharing.device_plugin.flags.migStrategy: unknown "
                  "migStrategy 'all'"},
        ErrorCase{POOL "      sharing: {device_plugin: device-plugin-readme-mps.yaml, gke: "
                       "{gpu-partition-size: 1g.10gb}}\n" PODS,
                  "s.yaml:5:68: cluster.pools.0.sharing.gke: gke describes the whole GPU setup"},
        ErrorCase{POOL "      sharing: {mig_parted: {file: mig-parted-examples-config.yaml, "
                       "config: all-1g.5gb}}\n" PODS,
                  "mig-parted-examples-config.yaml:16:9: mig-configs.all-1g.5gb.0.mig-devices: "
                  "config 'all-1g.5gb' does not fit h100-sxm-80gb"},
        ErrorCase{POOL "      sharing: {mig_parted: {file: mig-parted-examples-config.yaml, "
                       "config: nope}}\n" PODS,
                  "s.yaml:5:77: cluster.pools.0.sharing.mig_parted.config: no config named 'nope'"},
        ErrorCase{
            POOL "      sharing: {mig_parted: {config: all-1g.10gb}}\n" PODS,
            "s.yaml:5:29: cluster.pools.0.sharing.mig_parted.file: missing required key 'file'"},
        ErrorCase{POOL
                  "      sharing:\n        device_plugin: device-plugin-readme-flags.yaml\n        "
                  "mig_parted: {file: mig-parted-examples-config.yaml, config: all-1g.10gb}\n" PODS,
                  "s.yaml:7:21: cluster.pools.0.sharing.mig_parted: the MIG layout needs the "
                  "device plugin's flags.migStrategy single or mixed"},
        ErrorCase{
            POOL "      sharing:\n        device_plugin: {flags: {migStrategy: single}}\n        "
                 "mig_parted: {file: mig-parted-examples-config.yaml, config: all-balanced}\n" PODS,
            "mig-parted-examples-config.yaml:46:9: mig-configs.all-balanced.0.mig-devices: config "
            "'all-balanced' does not fit h100-sxm-80gb: no MIG profile '1g.5gb"},
        ErrorCase{"cluster:\n  pools:\n    - {name: p, gpu: a100-sxm4-40gb}\n    - name: q\n      "
                  "gpu: a100-sxm4-40gb\n      sharing:\n        device_plugin: {flags: "
                  "{migStrategy: single}}\n        mig_parted: {file: "
                  "mig-parted-examples-config.yaml, config: all-balanced}\n" PODS,
                  "s.yaml:8:21: cluster.pools.1.sharing.mig_parted: migStrategy single needs one "
                  "MIG profile on every GPU of a node; the layout has 3 (1g.5gb, 2g.10gb, "
                  "3g.20gb): use mixed"},
        ErrorCase{POOL
                  "      sharing:\n        device_plugin: device-plugin-readme-mps.yaml\n        "
                  "mig_parted: {file: mig-parted-examples-config.yaml, config: all-1g.10gb}\n" PODS,
                  "s.yaml:7:21: cluster.pools.0.sharing.mig_parted: the MIG layout needs"},
        ErrorCase{"cluster:\n  pools:\n    - {name: c, gpus_per_node: 0, sharing: {gke: "
                  "{gpu-partition-size: 1g.10gb}}}\n" PODS,
                  "s.yaml:3:50: cluster.pools.0.sharing.gke: a pool without GPUs"},
        ErrorCase{POOL "  pods:\n    - {name: q}\n",
                  "s.yaml:6:7: cluster.pods.0.duration: missing required key 'duration' (or "
                  "`workload`): what the pod runs once placed"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, workload: {workload: {}}}\n",
                  "s.yaml:6:41: cluster.pods.0.workload: give duration or workload, not both"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 0s}\n",
                  "s.yaml:6:27: cluster.pods.0.duration: must be greater than zero (got '0s')"},
        ErrorCase{
            POOL "  pods:\n    - {name: q, duration: 1s, arrival: 1s, arrivals: {rate: 1/s, count: "
                 "2}}\n",
            "s.yaml:6:54: cluster.pods.0.arrivals: give arrival (one time) or arrivals, not both"},
        ErrorCase{
            POOL
            "  pods:\n    - {name: q, duration: 1s, count: 2, arrivals: {rate: 1/s, count: 2}}\n",
            "s.yaml:6:38: cluster.pods.0.count: with arrivals, the number of pods is "
            "arrivals.count"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, arrivals: {rate: 1/s}}\n",
                  "s.yaml:6:41: cluster.pods.0.arrivals.count: missing required key 'count'"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, arrivals: {process: gamma, rate: "
                       "1/s, count: 1}}\n",
                  "s.yaml:6:51: cluster.pods.0.arrivals.process: unknown arrival process 'gamma'"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, requests: {gpu: 1}}\n",
                  "s.yaml:6:42: cluster.pods.0.requests.gpu: unknown resource 'gpu' (did you mean "
                  "'cpu'?)"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, requests: {nvidia.com/gpu: 0.5}}\n",
                  "s.yaml:6:58: cluster.pods.0.requests.nvidia.com/gpu: must be a whole number "
                  "(extended resources such as nvidia.com/gpu are counted in whole units) (go"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, requests: {memory: 1.5}}\n",
                  "s.yaml:6:50: cluster.pods.0.requests.memory: not a whole number of bytes (e.g. "
                  "1.5Gi, 512Mi, 1e3) (got '1.5')"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, requests: {nvidia.com/mig-1g: 1}}\n",
                  "s.yaml:6:42: cluster.pods.0.requests.nvidia.com/mig-1g: 'nvidia.com/mig-1g' is "
                  "not a MIG resource name (nvidia.com/mig-1g.10gb)"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, cpu: 1}\n",
                  "s.yaml:6:31: cluster.pods.0.cpu: unknown key 'cpu' in cluster.pods.0 (it "
                  "belongs under requests)"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, count: 3, gang: 2}\n",
                  "s.yaml:6:47: cluster.pods.0.gang: gang 2 must divide the number of pods (3): "
                  "each gang is 2 identical pods"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, priority: 2000000000}\n",
                  "s.yaml:6:41: cluster.pods.0.priority: at most 1000000000, got 2000000000"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, gpu_milli: 1000}\n",
                  "s.yaml:6:42: cluster.pods.0.gpu_milli: a share of one GPU is 1-999 milli-GPUs"},
        ErrorCase{
            POOL
            "  pods:\n    - {name: q, duration: 1s, count: 2}\n    - {name: q-1, duration: 1s}\n",
            "s.yaml:7:14: cluster.pods.1.name: duplicate pod name 'q-1' (count/arrivals N > 1 "
            "names copies NAME-0 .. NAME-(N-1))"},
        ErrorCase{POOL "  pods:\n    - name: q\n      workload: {device: gpu0, workload: {}}\n",
                  "s.yaml:7:18: cluster.pods.0.workload.device: a pod's workload has no `device`: "
                  "the cluster scheduler places the pod"},
        ErrorCase{
            POOL
            "  pods:\n    - name: q\n      workload: {workload: {arrivals: {process: poisson}}}\n",
            "s.yaml:7:39: cluster.pods.0.workload.workload.arrivals.rate: missing required key "
            "'rate'"},
        ErrorCase{POOL PODS "  scheduler: {policy: best}\n",
                  "s.yaml:7:23: cluster.scheduler.policy: unknown scheduling policy 'best'"},
        ErrorCase{POOL PODS "  scheduler: {fgd_popularity_threshold: 101}\n",
                  "s.yaml:7:41: cluster.scheduler.fgd_popularity_threshold: a percentage of the "
                  "pods, 1-100, got 101"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, gpu_utilization: 1.5}\n",
                  "s.yaml:6:48: cluster.pods.0.gpu_utilization: must be in [0, 1], got 1.5"},
        ErrorCase{POOL "  pods:\n    - {name: q, duration: 1s, requests: {nvidia.com/gpu: 2}, "
                       "gpu_milli: 500}\n",
                  "s.yaml:6:73: cluster.pods.0.gpu_milli: gpu_milli is a share of one GPU: request "
                  "nvidia.com/gpu: 1 or no GPU resource with it"},
        ErrorCase{POOL PODS "  sample: 0s\n",
                  "s.yaml:7:11: cluster.sample: must be greater than zero (got '0s')"},
        ErrorCase{"cluster:\n  openb: {nodes: n.csv}\n",
                  "s.yaml:2:10: cluster.openb.pods: missing required key 'pods'"},
        ErrorCase{"cluster:\n  openb: {nodes: n.csv, pods: p.csv}\n  pools: []\n",
                  "s.yaml:3:10: cluster.pools: openb gives the pools"},
        ErrorCase{"cluster:\n  openb: {nodes: n.csv, pods: p.csv}\n",
                  "s.yaml:2:18: cluster.openb.nodes: cannot open openb node list n.csv"},
        ErrorCase{"cluster:\n  openb:\n    nodes: "
                  "../../../scenarios/traces/alibaba-openb/openb_node_list_gpu_node.csv\n    pods: "
                  "../../../scenarios/traces/alibaba-openb/openb_pod_list_default.csv\n    "
                  "cost_per_hour: {H100: 3}\n",
                  "s.yaml:5:21: cluster.openb.cost_per_hour.H100: no node of model 'H100' in the "
                  "node list; models: A10, G2, G3, P100, T4, V100M16, V100M32"},
        ErrorCase{"cluster: nowhere.yaml\n",
                  "s.yaml:1:10: cluster: cannot open cluster file nowhere.yaml"},
        // Bounded reads (issue 13): a device is refused before any byte is read.
        ErrorCase{"cluster: /dev/zero\n",
                  "s.yaml:1:10: cluster: cluster file /dev/zero: is a device, not a cluster file"},
        ErrorCase{POOL "      sharing: {device_plugin: /dev/zero}\n" PODS,
                  "s.yaml:5:32: cluster.pools.0.sharing.device_plugin: device-plugin config "
                  "/dev/zero: is a device, not a device-plugin config"},
        ErrorCase{"cluster:\n  openb: {nodes: /dev/zero, pods: p.csv}\n",
                  "s.yaml:2:18: cluster.openb.nodes: openb node list /dev/zero: is a device, not a "
                  "openb node list"},
        ErrorCase{"cluster: cluster-pools.yaml\nseed: -1\n",
                  "s.yaml:2:7: seed: expected an integer from 0"}));

TEST(ClusterLoader, ErrorsInsideAReferencedFileNameThatFile) {
  try {
    load_cluster_text("cluster: device-plugin-readme-flags.yaml\n", data("s.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("device-plugin-readme-flags.yaml:1:1: version: unknown key "
                                   "'version'"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpumux::cluster

namespace gpumux::cluster {
namespace {

TEST(ClusterLoader, GpuMilliIsAShareOfOneGpu) {
  const ClusterSpec c = load_cluster_text(
      "cluster:\n  pools:\n    - {name: p, gpu: h100-sxm-80gb}\n  pods:\n"
      "    - {name: q, duration: 1s, gpu_milli: 250}\n",
      "s.yaml");
  ASSERT_EQ(c.pods.size(), 1u);
  EXPECT_EQ(c.pods[0].gpu_milli, 250);
  EXPECT_EQ(c.pods[0].gpu_resources.at("nvidia.com/gpu"), 1);
}

TEST(ClusterLoader, UnknownGpuModelNamesThePoolKeyOnce) {
  try {
    load_cluster_text(
        "cluster:\n  pools:\n    - {name: p, gpu: h101}\n  pods:\n    - {name: q, "
        "duration: 1s}\n",
        "s.yaml");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("s.yaml:3:22: cluster.pools.0.gpu: ", 0), 0u) << message;
    EXPECT_NE(message.find("h100-sxm-80gb"), std::string::npos) << message;  // known names
    EXPECT_EQ(message.find("s.yaml", 1), std::string::npos) << message;      // one location
  }
}

// One grammar of sizes and rates across the scenario (issue 24): what a tenant writes (50GB,
// 2GiB, 1/day) the cluster section reads to the same numbers as the tenant parser; Kubernetes
// quantities keep their exact reading.
TEST(ClusterLoader, SizesAndRatesReadAsTheTenantSectionReadsThem) {
  const ClusterSpec c = load_cluster_text(
      "cluster:\n  pools:\n    - {name: p, gpu: a100-80gb, memory: 50GB}\n  pods:\n"
      "    - {name: q, duration: 1s, gpu_memory: 80GB, requests: {memory: 2GiB}, arrivals: "
      "{rate: 1/day, count: 2}}\n    - {name: k, duration: 1s, requests: {memory: 1.5Gi}}\n",
      "s.yaml");
  EXPECT_EQ(pool_named(c, "p").memory_bytes, 50'000'000'000);
  EXPECT_EQ(pool_named(c, "p").memory_bytes, units::parse_size_bytes("50GB"));
  EXPECT_EQ(pod_named(c, "q-0").memory_bytes, 2 * kGi);
  EXPECT_EQ(pod_named(c, "q-0").memory_bytes, units::parse_size_bytes("2GiB"));
  EXPECT_EQ(pod_named(c, "q-0").gpu_memory_bytes, 80'000'000'000);
  EXPECT_EQ(pod_named(c, "k").memory_bytes, 1'610'612'736);
  EXPECT_GT(pod_named(c, "q-1").arrival, pod_named(c, "q-0").arrival);
  // The tenant section reads the same words.
  EXPECT_EQ(units::parse_size_bytes("1.5Gi"), 1'610'612'736);
  EXPECT_DOUBLE_EQ(units::parse_rate_per_s("1/day"), 1.0 / 86400);
}

TEST(ClusterLoader, SchedulerScoringAndAutoscalerKeys) {
  const ClusterSpec c = load_cluster_text(
      "cluster:\n  pools:\n    - {name: p, gpu: a100-80gb}\n  pods:\n"
      "    - {name: q, duration: 1s}\n  scheduler: {policy: fgd, fgd_typical_step: 10, "
      "node_score: exact, tie_break: random}\n  autoscaler: {expander: priority, priorities: "
      "{10: [\"^p$\"], 50: [\".*-spot\"]}}\n",
      "s.yaml");
  EXPECT_EQ(c.scheduler.fgd_typical_step, 10);
  EXPECT_EQ(c.scheduler.node_score, NodeScore::exact);
  EXPECT_EQ(c.scheduler.tie_break, TieBreak::random);
  EXPECT_EQ(c.autoscaler.expander, Expander::priority);
  ASSERT_EQ(c.autoscaler.priorities.size(), 2u);
  EXPECT_EQ(c.autoscaler.priorities.at(50), std::vector<std::string>{".*-spot"});
  // Defaults: the reference's integer scores and name ties, step 1; cluster-autoscaler's
  // random expander.
  const ClusterSpec d = load_cluster_text(
      "cluster:\n  pools:\n    - {name: p, gpu: a100-80gb}\n  pods:\n"
      "    - {name: q, duration: 1s}\n",
      "s.yaml");
  EXPECT_EQ(d.scheduler.fgd_typical_step, 1);
  EXPECT_EQ(d.scheduler.node_score, NodeScore::integer);
  EXPECT_EQ(d.scheduler.tie_break, TieBreak::node_name);
  EXPECT_EQ(d.autoscaler.expander, Expander::random);
}

INSTANTIATE_TEST_SUITE_P(
    Scoring, ClusterLoaderErrors,
    ::testing::Values(
        ErrorCase{POOL PODS "  scheduler: {node_score: float}\n",
                  "s.yaml:7:27: cluster.scheduler.node_score: unknown node score 'float'"},
        ErrorCase{POOL PODS "  scheduler: {tie_break: first}\n",
                  "s.yaml:7:26: cluster.scheduler.tie_break: unknown tie-break 'first'"},
        ErrorCase{POOL PODS "  scheduler: {fgd_typical_step: 0}\n",
                  "s.yaml:7:33: cluster.scheduler.fgd_typical_step: "},
        ErrorCase{POOL PODS "  autoscaler: {expander: most-pods}\n",
                  "s.yaml:7:26: cluster.autoscaler.expander: unknown expander 'most-pods'"},
        ErrorCase{POOL PODS "  autoscaler: {expander: priority}\n",
                  "s.yaml:7:15: cluster.autoscaler: the priority expander needs `priorities:"},
        ErrorCase{POOL PODS "  autoscaler: {priorities: {10: [\"(\"]}}\n",
                  "s.yaml:7:34: cluster.autoscaler.priorities.10.0: not a regular expression"}));

}  // namespace
}  // namespace gpumux::cluster
