// Arrival processes and token counts alone (models/workload/arrival_process.hpp): the draws'
// long-run statistics against their closed forms (empirical frequencies = weights, the
// exponential gap's mean = 1e9 / rate, the lognormal's median), the constant process's exact
// times, saturation at the int64 horizon, the closed loop's think and away times, and the
// token counts' rounding and clamping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/workload/arrival_process.hpp"

namespace gpumux {
namespace {

DurationDistribution fixed(Nanos v) {
  DurationDistribution d;
  d.value = v;
  return d;
}

TEST(ArrivalProcess, EmpiricalDrawsFollowTheWeights) {
  DurationDistribution d;
  d.kind = DurationDistribution::Kind::empirical;
  d.points = {10, 20, 30, 40};
  d.cumulative = {0.1, 0.35, 0.85, 1.0};  // weights 0.1, 0.25, 0.5, 0.15
  const double weights[] = {0.1, 0.25, 0.5, 0.15};
  RandomStream rng(7);
  const int n = 400'000;
  std::vector<int> counts(4, 0);
  for (int i = 0; i < n; ++i) {
    const double v = draw(rng, d);
    const auto at = std::find(d.points.begin(), d.points.end(), static_cast<Nanos>(v));
    ASSERT_NE(at, d.points.end()) << v;  // only the written points are drawn
    ++counts[static_cast<std::size_t>(at - d.points.begin())];
  }
  for (std::size_t i = 0; i < 4; ++i) {
    const double p = weights[i];
    const double sigma = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(static_cast<double>(counts[i]) / n, p, 5 * sigma) << "point " << d.points[i];
  }
}

TEST(ArrivalProcess, PoissonGapsHaveMeanOneOverTheRate) {
  const double rate_per_s = 250;  // mean gap 4 ms
  const double per_ns = poisson_rate_per_ns(rate_per_s);
  EXPECT_EQ(per_ns, 1.0 / (1e9 / rate_per_s));
  RandomStream rng(11);
  const int n = 400'000;
  Nanos now = 0;
  double sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const Nanos next = next_poisson_arrival(rng, per_ns, now);
    ASSERT_GE(next, now);
    const double gap = static_cast<double>(next - now);
    sum_sq += gap * gap;
    now = next;
  }
  const double mean = static_cast<double>(now) / n;
  // Exp(rate): mean 1/rate and standard deviation 1/rate, so 5 standard errors are 5/sqrt(n).
  EXPECT_NEAR(mean, 4e6, 4e6 * 5 / std::sqrt(n));
  // E[G^2] = 2 / rate^2: the gaps are exponential, not merely of the right mean.
  EXPECT_NEAR(sum_sq / n / (mean * mean), 2.0, 0.05);
}

TEST(ArrivalProcess, PoissonArrivalsPastTheHorizonNeverCome) {
  RandomStream rng(3);
  EXPECT_EQ(next_poisson_arrival(rng, poisson_rate_per_ns(1), kNever - 10), kNever);
  EXPECT_EQ(trace_arrival(kNever - 5, 6), kNever);
  EXPECT_EQ(trace_arrival(1000, 234), 1234);
}

TEST(ArrivalProcess, ConstantArrivalsAreComputedFromTheCountWithoutDrift) {
  // 3 per second: the n-th at from + n x 333,333,333.33 ns, rounded; summing rounded gaps would
  // drift by a third of a ns per arrival (333 ms after a billion arrivals).
  const Nanos from = 5'000;
  for (const std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 1'000'000ull, 999'999'999ull}) {
    const double exact = 5'000.0 + static_cast<double>(n) * 1e9 / 3.0;
    EXPECT_EQ(constant_arrival(from, n, 3.0), std::llround(exact)) << n;
  }
  EXPECT_EQ(constant_arrival(0, 3, 3.0), 1'000'000'000);
  EXPECT_EQ(constant_arrival(0, std::uint64_t{1} << 62, 1e-3), kNever);  // saturates
}

TEST(ArrivalProcess, ClosedLoopThinksFixedTimesAndAddsAnAwayEverySession) {
  ArrivalSpec a;
  a.process = ArrivalProcess::closed;
  a.think = 2'000;
  a.session_cells = 3;
  a.away = fixed(50'000);
  RandomStream rng(5), untouched(5);
  std::int64_t finished = 0;
  std::vector<Nanos> thinks;
  for (int i = 0; i < 7; ++i) thinks.push_back(think_after_finish(rng, a, finished));
  EXPECT_EQ(finished, 7);
  EXPECT_EQ(thinks, (std::vector<Nanos>{2'000, 2'000, 52'000, 2'000, 2'000, 52'000, 2'000}));
  // Fixed times draw nothing: the stream is where it started.
  EXPECT_EQ(rng.uniform01(), untouched.uniform01());
  // Without sessions the count is left alone.
  a.session_cells = 0;
  EXPECT_EQ(think_after_finish(rng, a, finished), 2'000);
  EXPECT_EQ(finished, 7);
}

TEST(ArrivalProcess, ClosedLoopThinkTimeDistributionHasItsMean) {
  ArrivalSpec a;
  a.process = ArrivalProcess::closed;
  a.think_dist.kind = DurationDistribution::Kind::exponential;
  a.think_dist.value = 1'000'000;
  RandomStream rng(9);
  std::int64_t finished = 0;
  const int n = 200'000;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(think_after_finish(rng, a, finished));
  EXPECT_NEAR(sum / n, 1e6, 1e6 * 5 / std::sqrt(n));
}

TEST(ArrivalProcess, LognormalDrawsHaveTheirMedian) {
  DurationDistribution d;
  d.kind = DurationDistribution::Kind::lognormal;
  d.value = 1000;
  d.sigma = 0.8;
  RandomStream rng(13);
  std::vector<double> v(100'001);
  for (double& x : v) x = draw(rng, d);
  std::nth_element(v.begin(), v.begin() + 50'000, v.end());
  // The sample median's log is within 5 x 1.2533 sigma / sqrt(n) of log(1000).
  EXPECT_NEAR(std::log(v[50'000]), std::log(1000.0), 5 * 1.2533 * 0.8 / std::sqrt(100'001.0));
}

TEST(ArrivalProcess, UniformWithEqualBoundsIsItsValueAndOtherwiseStaysInside) {
  DurationDistribution d;
  d.kind = DurationDistribution::Kind::uniform;
  d.value = d.upper = 42;
  RandomStream rng(1);
  EXPECT_EQ(draw(rng, d), 42.0);
  d.upper = 50;
  for (int i = 0; i < 10'000; ++i) {
    const double x = draw(rng, d);
    ASSERT_GE(x, 42.0);
    ASSERT_LT(x, 50.0);
  }
}

TEST(ArrivalProcess, TokenCountsAreRoundedAndClampedToZeroAndTheMaximum) {
  RandomStream rng(2);
  EXPECT_EQ(draw_token_count(rng, fixed(-5)), 0);
  EXPECT_EQ(draw_token_count(rng, fixed(512)), 512);
  EXPECT_EQ(draw_token_count(rng, fixed(3 * kMaxTokens)), kMaxTokens);
  DurationDistribution half;
  half.kind = DurationDistribution::Kind::uniform;
  half.value = 10;
  half.upper = 11;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t t = draw_token_count(rng, half);
    ASSERT_TRUE(t == 10 || t == 11) << t;
  }
}

TEST(ArrivalProcess, SequenceLengthsAreClampedToTheTabulatedRange) {
  RandomStream rng(4);
  const std::vector<std::int64_t> lengths = {128, 512, 1024};
  EXPECT_EQ(draw_sequence_length(rng, fixed(700), lengths), 700);  // kernels_for picks above
  EXPECT_EQ(draw_sequence_length(rng, fixed(5000), lengths), 1024);
  EXPECT_EQ(draw_sequence_length(rng, fixed(10), lengths), 128);
}

TEST(ArrivalProcess, RequestTokensDrawInputThenOutputFromTheTokenStream) {
  WorkloadSpec w;
  w.has_tokens = true;
  w.input_tokens.kind = DurationDistribution::Kind::exponential;
  w.input_tokens.value = 300;
  w.output_tokens.kind = DurationDistribution::Kind::exponential;
  w.output_tokens.value = 50;
  RandomStream rng(6), replay(6);
  for (int i = 0; i < 100; ++i) {
    std::int64_t input = -1, output = -1;
    draw_request_tokens(rng, w, input, output);
    const std::int64_t in = draw_token_count(replay, w.input_tokens);
    const std::int64_t out = draw_token_count(replay, w.output_tokens);
    ASSERT_EQ(input, in);
    ASSERT_EQ(output, out);
  }
  // No `tokens:` and no lengths: zero tokens and no draw.
  WorkloadSpec none;
  std::int64_t input = -1, output = -1;
  RandomStream a(8), b(8);
  draw_request_tokens(a, none, input, output);
  EXPECT_EQ(input, 0);
  EXPECT_EQ(output, 0);
  EXPECT_EQ(a.uniform01(), b.uniform01());
}

}  // namespace
}  // namespace gpumux
