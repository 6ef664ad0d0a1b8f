// The work budget's memory counts request and kernel records only where a run keeps them
// (KeptRecords, models/scenario/work_estimate.hpp): the CLI streams them with -o and records
// none without; Python's run() keeps 48 B per request. Closed forms from rate x duration, a
// property over random scenarios, and the refusals at the front door (before anything runs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"
#include "models/scenario/work_estimate.hpp"
#include "sim/core/statistics.hpp"

namespace gpumux {
namespace {

std::string num(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// One tenant per entry of RATES (requests/s), Poisson, one kernel of KERNEL each, on its own
// H100, for DURATION_S seconds; TOKENS gives the tenants LLM token counts.
std::string scenario_text(const std::vector<double>& rates, double duration_s,
                          const std::string& extra = "", const std::string& kernel = "10us",
                          bool tokens = false) {
  std::string text =
      "name: budget\nseed: 1\nduration: " + num(duration_s) + "s\n" + extra + "gpus:\n";
  for (std::size_t i = 0; i < rates.size(); ++i) {
    text += "  - {name: gpu" + std::to_string(i) + ", model: h100-sxm-80gb}\n";
  }
  text += "tenants:\n";
  for (std::size_t i = 0; i < rates.size(); ++i) {
    text += "  - name: t" + std::to_string(i) + "\n    device: gpu" + std::to_string(i) +
            "\n    workload:\n      arrivals: {process: poisson, rate: " + num(rates[i]) + "/s}\n";
    if (tokens) text += "      tokens: {input: 64, output: 1}\n";
    text += "      request: {kernels: [{name: k, duration: " + kernel + "}]}\n";
  }
  return text;
}

ScenarioRequest request_of(const std::string& text) {
  ScenarioRequest request;
  request.scenario = text;
  request.is_path = false;
  request.source_name = "budget.yaml";
  return request;
}

Scenario load(const std::string& text) { return load_request(request_of(text)); }

const std::vector<TraceSummary> kNoTraces;

void expect_near_relative(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::fabs(expected)));
}

TEST(WorkMemory, RequestRecordsCountOnlyWhereKept) {
  const double rate = 20000, duration = 500;  // 1e7 requests
  const Scenario s = load(scenario_text({rate}, duration));
  const WorkEstimate cli = estimate_work(s, kNoTraces);
  expect_near_relative(cli.requests, rate * duration);
  EXPECT_EQ(cli.request_memory, 0.0);
  EXPECT_EQ(cli.kernel_record_memory, 0.0);
  // output.percentiles: auto (the default): at most 2^20 exact samples per series, 2 series.
  expect_near_relative(
      cli.statistics_memory,
      2 * kBytesPerPercentileSample * static_cast<double>(Percentiles::kDefaultExactCap));

  KeptRecords python;
  python.requests = true;
  const WorkEstimate kept = estimate_work(s, kNoTraces, python);
  expect_near_relative(kept.request_memory, rate * duration * kBytesPerRequestRecord);
  expect_near_relative(kept.memory - cli.memory, rate * duration * kBytesPerRequestRecord);
  EXPECT_EQ(kept.statistics_memory, cli.statistics_memory);

  // Three results held at once (compare): records and timeseries three times, statistics once.
  python.results = 3;
  const WorkEstimate three = estimate_work(s, kNoTraces, python);
  expect_near_relative(three.request_memory, 3 * kept.request_memory);
  expect_near_relative(three.timeseries_memory, 3 * kept.timeseries_memory);
  EXPECT_EQ(three.statistics_memory, kept.statistics_memory);
  expect_near_relative(three.memory, three.statistics_memory + three.request_memory +
                                         three.kernel_record_memory + three.timeseries_memory);
}

TEST(WorkMemory, PercentileSamplesFollowTheMethod) {
  const double rate = 5000, duration = 100;  // 5e5 requests: below the auto cap
  for (const bool tokens : {false, true}) {
    const double series = tokens ? 4 : 2;
    const auto with = [&](const std::string& method) {
      return estimate_work(
          load(scenario_text({rate}, duration, "output: {percentiles: " + method + "}\n", "10us",
                             tokens)),
          kNoTraces);
    };
    expect_near_relative(with("exact").statistics_memory,
                         series * kBytesPerPercentileSample * rate * duration);
    expect_near_relative(with("auto").statistics_memory,
                         series * kBytesPerPercentileSample * rate * duration);
    EXPECT_EQ(with("sketch").statistics_memory, 0.0);
  }
  // Beyond the cap, auto holds the cap and exact every sample.
  const double long_duration = 1000;  // 5e6 requests
  const Scenario exact =
      load(scenario_text({rate}, long_duration, "output: {percentiles: exact}\n"));
  const Scenario automatic = load(scenario_text({rate}, long_duration));
  expect_near_relative(estimate_work(exact, kNoTraces).statistics_memory,
                       2 * kBytesPerPercentileSample * rate * long_duration);
  expect_near_relative(
      estimate_work(automatic, kNoTraces).statistics_memory,
      2 * kBytesPerPercentileSample * static_cast<double>(Percentiles::kDefaultExactCap));
}

TEST(WorkMemory, KernelRecordsCountOnlyWhenKeptAndOn) {
  const double rate = 1000, duration = 60;
  const Scenario on = load(scenario_text({rate}, duration, "output: {kernels: true}\n",
                                         "{lognormal: {median: 20us, sigma: 0.5}}, repeat: 3"));
  const Scenario off = load(scenario_text({rate}, duration, "", "20us, repeat: 3"));
  KeptRecords kernels;
  kernels.kernels = true;
  expect_near_relative(estimate_work(on, kNoTraces).launches, 3 * rate * duration);
  EXPECT_EQ(estimate_work(on, kNoTraces).kernel_record_memory, 0.0);
  EXPECT_EQ(estimate_work(off, kNoTraces, kernels).kernel_record_memory, 0.0);
  expect_near_relative(estimate_work(on, kNoTraces, kernels).kernel_record_memory,
                       3 * rate * duration * kBytesPerKernelRecord);
}

// Random scenarios: keeping the request records adds exactly 48 B x requests x results, and
// requests are the sum of rate x duration whatever is kept.
TEST(WorkMemory, KeepingRecordsAddsExactlyTheirBytes) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> log_rate(0, 5), log_duration(0, 4);
  std::uniform_int_distribution<int> tenants(1, 6), results(1, 5);
  for (int i = 0; i < 40; ++i) {
    std::vector<double> rates(static_cast<std::size_t>(tenants(rng)));
    double expected = 0;
    const double duration = std::round(std::pow(10.0, log_duration(rng)));
    for (double& r : rates) {
      r = std::round(std::pow(10.0, log_rate(rng)));
      expected += r * duration;
    }
    const Scenario s = load(scenario_text(rates, duration));
    KeptRecords kept;
    kept.requests = true;
    kept.results = results(rng);
    const WorkEstimate none = estimate_work(s, kNoTraces);
    const WorkEstimate with = estimate_work(s, kNoTraces, kept);
    expect_near_relative(none.requests, expected);
    expect_near_relative(with.requests, expected);
    expect_near_relative(with.request_memory, kept.results * expected * kBytesPerRequestRecord);
    expect_near_relative(
        with.memory - kept.results * none.timeseries_memory - none.statistics_memory,
        with.request_memory);
  }
}

