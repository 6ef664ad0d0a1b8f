// The cluster engine (models/cluster): the device plugin's advertised capacity, the scheduler's
// filter, scoring policies (FGD by hand-checked fragmentation values), gangs and the inter-node
// law. Preemption, autoscaling, ignored deletions and the invariants on random instances:
// test_cluster_autoscaling.cpp.
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

TEST(ClusterAdvertise, WholeGpusAreNvidiaComGpu) {
  ResourceNames names;
  const PoolTemplate t = advertise(pool("p", 1, 8, "a100-80gb"), 0, names);
  EXPECT_EQ(t.units.size(), 8u);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/gpu")), 8);
  EXPECT_EQ(t.gpu_memory_bytes, gpu_model_memory_bytes("a100-80gb"));
  EXPECT_GT(t.gpu_memory_bytes, std::int64_t{79} << 30);
}

TEST(ClusterAdvertise, MigMixedAdvertisesOneResourcePerProfile) {
  ResourceNames names;
  NodePoolSpec p = pool("p", 1, 2, "a100-80gb");
  p.sharing.mig_strategy = MigStrategy::mixed;
  p.sharing.mig_devices = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
  const PoolTemplate t = advertise(p, 0, names);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/mig-3g.40gb")), 2);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/mig-2g.20gb")), 2);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/mig-1g.10gb")), 4);
  EXPECT_EQ(names.find("nvidia.com/gpu"), -1);
  // A 3g instance is 3 of 7 compute slices.
  EXPECT_EQ(t.units[0].gpu_milli, 1000 * 3 / 7);
}

TEST(ClusterAdvertise, MigSingleAdvertisesInstancesAsNvidiaComGpu) {
  ResourceNames names;
  NodePoolSpec p = pool("p", 1, 4, "a100-80gb");
  p.sharing.mig_strategy = MigStrategy::single;
  p.sharing.mig_devices = std::vector<std::string>(7, "1g.10gb");
  const PoolTemplate t = advertise(p, 0, names);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/gpu")), 28);
}

TEST(ClusterAdvertise, TimeSlicingReplicasAndRename) {
  ResourceNames names;
  NodePoolSpec p = pool("p", 1, 2, "a100-80gb");
  p.sharing.sharing = SharingKind::time_slicing;
  p.sharing.rename_by_default = true;
  p.sharing.shared = {SharedResource{"nvidia.com/gpu", "", 4, {}, {}}};
  const PoolTemplate t = advertise(p, 0, names);
  EXPECT_EQ(t.capacity_of(names.find("nvidia.com/gpu.shared")), 8);
  EXPECT_EQ(names.find("nvidia.com/gpu"), -1);
}

// failRequestsGreaterThanOne: the scheduler binds a 2-replica pod by its count (kube-scheduler
// sees only allocatable replicas), then the kubelet fails it at admission.
TEST(ClusterAdvertise, FailRequestsGreaterThanOneFailsTwoReplicasAtAdmission) {
  ResourceNames names;
  NodePoolSpec p = pool("p", 1, 1, "a100-80gb");
  p.sharing.sharing = SharingKind::time_slicing;
  p.sharing.fail_requests_greater_than_one = true;
  p.sharing.shared = {SharedResource{"nvidia.com/gpu", "nvidia.com/gpu", 4, {}, {}}};
  const PoolTemplate t = advertise(p, 0, names);
  const Demand two = demand_on(pod("a", 0, 1, {{"nvidia.com/gpu", 2}}), p, t, names);
  EXPECT_TRUE(two.possible);
  EXPECT_NE(two.admission_error.find("request for 'nvidia.com/gpu: 2' too large"),
            std::string::npos);
  const Demand one = demand_on(pod("a", 0, 1, {{"nvidia.com/gpu", 1}}), p, t, names);
  EXPECT_TRUE(one.possible);
  EXPECT_TRUE(one.admission_error.empty());
}

