// The futility rule's projection (models/plan/slo_check.hpp, plan_met_probability; docs/plan.md
// "Stopping a unit that cannot be met"): its closed form, the units it stops and the ones it
// never stops, and the planner's answer with and without the rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <boost/math/distributions/normal.hpp>

#include "models/plan/planner.hpp"
#include "models/plan/slo_check.hpp"
#include "models/scenario/loader.hpp"
#include "tests/support/plan_instances.hpp"

namespace gpumux {
namespace {

const boost::math::normal_distribution<double> kNormal;

double phi(double x) { return boost::math::cdf(kNormal, x); }

/// A tenant with one p90 target of TARGET ms (no headroom) whose estimate is P ms, interval
/// [P - DOWN, P + UP] ms.
PlanSloInput tenant(double target, double p, double down, double up) {
  PlanSloInput in;
  in.name = std::string("t");
  PlanSloTarget t;
  t.key = std::string("p90");
  t.label = t.key;
  t.target_ns = target * 1e6;
  t.value_ns = p * 1e6;
  t.low_ns = (p - down) * 1e6;
  t.high_ns = (p + up) * 1e6;
  t.samples = 157;
  in.targets.push_back(t);
  return in;
}

TEST(PlanFutility, ClosedFormOfOneTarget) {
  // p above the allowance A; one doubling left (r = 1/2): the estimate falls by
  // N(0, s^2 / 2), s = kappa (p - L) / z, and is met iff p_2 + (H - p) / sqrt 2 <= A.
  const double z = boost::math::quantile(kNormal, 0.975);
  const double target = 100, down = 10, up = 25;
  for (const double kappa : {1.0, 1.5, 2.0}) {
    for (const double p : {100.5, 104.0, 109.0}) {
      const std::vector<PlanSloInput> unit = {tenant(target, p, down, up)};
      const double s = kappa * down / z;
      const double expected = phi((target - p - up / std::sqrt(2.0)) / (s / std::sqrt(2.0)));
      EXPECT_NEAR(plan_met_probability(unit, 0.95, 20.0, std::vector<double>{40.0}, kappa),
                  expected, 1e-12)
          << kappa << " " << p;
    }
  }
  // Several windows: the union bound is the sum of each window's term; headroom lowers A.
  PlanSloInput in = tenant(100, 95, 10, 25);
  in.headroom = 0.1;  // A = 90
  const std::vector<double> ladder = {40.0, 80.0, 160.0};
  double sum = 0;
  for (const double m : ladder) {
    const double r = 20.0 / m;
    sum += phi((90 - 95 - 25 * std::sqrt(r)) / (1.5 * 10 / z * std::sqrt(1 - r)));
  }
  EXPECT_NEAR(plan_met_probability(std::vector<PlanSloInput>{in}, 0.95, 20.0, ladder, 1.5), sum,
              1e-12);
}

TEST(PlanFutility, AnIntervalStraddlingFromAboveIsStoppedEarly) {
  // The shipped node plan's asr unit (embed, ocr, asr, classifier and safety time-sliced in a
  // 3g.40gb instance) after 146 s (144 s measured): p90 1152 ms, CI [885 ms, 1735 ms] from 157
  // samples against 900 ms: two windows left (288 s and 576 s measured). Projected not met:
  // the rule stops it (the ladder ends inconclusive at 578 s: 1018 ms, CI [881 ms, 1198 ms]).
  const std::vector<PlanSloInput> unit = {tenant(900, 1152, 1152 - 885, 1735 - 1152)};
  const std::vector<double> ladder = {288.0, 576.0};
  const double p = plan_met_probability(unit, 0.95, 144.0, ladder, kPlanFutilityKappa);
  EXPECT_LE(p, kPlanFutilityProbability);
  EXPECT_GT(p, 0.0);
  // Its sub-unit of asr, classifier and safety in the same instance: p90 964.5 ms, CI [752 ms,
  // 1394 ms]; a fall of 65 ms plus the interval's narrowing is within reach: not stopped (it
  // ends at 812 ms, CI [758 ms, 1049 ms]: inconclusive at 578 s too, its estimate under 900).
  const std::vector<PlanSloInput> near = {tenant(900, 964.5, 964.5 - 752, 1394 - 964.5)};
  EXPECT_GT(plan_met_probability(near, 0.95, 144.0, ladder, kPlanFutilityKappa),
            kPlanFutilityProbability);
  // More windows left only make a decision likelier.
  EXPECT_LT(plan_met_probability(unit, 0.95, 144.0, std::vector<double>{288.0}, 1.5),
            plan_met_probability(unit, 0.95, 144.0, ladder, 1.5));
}

TEST(PlanFutility, AnEstimateAtOrUnderItsAllowanceIsNeverStopped) {
  // Whatever its interval, ladder, headroom or confidence: a unit whose every inconclusive
  // target's estimate is at or under its allowance gets 1 (not projected), and a projected one
  // never gets less than the least likely of its projected targets.
  std::mt19937 rng(20261207);
  std::uniform_real_distribution<double> unit01(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    const double target = 10 + 1000 * unit01(rng);
    PlanSloInput in = tenant(target, 0, 0, 0);
    in.headroom = 0.3 * unit01(rng);
    const double allowance = target * (1 - in.headroom);
    const double p = allowance * (0.5 + 0.5 * unit01(rng));  // at or under the allowance
    const double up = allowance - p + allowance * (0.001 + 2 * unit01(rng));  // H > A: straddles
    const double down = p * unit01(rng);
    in.targets.front().value_ns = p * 1e6;
    in.targets.front().low_ns = (p - down) * 1e6;
    in.targets.front().high_ns = (p + up) * 1e6;
    const std::vector<PlanSloInput> unit = {in, tenant(100, 50, 5, 5)};  // and one met
    const double confidence = 0.8 + 0.19 * unit01(rng);
    const double measured = 1 + 100 * unit01(rng);
    std::vector<double> later;
    double m = measured;
    for (int k = 1 + static_cast<int>(6 * unit01(rng)); k > 0; --k) {
      later.push_back(m *= 2 + 2 * unit01(rng));
    }
    ASSERT_EQ(plan_met_probability(unit, confidence, measured, later, kPlanFutilityKappa), 1.0)
        << "p " << p << " A " << allowance << " up " << up << " down " << down;
    // With a second, projected target the unit's bound is that target's.
    const std::vector<PlanSloInput> both = {in, tenant(100, 130, 40, 40)};
    const std::vector<PlanSloInput> alone = {tenant(100, 130, 40, 40)};
    ASSERT_DOUBLE_EQ(plan_met_probability(both, confidence, measured, later, 1.5),
                     plan_met_probability(alone, confidence, measured, later, 1.5));
  }
}

TEST(PlanFutility, NoProjectionWithoutBothBoundsOrAfterAFailure) {
  const std::vector<double> later = {40.0, 80.0};
  std::vector<PlanSloInput> unit = {tenant(100, 300, 30, 30)};
  EXPECT_LT(plan_met_probability(unit, 0.95, 20.0, later, 1.5), 1e-6);
  unit.front().targets.front().high_ns.reset();  // too few samples for an upper bound
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, later, 1.5), 1.0);
  unit = {tenant(100, 300, 30, 30)};
  unit.front().targets.front().low_ns.reset();
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, later, 1.5), 1.0);
  unit = {tenant(100, 300, 30, 30)};
  unit.front().failed = 1;
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, later, 1.5), 1.0);
  unit = {tenant(100, 300, 30, 30)};
  unit.front().best_effort = true;  // no latency target counts
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, later, 1.5), 1.0);
  unit = {tenant(100, 300, 30, 30)};
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, std::vector<double>{}, 1.5), 0.0);
  EXPECT_EQ(plan_met_probability(unit, 0.95, 20.0, std::vector<double>{20.0}, 1.5), 0.0);
}

