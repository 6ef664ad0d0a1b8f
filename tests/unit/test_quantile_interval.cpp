// Confidence intervals of percentiles (sim/core/quantile_interval.hpp, docs/metrics.md
// "Confidence of a percentile"):
//  - the binomial ranks are the exact ones of their definition (checked against the binomial
//    CDF), and a p99 has no upper bound below the sample count where 0.99^n > a/2;
//  - coverage on random i.i.d. samples of three distributions at three sizes and three
//    quantiles is at the nominal 95 % (property test; tolerance: 3 standard errors of the
//    estimated coverage below, and at most 4 points above: the wider-of-two rule over-covers a
//    little, it must not be uselessly wide);
//  - on M/M/1 sojourn times (dependent samples: Lindley's recursion from the stationary
//    state), whose q-quantile is -ln(1 - q) / (mu - lambda), the batch means bring coverage to
//    the nominal level where the i.i.d. interval alone covers well under half the time;
//  - the engine's M/D/1 queue (a fixed-duration kernel on a dedicated GPU, Poisson arrivals):
//    its reported p50 and p99 intervals contain the closed-form sojourn quantiles (Erlang's
//    M/D/1 waiting-time distribution) for most of 20 seeds;
//  - the sketched series keeps the dependence measured before its fold.
#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "models/config/profile_loader.hpp"
#include "sim/core/quantile_interval.hpp"
#include "sim/core/statistics.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

constexpr double kConfidence = 0.95;

TEST(QuantileInterval, BinomialRanksAreTheExactOnes) {
  for (const std::size_t n : {1u, 2u, 10u, 50u, 367u, 368u, 1000u, 123457u}) {
    for (const double q : {0.5, 0.9, 0.99, 0.999}) {
      const RankInterval r = binomial_ranks(n, q, kConfidence);
      const boost::math::binomial_distribution<double> k(static_cast<double>(n), q);
      auto below = [&](std::size_t rank) {  // P(K < rank)
        return rank == 0 ? 0.0 : boost::math::cdf(k, static_cast<double>(rank) - 1);
      };
      auto at_least = [&](std::size_t rank) {  // P(K >= rank)
        return rank > n ? 0.0 : 1.0 - below(rank);
      };
      const double tail = (1 - kConfidence) / 2;
      ASSERT_LE(r.low, n);
      ASSERT_GE(r.high, 1u);
      ASSERT_LE(r.high, n + 1);
      EXPECT_LE(below(r.low), tail) << n << " " << q;
      if (r.low < n) {
        EXPECT_GT(below(r.low + 1), tail) << n << " " << q;
      }
      EXPECT_LE(at_least(r.high), tail) << n << " " << q;
      if (r.high > 1) {
        EXPECT_GT(at_least(r.high - 1), tail) << n << " " << q;
      }
    }
  }
  // A p99 is bounded above from the first n with 0.99^n <= 2.5 %: 368 samples.
  EXPECT_EQ(binomial_ranks(367, 0.99, kConfidence).high, 368u);  // n + 1: unbounded
  EXPECT_LE(binomial_ranks(368, 0.99, kConfidence).high, 368u);
  // A higher confidence widens the interval.
  const RankInterval wide = binomial_ranks(1000, 0.5, 0.99);
  const RankInterval narrow = binomial_ranks(1000, 0.5, 0.9);
  EXPECT_LT(wide.low, narrow.low);
  EXPECT_GT(wide.high, narrow.high);
}