// The replay: the 2-replica pod is bound at its arrival and failed there (not pending), holds
// nothing, and the 1-replica pods that come after it all run (it left every replica free).
TEST(ClusterReplay, TwoSharedReplicasFailAtAdmissionAndHoldNothing) {
  ClusterSpec c;
  NodePoolSpec p = pool("ts", 1, 1, "a100-80gb");
  p.sharing.sharing = SharingKind::time_slicing;
  p.sharing.fail_requests_greater_than_one = true;
  p.sharing.shared = {SharedResource{"nvidia.com/gpu", "nvidia.com/gpu", 4, {}, {}}};
  c.pools = {p};
  const Nanos second = 1'000'000'000;
  c.pods.push_back(pod("two", 5 * second, 100 * second, {{"nvidia.com/gpu", 2}}));
  for (int k = 0; k < 4; ++k) {
    c.pods.push_back(
        pod("one-" + std::to_string(k), 6 * second, 100 * second, {{"nvidia.com/gpu", 1}}));
  }
  const ClusterResult r = run_cluster(c);
  const PodRecord& two = find(r, "two");
  EXPECT_TRUE(two.admission_failed);
  EXPECT_EQ(two.failed_at, 5 * second);
  EXPECT_EQ(two.start, -1);
  EXPECT_EQ(two.pending_reason, "UnexpectedAdmissionError");
  EXPECT_EQ(two.node_name, "ts-0");
  for (int k = 0; k < 4; ++k) {
    const PodRecord& one = find(r, "one-" + std::to_string(k));
    EXPECT_EQ(one.start, 6 * second);
    EXPECT_FALSE(one.admission_failed);
  }
  const ClusterMetrics m = cluster_metrics(r);
  EXPECT_EQ(m.admission_failed, 1);
  EXPECT_TRUE(m.pending_reasons.empty());
  EXPECT_EQ(m.all.never_started, 0);
}

TEST(ClusterAdvertise, UnknownMigProfileIsAnInputError) {
  ResourceNames names;
  NodePoolSpec p = pool("p", 1, 1, "a100-80gb");
  p.sharing.mig_strategy = MigStrategy::mixed;
  p.sharing.mig_devices = {"5g.50gb"};
  EXPECT_THROW(advertise(p, 0, names), InputError);
}

// Anti-pattern 3: three pods asking for a 2g.20gb slice on a pool whose layout has one.
ClusterSpec antipattern3(const std::vector<std::string>& layout, bool time_slice) {
  ClusterSpec c;
  NodePoolSpec p = pool("a100", 1, 1, "a100-80gb");
  p.sharing.mig_strategy = MigStrategy::mixed;
  p.sharing.mig_devices = layout;
  if (time_slice) {
    p.sharing.sharing = SharingKind::time_slicing;
    p.sharing.shared = {
        SharedResource{"nvidia.com/mig-2g.20gb", "nvidia.com/mig-2g.20gb", 3, {}, {}}};
  }
  c.pools.push_back(p);
  for (int i = 0; i < 3; ++i) {
    c.pods.push_back(
        pod(fmt::format("train-{}", i), 0, 100 * kSecond, {{"nvidia.com/mig-2g.20gb", 1}}));
  }
  return c;
}

TEST(ClusterStory, MigLayoutMismatchLeavesPodsPendingInsufficient) {
  const ClusterResult r =
      run_cluster(antipattern3({"2g.20gb", "1g.10gb", "1g.10gb", "1g.10gb"}, false));
  int waited = 0;
  for (const PodRecord& p : r.pods) {
    if (p.pending_reason.empty()) continue;
    ++waited;
    EXPECT_EQ(p.pending_reason, "Insufficient nvidia.com/mig-2g.20gb");
    EXPECT_EQ(p.pending_message, "0/1 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb.");
  }
  EXPECT_EQ(waited, 2);
  // They run one after another: 0, 100 s, 200 s.
  std::vector<Nanos> starts;
  for (const PodRecord& p : r.pods) starts.push_back(p.start);
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<Nanos>{0, 100 * kSecond, 200 * kSecond}));
}

TEST(ClusterStory, MatchingLayoutOrTimeSlicingRunsAllThree) {
  for (const ClusterResult& r :
       {run_cluster(antipattern3({"2g.20gb", "2g.20gb", "2g.20gb"}, false)),
        run_cluster(antipattern3({"2g.20gb", "1g.10gb"}, true))}) {
    for (const PodRecord& p : r.pods) {
      EXPECT_EQ(p.start, 0) << p.name;
      EXPECT_TRUE(p.pending_reason.empty());
    }
  }
}

