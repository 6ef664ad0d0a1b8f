// gpumux plan on platforms of nodes and machine types: node platforms against brute force on
// small random instances, the many-tenant search's bound and optimality claim, what each platform
// runs, the ranking order (cost, then margin, then isolation), infeasible answers from the alone
// checks and the SLO check's headroom. The planner's search itself: test_plan.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include "models/plan/planner.hpp"
#include "models/plan/slo_check.hpp"
#include "models/scenario/resolve.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "tests/support/plan_instances.hpp"

namespace gpumux {
namespace {

using testing::kNode;
using testing::random_instance;

std::string on_nodes(std::string yaml, const std::string& platform, const std::string& machines) {
  yaml.replace(yaml.find("  max_gpus:"), 0,
               "  platform: " + platform + "\n  machines: [" + machines + "]\n");
  return yaml;
}

TEST(Plan, NodePlatformsMatchBruteForceOnRandomSmallInstances) {
  // GKE and the device plugin: nodes of machine types, one configuration per node, the pods
  // balanced over the node's devices. Brute force simulates every balanced split of every group
  // on every machine type as a whole node.
  std::mt19937 rng(20261202);
  int feasible = 0;
  for (int instance = 0; instance < 8; ++instance) {
    const std::string platform = instance % 2 ? "device-plugin" : "gke";
    const std::string yaml = on_nodes(random_instance(rng, 3, 4), platform,
                                      "a3-highgpu-1g, a3-highgpu-2g, a2-highgpu-1g");
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions fast;
    fast.jobs = 2;
    fast.refine = false;
    const PlanResult planned = plan_scenario(scenario, fast);
    PlanOptions brute;
    brute.exhaustive = true;
    const PlanResult exhaustive = plan_scenario(scenario, brute);
    std::printf(
        "node instance %d (%s): planner %lld simulations, brute force %lld, cost %g vs %g\n",
        instance, platform.c_str(), static_cast<long long>(planned.stats.simulations),
        static_cast<long long>(exhaustive.stats.simulations),
        planned.found() ? planned.ranked.front().cost_per_hour : -1.0,
        exhaustive.found() ? exhaustive.ranked.front().cost_per_hour : -1.0);
    SCOPED_TRACE(yaml);
    ASSERT_EQ(planned.found(), exhaustive.found());
    if (!planned.found()) continue;
    ++feasible;
    EXPECT_NEAR(planned.ranked.front().cost_per_hour, exhaustive.ranked.front().cost_per_hour,
                1e-9);
    const PlanSetup& best = planned.ranked.front();
    // The price is the nodes': host + GPUs x the GPU model's price; the whole-setup run agrees.
    double nodes = 0;
    for (const PlanNode& node : best.nodes) {
      nodes += node.cost_per_hour;
      EXPECT_NE(node.family, "mig+mps");
    }
    EXPECT_NEAR(nodes, best.cost_per_hour, 1e-9);
    EXPECT_TRUE(best.reason.empty()) << best.reason;
    for (const PlanTenantOutcome& o : best.outcomes)
      EXPECT_TRUE(o.met) << o.name << ": " << o.reason;
  }
  EXPECT_GE(feasible, 3);
}

TEST(Plan, ManyTenantSearchIsBoundedAndItsOptimalClaimHolds) {
  // The scalable search (run above 10 tenants; forced here on small instances): its lower bound
  // never exceeds the true optimum (brute force), its answer never undercuts it, and when it
  // calls its answer optimal (answer = bound) the answer is the optimum. It is a heuristic (no
  // optimality claim beyond the bound's), so how often it finds the optimum is printed, and
  // guarded: at least half of the answers (the refinement's mixed setups made it 5 of 6 here;
  // one-family packings found 4).
  std::mt19937 rng(20261203);
  int compared = 0, proven = 0, optimal = 0;
  for (int instance = 0; instance < 8; ++instance) {
    std::string yaml = random_instance(rng, 4, 4);
    if (instance % 2) yaml = on_nodes(yaml, "gke", "a3-highgpu-1g, a3-highgpu-2g, a2-highgpu-1g");
    // Both searches may grow a window as far (the packing search's default bound is shorter:
    // 4 x the window against 16 x; a unit undecided there is not ranked, which costs answers).
    yaml.replace(yaml.find("  max_gpus:"), 0, "  max_duration: 32s\n");
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions brute;
    brute.exhaustive = true;
    const PlanResult exact = plan_scenario(scenario, brute);
    PlanOptions large;
    large.jobs = 2;
    large.exact_tenants = 0;
    const PlanResult packed = plan_scenario(scenario, large);
    SCOPED_TRACE(yaml);
    // The alone checks answer an infeasible plan before either search.
    EXPECT_TRUE(packed.large || !packed.infeasible_alone.empty());
    if (!exact.found()) {
      EXPECT_FALSE(packed.found());
      continue;
    }
    ++compared;
    const double optimum = exact.ranked.front().cost_per_hour;
    EXPECT_LE(packed.lower_bound, optimum + 1e-9);
    if (!packed.found()) continue;
    const double answer = packed.ranked.front().cost_per_hour;
    EXPECT_GE(answer, optimum - 1e-9);
    if (answer <= optimum + 1e-9) ++optimal;
    if (answer <= packed.lower_bound + 1e-9) {
      ++proven;
      EXPECT_NEAR(answer, optimum, 1e-9);
    }
    for (const PlanTenantOutcome& o : packed.ranked.front().outcomes) {
      EXPECT_TRUE(o.met) << o.name << ": " << o.reason;
    }
  }
  EXPECT_GE(compared, 4);
  EXPECT_GE(2 * optimal, compared);
  std::printf(
      "many-tenant search: %d of %d answers are the optimum, %d of them proven by the bound\n",
      optimal, compared, proven);
}

TEST(Plan, PlatformsKeepToWhatTheyRun) {
  for (const std::string platform : {"gke", "device-plugin", "mig-parted"}) {
    std::string yaml = kNode;
    yaml.replace(yaml.find("  max_gpus: 4"), 0, "  platform: " + platform + "\n");
    PlanOptions options;
    options.jobs = 2;
    const PlanResult r = plan_scenario(load_scenario_text(yaml, "node.yaml"), options);
    ASSERT_TRUE(r.found()) << platform;
    EXPECT_EQ(r.platform, platform);
    bool mig_mps_row = false;
    for (const PlanSetup& setup : r.ranked) {
      mig_mps_row = mig_mps_row || setup.label == "mig+mps";
      // Every setup is whole nodes of catalog machine types.
      EXPECT_TRUE(!setup.feasible || !setup.nodes.empty()) << setup.label;
      for (const PlanNode& node : setup.nodes) {
        EXPECT_FALSE(node.machine.empty());
        if (platform != "mig-parted") {
          EXPECT_NE(node.family, "mig+mps");
        }
      }
    }
    // MPS inside MIG only where the platform runs it.
    EXPECT_EQ(mig_mps_row, platform == "mig-parted") << platform;
    if (platform != "mig-parted") {
      ASSERT_FALSE(r.notes.empty());
      EXPECT_NE(r.notes.front().find("mig+mps left out"), std::string::npos);
    }
  }
}

TEST(Plan, RankingOrderIsCostThenMarginThenIsolation) {
  PlanOptions options;
  options.jobs = 2;
  const PlanResult r = plan_scenario(load_scenario_text(kNode, "node.yaml"), options);
  ASSERT_TRUE(r.found());
  EXPECT_EQ(r.ranked.front().label, "best");
  EXPECT_NE(plan_table(r).find("ranked by cost, then SLO margin"), std::string::npos);
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    const PlanSetup& a = r.ranked[i - 1];
    const PlanSetup& b = r.ranked[i];
    if (!b.feasible) continue;
    ASSERT_TRUE(a.feasible);
    if (std::abs(a.cost_per_hour - b.cost_per_hour) > 1e-9) {
      EXPECT_LT(a.cost_per_hour, b.cost_per_hour);
    } else if (std::abs(a.worst_ratio - b.worst_ratio) > 1e-12) {
      // Ranked on the per-GPU runs' ratio; the winner's whole-setup run is shown beside it.
      EXPECT_LT(a.worst_ratio, b.worst_ratio) << a.label << " before " << b.label;
    } else {
      EXPECT_GE(a.memory_isolated + a.fault_isolated, b.memory_isolated + b.fault_isolated);
    }
  }
}

TEST(Plan, InfeasibleAnswersFromTheAloneChecks) {
  std::string yaml = kNode;
  yaml.replace(yaml.find("slo: {p99: 60ms}"), 16, "slo: {p99: 9ms} ");
  const PlanResult result = plan_scenario(load_scenario_text(yaml, "node.yaml"));
  EXPECT_FALSE(result.found());
  ASSERT_EQ(result.infeasible_alone, std::vector<std::string>{"big"});
  // One simulation per tenant and GPU model, no search; a verdict an alone check could not
  // decide runs again over a longer window (counted apart).
  EXPECT_EQ(result.stats.simulations - result.stats.longer_windows, 4);
  EXPECT_LE(result.stats.longer_windows, 4);
  EXPECT_EQ(result.tenant_names.size(), 4u);
  const std::string table = plan_table(result);
  EXPECT_NE(table.find("4 tenant(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("big"), std::string::npos) << table;
}

TEST(Plan, SloCheckUsesHeadroomAndFailures) {
  PlanSloInput in;
  in.name = "embed";
  // p99 9.5 ms, 95 % CI [9.3 ms, 9.7 ms] from 5000 samples.
  in.targets = {{"p99", "p99", 10'000'000.0, 9'500'000.0, 9'300'000.0, 9'700'000.0, 5000}};
  EXPECT_TRUE(check_plan_slo(in).met);
  EXPECT_EQ(check_plan_slo(in).worst_samples, 5000);
  EXPECT_NE(check_plan_slo(in).worst.find("5000 samples"), std::string::npos);
  in.headroom = 0.1;
  const PlanSloVerdict tight = check_plan_slo(in);
  EXPECT_FALSE(tight.met);
  EXPECT_FALSE(tight.inconclusive);
  EXPECT_NE(tight.reason.find("embed p99 9.5 ms > 10 ms"), std::string::npos) << tight.reason;
  EXPECT_NEAR(tight.worst_ratio, 0.95, 1e-12);
  // The interval straddles the allowance (9 ms): inconclusive, neither met nor missed.
  in.targets[0].low_ns = 8'800'000.0;
  const PlanSloVerdict straddles = check_plan_slo(in);
  EXPECT_FALSE(straddles.met);
  EXPECT_TRUE(straddles.inconclusive);
  EXPECT_NE(straddles.reason.find("inconclusive"), std::string::npos) << straddles.reason;
  // No upper bound (6 samples: the p99 is their maximum): inconclusive however low.
  in.headroom = 0;
  in.targets = {{"p99", "p99", 10'000'000.0, 6'800'000.0, 3'000'000.0, std::nullopt, 6}};
  EXPECT_TRUE(check_plan_slo(in).inconclusive);
  in.targets[0].low_ns = 3'000'000.0;
  in.headroom = 0;
  in.oom_events = 1;
  EXPECT_FALSE(check_plan_slo(in).met);
  in.oom_events = 0;
  in.targets = {{"ttft_p99", "TTFT p99", 1e9, std::nullopt, std::nullopt, std::nullopt,
                 0}};  // no samples: missed
  EXPECT_FALSE(check_plan_slo(in).met);
  in.best_effort = true;
  EXPECT_TRUE(check_plan_slo(in).met);
}

}  // namespace
}  // namespace gpumux