TEST(PlanFutility, ThePlannerGivesTheSameAnswerWithAndWithoutTheRule) {
  // Random instances and the node instance at low rates and tight targets (verdicts that
  // straddle for long), each planned with the rule (the default) and without it
  // (PlanOptions::futility false): every number of the JSON but the search's counters, its wall
  // time and the note that counts the undecided units is the same, and the rule stopped some
  // units early (so it ran), with fewer simulations.
  std::mt19937 rng(20261209);
  std::vector<std::string> instances;
  for (const char* rate : {"rate: 5/s  ", "rate: 10/s "}) {
    std::string yaml = testing::kNode;
    yaml.replace(yaml.find("rate: 100/s"), 11, rate);
    yaml.replace(yaml.find("max_gpus: 4"), 11, "max_gpus: 4\n  max_duration: 2m");
    instances.push_back(yaml);
  }
  for (int i = 0; i < 4; ++i) instances.push_back(testing::random_instance(rng, 3, 2));
  std::int64_t projected = 0, saved = 0;
  for (const std::string& yaml : instances) {
    SCOPED_TRACE(yaml);
    const Scenario scenario = load_scenario_text(yaml, "random.yaml");
    PlanOptions options;
    options.jobs = 2;
    nlohmann::ordered_json with = plan_json(plan_scenario(scenario, options));
    PlanOptions off = options;
    off.futility = false;
    nlohmann::ordered_json without = plan_json(plan_scenario(scenario, off));
    projected += with["search"].value("projected_at_bound", std::int64_t{0});
    EXPECT_EQ(without["search"].value("projected_at_bound", std::int64_t{0}), 0);
    saved += without["search"].value("simulations", std::int64_t{0}) -
             with["search"].value("simulations", std::int64_t{0});
    for (nlohmann::ordered_json* j : {&with, &without}) {
      j->erase("notes");
      for (const char* key :
           {"units", "units_pruned", "simulations", "longer_windows", "inconclusive_at_bound",
            "projected_at_bound", "batches", "dp_rounds", "wall_s"}) {
        (*j)["search"].erase(key);
      }
    }
    EXPECT_EQ(with.dump(1), without.dump(1));
  }
  std::printf("units stopped by the rule: %lld, simulations saved: %lld\n",
              static_cast<long long>(projected), static_cast<long long>(saved));
  EXPECT_GT(projected, 0);
  EXPECT_GT(saved, 0);
}

}  // namespace
}  // namespace gpumux