// "Pod pending, GPU available": two nodes with one free GPU each; a 2-GPU pod waits, fragmented.
TEST(ClusterStory, FreeGpusSplitAcrossNodesIsFragmented) {
  ClusterSpec c;
  c.pools.push_back(pool("p", 2, 2, "a100-80gb"));
  c.pods.push_back(pod("a", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.pods.push_back(pod("b", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.scheduler.policy = SchedulingPolicy::worst_fit;  // spreads a and b over the two nodes
  c.pods.push_back(pod("big", kSecond, 10 * kSecond, {{"nvidia.com/gpu", 2}}));
  const ClusterResult r = run_cluster(c);
  EXPECT_NE(find(r, "a").node, find(r, "b").node);
  const PodRecord& big = find(r, "big");
  EXPECT_EQ(big.pending_reason, "fragmented");
  EXPECT_EQ(big.pending_message, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(big.start, 100 * kSecond);
  // Best-fit packs a and b on one node and the 2-GPU pod runs at once.
  c.scheduler.policy = SchedulingPolicy::best_fit;
  EXPECT_EQ(find(run_cluster(c), "big").start, kSecond);
}

// A data-parallel gang of two on one node vs two nodes: the run differs by exactly
// steps x (ring all-reduce over the network - over NVLink).
TEST(ClusterStory, GangAcrossNodesIsSlowerByTheRingAllReduceLaw) {
  const std::int64_t bytes = std::int64_t{1} << 30;
  const std::int64_t steps = 1000;
  auto make = [&](int gpus_per_node) {
    ClusterSpec c;
    NodePoolSpec p = pool("p", 2, gpus_per_node, "a100-80gb");
    p.nvlink_bytes_per_s = 300e9;
    p.network_bytes_per_s = 12.5e9;
    c.pools.push_back(p);
    PodSpec g = pod("dp", 0, 60 * kSecond, {{"nvidia.com/gpu", 1}});
    g.gang = 2;
    g.gang_bytes_per_step = bytes;
    g.gang_steps = steps;
    g.name = "dp-0";
    c.pods.push_back(g);
    g.name = "dp-1";
    c.pods.push_back(g);
    return run_cluster(c);
  };
  const ClusterResult one = make(2), two = make(1);
  EXPECT_FALSE(find(one, "dp-0").spans_nodes);
  EXPECT_TRUE(find(two, "dp-0").spans_nodes);
  EXPECT_EQ(find(one, "dp-0").node, find(one, "dp-1").node);
  // 2 (n-1)/n x bytes / bw with n = 2: bytes / bw.
  const Nanos nv = static_cast<Nanos>(std::llround(static_cast<double>(bytes) / 300e9 * 1e9));
  const Nanos net = static_cast<Nanos>(std::llround(static_cast<double>(bytes) / 12.5e9 * 1e9));
  EXPECT_EQ(find(one, "dp-0").end, 60 * kSecond + steps * nv);
  EXPECT_EQ(find(two, "dp-1").end, 60 * kSecond + steps * net);
}

TEST(ClusterGang, MembersMustBeConsecutiveIdenticalPods) {
  ClusterSpec c;
  c.pools.push_back(pool("p", 1, 2, "a100-80gb"));
  PodSpec g = pod("g-0", 0, kSecond, {{"nvidia.com/gpu", 1}});
  g.gang = 2;
  c.pods.push_back(g);
  EXPECT_THROW(run_cluster(c), InputError);
}

TEST(ClusterGang, AllOrNothing) {
  ClusterSpec c;
  c.pools.push_back(pool("p", 2, 1, "a100-80gb"));
  c.pods.push_back(pod("solo", 0, 50 * kSecond, {{"nvidia.com/gpu", 1}}));
  PodSpec g = pod("g-0", kSecond, 10 * kSecond, {{"nvidia.com/gpu", 1}});
  g.gang = 2;
  c.pods.push_back(g);
  g.name = "g-1";
  c.pods.push_back(g);
  const ClusterResult r = run_cluster(c);
  // Only one GPU is free at 1 s: neither member starts until solo ends.
  EXPECT_EQ(find(r, "g-0").start, 50 * kSecond);
  EXPECT_EQ(find(r, "g-1").start, 50 * kSecond);
  // One GPU free in the whole cluster for a gang of two: not fragmentation, too little.
  EXPECT_EQ(find(r, "g-0").pending_reason, "Insufficient nvidia.com/gpu");
}

// FGD on a hand-checked case: typical pods all ask 600 milli-GPUs. Node A is empty, node B has
// 400 m used on GPU 0. A 400 m pod on B's GPU 0 leaves 200 m no typical pod can use
// (fragmentation +200); on A's GPU 0 it leaves 600 m, usable (+0). FGD picks A, best-fit B.
TEST(ClusterFgd, PicksTheNodeWhoseFragmentationGrowsLeast) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 2, 1, "T4");
  p.sharing.sharing = SharingKind::fractional;
  c.pools.push_back(p);
  c.pods.push_back(pod("first", 0, 1000 * kSecond, {{"nvidia.com/gpu", 1}}, 400));
  c.pods.push_back(pod("second", kSecond, 1000 * kSecond, {{"nvidia.com/gpu", 1}}, 400));
  for (int i = 0; i < 20; ++i) {
    PodSpec t = pod(fmt::format("t{}", i), 2000 * kSecond, kSecond, {{"nvidia.com/gpu", 1}}, 600);
    c.pods.push_back(t);
  }
  c.pods[0].cpu_milli = c.pods[1].cpu_milli = 1000;
  for (PodSpec& t : c.pods) t.cpu_milli = 1000;
  c.scheduler.policy = SchedulingPolicy::fgd;
  const ClusterResult fgd = run_cluster(c);
  EXPECT_NE(find(fgd, "first").node, find(fgd, "second").node);
  c.scheduler.policy = SchedulingPolicy::best_fit;
  const ClusterResult bf = run_cluster(c);
  EXPECT_EQ(find(bf, "first").node, find(bf, "second").node);
}

TEST(ClusterFgd, NodeFragmentationMatchesTheDefinition) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 1, 2, "T4");
  p.sharing.sharing = SharingKind::fractional;
  c.pools.push_back(p);
  c.pods.push_back(pod("a", 0, 1000 * kSecond, {{"nvidia.com/gpu", 1}}, 700));  // typical 700 m
  c.pods.push_back(pod("b", 0, 1000 * kSecond, {{"nvidia.com/gpu", 2}}));       // typical 2 GPUs
  Scheduler s(c);
  ASSERT_EQ(s.typical().size(), 2u);
  EXPECT_DOUBLE_EQ(s.node_fragmentation(0), 0.0);  // empty: both shapes fit, all usable
  Allocation a;
  ASSERT_TRUE(s.choose(s.shape_of_pod(0), a));
  s.apply(s.shape_of_pod(0), a);
  // Free [300, 1000]: the 700 m shape (p = 1/2) cannot use 300; the 2-GPU shape (p = 1/2) does
  // not fit: all 1300 free are unusable. F = 0.5 x 300 + 0.5 x 1300 = 800.
  EXPECT_DOUBLE_EQ(s.node_fragmentation(0), 800.0);
  EXPECT_DOUBLE_EQ(s.fragmentation_total(), 800.0);
}

// kube-scheduler keeps node scores as integers 0..100: FGD's is trunc(100 sigmoid(gain /
// 1000)) (FGDScorePlugin), best-fit's trunc(100 (1 - L)) (BestFitScorePlugin).
TEST(ClusterScores, IntegerScoresAreTheReferencesClosedForms) {
  EXPECT_EQ(fgd_node_score(0, NodeScore::integer), 50);
  EXPECT_EQ(fgd_node_score(1000, NodeScore::integer), 73);   // 100 / (1 + e^-1) = 73.1
  EXPECT_EQ(fgd_node_score(-1000, NodeScore::integer), 26);  // 26.9
  EXPECT_EQ(fgd_node_score(-1e-9, NodeScore::integer), 49);  // just below 50
  EXPECT_EQ(fgd_node_score(40, NodeScore::integer), 50);     // 50.99...
  EXPECT_EQ(fgd_node_score(41, NodeScore::integer), 51);     // 51.02
  EXPECT_DOUBLE_EQ(fgd_node_score(40, NodeScore::exact), 40);
  EXPECT_EQ(fit_node_score(0.25, true, NodeScore::integer), 75);
  EXPECT_EQ(fit_node_score(0.2549, true, NodeScore::integer), 74);
  EXPECT_EQ(fit_node_score(0.2549, false, NodeScore::integer), 25);
  EXPECT_DOUBLE_EQ(fit_node_score(0.25, true, NodeScore::exact), -0.25);
}

// Ties among equal integer scores go to the smallest node name (the FGD simulator's
// kube-scheduler), whatever the index. Pool "z" comes first in the file, pool "a" second; their
// nodes differ in CPU by 0.1 %: best-fit's leftovers differ (exact scores prefer z-0) but round
// to the same integer, so a-0 wins by name.
TEST(ClusterScores, IntegerTiesGoToTheSmallestNodeName) {
  ClusterSpec c;
  NodePoolSpec z = pool("z", 1, 1, "a100-80gb");
  z.cpu_milli = 64000;
  NodePoolSpec a = pool("a", 1, 1, "a100-80gb");
  a.cpu_milli = 64100;
  c.pools = {z, a};
  c.pods.push_back(pod("x", 0, 100 * kSecond, {{"nvidia.com/gpu", 1}}));
  c.scheduler.policy = SchedulingPolicy::best_fit;
  EXPECT_EQ(find(run_cluster(c), "x").node_name, "a-0");
  c.scheduler.node_score = NodeScore::exact;
  EXPECT_EQ(find(run_cluster(c), "x").node_name, "z-0");
  c.scheduler.policy = SchedulingPolicy::first_fit;
  c.scheduler.node_score = NodeScore::integer;
  EXPECT_EQ(find(run_cluster(c), "x").node_name, "z-0");  // first feasible in file order
  // Random ties: seeded, so the same seed repeats its choice and some seed picks each node.
  c.scheduler.policy = SchedulingPolicy::best_fit;
  c.scheduler.tie_break = TieBreak::random;
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    c.scheduler.tie_seed = seed;
    const std::string n = find(run_cluster(c), "x").node_name;
    EXPECT_EQ(find(run_cluster(c), "x").node_name, n);
    seen.insert(n);
  }
  EXPECT_EQ(seen.size(), 2u);
}

