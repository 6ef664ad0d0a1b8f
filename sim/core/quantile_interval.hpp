#pragma once
// Confidence intervals of quantiles estimated from simulation output. Definitions and the reasons
// for the method: docs/metrics.md ("Confidence of a percentile").
//
// Samples X_1 .. X_n of one series (a tenant's latencies), in the order they were recorded, are
// dependent: a request that queues behind a long one makes the next one queue too. The interval
// of the q-quantile x_q at confidence c = 1 - a is two of the samples, [X_(l), X_(u)] (order
// statistics, ranks 1-based):
//
// 1. Order statistics (distribution-free, exact for independent samples). With
//    K = #{i : X_i <= x_q} ~ Binomial(n, q), X_(l) <= x_q <= X_(u) whenever l <= K < u, so
//    l = the largest rank with P(K < l) <= a/2 and u = the smallest with P(K >= u) <= a/2 give
//    coverage >= c whatever the distribution (David & Nagaraja, Order Statistics, 3rd ed. 2003,
//    sec. 7.1; Hahn & Meeker, Statistical Intervals, 1991, sec. 5.2). l = 0 means no lower
//    bound; u = n + 1 no upper bound: the samples cannot bound x_q from above when
//    P(K = n) = q^n > a/2, e.g. a p99 from fewer than 368 samples at c = 0.95.
// 2. Dependence, by batch means of the indicator I_i = 1{X_i <= x^} (x^ the nearest-rank
//    estimate): the means Y_1 .. Y_b of b = kIntervalBatches consecutive batches of
//    m = floor(n / b) samples have variance q (1 - q) tau / m, where tau is the indicator's
//    integrated autocorrelation time (1 for independent samples; Law & Kelton, Simulation
//    Modeling and Analysis, 3rd ed. 2000, sec. 9.5.3 for batch means; b = 20, source:
//    Schmeiser, "Batch size effects in the analysis of simulation output", Operations Research
//    30(3), 1982: 10 to 30 batches). tau^ = m s_Y^2 / (q (1 - q)) x (t_{b-1} / z)^2 (the
//    variance estimate's own uncertainty, as a Student-t interval carries it), at least 1.
//    The samples are worth n_eff = n / tau^ independent ones: the ranks of 1. for n_eff, as
//    levels, scaled back to ranks of the n samples (outwards: floor, ceil).
//
// Cost: O(n) per quantile (one pass for the batches, two rank selections), plus O(log n)
// incomplete-beta evaluations for the binomial ranks.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpumux {

/// Batches of the batch-means estimate (see above).
inline constexpr int kIntervalBatches = 20;
/// The default confidence level (scenario key output.confidence).
inline constexpr double kDefaultConfidence = 0.95;

/// A confidence interval of one quantile (two of the samples) and the dependence behind it.
struct QuantileInterval {
  std::int64_t low = 0, high = 0;  ///< the bounds (valid when has_low / has_high)
  bool has_low = false;            ///< false: the samples do not bound the quantile from below
  bool has_high = false;           ///< false: too few samples to bound it from above
  double dependence = 1;           ///< tau >= 1 (above): n / tau is the effective number of samples
};

/// Ranks [l, u] of the order-statistic interval (1.): l in [0, n], u in [1, n + 1] (0 and n + 1:
/// unbounded), for n >= 1 samples, q in (0, 1), confidence in (0, 1).
struct RankInterval {
  std::size_t low = 0, high = 0;
};
RankInterval binomial_ranks(std::size_t n, double q, double confidence);

/// The dependence tau^ (>= 1) of SAMPLES (in order) at the q-quantile whose estimate is
/// THRESHOLD, for an interval at CONFIDENCE (2. above); 1 for fewer than 2 kIntervalBatches.
double batch_dependence(std::span<const std::int64_t> samples, std::int64_t threshold, double q,
                        double confidence);
/// batch_dependence for several quantiles at once: OUT[t] for THRESHOLDS[t] and QS[t] (all three
/// of one length), in one pass over SAMPLES (each batch visited once, every threshold on it).
void batch_dependences(std::span<const std::int64_t> samples,
                       std::span<const std::int64_t> thresholds, std::span<const double> qs,
                       double confidence, std::span<double> out);

/// The ranks of the interval of N samples of DEPENDENCE tau^ (1.-2. above; tau^ = 1: the
/// binomial ranks). low in [0, n], high in [1, n + 1] (0 and n + 1: unbounded).
RankInterval interval_ranks(std::size_t n, double q, double dependence, double confidence);

}  // namespace gpumux