// binomial_ranks starts its searches at the normal approximation's ranks and gallops outwards:
// on random instances (n log-uniform in [1, 2e6], any q and confidence) its ranks are those of a
// binary search over the whole range of its definition.
TEST(QuantileInterval, BinomialRanksEqualAWholeRangeBinarySearch) {
  std::mt19937_64 rng(37);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = static_cast<std::size_t>(std::exp(unit(rng) * std::log(2e6))) +
                          static_cast<std::size_t>(trial < 40 ? trial : 0);
    const double qs[] = {0.5, 0.9, 0.99, 0.999, 0.001 + 0.998 * unit(rng)};
    const double q = qs[trial % 5];
    const double confidences[] = {0.95, 0.9, 0.99, 0.5 + 0.499 * unit(rng)};
    const double confidence = confidences[trial % 4];
    const boost::math::binomial_distribution<double> k(static_cast<double>(n), q);
    auto cdf = [&](double x) {
      return x < 0 ? 0.0 : x >= static_cast<double>(n) ? 1.0 : boost::math::cdf(k, x);
    };
    const double tail = (1 - confidence) / 2;
    std::size_t lo = 0, hi = n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (cdf(static_cast<double>(mid) - 1) <= tail) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const std::size_t low = lo;
    lo = 1;
    hi = n + 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (1.0 - cdf(static_cast<double>(mid) - 1) <= tail) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    const RankInterval r = binomial_ranks(n, q, confidence);
    ASSERT_EQ(r.low, low) << "n " << n << " q " << q << " confidence " << confidence;
    ASSERT_EQ(r.high, lo) << "n " << n << " q " << q << " confidence " << confidence;
  }
}

// The fraction of TRIALS intervals (from DRAW) that contain TRUTH.
template <class Draw>
double coverage(double q, int trials, double truth, Draw draw) {
  int covered = 0;
  for (int i = 0; i < trials; ++i) {
    ExactQuantiles samples;
    for (const std::int64_t x : draw()) samples.add(x);
    QuantileInterval ci;
    samples.intervals(&q, 1, kConfidence, &ci);
    const bool above_low = !ci.has_low || static_cast<double>(ci.low) <= truth;
    const bool below_high = !ci.has_high || truth <= static_cast<double>(ci.high);
    covered += above_low && below_high;
  }
  return static_cast<double>(covered) / trials;
}

TEST(QuantileInterval, CoversIidSamplesAtTheNominalLevel) {
  std::mt19937_64 rng(2024);
  constexpr int kTrials = 400;
  const double se = std::sqrt(kConfidence * (1 - kConfidence) / kTrials);
  const double scale = 1e6;  // samples in "ns", truth scaled alike (ties are negligible)
  for (const std::size_t n : {60u, 500u, 3000u}) {
    for (const double q : {0.5, 0.9, 0.99}) {
      for (int kind = 0; kind < 3; ++kind) {
        std::exponential_distribution<double> expo(1.0);
        std::lognormal_distribution<double> logn(0.0, 1.0);
        std::uniform_real_distribution<double> uni(1.0, 2.0);
        double truth = 0;
        if (kind == 0) truth = -std::log(1 - q);
        if (kind == 1) {
          // exp(Phi^-1(q)) for the standard lognormal.
          const double z = q == 0.5 ? 0.0 : q == 0.9 ? 1.2815515655446004 : 2.3263478740408408;
          truth = std::exp(z);
        }
        if (kind == 2) truth = 1.0 + q;
        const double c = coverage(q, kTrials, truth * scale, [&] {
          std::vector<std::int64_t> x(n);
          for (auto& v : x) {
            const double d = kind == 0 ? expo(rng) : kind == 1 ? logn(rng) : uni(rng);
            v = std::llround(d * scale);
          }
          return x;
        });
        const std::string what = "n " + std::to_string(n) + " q " + std::to_string(q) +
                                 " distribution " + std::to_string(kind);
        // The binomial ranks alone cover with probability P(l <= K < u) >= the nominal level
        // (more for small n: the ranks are integers); the batch means may only widen that.
        const RankInterval r = binomial_ranks(n, q, kConfidence);
        const boost::math::binomial_distribution<double> k(static_cast<double>(n), q);
        const double exact = (r.high > n ? 1.0 : boost::math::cdf(k, r.high - 1.0)) -
                             (r.low == 0 ? 0.0 : boost::math::cdf(k, r.low - 1.0));
        std::printf("%s: coverage %.3f, binomial ranks alone %.3f\n", what.c_str(), c, exact);
        EXPECT_GE(c, kConfidence - 3 * se) << what;
        EXPECT_LE(c, std::max(kConfidence, exact) + 0.03) << what;
      }
    }
  }
}