// Whole-node pods fill identical empty nodes in the tie order: node-name order under `name`;
// under `permutation` a seeded order of the nodes fixed for the run (the FGD simulator's
// random name prefixes), the same for the same seed and different for another.
TEST(ClusterScores, PermutationTiesFollowOneSeededOrderOfTheNodes) {
  ClusterSpec c;
  c.pools.push_back(pool("n", 8, 2, "a100-80gb"));
  for (int i = 0; i < 8; ++i) {
    c.pods.push_back(
        pod(fmt::format("p{}", i), i * kSecond, 100 * kSecond, {{"nvidia.com/gpu", 2}}));
  }
  c.scheduler.policy = SchedulingPolicy::best_fit;
  auto fill_order = [&](TieBreak t, std::uint64_t seed) {
    c.scheduler.tie_break = t;
    c.scheduler.tie_seed = seed;
    std::vector<int> order;
    for (const PodRecord& r : run_cluster(c).pods) order.push_back(r.node);
    return order;
  };
  const std::vector<int> by_name = fill_order(TieBreak::node_name, 0);
  EXPECT_EQ(by_name, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const std::vector<int> a = fill_order(TieBreak::permutation, 1);
  EXPECT_EQ(fill_order(TieBreak::permutation, 1), a);
  EXPECT_NE(fill_order(TieBreak::permutation, 2), a);
  EXPECT_NE(a, by_name);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, by_name);  // every node once: a permutation
}

