// Confidence intervals of quantiles (quantile_interval.hpp): binomial ranks, batch means.
#include "sim/core/quantile_interval.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace gpumux {

namespace {

using Binomial = boost::math::binomial_distribution<double>;

// P(K <= k) for K ~ Binomial(n, q); 0 for k < 0.
double cdf_at(const Binomial& k_dist, double k) {
  if (k < 0) return 0.0;
  if (k >= k_dist.trials()) return 1.0;
  return boost::math::cdf(k_dist, k);
}

double student_t_quantile(int dof, double p) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(dof), p);
}

double t_over_z_squared(double confidence);
double t_over_z_squared_uncached(double confidence);

// How many of X[0..m) are <= THRESHOLD. On x86-64 with GCC also compiled for AVX2 (four 64-bit
// compares a step; the baseline's SSE2 has no 64-bit compare), chosen when the CPU has it: the
// same count either way. A run's summary calls it 80 times per series (batch_dependences): 16 %
// of the selections of 1,024 series of 20k samples, half that with AVX2 (docs/performance.md).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
std::size_t
count_at_most(const std::int64_t* x, std::size_t m, std::int64_t threshold) {
  std::size_t below = 0;
  for (std::size_t i = 0; i < m; ++i) below += x[i] <= threshold ? 1 : 0;
  return below;
}

}  // namespace

// The last rank in [FIRST, LAST] at which PASSES (true up to some rank, false after it; true at
// FIRST) holds. From GUESS: a gallop outwards brackets the change, then a binary search. The
// answer is the same as a binary search over the whole range (PASSES is monotone), with
// O(log |answer - guess|) calls instead of O(log (LAST - FIRST)): each call is an incomplete-beta
// evaluation (about 1 us), and the summary searches twice per reported quantile of every series.
template <class Passes>
std::size_t last_passing(std::size_t first, std::size_t last, std::size_t guess, Passes passes) {
  guess = std::clamp(guess, first, last);
  std::size_t lo = first, hi = last;  // the answer is in [lo, hi]
  if (passes(guess)) {
    lo = guess;
    for (std::size_t step = 1; lo < hi; step *= 2) {
      const std::size_t probe = hi - lo > step ? lo + step : hi;
      if (!passes(probe)) {
        hi = probe - 1;
        break;
      }
      lo = probe;
    }
  } else {
    hi = guess - 1;  // guess > first: PASSES holds at FIRST
    for (std::size_t step = 1; lo < hi; step *= 2) {
      const std::size_t probe = hi - lo > step ? hi - step : lo;
      if (passes(probe)) {
        lo = probe;
        break;
      }
      hi = probe - 1;
    }
  }
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    if (passes(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

RankInterval binomial_ranks(std::size_t n, double q, double confidence) {
  const double tail = (1.0 - confidence) / 2;
  const Binomial k_dist(static_cast<double>(n), q);
  // The normal approximation's ranks, only as the searches' starting points.
  const double nd = static_cast<double>(n);
  const double spread =
      boost::math::quantile(boost::math::normal_distribution<double>(), 1 - tail) *
      std::sqrt(nd * q * (1 - q));
  const auto near = [&](double rank) {
    return static_cast<std::size_t>(std::clamp(std::floor(rank), 0.0, nd + 1));
  };
  // l: the largest rank in [0, n] with P(K < l) = P(K <= l - 1) <= tail (true at l = 0, and
  // false from some rank on: P(K <= l - 1) grows with l).
  const std::size_t low = last_passing(0, n, near(nd * q - spread), [&](std::size_t l) {
    return cdf_at(k_dist, static_cast<double>(l) - 1) <= tail;
  });
  // u: the smallest rank in [1, n + 1] with P(K >= u) = 1 - P(K <= u - 1) <= tail (true at
  // u = n + 1): one past the last rank in [0, n] where it fails (it fails at 0: P(K >= 0) = 1).
  const std::size_t high = 1 + last_passing(0, n, near(nd * q + spread), [&](std::size_t u) {
                             return !(1.0 - cdf_at(k_dist, static_cast<double>(u) - 1) <= tail);
                           });
  return {low, high};
}

void batch_dependences(std::span<const std::int64_t> samples,
                       std::span<const std::int64_t> thresholds, std::span<const double> qs,
                       double confidence, std::span<double> out) {
  const std::size_t n = samples.size();
  const std::size_t b = kIntervalBatches;
  const std::size_t k = thresholds.size();
  std::fill(out.begin(), out.end(), 1.0);
  if (n < 2 * b || k == 0) return;
  const std::size_t m = n / b;
  std::vector<double> sum(k, 0.0), sum_sq(k, 0.0);
  // Batch by batch, every threshold over the batch while it is in cache: one pass over memory.
  for (std::size_t j = 0; j < b; ++j) {
    const std::int64_t* batch = samples.data() + j * m;
    for (std::size_t t = 0; t < k; ++t) {
      const std::int64_t threshold = thresholds[t];
      const std::size_t below = count_at_most(batch, m, threshold);
      const double y = static_cast<double>(below) / static_cast<double>(m);
      sum[t] += y;
      sum_sq[t] += y * y;
    }
  }
  const double bd = static_cast<double>(b);
  const double spread = t_over_z_squared(confidence);
  for (std::size_t t = 0; t < k; ++t) {
    const double variance = std::max(0.0, (sum_sq[t] - sum[t] * sum[t] / bd) / (bd - 1));
    out[t] = std::max(1.0, static_cast<double>(m) * variance / (qs[t] * (1 - qs[t])) * spread);
  }
}

double batch_dependence(std::span<const std::int64_t> samples, std::int64_t threshold, double q,
                        double confidence) {
  double tau = 1;
  batch_dependences(samples, {&threshold, 1}, {&q, 1}, confidence, {&tau, 1});
  return tau;
}

namespace {

// (t_{b-1, 1-a/2} / z_{1-a/2})^2: the batch variance's own uncertainty (b - 1 degrees of
// freedom) carried into the effective sample size, as a Student-t interval carries it.
double t_over_z_squared(double confidence) {
  // The last level's value, per thread: a run's summary asks for one level for every series.
  thread_local double last_confidence = -1, last_value = 0;
  if (confidence == last_confidence) return last_value;
  last_confidence = confidence;
  last_value = t_over_z_squared_uncached(confidence);
  return last_value;
}

double t_over_z_squared_uncached(double confidence) {
  const double p = 1 - (1 - confidence) / 2;
  const double t = student_t_quantile(kIntervalBatches - 1, p);
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), p);
  return (t / z) * (t / z);
}

}  // namespace

RankInterval interval_ranks(std::size_t n, double q, double dependence, double confidence) {
  if (n == 0) return {0, 1};
  const double nd = static_cast<double>(n);
  const std::size_t effective = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::floor(nd / std::max(1.0, dependence))));
  RankInterval r = binomial_ranks(effective, q, confidence);
  if (effective == n) return r;
  // The effective sample's ranks, as levels, back to ranks of the N samples (outwards).
  const double scale = nd / static_cast<double>(effective);
  r.low = static_cast<std::size_t>(std::floor(static_cast<double>(r.low) * scale));
  r.high =
      r.high > effective
          ? n + 1
          : std::min(n, static_cast<std::size_t>(std::ceil(static_cast<double>(r.high) * scale)));
  return r;
}

}  // namespace gpumux