// 4e8 requests: within the request budget (1e9, simulated work), their records (17.9 GiB) over
// the memory budget only where they are kept. The refusal names the rate that drives it.
TEST(WorkMemory, RefusedOnlyWhereTheRecordsAreKept) {
  const std::string text = scenario_text({20000}, 20000);
  const Scenario s = load(text);
  EXPECT_LT(estimate_work(s, kNoTraces).requests, kWorkBudgetRequests);
  EXPECT_GT(estimate_work(s, kNoTraces).requests, 1e8);  // refused by the budget before issue 12
  EXPECT_NO_THROW(check_work_budget(s, kNoTraces));
  KeptRecords python;
  python.requests = true;
  try {
    check_work_budget(s, kNoTraces, python);
    ADD_FAILURE() << "records of 4e8 requests should not fit";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("budget.yaml:"), std::string::npos) << message;
    EXPECT_NE(message.find("tenants.0.workload.arrivals.rate: the run would hold about 17.9 GiB"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("a record of each of about 4e+08 requests kept in memory"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  // allow_large lifts it.
  EXPECT_NO_THROW(check_work_budget(load("allow_large: true\n" + text), kNoTraces, python));
  // Past the request budget: refused whatever is kept.
  EXPECT_THROW(check_work_budget(load(scenario_text({60000}, 20000)), kNoTraces), InputError);
}

// The front door checks what its RunControl keeps before anything runs: Python's run() with
// record_requests, compare() with every result held.
TEST(WorkMemory, FrontDoorRefusesKeptRecordsBeforeRunning) {
  // 4e8 requests: resolve (the CLI's check) accepts; keeping the records does not fit.
  const ResolvedScenario big = resolve_request(request_of(scenario_text({20000}, 20000)));
  RunControl keep;
  keep.record_requests = true;
  EXPECT_THROW(simulate_resolved(big, keep), InputError);
  // 2e8 requests: 8.9 GiB of records fit once; for two strategies held together they do not.
  const ResolvedScenario half = resolve_request(request_of(scenario_text({10000}, 20000)));
  KeptRecords one;
  one.requests = true;
  EXPECT_NO_THROW(check_work_budget(half.scenario, half.traces, one));
  const std::vector<ResolvedScenario> variants = {half, half};
  bool started = false;
  keep.variant_started = [&](const std::string&) { started = true; };
  EXPECT_THROW(simulate_variants(variants, {"mps", "time-slicing"}, keep), InputError);
  EXPECT_FALSE(started) << "refused before the first variant runs";
}

}  // namespace
}  // namespace gpumux
