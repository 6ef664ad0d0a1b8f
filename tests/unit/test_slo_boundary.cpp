// The SLO verdict at its exact boundaries (models/run/slo.hpp): met when the percentile's upper
// confidence bound is at most the target (equal included), missed when its lower bound is above
// it (one nanosecond over), inconclusive when the interval straddles the target or has no upper
// bound, missed without samples; for every key (p50 .. p999 of latency, TTFT and TPOT) and for a
// one-nanosecond and a 100 ms target.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "models/run/result.hpp"
#include "models/run/slo.hpp"
#include "sim/core/statistics.hpp"

namespace gpumux {
namespace {

TenantResult tenant_at(std::int64_t value_ns) {
  TenantResult t;
  t.name = "api";
  for (LatencySummary* s : {&t.latency, &t.time_to_first_token, &t.time_per_output_token}) {
    s->count = 1000;
    s->mean = static_cast<double>(value_ns);
    s->p50 = s->p90 = s->p99 = s->p999 = s->max = value_ns;
    for (QuantileInterval& ci : s->intervals) ci = {value_ns, value_ns, true, true, 1.0};
  }
  return t;
}

TEST(SloBoundary, EqualToTheTargetIsMetOneNanosecondOverIsMissed) {
  for (const std::string& key : slo_keys()) {
    for (const std::int64_t target : {std::int64_t{1}, std::int64_t{100'000'000}}) {
      for (const std::int64_t delta : {-1, 0, 1}) {
        if (target + delta < 0) continue;
        TenantResult t = tenant_at(target + delta);
        t.slo_ns[key] = target;
        const TenantSlo slo = evaluate_slo(t);
        ASSERT_EQ(slo.checks.size(), 1u) << key;
        EXPECT_EQ(slo.checks[0].key, key);
        ASSERT_TRUE(slo.checks[0].value_ns.has_value()) << key;
        EXPECT_EQ(*slo.checks[0].value_ns, target + delta) << key;
        EXPECT_EQ(slo.checks[0].met(), delta <= 0)
            << key << " target " << target << " delta " << delta;
        EXPECT_EQ(slo.checks[0].verdict, delta <= 0 ? SloVerdict::met : SloVerdict::missed);
        EXPECT_EQ(slo.met(), delta <= 0) << key;
        EXPECT_EQ(slo.checks[0].samples, 1000);
      }
    }
  }
}

TEST(SloBoundary, TheIntervalDecides) {
  const std::int64_t target = 100'000'000;
  const std::optional<std::int64_t> none;
  auto v = [](std::int64_t x) { return std::optional<std::int64_t>(x); };
  // The upper bound at the target: met; one over with the lower bound at or below: inconclusive.
  EXPECT_EQ(judge_quantile(target, v(90), v(80), v(target)), SloVerdict::met);
  EXPECT_EQ(judge_quantile(target, v(90), v(80), v(target + 1)), SloVerdict::inconclusive);
  EXPECT_EQ(judge_quantile(target, v(target), v(target), v(target + 1)), SloVerdict::inconclusive);
  // The lower bound one over the target: missed (the point estimate may be anywhere above).
  EXPECT_EQ(judge_quantile(target, v(target + 5), v(target + 1), v(target + 9)),
            SloVerdict::missed);
  // No upper bound (too few samples): never met, however small the point estimate.
  EXPECT_EQ(judge_quantile(target, v(1), v(1), none), SloVerdict::inconclusive);
  EXPECT_EQ(judge_quantile(target, v(1), none, none), SloVerdict::inconclusive);
  EXPECT_EQ(judge_quantile(target, v(target * 2), v(target + 1), none), SloVerdict::missed);
  // No samples: missed.
  EXPECT_EQ(judge_quantile(target, none, none, none), SloVerdict::missed);
}

TEST(SloBoundary, TenantVerdictMissedBeatsInconclusiveBeatsMet) {
  TenantResult t = tenant_at(50);
  t.slo_ns["p50"] = 100;
  t.slo_ns["p99"] = 100;
  EXPECT_EQ(evaluate_slo(t).verdict(), SloVerdict::met);
  t.latency.intervals[2].has_high = false;  // the p99 has no upper bound
  EXPECT_EQ(evaluate_slo(t).verdict(), SloVerdict::inconclusive);
  EXPECT_FALSE(evaluate_slo(t).met());
  t.latency.intervals[0] = {150, 160, true, true, 1.0};  // the p50 is shown over its target
  t.latency.p50 = 155;
  EXPECT_EQ(evaluate_slo(t).verdict(), SloVerdict::missed);
}

// Six samples: a p99 from them is their maximum and has no upper bound, so however far under
// its target it is the verdict is inconclusive (issue 24: "met, SLO ratio 0.68" on 6 requests).
TEST(SloBoundary, SixSamplesNeverMeetAP99) {
  Percentiles samples(PercentileMethod::exact);
  for (const std::int64_t x : {10, 20, 30, 40, 50, 60}) samples.add(x * 1'000'000);
  const double q = 0.99;
  QuantileInterval ci;
  samples.intervals(&q, 1, 0.95, &ci);
  EXPECT_FALSE(ci.has_high);
  TenantResult t;
  t.latency.count = 6;
  t.latency.p99 = 60'000'000;
  t.latency.intervals[2] = ci;
  t.slo_ns["p99"] = 88'000'000;  // ratio 0.68
  const TenantSlo slo = evaluate_slo(t);
  EXPECT_EQ(slo.checks[0].verdict, SloVerdict::inconclusive);
  EXPECT_EQ(slo.checks[0].samples, 6);
}

}  // namespace
}  // namespace gpumux
