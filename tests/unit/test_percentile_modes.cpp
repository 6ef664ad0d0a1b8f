// output.percentiles on real runs: `exact` and `sketch` agree on every count, mean and max and on
// every percentile within QuantileSketch::kRelativeError; `auto` (the default, exact below its
// cap) is bit-identical to `exact`; the result says which method produced the percentiles.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/app/application.hpp"
#include "models/output/result_io.hpp"
#include "sim/core/statistics.hpp"

namespace gpumux {
namespace {

const std::string kLlm = std::string(GPUMUX_SOURCE_DIR) + "/scenarios/pattern-llm-serving.yaml";

RunResult run_with(const std::string& method) {
  ScenarioRequest request;
  request.scenario = kLlm;
  request.overrides = {"output={percentiles: " + method + "}"};
  RunControl control;
  return simulate_resolved(resolve_request(request), control);
}

void expect_within_alpha(const LatencySummary& exact, const LatencySummary& sketch,
                         const std::string& at) {
  EXPECT_EQ(sketch.count, exact.count) << at;
  EXPECT_EQ(sketch.mean, exact.mean) << at;  // the same sum, in the same order
  EXPECT_EQ(sketch.max, exact.max) << at;
  const std::int64_t e[] = {exact.p50, exact.p90, exact.p99, exact.p999};
  const std::int64_t s[] = {sketch.p50, sketch.p90, sketch.p99, sketch.p999};
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::abs(static_cast<double>(s[i] - e[i])),
              QuantileSketch::kRelativeError * std::abs(static_cast<double>(e[i])))
        << at << " quantile " << i << ": exact " << e[i] << ", sketch " << s[i];
  }
}

TEST(PercentileModes, SketchAgreesWithExactWithinAlphaAndAutoIsExact) {
  const RunResult exact = run_with("exact");
  const RunResult sketch = run_with("sketch");
  const RunResult automatic = run_with("auto");
  ASSERT_EQ(exact.tenants.size(), sketch.tenants.size());
  std::int64_t ttft_samples = 0;
  bool any_differs = false;  // the sketch is a real approximation on this run, not a copy
  for (std::size_t t = 0; t < exact.tenants.size(); ++t) {
    const TenantResult& e = exact.tenants[t];
    const TenantResult& s = sketch.tenants[t];
    const std::string& name = e.name;
    ASSERT_GT(e.latency.count, 100) << name;
    expect_within_alpha(e.latency, s.latency, name + " latency");
    expect_within_alpha(e.queueing, s.queueing, name + " queueing");
    expect_within_alpha(e.time_to_first_token, s.time_to_first_token, name + " ttft");
    expect_within_alpha(e.time_per_output_token, s.time_per_output_token, name + " tpot");
    ttft_samples += e.time_to_first_token.count;
    any_differs = any_differs || e.latency.p50 != s.latency.p50 || e.latency.p99 != s.latency.p99;
    // Everything but the percentiles is the same run.
    EXPECT_EQ(s.completed, e.completed);
    EXPECT_EQ(s.slowdown_mean, e.slowdown_mean);
  }
  EXPECT_GT(ttft_samples, 0);  // the scenario exercises the LLM series too
  EXPECT_TRUE(any_differs);
  EXPECT_EQ(sketch.events, exact.events);

  // auto below its cap: every number of the summary equal to exact's (wall time aside).
  auto without_wall = [](const RunResult& r) {
    auto j = summary_json(r);
    j.erase("wall_s");
    j.erase("percentiles");
    return j.dump();
  };
  EXPECT_EQ(without_wall(automatic), without_wall(exact));

  EXPECT_EQ(exact.percentiles.method, "exact");
  EXPECT_EQ(automatic.percentiles.method, "exact");
  EXPECT_EQ(automatic.percentiles.mode, "auto");
  EXPECT_EQ(sketch.percentiles.method, "sketch");
  EXPECT_EQ(sketch.percentiles.relative_error, QuantileSketch::kRelativeError);
  EXPECT_EQ(sketch.percentiles.sketched_series,
            4 * static_cast<std::int64_t>(sketch.tenants.size()));
  const auto json = summary_json(sketch);
  EXPECT_EQ(json["percentiles"]["method"], "sketch");
  EXPECT_EQ(json["percentiles"]["relative_error"], 1.0 / 256);
  bool noted = false;
  for (const std::string& note : sketch.notes)
    noted = noted || note.find("sketch") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(summary_json(exact)["percentiles"].dump(),
            R"({"confidence":0.95,"mode":"exact","method":"exact"})");
}

}  // namespace
}  // namespace gpumux
