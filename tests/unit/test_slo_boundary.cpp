// The SLO verdict at its exact boundary (models/run/slo.hpp): a percentile equal to its target
// meets it (docs/metrics.md: `latency_ns.p99 <= target`), one nanosecond over misses it, for every
// key (p50 .. p999 of latency, TTFT and TPOT) and for a one-nanosecond and a 100 ms target.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "models/run/result.hpp"
#include "models/run/slo.hpp"

namespace gpumux {
namespace {

TenantResult tenant_at(std::int64_t value_ns) {
  TenantResult t;
  t.name = "api";
  for (LatencySummary* s : {&t.latency, &t.time_to_first_token, &t.time_per_output_token}) {
    s->count = 1000;
    s->mean = static_cast<double>(value_ns);
    s->p50 = s->p90 = s->p99 = s->p999 = s->max = value_ns;
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
        EXPECT_EQ(slo.checks[0].met, delta <= 0)
            << key << " target " << target << " delta " << delta;
        EXPECT_EQ(slo.met(), delta <= 0) << key;
      }
    }
  }
}

}  // namespace
}  // namespace gpumux
