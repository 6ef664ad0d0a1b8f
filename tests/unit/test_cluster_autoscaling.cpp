// The cluster engine over time (models/cluster): preemption, the autoscaler's scale-up and
// scale-down, ignored deletions, pending reasons, and invariants on random instances. Placement
// and scoring: test_cluster_scheduler.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/node_state.hpp"
#include "models/cluster/scheduler.hpp"
#include "tests/support/cluster_specs.hpp"

namespace gpumux::cluster {
namespace {

using testing::find;
using testing::pod;
using testing::pool;

TEST(ClusterPreemption, HigherPriorityEvictsLowerWhichRequeues) {
  ClusterSpec c;
  c.pools.push_back(pool("p", 1, 1, "a100-80gb"));
  c.scheduler.preemption = true;
  PodSpec low = pod("low", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}});
  low.priority = 1;
  PodSpec high = pod("high", 10 * kSecond, 20 * kSecond, {{"nvidia.com/gpu", 1}});
  high.priority = 100;
  c.pods = {low, high};
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(find(r, "high").start, 10 * kSecond);
  EXPECT_EQ(find(r, "low").evictions, 1);
  EXPECT_EQ(find(r, "low").start, 30 * kSecond);  // restarted when high ended
  EXPECT_EQ(r.preemptions, 1);
  c.scheduler.preemption = false;
  EXPECT_EQ(find(run_cluster(c), "high").start, 100 * kSecond);
}

