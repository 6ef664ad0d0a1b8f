// Cluster metrics (models/cluster/cluster_metrics.hpp) on a hand-checked replay: one node with
// two GPUs at 10 USD/h; pod a takes one GPU for 1 h from 0; pod b asks two GPUs at 0 and waits
// for a, then runs 1 h. Pending: a 0, b 3600 s. Node time 2 h = 20 USD; allocated: a half the
// node for 1 h (5 USD) + b the whole node for 1 h (10 USD).
#include <gtest/gtest.h>

#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_output.hpp"
#include "models/cluster/node_state.hpp"
#include "models/cluster/workload_pods.hpp"

#include <fmt/format.h>

namespace gpumux::cluster {
namespace {

ClusterSpec two_pods() {
  ClusterSpec c;
  NodePoolSpec p;
  p.name = "p";
  p.count = 1;
  p.gpus_per_node = 2;
  p.gpu_model = "a100-80gb";
  p.cpu_milli = 16000;
  p.memory_bytes = std::int64_t{64} << 30;
  p.cost_per_hour = 10.0;
  c.pools.push_back(p);
  PodSpec a;
  a.name = "a";
  a.pod_class = "small";
  a.gpu_resources["nvidia.com/gpu"] = 1;
  a.workload.duration = 3600 * kSecond;
  a.gpu_utilization = 0.5;
  a.gpu_memory_bytes = 20'000'000'000;
  PodSpec b = a;
  b.name = "b";
  b.pod_class = "big";
  b.gpu_resources["nvidia.com/gpu"] = 2;
  b.gpu_utilization = 1.0;
  b.gpu_memory_bytes = 0;
  c.pods = {a, b};
  return c;
}

TEST(ClusterMetrics, HandCheckedCostsPendingAndVram) {
  const ClusterResult r = run_cluster(two_pods());
  const ClusterMetrics m = cluster_metrics(r);
  EXPECT_EQ(r.end_time, 7200 * kSecond);
  ASSERT_EQ(m.classes.size(), 2u);
  const PendingStats& big = m.classes[0];  // sorted by name: big, small
  const PendingStats& small = m.classes[1];
  EXPECT_EQ(big.pod_class, "big");
  EXPECT_DOUBLE_EQ(big.p50_s, 3600.0);
  EXPECT_DOUBLE_EQ(big.max_s, 3600.0);
  EXPECT_DOUBLE_EQ(small.p99_s, 0.0);
  EXPECT_DOUBLE_EQ(m.cost_total, 20.0);
  EXPECT_DOUBLE_EQ(small.cost_allocated, 5.0);
  EXPECT_DOUBLE_EQ(big.cost_allocated, 10.0);
  EXPECT_DOUBLE_EQ(small.cost_used, 2.5);
  EXPECT_DOUBLE_EQ(m.cost_allocated, 15.0);
  // VRAM: GB-months = bytes / 1e9 x hours / 730.
  const double gpu_gb = static_cast<double>(gpu_model_memory_bytes("a100-80gb")) / 1e9;
  EXPECT_NEAR(m.vram_gb_months_provisioned, 2 * gpu_gb * 2.0 / 730.0, 1e-12);
  EXPECT_NEAR(m.vram_gb_months_allocated, (gpu_gb * 1.0 + 2 * gpu_gb * 1.0) / 730.0, 1e-12);
  EXPECT_NEAR(m.vram_gb_months_used, (20.0 * 1.0 + 2 * gpu_gb * 1.0) / 730.0, 1e-12);
  EXPECT_NEAR(m.usd_per_gb_month_allocated, 20.0 / m.vram_gb_months_allocated, 1e-9);
  EXPECT_GT(m.usd_per_gb_month_used, m.usd_per_gb_month_allocated);
  EXPECT_GT(m.usd_per_gb_month_allocated, m.usd_per_gb_month_provisioned);
  // Allocation: half the GPUs for the first hour, all for the second.
  EXPECT_NEAR(m.allocation_mean, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(m.allocation_final, 0.0);  // the last sample: b has left
  ASSERT_EQ(m.pending_reasons.size(), 1u);
  EXPECT_EQ(m.pending_reasons[0].first, "Insufficient nvidia.com/gpu");
  // The JSON carries the same numbers.
  const auto j = cluster_summary_json(r, m);
  EXPECT_DOUBLE_EQ(j["cost"]["total"].get<double>(), 20.0);
  EXPECT_EQ(j["classes"][0]["class"], "big");
}

}  // namespace
}  // namespace gpumux::cluster

namespace gpumux::cluster {
namespace {

TenantSpec inference_tenant() {
  TenantSpec t;
  t.workload.arrivals.process = ArrivalProcess::constant;
  t.workload.arrivals.rate_per_s = 40;
  KernelSpec k;
  k.name = "step";
  k.duration.value = 10 * kMillisecond;
  t.workload.kernels = {k};
  t.memory = std::int64_t{1} << 30;
  return t;
}

// Two workload pods time-sliced on one GPU see each other: their latency exceeds that of the
// same pod alone on its GPU.
TEST(ClusterWorkloadPods, LatencyReflectsNeighbours) {
  auto make = [](int pods, Nanos spacing = 0) {
    ClusterSpec c;
    NodePoolSpec p;
    p.name = "p";
    p.gpus_per_node = 1;
    p.gpu_model = "a100-80gb";
    p.cpu_milli = 16000;
    p.memory_bytes = std::int64_t{64} << 30;
    p.sharing.sharing = SharingKind::time_slicing;
    p.sharing.shared = {SharedResource{"nvidia.com/gpu", "nvidia.com/gpu", 4, {}, {}}};
    c.pools.push_back(p);
    for (int i = 0; i < pods; ++i) {
      PodSpec w;
      w.name = fmt::format("svc-{}", i);
      w.gpu_resources["nvidia.com/gpu"] = 1;
      w.arrival = i * spacing;
      w.workload.duration = 10 * kSecond;
      w.workload.tenant = inference_tenant();
      c.pods.push_back(w);
    }
    ClusterResult r = run_cluster(c);
    simulate_workload_pods(c, r);
    return r;
  };
  const ClusterResult alone = make(1), shared = make(2);
  ASSERT_FALSE(alone.pods[0].workload_device.empty());
  EXPECT_EQ(shared.pods[0].workload_device, shared.pods[1].workload_device);
  EXPECT_GT(alone.pods[0].workload_completed, 0);
  EXPECT_GT(shared.pods[0].latency_p50_ns, alone.pods[0].latency_p50_ns);

  // The same two pods 20 s apart (each runs 10 s): one GPU, never at the same time. Each runs
  // from its start to its end (tenant active windows), so each is the pod alone: the same
  // requests (10 s x 40/s) and the same latency.
  const ClusterResult apart = make(2, 20 * kSecond);
  ASSERT_EQ(apart.pods.size(), 2u);
  EXPECT_EQ(apart.pods[0].workload_device, apart.pods[1].workload_device);
  for (const PodRecord& p : apart.pods) {
    EXPECT_EQ(p.workload_completed, alone.pods[0].workload_completed) << p.name;
    EXPECT_EQ(p.latency_p50_ns, alone.pods[0].latency_p50_ns) << p.name;
    EXPECT_EQ(p.latency_p99_ns, alone.pods[0].latency_p99_ns) << p.name;
  }
  EXPECT_EQ(alone.pods[0].workload_completed, 400);
}

}  // namespace
}  // namespace gpumux::cluster
