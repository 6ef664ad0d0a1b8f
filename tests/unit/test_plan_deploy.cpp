// `gpumux plan -o DIR` (models/app/plan_deploy.hpp): what a GKE or device-plugin user applies,
// loaded back through the cluster layer (node pools, the device plugin's placement law, pods
// with nodeSelector and tolerations, workload pods through the device models) reproduces the
// plan's numbers exactly: every pod runs on the node and device the plan put its tenant on.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "models/app/plan_deploy.hpp"
#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/workload_pods.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux {
namespace {

// Five small inference tenants: on one GPU model the cheapest answer shares GPUs, so the
// written node configs carry time-sharing, MPS or MIG and the pods' order matters.
const char* kTenants = R"(
seed: 7
duration: 3s
warmup: 300ms
tenants:
  - name: embed
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.4, memory_bound: 0.5, repeat: 2}
    slo: {p99: 10ms}
  - name: rerank
    memory: 6GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: score, duration: 1ms, sm_fraction: 0.5, memory_bound: 0.3}
    slo: {p99: 20ms}
  - name: ocr
    memory: 8GiB
    workload:
      arrivals: {process: poisson, rate: 40/s}
      request:
        kernels:
          - {name: detect, duration: 2ms, sm_fraction: 0.6, memory_bound: 0.2}
    slo: {p99: 40ms}
  - name: asr
    memory: 5GiB
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request:
        kernels:
          - {name: encoder, duration: 4ms, sm_fraction: 0.7, memory_bound: 0.3}
    slo: {p99: 80ms}
  - name: safety
    memory: 3GiB
    isolation: fault
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: classify, duration: 500us, sm_fraction: 0.3, memory_bound: 0.4}
    slo: {p99: 20ms}
)";

std::string planning(const std::string& platform, const std::string& machines,
                     const std::string& strategies) {
  return std::string(
             "name: deploy\nplan:\n  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]\n"
             "  max_gpus: 4\n  platform: ") +
         platform + "\n  machines: [" + machines + "]\n  strategies: [" + strategies + "]\n" +
         kTenants;
}

struct Replayed {
  PlanResult plan;
  cluster::ClusterResult cluster;
  std::map<std::string, std::string> files;
};

Replayed plan_and_replay(const std::string& yaml, const std::string& dir_name) {
  Replayed out;
  PlanOptions options;
  options.jobs = 2;
  out.plan = plan_scenario(load_scenario_text(yaml, "deploy.yaml"), options);
  if (!out.plan.found()) return out;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / dir_name;
  std::filesystem::remove_all(dir);
  for (const PlanFile& f : plan_deployment_files(out.plan, "deploy.yaml")) {
    // `plan -o DIR` replaces an earlier plan's folder only when it holds just these (and
    // refuses any other file): each file, and the folder it is in, must be one it writes.
    EXPECT_TRUE(plan_output_entry(f.path)) << f.path;
    if (const auto slash = f.path.rfind('/'); slash != std::string::npos) {
      EXPECT_TRUE(plan_output_entry(f.path.substr(0, slash + 1))) << f.path;
    }
    const std::filesystem::path path = dir / f.path;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << f.text;
    out.files[f.path] = f.text;
  }
  const cluster::ClusterSpec spec = cluster::load_cluster((dir / "cluster.yaml").string());
  out.cluster = cluster::run_cluster(spec);
  cluster::simulate_workload_pods(spec, out.cluster);
  return out;
}

void expect_reproduced(const Replayed& r) {
  ASSERT_TRUE(r.plan.found());
  ASSERT_TRUE(r.plan.best_run.has_value());
  std::map<std::string, const TenantResult*> planned;
  for (const TenantResult& t : r.plan.best_run->tenants) planned[t.name] = &t;
  ASSERT_EQ(r.cluster.pods.size(), planned.size());
  // Who shares a device in the replay is who shares it in the plan.
  std::map<std::string, std::string> device_of_pod, device_of_tenant;
  for (const cluster::PodRecord& pod : r.cluster.pods) {
    SCOPED_TRACE(pod.name);
    ASSERT_GE(pod.start, 0) << pod.pending_reason;
    const TenantResult& t = *planned.at(pod.name);
    EXPECT_EQ(pod.workload_completed, t.completed);
    EXPECT_EQ(pod.latency_p50_ns, t.latency.p50);
    EXPECT_EQ(pod.latency_p99_ns, t.latency.p99);
    device_of_pod[pod.name] = pod.workload_device;
    device_of_tenant[pod.name] = t.device;
  }
  for (const auto& [a, da] : device_of_pod) {
    for (const auto& [b, db] : device_of_pod) {
      EXPECT_EQ(da == db, device_of_tenant[a] == device_of_tenant[b]) << a << " and " << b;
    }
  }
}

TEST(PlanDeploy, GkeNodePoolsAndPodsReproduceThePlan) {
  for (const std::string strategies :
       {"dedicated, time-slicing", "dedicated, mps", "dedicated, mig, mig+time-slicing"}) {
    SCOPED_TRACE(strategies);
    const Replayed r =
        plan_and_replay(planning("gke", "a3-highgpu-1g, a3-highgpu-2g", strategies), "gke-plan");
    expect_reproduced(r);
    const std::string& pools = r.files.at("node-pools.sh");
    EXPECT_NE(pools.find("gcloud container node-pools create node0"), std::string::npos);
    EXPECT_NE(pools.find("--accelerator=type=nvidia-h100-80gb,count="), std::string::npos);
    for (const PlanNode& node : r.plan.ranked.front().nodes) {
      EXPECT_NE(pools.find("--machine-type=" + node.machine), std::string::npos);
      if (node.clients > 0) {
        EXPECT_NE(pools.find(fmt::format("max-shared-clients-per-gpu={}", node.clients)),
                  std::string::npos);
      }
      if (!node.partition.empty()) {
        EXPECT_NE(pools.find("gpu-partition-size=" + node.partition), std::string::npos);
      }
    }
    // A pod manifest per tenant: one nvidia.com/gpu, the GKE node labels, GKE's GPU toleration.
    int manifests = 0;
    for (const auto& [path, text] : r.files) {
      if (path.rfind("pods/", 0) != 0) continue;
      ++manifests;
      EXPECT_NE(text.find("kind: Pod"), std::string::npos);
      EXPECT_NE(text.find("nvidia.com/gpu: 1"), std::string::npos);
      EXPECT_NE(text.find("cloud.google.com/gke-nodepool"), std::string::npos);
      EXPECT_NE(text.find("key: nvidia.com/gpu"), std::string::npos);
    }
    EXPECT_EQ(manifests, 5);
  }
}

TEST(PlanDeploy, DevicePluginConfigsReproduceThePlan) {
  for (const std::string strategies : {"dedicated, time-slicing", "dedicated, mig+time-slicing"}) {
    SCOPED_TRACE(strategies);
    const Replayed r = plan_and_replay(
        planning("device-plugin", "a3-highgpu-1g, a3-highgpu-2g", strategies), "plugin-plan");
    expect_reproduced(r);
    EXPECT_TRUE(r.files.count("nodes.sh"));
    EXPECT_TRUE(r.files.count("device-plugin-node0.yaml"));
    bool mig = false;
    for (const PlanNode& node : r.plan.ranked.front().nodes) mig = mig || !node.partition.empty();
    EXPECT_EQ(r.files.count("mig-parted.yaml"), mig ? 1u : 0u);
  }
}

}  // namespace
}  // namespace gpumux