// M/M/1 FIFO sojourn times by Lindley's recursion W' = max(0, W + S - A), T = W + S, started
// in the stationary state (W = 0 with probability 1 - rho, else Exp(mu - lambda)).
std::vector<std::int64_t> mm1_sojourns(std::mt19937_64& rng, std::size_t n, double lambda,
                                       double mu) {
  std::exponential_distribution<double> service(mu), gap(lambda), busy(mu - lambda);
  std::uniform_real_distribution<double> unit(0, 1);
  double w = unit(rng) < lambda / mu ? busy(rng) : 0.0;
  std::vector<std::int64_t> out(n);
  for (auto& t : out) {
    const double s = service(rng);
    t = std::llround((w + s) * 1e6);
    w = std::max(0.0, w + s - gap(rng));
  }
  return out;
}

TEST(QuantileInterval, BatchMeansCoverDependentMM1Sojourns) {
  std::mt19937_64 rng(7);
  constexpr int kTrials = 200;
  const double se = std::sqrt(kConfidence * (1 - kConfidence) / kTrials);
  const double lambda = 0.5, mu = 1.0;
  for (const double q : {0.5, 0.99}) {
    const double truth = -std::log(1 - q) / (mu - lambda) * 1e6;
    const double c =
        coverage(q, kTrials, truth, [&] { return mm1_sojourns(rng, 20000, lambda, mu); });
    EXPECT_GE(c, kConfidence - 3 * se) << "q " << q;
    // Without the batch means (the binomial ranks alone) the same samples are covered far less
    // often: the dependence is real and measured.
    int iid_covered = 0;
    double dependence = 0;
    for (int i = 0; i < 50; ++i) {
      std::vector<std::int64_t> x = mm1_sojourns(rng, 20000, lambda, mu);
      ExactQuantiles samples;
      for (const std::int64_t v : x) samples.add(v);
      const RankInterval r = binomial_ranks(x.size(), q, kConfidence);
      std::sort(x.begin(), x.end());
      iid_covered +=
          static_cast<double>(x[r.low - 1]) <= truth && truth <= static_cast<double>(x[r.high - 1]);
      dependence += samples.dependence(q) / 50;
    }
    EXPECT_LT(iid_covered, 40) << "q " << q;  // < 80 %
    EXPECT_GT(dependence, 2.0) << "q " << q;
  }
}

// intervals() given the points quantiles() computed (the run summary's call, one selection pass
// fewer) answers what it computes alone: every field of every interval, on 300 random series
// (exact and sketched, 1 to 60,000 samples, few distinct values or many, runs of equal values).
TEST(QuantileInterval, GivenPointsGiveTheSameIntervals) {
  std::mt19937_64 rng(37);
  const double* qs = kReportedQuantiles.data();
  for (int instance = 0; instance < 300; ++instance) {
    const std::size_t n = 1 + rng() % (instance % 3 == 0 ? 60000 : 5000);
    const std::int64_t spread = std::int64_t{1} << (rng() % 40);
    const PercentileMethod method =
        instance % 4 == 3 ? PercentileMethod::automatic : PercentileMethod::exact;
    Percentiles with(method, 2048), without(method, 2048);
    std::int64_t x = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (rng() % 4 != 0) x = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(spread));
      with.add(x);
      without.add(x);
    }
    std::int64_t points[4];
    with.quantiles(qs, 4, points);
    QuantileInterval given[4], own[4];
    with.intervals(qs, 4, kConfidence, given, points);
    without.intervals(qs, 4, kConfidence, own);
    for (int i = 0; i < 4; ++i) {
      const std::string what = "instance " + std::to_string(instance) + ", n " + std::to_string(n) +
                               ", q " + std::to_string(qs[i]);
      EXPECT_EQ(given[i].has_low, own[i].has_low) << what;
      EXPECT_EQ(given[i].has_high, own[i].has_high) << what;
      EXPECT_EQ(given[i].low, own[i].low) << what;
      EXPECT_EQ(given[i].high, own[i].high) << what;
      EXPECT_EQ(given[i].dependence, own[i].dependence) << what;
    }
  }
}

