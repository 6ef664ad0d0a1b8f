// Cluster metrics (models/cluster/cluster_metrics.hpp) on a hand-checked replay: one node with
// two GPUs at 10 USD/h; pod a takes one GPU for 1 h from 0; pod b asks two GPUs at 0 and waits
// for a, then runs 1 h. Pending: a 0, b 3600 s. Node time 2 h = 20 USD; allocated: a half the
// node for 1 h (5 USD) + b the whole node for 1 h (10 USD).
#include <gtest/gtest.h>

#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_output.hpp"
#include "models/cluster/node_state.hpp"
#include "models/cluster/scheduler.hpp"
#include "models/gpu/mig_layout.hpp"
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

// A pod that never starts waited at least until the end of the replay: its wait is censored
// there, not 0 (issue 24). One 1-GPU node; `hog` holds it for 2 h from 0; two `late` pods ask
// for it at 10 min; the replay ends at 1 h. Each late pod waited >= 50 min.
TEST(ClusterMetrics, NeverStartedPodsAreCensoredAtTheEnd) {
  ClusterSpec c = two_pods();
  c.pools[0].gpus_per_node = 1;
  PodSpec hog = c.pods[0];
  hog.name = "hog";
  hog.pod_class = "hog";
  hog.workload.duration = 7200 * kSecond;
  PodSpec late = c.pods[0];
  late.pod_class = "late";
  late.arrival = 600 * kSecond;
  late.workload.duration = 600 * kSecond;
  PodSpec late0 = late, late1 = late;
  late0.name = "late-0";
  late1.name = "late-1";
  PodSpec after = late;  // arrives after the end: neither a wait nor censored
  after.name = "after";
  after.arrival = 7000 * kSecond;
  c.pods = {hog, late0, late1, after};
  c.duration = 3600 * kSecond;
  const ClusterMetrics m = cluster_metrics(run_cluster(c));
  ASSERT_EQ(m.classes.size(), 2u);
  const PendingStats& late_stats = m.classes[1];
  EXPECT_EQ(late_stats.pod_class, "late");
  EXPECT_EQ(late_stats.pods, 3);
  EXPECT_EQ(late_stats.never_started, 3);
  EXPECT_EQ(late_stats.censored, 2);
  EXPECT_DOUBLE_EQ(late_stats.p50_s, 3000.0);  // 1 h - 10 min, a lower bound
  EXPECT_TRUE(late_stats.p50_censored);
  EXPECT_DOUBLE_EQ(late_stats.max_s, 3000.0);
  EXPECT_TRUE(late_stats.max_censored);
  // All pods: waits 0 (exact), 3000, 3000 (censored). p50 = the 2nd: censored; the hog's class
  // alone is exact.
  EXPECT_EQ(m.all.censored, 2);
  EXPECT_DOUBLE_EQ(m.all.p50_s, 3000.0);
  EXPECT_TRUE(m.all.p50_censored);
  EXPECT_FALSE(m.classes[0].p50_censored);
  EXPECT_DOUBLE_EQ(m.classes[0].p50_s, 0.0);
  // JSON and text say so.
  const ClusterResult r = run_cluster(c);
  const auto j = cluster_summary_json(r, cluster_metrics(r));
  EXPECT_EQ(j["pending"]["censored"], 2);
  EXPECT_EQ(j["pending"]["pending_p50_censored"], true);
  EXPECT_EQ(j["classes"][0]["pending_p50_censored"], false);
  const std::string text = cluster_summary_table(r, cluster_metrics(r));
  EXPECT_NE(text.find(">=50m"), std::string::npos) << text;
  EXPECT_NE(text.find("2 pod(s) had not started by the end"), std::string::npos) << text;
}