// FGD's typical shapes are taken in steps of fgd_typical_step until they cover the threshold
// (GetTypicalPods): 1,000 pods of 12 shapes (900, 60, then ten of 4 pods); threshold 95 (950
// pods) needs two shapes with step 1, ten with step 10 (a whole step), all twelve with step 100.
TEST(ClusterFgd, TypicalShapesAreTakenInSteps) {
  ClusterSpec c;
  NodePoolSpec p = pool("p", 1, 8, "T4");
  p.sharing.sharing = SharingKind::fractional;
  c.pools.push_back(p);
  int n = 0;
  for (int i = 0; i < 900; ++i) {
    c.pods.push_back(pod(fmt::format("a{}", n++), 0, kSecond, {{"nvidia.com/gpu", 1}}, 500));
  }
  for (int i = 0; i < 60; ++i) {
    c.pods.push_back(pod(fmt::format("a{}", n++), 0, kSecond, {{"nvidia.com/gpu", 1}}, 300));
  }
  for (int shape = 0; shape < 10; ++shape) {
    for (int i = 0; i < 4; ++i) {
      PodSpec q =
          pod(fmt::format("a{}", n++), 0, kSecond, {{"nvidia.com/gpu", 1}}, 100 + 50 * shape);
      q.cpu_milli = 3000;
      c.pods.push_back(q);
    }
  }
  c.scheduler.policy = SchedulingPolicy::fgd;
  c.scheduler.fgd_typical_step = 1;
  EXPECT_EQ(Scheduler(c).typical().size(), 2u);
  c.scheduler.fgd_typical_step = 10;
  EXPECT_EQ(Scheduler(c).typical().size(), 10u);
  c.scheduler.fgd_typical_step = 100;
  EXPECT_EQ(Scheduler(c).typical().size(), 12u);
  double sum = 0;
  const Scheduler all(c);
  for (const auto& [shape, w] : all.typical()) sum += w;
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

}  // namespace
}  // namespace gpumux::cluster
