// Per-request sequence lengths of catalog tenants (`seq_len:` as a distribution,
// models/scenario/catalog_tenant.cpp catalog_lengths, models/run/arrivals.cpp): a one-point
// distribution is the fixed length bit for bit; a two-point one runs exactly the two fixed-length
// requests, in the proportions of its weights; memory is the largest length's; same seed, same
// lengths; bad parameters are one InputError naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "models/config/input_error.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {
namespace {

// One BERT-base tenant alone on an A100, one request every 20 ms (each takes well under that:
// no queueing, so a request's service time is its length's time alone).
std::string bert(const std::string& seq_len, const std::string& extra = "",
                 std::uint64_t seed = 5) {
  return "name: lengths\nseed: " + std::to_string(seed) +
         "\nduration: 20s\n"
         "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n"
         "tenants:\n  - name: bert\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: constant, rate: 50/s}\n"
         "      model: bert-base\n      seq_len: " +
         seq_len + "\n" + extra;
}

ResolvedScenario resolve_text(const std::string& text) {
  return resolve_scenario(load_scenario_text(text, "lengths.yaml"));
}

RunResult run_text(const std::string& text) { return simulate(resolve_text(text)); }

// Service time (start to finish) of every completed request, in arrival order.
std::vector<std::int64_t> service_times(const RunResult& r) {
  std::vector<std::int64_t> out;
  for (const RequestRecord& q : r.requests) {
    if (q.status == RequestStatus::completed) out.push_back(q.finish_ns - q.start_ns);
  }
  return out;
}

TEST(RequestLengths, OnePointDistributionIsTheFixedLengthBitForBit) {
  const RunResult fixed = run_text(bert("256"));
  for (const std::string& one : {std::string("{empirical: {values: [256]}}"),
                                 std::string("{uniform: {min: 256, max: 256}}")}) {
    const RunResult drawn = run_text(bert(one));
    ASSERT_EQ(drawn.requests.size(), fixed.requests.size()) << one;
    for (std::size_t i = 0; i < fixed.requests.size(); ++i) {
      EXPECT_EQ(drawn.requests[i].start_ns, fixed.requests[i].start_ns) << one;
      EXPECT_EQ(drawn.requests[i].finish_ns, fixed.requests[i].finish_ns) << one;
    }
    EXPECT_EQ(drawn.tenants[0].latency.mean, fixed.tenants[0].latency.mean) << one;
    EXPECT_EQ(drawn.tenants[0].latency.p99, fixed.tenants[0].latency.p99) << one;
  }
}

TEST(RequestLengths, TwoPointDistributionRunsTheTwoFixedLengthsInItsProportions) {
  const std::vector<std::int64_t> short_runs = service_times(run_text(bert("128")));
  const std::vector<std::int64_t> long_runs = service_times(run_text(bert("384")));
  ASSERT_FALSE(short_runs.empty());
  // Alone and unqueued, every request of one length takes the same time.
  const std::int64_t t_short = short_runs.front(), t_long = long_runs.front();
  for (const std::int64_t t : short_runs) ASSERT_EQ(t, t_short);
  for (const std::int64_t t : long_runs) ASSERT_EQ(t, t_long);
  ASSERT_GT(t_long, t_short);

  const double p = 0.7;  // weight of 128
  const std::vector<std::int64_t> mixed =
      service_times(run_text(bert("{empirical: {values: [128, 384], weights: [7, 3]}}")));
  std::int64_t shorts = 0;
  double sum = 0;
  for (const std::int64_t t : mixed) {
    ASSERT_TRUE(t == t_short || t == t_long) << t;  // exactly one of the two fixed-length times
    shorts += t == t_short ? 1 : 0;
    sum += static_cast<double>(t);
  }
  const double n = static_cast<double>(mixed.size());
  // The share of short requests is a binomial draw of mean p: within 4 standard deviations.
  const double sd = std::sqrt(p * (1 - p) / n);
  EXPECT_NEAR(static_cast<double>(shorts) / n, p, 4 * sd);
  // Mean service time = the weighted mean of the two fixed-length times, within that error.
  const double expected = p * static_cast<double>(t_short) + (1 - p) * static_cast<double>(t_long);
  EXPECT_NEAR(sum / n, expected, 4 * sd * static_cast<double>(t_long - t_short));
}

TEST(RequestLengths, SameSeedSameLengthsAnotherSeedOthers) {
  const std::string spread = "{uniform: {min: 64, max: 384}}";
  const std::vector<std::int64_t> a = service_times(run_text(bert(spread)));
  const std::vector<std::int64_t> b = service_times(run_text(bert(spread)));
  const std::vector<std::int64_t> c = service_times(run_text(bert(spread, "", 6)));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Many lengths, so many distinct times.
  std::vector<std::int64_t> distinct = a;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_GT(distinct.size(), 50u);
}

TEST(RequestLengths, MemoryIsTheLargestLengthsKernelsTheMeansAndTheCardShowsTheDistribution) {
  const ResolvedScenario drawn = resolve_text(bert("{uniform: {min: 64, max: 384}}"));
  const ResolvedScenario longest = resolve_text(bert("384"));
  const ResolvedScenario mean = resolve_text(bert("224"));
  const WorkloadSpec& w = drawn.scenario.tenants[0].workload;
  EXPECT_EQ(w.memory_per_request, longest.scenario.tenants[0].workload.memory_per_request);
  EXPECT_EQ(w.length_values.size(), 384u - 64 + 1);
  // An unbounded distribution spans 1 to the entry's positions (BERT: 512), whatever its median.
  const ResolvedScenario wide = resolve_text(bert("{lognormal: {median: 160, sigma: 0.5}}"));
  const std::vector<std::int64_t>& spans = wide.scenario.tenants[0].workload.length_values;
  ASSERT_EQ(spans.size(), 512u);
  EXPECT_EQ(spans.front(), 1);
  EXPECT_EQ(spans.back(), 512);
  ASSERT_EQ(w.kernels.size(), mean.scenario.tenants[0].workload.kernels.size());
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    EXPECT_EQ(w.kernels[i].duration.value,
              mean.scenario.tenants[0].workload.kernels[i].duration.value);
  }
  // The emitted scenario keeps the distribution: read back, the same lengths and memory.
  const ResolvedScenario again = resolve_text(emit_scenario_yaml(drawn.scenario));
  const WorkloadSpec& b = again.scenario.tenants[0].workload;
  EXPECT_EQ(b.length_values, w.length_values);
  EXPECT_EQ(b.memory_per_request, w.memory_per_request);
  const ResolvedScenario two =
      resolve_text(bert("{empirical: {values: [384, 128], weights: [1, 3]}}"));
  const ResolvedScenario two_again = resolve_text(emit_scenario_yaml(two.scenario));
  const DurationDistribution& d =
      two_again.scenario.tenants[0].workload.catalog->seq_len_distribution;
  EXPECT_EQ(d.points, (std::vector<Nanos>{384, 128}));
  EXPECT_DOUBLE_EQ(d.mean(), 0.25 * 384 + 0.75 * 128);
}