TEST(ClusterAutoscaling, ProvisionsAfterDelayAndScalesDownIdleNodes) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 0, 1, "a100-80gb");
  p.autoscaling = AutoscalingSpec{0, 2, 90 * kSecond, 600 * kSecond};
  c.pools.push_back(p);
  c.pods.push_back(pod("a", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("b", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("c", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.duration = 2000 * kSecond;
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(find(r, "a").start, 90 * kSecond);
  EXPECT_EQ(find(r, "b").start, 90 * kSecond);
  EXPECT_EQ(find(r, "c").start, 190 * kSecond);  // max 2 nodes: waits for a GPU
  EXPECT_EQ(r.pools[0].nodes_peak, 2);
  EXPECT_EQ(r.pools[0].nodes_final, 0);
  EXPECT_EQ(r.pools[0].scale_ups, 2);
  // Node 1 idles from 190 s, node 0 from 290 s: 100 + 10 min each... node-seconds:
  // node0 90..(290+600), node1 90..(190+600).
  EXPECT_DOUBLE_EQ(r.pools[0].node_seconds, (890.0 - 90.0) + (790.0 - 90.0));
}

// cluster-autoscaler's binpacking estimator sizes a scale-up for all pending pods (issue 24:
// two pods pending with max 3 got one node). One busy 1-GPU node; two 1-GPU pods arrive at
// 10 min: two nodes are added, both pods start after the provisioning delay.
TEST(ClusterAutoscaling, EstimatorAddsANodePerPendingPodThatNeedsOne) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 1, 1, "a100-80gb");
  p.autoscaling = AutoscalingSpec{1, 3, 120 * kSecond, 600 * kSecond};
  c.pools.push_back(p);
  c.pods.push_back(pod("hog", 0, 7200 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("late-0", 600 * kSecond, 600 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("late-1", 600 * kSecond, 600 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.duration = 3600 * kSecond;
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(r.pools[0].scale_ups, 2);
  EXPECT_EQ(r.pools[0].nodes_peak, 3);
  EXPECT_EQ(find(r, "late-0").start, 720 * kSecond);
  EXPECT_EQ(find(r, "late-1").start, 720 * kSecond);
}

// First-Fit Decreasing: three 1-GPU pods and one 2-GPU pod pending on 2-GPU nodes need three
// nodes (the 2-GPU pod first, on its own; then 1 + 1 and 1), not four; and the pool's max caps
// the estimate (max 2 from 0: two nodes, the rest waits).
TEST(ClusterAutoscaling, EstimatorBinpacksLargestFirstAndStopsAtMax) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 0, 2, "a100-80gb");
  p.autoscaling = AutoscalingSpec{0, 10, 60 * kSecond, 600 * kSecond};
  c.pools.push_back(p);
  for (int i = 0; i < 3; ++i) {
    c.pods.push_back(pod(fmt::format("one-{}", i), 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  }
  PodSpec two = pod("two", 0, 100 * kSecond, {{"nvidia.com/gpu", 2}});
  two.cpu_milli = 8000;  // the larger pod by cluster-autoscaler's score (CPU, memory)
  c.pods.push_back(two);
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(r.pools[0].scale_ups, 3);
  for (const PodRecord& pr : r.pods) EXPECT_EQ(pr.start, 60 * kSecond) << pr.name;
  c.pools[0].autoscaling->max_nodes = 2;
  const ClusterResult capped = run_cluster(c);
  EXPECT_EQ(capped.pools[0].scale_ups, 2);
  EXPECT_EQ(capped.pools[0].nodes_peak, 2);
}

// Pods that nodes already being provisioned will host are not counted again: a 2-GPU node on
// its way has room for a second 1-GPU pod that arrives meanwhile.
TEST(ClusterAutoscaling, PodsFittingUpcomingNodesAddNothing) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 0, 2, "a100-80gb");
  p.autoscaling = AutoscalingSpec{0, 5, 300 * kSecond, 600 * kSecond};
  c.pools.push_back(p);
  c.pods.push_back(pod("a", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("b", 60 * kSecond, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(r.pools[0].scale_ups, 1);
  EXPECT_EQ(find(r, "b").start, 300 * kSecond);
}

// The expanders (cluster-autoscaler FAQ "What are Expanders?"): a small pod that both pools
// can host. least-waste takes the pool whose new node it fills best (the small one); priority
// the pool whose name matches the highest value; first the first in file order; random is
// seeded (the same seed, the same pool) and over seeds picks both.
TEST(ClusterAutoscaling, ExpandersChooseThePool) {
  ClusterSpec c;
  NodePoolSpec big = pool("big-8x", 0, 8, "a100-80gb");
  big.cpu_milli = 96000;
  big.autoscaling = AutoscalingSpec{0, 2, 60 * kSecond, 600 * kSecond};
  NodePoolSpec small = pool("small-1x", 0, 1, "a100-80gb");
  small.cpu_milli = 8000;
  small.memory_bytes = std::int64_t{32} << 30;
  small.autoscaling = big.autoscaling;
  c.pools = {big, small};
  c.pods.push_back(pod("x", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  auto grown = [&](Expander e, std::uint64_t seed = 1) {
    c.autoscaler.expander = e;
    c.seed = seed;
    const ClusterResult r = run_cluster(c);
    return r.pools[0].scale_ups > 0 ? std::string("big") : std::string("small");
  };
  EXPECT_EQ(grown(Expander::least_waste), "small");
  EXPECT_EQ(grown(Expander::first), "big");
  c.autoscaler.priorities = {{10, {"small"}}, {50, {"^big-"}}};
  EXPECT_EQ(grown(Expander::priority), "big");
  c.autoscaler.priorities = {{10, {"big"}}, {50, {"nothing"}}, {20, {".*-1x$"}}};
  EXPECT_EQ(grown(Expander::priority), "small");
  std::set<std::string> seen;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const std::string first = grown(Expander::random, seed);
    EXPECT_EQ(grown(Expander::random, seed), first);
    seen.insert(first);
  }
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ClusterIgnoreDeletions, PodsNeverLeaveAndFailuresAreRecorded) {
  ClusterSpec c;
  c.pools.push_back(pool("p", 1, 2, "a100-80gb"));
  c.scheduler.ignore_deletions = true;
  for (int i = 0; i < 3; ++i) {
    c.pods.push_back(pod(fmt::format("p{}", i), i * kSecond, kSecond, {{"nvidia.com/gpu", 1}}));
  }
  const ClusterResult r = run_cluster(c);
  EXPECT_EQ(find(r, "p0").end, -1);
  EXPECT_EQ(find(r, "p2").start, -1);
  EXPECT_EQ(find(r, "p2").failed_at, 2 * kSecond);
  EXPECT_EQ(find(r, "p2").pending_reason, "Insufficient nvidia.com/gpu");
}

// Random instances: capacity conservation at every sample, no node over-committed, gangs all or
// nothing, pending times >= 0, bit-identical reruns.
class ClusterRandom : public ::testing::TestWithParam<int> {};

TEST_P(ClusterRandom, Invariants) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(GetParam()));
  ClusterSpec c;
  NodePoolSpec frac = pool("frac", 4, 4, "T4");
  frac.sharing.sharing = SharingKind::fractional;
  frac.cpu_milli = 16000;
  c.pools.push_back(frac);
  const SchedulingPolicy policies[] = {SchedulingPolicy::first_fit, SchedulingPolicy::best_fit,
                                       SchedulingPolicy::worst_fit, SchedulingPolicy::fgd};
  c.scheduler.policy = policies[GetParam() % 4];
  c.scheduler.preemption = GetParam() % 3 == 0;
  c.scheduler.node_score = GetParam() % 5 < 3 ? NodeScore::integer : NodeScore::exact;
  c.scheduler.tie_break = GetParam() % 2 == 0 ? TieBreak::node_name : TieBreak::random;
  Nanos t = 0;
  for (int i = 0; i < 120; ++i) {
    t += static_cast<Nanos>(rng() % 20) * kSecond;
    const int kind = static_cast<int>(rng() % 4);
    PodSpec p = kind == 0 ? pod(fmt::format("p{}", i), t, 0, {{"nvidia.com/gpu", 1}},
                                100 * static_cast<int>(1 + rng() % 9))
                          : pod(fmt::format("p{}", i), t, 0,
                                {{"nvidia.com/gpu", static_cast<int>(1 + rng() % 2)}});
    p.workload.duration = static_cast<Nanos>(1 + rng() % 200) * kSecond;
    p.cpu_milli = static_cast<std::int64_t>(1 + rng() % 8) * 1000;
    p.priority = static_cast<int>(rng() % 3);
    if (rng() % 6 == 0) {
      p.gang = 2;
      c.pods.push_back(p);
      p.name += "-b";
    }
    c.pods.push_back(p);
  }
  c.sample = 5 * kSecond;
  const ClusterResult r = run_cluster(c);
  const std::int64_t total = 4 * 4 * 1000;
  for (const ClusterSample& s : r.samples) {
    EXPECT_EQ(s.gpu_milli_total, total);
    EXPECT_GE(s.gpu_milli_allocated, 0);
    EXPECT_LE(s.gpu_milli_allocated, total);
    EXPECT_LE(s.cpu_allocated, s.cpu_total);
    EXPECT_GE(s.fragmentation_milli, -1e-9);
    EXPECT_LE(s.fragmentation_milli, static_cast<double>(total - s.gpu_milli_allocated) + 1e-6);
    // Nothing running: nothing fragmented (the reported measure counts what occupancy causes).
    if (s.running == 0) {
      EXPECT_NEAR(s.fragmentation_milli, 0.0, 1e-9) << "t=" << s.time;
    }
    // Allocation equals what the running pods hold.
    std::int64_t held = 0;
    std::map<int, std::int64_t> cpu_by_node;
    for (const PodRecord& p : r.pods) {
      if (p.start >= 0 && p.start <= s.time && (p.end < 0 || p.end > s.time)) {
        held += p.gpu_milli;
        cpu_by_node[p.node] += p.cpu_milli;
      }
    }
    if (!c.scheduler.preemption) {
      EXPECT_EQ(held, s.gpu_milli_allocated) << "t=" << s.time;
      for (const auto& [node, cpu] : cpu_by_node) EXPECT_LE(cpu, 16000);
    }
  }
  for (const PodRecord& p : r.pods) {
    if (p.start >= 0) {
      EXPECT_GE(p.pending_ns(), 0);
    }
  }
  // Gangs: both members started at the same time or neither.
  for (std::size_t i = 0; i + 1 < r.pods.size(); ++i) {
    if (r.pods[i + 1].member == 1 && r.pods[i].evictions == 0 && r.pods[i + 1].evictions == 0) {
      EXPECT_EQ(r.pods[i].start, r.pods[i + 1].start) << r.pods[i].name;
    }
  }
  const ClusterResult again = run_cluster(c);
  ASSERT_EQ(again.pods.size(), r.pods.size());
  for (std::size_t i = 0; i < r.pods.size(); ++i) {
    EXPECT_EQ(again.pods[i].start, r.pods[i].start);
    EXPECT_EQ(again.pods[i].node, r.pods[i].node);
    EXPECT_EQ(again.pods[i].gpus, r.pods[i].gpus);
  }
  ASSERT_EQ(again.samples.size(), r.samples.size());
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    EXPECT_EQ(again.samples[i].fragmentation_milli, r.samples[i].fragmentation_milli);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ClusterRandom, ::testing::Range(0, 12));

}  // namespace
}  // namespace gpumux::cluster