// A censored wait at or below a quantile's rank makes it a lower bound; above it, the quantile
// is exact. Ten pods of one class start at once; one more never starts.
TEST(ClusterMetrics, QuantilesBelowTheCensoredWaitsStayExact) {
  ClusterSpec c = two_pods();
  c.pools[0].gpus_per_node = 10;
  PodSpec one = c.pods[0];
  one.pod_class = "one";
  c.pods.clear();
  for (int i = 0; i < 10; ++i) {
    PodSpec p = one;
    p.name = fmt::format("p{}", i);
    c.pods.push_back(p);
  }
  PodSpec stuck = one;
  stuck.name = "stuck";
  stuck.gpu_resources["nvidia.com/gpu"] = 11;  // never fits
  c.pods.push_back(stuck);
  c.duration = 7200 * kSecond;
  const ClusterMetrics m = cluster_metrics(run_cluster(c));
  ASSERT_EQ(m.classes.size(), 1u);
  const PendingStats& s = m.classes[0];
  EXPECT_EQ(s.censored, 1);
  EXPECT_DOUBLE_EQ(s.p50_s, 0.0);  // rank 6 of 11: exact
  EXPECT_FALSE(s.p50_censored);
  EXPECT_DOUBLE_EQ(s.p90_s, 0.0);  // rank 10 of 11: exact
  EXPECT_FALSE(s.p90_censored);
  EXPECT_DOUBLE_EQ(s.p99_s, 7200.0);  // rank 11: the censored wait, a lower bound
  EXPECT_TRUE(s.p99_censored);
}

// Fragmentation is what the node's occupancy makes unusable: 0 when every GPU is idle (issue
// 24: FGD's own measure reported "1.50 GPUs fragmented (75.0 %)" here, from the CPU-only
// typical shapes, which can never use a GPU). FGD's measure F itself is unchanged: the score
// still uses it.
TEST(ClusterMetrics, IdleClusterHasNoFragmentation) {
  ClusterSpec c = two_pods();
  c.scheduler.policy = SchedulingPolicy::fgd;
  PodSpec gpu = c.pods[0];
  gpu.name = "gpu";
  gpu.workload.duration = 600 * kSecond;
  c.pods = {gpu};
  for (int i = 0; i < 3; ++i) {
    PodSpec cpu = gpu;
    cpu.name = fmt::format("cpu-{}", i);
    cpu.gpu_resources.clear();
    c.pods.push_back(cpu);
  }
  c.duration = 3600 * kSecond;
  c.sample = 60 * kSecond;
  const ClusterResult r = run_cluster(c);
  const ClusterMetrics m = cluster_metrics(r);
  EXPECT_EQ(r.samples.back().running, 0);
  EXPECT_DOUBLE_EQ(m.fragmentation_final_milli, 0.0);
  EXPECT_DOUBLE_EQ(m.fragmentation_final_ratio, 0.0);
  for (const ClusterSample& s : r.samples) {
    if (s.running == 0) {
      EXPECT_DOUBLE_EQ(s.fragmentation_milli, 0.0) << s.time;
    }
  }
  // FGD's F of the idle node: the CPU shapes (p = 3/4) cannot use its 2,000 free milli-GPUs.
  Scheduler sched(c);
  EXPECT_DOUBLE_EQ(sched.fgd_measure(0), 0.75 * 2000.0);
  EXPECT_DOUBLE_EQ(sched.node_fragmentation(0), 0.0);
  // While the GPU pod runs, its GPU is taken and the other is free and whole: still nothing
  // fragmented for a 1-GPU pod.
  EXPECT_DOUBLE_EQ(r.samples.front().fragmentation_milli, 0.0);
}

// A MIG instance's cost share is its compute slices over the GPU's (2/7 for 2g.20gb on an
// A100-80GB), as in the tenant layer (models/gpu/mig_layout.hpp mig_cost_fraction): one A100
// node at 7 USD/h cut in three 2g.20gb; one pod on one instance for 1 h pays 2 USD.
TEST(ClusterMetrics, MigCostShareIsComputeSlicesOverSeven) {
  ClusterSpec c = two_pods();
  c.pools[0].gpus_per_node = 1;
  c.pools[0].cost_per_hour = 7.0;
  c.pools[0].sharing.mig_strategy = MigStrategy::mixed;
  c.pools[0].sharing.mig_devices = {"2g.20gb", "2g.20gb", "2g.20gb"};
  PodSpec p = c.pods[0];
  p.gpu_resources.clear();
  p.gpu_resources["nvidia.com/mig-2g.20gb"] = 1;
  p.gpu_utilization = 1.0;
  c.pods = {p};
  c.duration = 3600 * kSecond;
  const ClusterMetrics m = cluster_metrics(run_cluster(c));
  EXPECT_NEAR(m.cost_allocated, 2.0, 1e-12);
  EXPECT_NEAR(m.cost_total, 7.0, 1e-12);
  EXPECT_DOUBLE_EQ(mig_cost_fraction(2, 7), 2.0 / 7.0);
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