void expect_input_error(const std::string& text, const std::string& words) {
  try {
    resolve_text(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
  }
}

TEST(RequestLengths, BadParametersAreOneLineInputErrorsNamingTheKey) {
  expect_input_error(bert("{uniform: {min: 0, max: 384}}"), "seq_len");
  expect_input_error(bert("{empirical: {values: [128, 384], weights: [1]}}"), "weights");
  expect_input_error(bert("{empirical: {values: [128, 384], weights: [1, -2]}}"), "weight");
  expect_input_error(bert("{empirical: {values: []}}"), "values");
  expect_input_error(bert("{uniform: {min: 64, max: 1024}}"), "seq_len");  // BERT: 512 positions
  expect_input_error(bert("{lognormal: {median: 128, sigma: 9}}"), "sigma");
  expect_input_error(bert("{uniform: {min: 64, max: 384}}", "      batching: {max_batch: 4}\n"),
                     "seq_len");
}

// Each tenant's lengths are built and kept (about 0.2 MB and 1 ms each): the scenario's catalog
// tenants span at most kMaxCatalogLengths in all, replicas each, unless allow_large (40 replicas
// of BERT-base over 1..512 took 17 s and 3.8 GB to validate before the bound, 2026-12-08).
TEST(RequestLengths, TheLengthsOfAllTenantsTogetherAreBounded) {
  const auto with_replicas = [](int replicas, const std::string& extra = "") {
    std::string text = bert("{uniform: {min: 1, max: 512}}", extra);
    text.replace(text.find("    device: gpu0\n"), 0,
                 "    replicas: " + std::to_string(replicas) + "\n");
    return text;
  };
  // 8 x 512 = kMaxCatalogLengths: within; 9 x 512: over, at the seq_len key (line 13), before
  // any length is built.
  EXPECT_NO_THROW(check_catalog_length_budget(load_scenario_text(with_replicas(8), "l.yaml")));
  try {
    resolve_text(with_replicas(9));
    ADD_FAILURE() << "9 x 512 lengths accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lengths.yaml:13:16:"), std::string::npos) << what;
    EXPECT_NE(what.find("tenants.0.workload.seq_len: the catalog tenants' seq_len distributions "
                        "span 4608 lengths"),
              std::string::npos)
        << what;
  }
  Scenario large = load_scenario_text(with_replicas(9), "l.yaml");
  large.allow_large = true;
  EXPECT_NO_THROW(check_catalog_length_budget(large));
  EXPECT_EQ(kMaxCatalogLengths, 8 * 512);
  EXPECT_EQ(catalog_length_count(large, large.tenants.at(0)), 512);
}

}  // namespace
}  // namespace gpumux
