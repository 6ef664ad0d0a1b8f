// GKE node pools end to end through the cluster layer (issue 24 item 3): what a GKE pool
// advertises (MIG partitions as nvidia.com/gpu, time-sharing on partitions), the node labels GKE
// sets and pods select with nodeSelector, and GKE's GPU taint with the tolerations Kubernetes
// gives pods that request GPUs. Each case replays a small cluster and checks who runs where.
#include <gtest/gtest.h>

#include <string>

#include "models/cluster/cluster_loader.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/node_state.hpp"

namespace gpumux::cluster {
namespace {

const PodRecord& pod(const ClusterResult& r, const std::string& name) {
  for (const PodRecord& p : r.pods) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pod " + name);
}

// N pods asking one nvidia.com/gpu each, GKE style: a nodeSelector on the given labels.
std::string gke_pods(int n, const std::string& selector, const std::string& extra = "") {
  std::string out = "  pods:\n";
  for (int i = 0; i < n; ++i) {
    out += "    - {name: p" + std::to_string(i) + ", arrival: " + std::to_string(i) +
           "s, duration: 1h, requests: {nvidia.com/gpu: 1}" +
           (selector.empty() ? "" : ", nodeSelector: {" + selector + "}") + extra + "}\n";
  }
  return out;
}

ClusterResult replay(const std::string& yaml) {
  return run_cluster(load_cluster_text(yaml, "gke.yaml"));
}

TEST(ClusterGkePods, PartitionsAreNvidiaComGpuAndGkeStylePodsRun) {
  // Two 3g.40gb partitions per H100; pods select the size as GKE documents and ask nvidia.com/gpu.
  const std::string pools =
      "cluster:\n  duration: 10s\n  pools:\n    - {name: mig, count: 1, gpu: h100-sxm-80gb, "
      "gpus_per_node: 1, sharing: {gke: {gpu-partition-size: 3g.40gb}}}\n";
  const ClusterSpec spec = load_cluster_text(
      pools + gke_pods(3, "cloud.google.com/gke-gpu-partition-size: 3g.40gb"), "gke.yaml");
  EXPECT_EQ(advertised_lines(spec).front(),
            "mig: 1 node(s) x 1 h100-sxm-80gb, advertises nvidia.com/gpu: 2");
  const ClusterResult r = run_cluster(spec);
  EXPECT_GE(pod(r, "p0").start, 0);
  EXPECT_GE(pod(r, "p1").start, 0);
  EXPECT_NE(pod(r, "p0").units, pod(r, "p1").units);
  EXPECT_EQ(pod(r, "p2").start, -1);  // a third partition does not exist
  EXPECT_EQ(pod(r, "p2").pending_reason, "Insufficient nvidia.com/gpu");
  // The same with the mig-config spelling (it advertised nvidia.com/mig-3g.40gb before).
  const ClusterResult again = replay(
      "cluster:\n  duration: 10s\n  pools:\n    - {name: mig, count: 1, gpu: h100-sxm-80gb, "
      "gpus_per_node: 1, sharing: {gke: {mig-config: \"3g.40gb:2\"}}}\n" +
      gke_pods(2, "cloud.google.com/gke-gpu-partition-size: 3g.40gb"));
  EXPECT_GE(pod(again, "p1").start, 0);
}

TEST(ClusterGkePods, TimeSharingOnPartitionsHoldsClientsPerPartition) {
  // 2 partitions x 3 clients: six pods run, the seventh waits; replicas spread over partitions.
  const ClusterResult r = replay(
      "cluster:\n  duration: 10s\n  pools:\n    - {name: ts, count: 1, gpu: h100-sxm-80gb, "
      "gpus_per_node: 1, sharing: {gke: {gpu-partition-size: 3g.40gb, gpu-sharing-strategy: "
      "time-sharing, max-shared-clients-per-gpu: 3}}}\n" +
      gke_pods(7,
               "cloud.google.com/gke-gpu-partition-size: 3g.40gb, "
               "cloud.google.com/gke-gpu-sharing-strategy: time-sharing, "
               "cloud.google.com/gke-max-shared-clients-per-gpu: \"3\""));
  for (const char* name : {"p0", "p1", "p2", "p3", "p4", "p5"}) EXPECT_GE(pod(r, name).start, 0);
  EXPECT_EQ(pod(r, "p6").start, -1);
  // The device plugin's law: each replica to the partition with the most free slots.
  EXPECT_NE(pod(r, "p0").units, pod(r, "p1").units);
  EXPECT_EQ(pod(r, "p0").units, pod(r, "p2").units);
}

TEST(ClusterGkePods, NodeSelectorOnGkeLabels) {
  const std::string pools =
      "cluster:\n  duration: 10s\n  pools:\n"
      "    - {name: h100, count: 1, gpu: h100-sxm-80gb, gpus_per_node: 2, sharing: {gke: {}}}\n"
      "    - {name: a100, count: 1, gpu: a100-80gb, gpus_per_node: 2, sharing: {gke: {}}}\n";
  const ClusterSpec spec = load_cluster_text(
      pools + gke_pods(1, "cloud.google.com/gke-accelerator: nvidia-a100-80gb"), "gke.yaml");
  EXPECT_EQ(spec.pools[0].labels.at("cloud.google.com/gke-nodepool"), "h100");
  EXPECT_EQ(spec.pools[0].labels.at("cloud.google.com/gke-accelerator"), "nvidia-h100-80gb");
  EXPECT_EQ(spec.pools[1].labels.at("cloud.google.com/gke-accelerator"), "nvidia-a100-80gb");
  const ClusterResult r = run_cluster(spec);
  EXPECT_EQ(pod(r, "p0").pool, "a100");
  // A selector no node has: pending, with kube-scheduler's reason.
  const ClusterResult none =
      replay(pools + gke_pods(1, "cloud.google.com/gke-gpu-partition-size: 1g.10gb"));
  EXPECT_EQ(pod(none, "p0").start, -1);
  EXPECT_EQ(pod(none, "p0").pending_reason, "node(s) didn't match Pod's node affinity/selector");
  // By pool name, as `gpumux plan --platform gke` writes pods.
  EXPECT_EQ(pod(replay(pools + gke_pods(1, "cloud.google.com/gke-nodepool: h100")), "p0").pool,
            "h100");
}

TEST(ClusterGkePods, GpuTaintNextToCpuPools) {
  // With a CPU-only pool in the cluster, GKE taints the GPU pool nvidia.com/gpu=present:NoSchedule;
  // pods that request nvidia.com/gpu get the toleration (ExtendedResourceToleration).
  const std::string pools =
      "cluster:\n  duration: 10s\n  pools:\n"
      "    - {name: cpu, count: 1, gpus_per_node: 0, cpu: \"4\"}\n"
      "    - {name: gpu, count: 1, gpu: h100-sxm-80gb, gpus_per_node: 1, cpu: \"64\", "
      "sharing: {gke: {}}}\n"
      "  pods:\n"
      "    - {name: web, arrival: 0s, duration: 1h, requests: {cpu: \"8\"}}\n"
      "    - {name: web-ok, arrival: 0s, duration: 1h, requests: {cpu: \"8\"}, "
      "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]}\n"
      "    - {name: infer, arrival: 0s, duration: 1h, requests: {cpu: \"8\", nvidia.com/gpu: 1}}\n";
  const ClusterSpec spec = load_cluster_text(pools, "gke.yaml");
  ASSERT_EQ(spec.pools[1].taints.size(), 1u);
  EXPECT_EQ(spec.pools[1].taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(spec.pools[1].taints[0].value, "present");
  const ClusterResult r = run_cluster(spec);
  EXPECT_EQ(pod(r, "web").start, -1);  // 8 CPUs: not on the 4-CPU pool, tainted GPU pool
  EXPECT_EQ(pod(r, "web").pending_reason, "Insufficient cpu");
  EXPECT_NE(pod(r, "web").pending_message.find("untolerated taint {nvidia.com/gpu: present}"),
            std::string::npos)
      << pod(r, "web").pending_message;
  EXPECT_EQ(pod(r, "web-ok").pool, "gpu");
  EXPECT_EQ(pod(r, "infer").pool, "gpu");
  // Without a CPU-only pool there is no taint.
  const ClusterSpec alone = load_cluster_text(
      "cluster:\n  pools:\n    - {name: gpu, count: 1, gpu: h100-sxm-80gb, gpus_per_node: 1, "
      "sharing: {gke: {}}}\n  pods:\n    - {name: p, duration: 1s}\n",
      "gke.yaml");
  EXPECT_TRUE(alone.pools[0].taints.empty());
}

TEST(ClusterGkePods, TaintAndTolerationSyntax) {
  const ClusterSpec spec = load_cluster_text(
      "cluster:\n  duration: 10s\n  pools:\n"
      "    - {name: a, count: 1, gpus_per_node: 0, cpu: \"4\", taints: [\"team=ml:NoSchedule\"]}\n"
      "  pods:\n"
      "    - {name: other, duration: 1h, requests: {cpu: \"1\"}}\n"
      "    - {name: ml, duration: 1h, requests: {cpu: \"1\"}, tolerations: [{key: team, "
      "operator: Equal, value: ml}]}\n"
      "    - {name: any, duration: 1h, requests: {cpu: \"1\"}, tolerations: [{operator: "
      "Exists}]}\n",
      "t.yaml");
  const ClusterResult r = run_cluster(spec);
  EXPECT_EQ(pod(r, "other").start, -1);
  EXPECT_EQ(pod(r, "other").pending_reason, "node(s) had untolerated taint {team: ml}");
  EXPECT_GE(pod(r, "ml").start, 0);
  EXPECT_GE(pod(r, "any").start, 0);
  try {
    load_cluster_text(
        "cluster:\n  pools:\n    - {name: a, gpus_per_node: 0, taints: [\"k=v:Never\"]}\n"
        "  pods:\n    - {name: p, duration: 1s}\n",
        "t.yaml");
    FAIL() << "a bad taint effect was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NoSchedule, NoExecute or PreferNoSchedule"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace gpumux::cluster