TEST(QuantileInterval, SketchedSeriesKeepsTheDependenceOfItsFirstSamples) {
  std::mt19937_64 rng(11);
  Percentiles exact(PercentileMethod::exact);
  Percentiles folded(PercentileMethod::automatic, 4096);
  for (const std::int64_t x : mm1_sojourns(rng, 40000, 0.5, 1.0)) {
    exact.add(x);
    folded.add(x);
  }
  ASSERT_TRUE(exact.exact());
  ASSERT_FALSE(folded.exact());
  QuantileInterval e, f;
  const double q = 0.5;
  exact.intervals(&q, 1, kConfidence, &e);
  folded.intervals(&q, 1, kConfidence, &f);
  ASSERT_TRUE(e.has_low && e.has_high && f.has_low && f.has_high);
  EXPECT_GT(f.dependence, 1.5);
  // Same order of width (the dependence was measured on 4,096 samples, not 40,000).
  const double width_e = static_cast<double>(e.high - e.low);
  const double width_f = static_cast<double>(f.high - f.low);
  EXPECT_GT(width_f, 0.4 * width_e);
  EXPECT_LT(width_f, 2.5 * width_e);
}

// P(W <= t) of the M/D/1 queue, service time s, arrival rate lambda (Erlang 1909; e.g. Gross &
// Harris, Fundamentals of Queueing Theory): (1 - rho) sum_{k=0}^{floor(t/s)} (lambda (k s - t))^k
// / k! exp(-lambda (k s - t)).
double md1_wait_cdf(double t, double lambda, double s) {
  const double rho = lambda * s;
  long double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t / s)); ++k) {
    const long double x = lambda * (k * s - t);
    sum += std::pow(x, k) / std::tgamma(k + 1.0L) * std::exp(-x);
  }
  return static_cast<double>((1 - rho) * sum);
}

TEST(QuantileInterval, EngineMD1IntervalsContainTheClosedFormQuantiles) {
  const double launch = static_cast<double>(load_device_profile("h100-sxm-80gb").launch_overhead);
  const double s = (1e6 + launch) * 1e-9;  // service: the kernel plus its launch, seconds
  const double lambda = 500;
  // The alternating sum loses precision for t >> s: search W in [0, 20 s], where P(W <= 20 s)
  // is 1 - 1e-9 at this load and the terms stay below 1e7.
  ASSERT_GT(md1_wait_cdf(20 * s, lambda, s), 0.9999);
  auto sojourn_quantile = [&](double q) {  // T = W + s; bisection on the waiting time
    double lo = 0, hi = 20 * s;
    for (int i = 0; i < 200; ++i) {
      const double mid = (lo + hi) / 2;
      (md1_wait_cdf(mid, lambda, s) < q ? lo : hi) = mid;
    }
    return (hi + s) * 1e9;
  };
  const double p50 = sojourn_quantile(0.5), p99 = sojourn_quantile(0.99);
  int covered50 = 0, covered99 = 0;
  constexpr int kSeeds = 20;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const RunResult r = testing::run_yaml("name: md1\nseed: " + std::to_string(seed) +
                                          "\nduration: 60s\nwarmup: 2s\n"
                                          "gpus: [{name: gpu0, model: h100-sxm-80gb}]\n"
                                          "tenants:\n  - name: t\n    device: gpu0\n    workload:\n"
                                          "      arrivals: {process: poisson, rate: 500/s}\n"
                                          "      request: {kernels: [{name: k, duration: 1ms}]}\n");
    const LatencySummary& l = testing::tenant(r, "t").latency;
    ASSERT_GT(l.count, 25000);
    const QuantileInterval& ci50 = l.intervals[0];
    const QuantileInterval& ci99 = l.intervals[2];
    ASSERT_TRUE(ci50.has_low && ci50.has_high && ci99.has_low && ci99.has_high);
    EXPECT_LE(ci99.low, l.p99);
    EXPECT_GE(ci99.high, l.p99);
    covered50 += ci50.low <= p50 && p50 <= ci50.high;
    covered99 += ci99.low <= p99 && p99 <= ci99.high;
  }
  // Nominal 19 of 20; 16 leaves room for the interval's approximations (P(X <= 15) = 1.6 % for
  // X ~ Binomial(20, 0.95)).
  EXPECT_GE(covered50, 16) << "p50 " << p50;
  EXPECT_GE(covered99, 16) << "p99 " << p99;
}

}  // namespace
}  // namespace gpumux
