#pragma once
// Statistics primitives. Metrics built on them are defined once, in docs/metrics.md.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/quantile_interval.hpp"
#include "sim/core/time.hpp"
#include "sim/core/queue_memory.hpp"

namespace gpumux {

/// Exact order statistics of integer samples (latencies). Stores every sample (8 B each).
/// Quantile definition: nearest rank, q-quantile = sorted[ceil(q * n) - 1] (so p50 of
/// {1,2,3,4} is 2, max = quantile(1.0)). quantile() selects through a histogram index, O(n)
/// per call and no sort (statistics.cpp); quantiles() answers several in one pass. A large
/// series' samples live in huge pages where the system gives them (HugePageAllocator).
class ExactQuantiles {
 public:
  /// From 1 MiB (2^17 samples) in huge pages: a 200k-request run's 1.6 MB series faulted in
  /// 400 pages of 4 KiB each, 20-30 % of its run loop on this project's VM.
  using Samples = std::vector<std::int64_t, HugePageAllocator<std::int64_t, std::size_t{1} << 20>>;
  void reserve(std::size_t n) { values_.reserve(n); }
  /// O(1). (A write prefetch of the line ahead was tried for the 512-GPU run, whose stores miss
  /// on every new line: the stall only moved into add, docs/performance.md.)
  void add(std::int64_t value) {
    values_.push_back(value);
    indexed_ = false;
    sum_ += static_cast<double>(value);
  }
  std::size_t count() const { return values_.size(); }
  double mean() const { return values_.empty() ? 0.0 : sum_ / static_cast<double>(values_.size()); }
  /// q in [0, 1], nearest rank; 0 when empty. O(n): the first call after add() builds a 16 KB
  /// histogram index (two passes), each call then one pass (statistics.cpp). The samples stay
  /// in arrival order.
  std::int64_t quantile(double q);
  /// quantile(qs[i]) into out[i] for i < k, the wanted buckets gathered in one pass.
  void quantiles(const double* qs, std::size_t k, std::int64_t* out);
  /// The samples of 0-based ranks index[i] (ascending order) into out[i] for i < k; every
  /// index[i] < count(). One gathering pass for all.
  void at_ranks(const std::size_t* index, std::size_t k, std::int64_t* out);
  /// Confidence intervals of quantile(qs[i]) at CONFIDENCE into out[i] (quantile_interval.hpp:
  /// order statistics at the effective sample size the batch means give). O(n) each. POINTS:
  /// quantiles(qs, k) if the caller has them (one selection pass fewer), else nullptr.
  void intervals(const double* qs, std::size_t k, double confidence, QuantileInterval* out,
                 const std::int64_t* points = nullptr);
  /// The samples' dependence tau^ at quantile(q) for a 95 % interval (batch means; 1 for fewer
  /// than 2 * kIntervalBatches samples).
  double dependence(double q);
  /// dependence() of qs[0..k) into out[0..k), in one pass over the samples.
  void dependences(const double* qs, std::size_t k, double* out);
  std::int64_t max();
  /// Bytes held by the samples (capacity). O(1).
  std::size_t memory_bytes() const { return values_.capacity() * sizeof(std::int64_t); }
  /// The samples, in arrival order.
  const Samples& values() const { return values_; }
  /// The samples as bytes, appended to OUT: their count (LEB128), the sum's bits, then the
  /// samples in ascending order (the first zigzag LEB128, each next as its LEB128 difference:
  /// 1-3 B per sample for latencies in ns). The multiset is kept, not the arrival order: every
  /// quantile, the count, max and mean come back bit for bit; the dependence (intervals) does
  /// not. O(n log n) (a sorted copy). Deterministic.
  void encode(std::string& out) const;
  /// What encode wrote at IN[AT...]; AT moves past it. Throws std::runtime_error on a short
  /// or corrupt buffer. O(n).
  static ExactQuantiles decode(const std::string& in, std::size_t& at);
  /// Frees the samples (count() becomes 0).
  void clear() {
    Samples().swap(values_);
    sum_ = 0;
    indexed_ = false;
    std::vector<std::uint32_t>().swap(select_counts_);
  }

 private:
  Samples values_;
  double sum_ = 0;
  void build_index();
  // The selection index (valid while indexed_): the extremes, the bucket width 2^select_shift_
  // (-1: every sample equal), the samples per bucket (intervals() frees them; empty: rebuilt).
  bool indexed_ = false;
  std::int64_t min_ = 0, max_ = 0;
  int select_shift_ = -1;
  std::vector<std::uint32_t> select_counts_;
};

/// The quantiles every series reports (p50, p90, p99, p99.9), in this order.
inline constexpr std::array<double, 4> kReportedQuantiles = {0.5, 0.9, 0.99, 0.999};

/// How a series' percentiles are computed (scenario key `output.percentiles`, docs/metrics.md).
///   exact:     every sample kept (ExactQuantiles): 8 B per sample, exact nearest-rank values.
///   sketch:    QuantileSketch only: memory bounded by the value range, relative error
///              QuantileSketch::kRelativeError.
///   automatic: exact up to Percentiles::kDefaultExactCap samples per series, then the samples
///              are folded into a sketch (short runs exact, long runs bounded). The default.
enum class PercentileMethod : std::uint8_t { exact, sketch, automatic };
/// The scenario spelling: "exact", "sketch" or "auto".
inline const char* percentile_method_name(PercentileMethod m) {
  return m == PercentileMethod::exact ? "exact" : m == PercentileMethod::sketch ? "sketch" : "auto";
}

/// A mergeable streaming quantile sketch of integer samples: HDR-style log-linear buckets.
///
/// Buckets. With m = kMantissaBits and M = 2^m: a magnitude u < 2M has a bucket of its own
/// (exact); a larger u with leading bit e (2^e <= u < 2^(e+1)) falls in one of the M equal
/// buckets of width 2^(e-m) of its octave, index = (e-m)*M + (u >> (e-m)) — a count-leading-zeros
/// and a shift, no log(). Negative samples use a mirrored bucket array, zero a counter.
///
/// Bound. quantile(q) uses the same definition as ExactQuantiles (nearest rank: the
/// ceil(q*n)-th smallest sample, x). It returns the middle of x's bucket, clamped to the exact
/// [min, max]; so |quantile(q) - x| <= kRelativeError * |x|, kRelativeError = 2^-(m+1) = 1/256
/// (0.39 %), and values with |x| < 2^(m+1) = 256 are exact. quantile(0) = min and
/// quantile(1) = max exactly; count, min, max and the sum (so the mean) are exact as well.
///
/// Memory: 8 B per bucket up to the octave of the largest magnitude seen (the arrays grow a whole
/// octave of M buckets, 1 KiB, at a time), at most (65-m)*M = 7,424 buckets (58 KiB) per sign
/// whatever the number of samples; values up to 1 s in ns (< 2^30) need at most 24 octaves
/// (24 KiB). Cost: add() O(1) (amortized; at most 58 growths), quantile() and merge()
/// O(buckets).
///
/// Mergeable: merge(a, b) gives the same buckets, count, min and max as one sketch fed both
/// inputs (the sum differs only by floating-point rounding of the addition order).
/// Deterministic: no randomness, the result depends only on the multiset of samples.
class QuantileSketch {
 public:
  static constexpr int kMantissaBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kMantissaBits;  // M
  static constexpr double kRelativeError = 1.0 / static_cast<double>(2 * kSubBuckets);

  void add(std::int64_t value) {
    if (value > 0) {
      bump(positive_, index_of(static_cast<std::uint64_t>(value)));
    } else if (value < 0) {
      bump(negative_, index_of(std::uint64_t{0} - static_cast<std::uint64_t>(value)));
    } else {
      ++zero_;
    }
    if (count_ == 0 || value < min_) min_ = value;
    if (count_ == 0 || value > max_) max_ = value;
    ++count_;
    sum_ += static_cast<double>(value);
  }
  /// add(values[i]) for i < n, in that order: the same buckets, count, extremes and sum (added
  /// in the same order), with the arrays grown once and no branch on a sample's bucket. O(n).
  void add_all(const std::int64_t* values, std::size_t n);
  /// Adds every sample of OTHER (as if they had been add()ed here).
  void merge(const QuantileSketch& other);

  std::size_t count() const { return static_cast<std::size_t>(count_); }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  /// Nearest-rank q-quantile within kRelativeError (see the class comment); 0 when empty.
  std::int64_t quantile(double q) const;
  /// The RANK-th smallest sample (1-based, in [1, count()]) within kRelativeError.
  std::int64_t at_rank(std::uint64_t rank) const;
  std::int64_t min() const { return count_ == 0 ? 0 : min_; }
  std::int64_t max() const { return count_ == 0 ? 0 : max_; }
  /// Bytes held by the bucket arrays (capacity), for the memory benchmark.
  std::size_t memory_bytes() const {
    return (positive_.capacity() + negative_.capacity()) * sizeof(std::uint64_t);
  }

  /// The bucket of a magnitude u >= 1, and that bucket's smallest value and width.
  static std::size_t index_of(std::uint64_t u) {
    if (u < 2 * kSubBuckets) return static_cast<std::size_t>(u);
    const int shift = 63 - __builtin_clzll(u) - kMantissaBits;  // >= 1
    return static_cast<std::size_t>(static_cast<std::uint64_t>(shift) * kSubBuckets + (u >> shift));
  }
  static std::uint64_t bucket_low(std::size_t index);
  static std::uint64_t bucket_width(std::size_t index);

  /// The sketch as bytes, appended to OUT: count, zero, min, max (LEB128, the extremes
  /// zigzag), the sum's bits, then per sign the first nonzero bucket, the number up to the
  /// last nonzero one and their counts (LEB128): a series of latencies between 1 and 40 ms
  /// spans ~5 octaves, ~700 buckets, about 1-2 KB. decode gives the same buckets, count,
  /// extremes and sum, so every quantile bit for bit. O(buckets). Deterministic.
  void encode(std::string& out) const;
  /// What encode wrote at IN[AT...]; AT moves past it. Throws std::runtime_error on a short
  /// or corrupt buffer (bucket counts that do not add up to the count included).
  static QuantileSketch decode(const std::string& in, std::size_t& at);

 private:
  static void bump(std::vector<std::uint64_t>& buckets, std::size_t index) {
    if (index >= buckets.size()) grow(buckets, index);
    ++buckets[index];
  }
  static void grow(std::vector<std::uint64_t>& buckets, std::size_t index);

  std::vector<std::uint64_t> positive_, negative_;  // by index_of(|value|)
  std::uint64_t zero_ = 0, count_ = 0;
  std::int64_t min_ = 0, max_ = 0;
  double sum_ = 0;
};

/// One series' percentiles by a PercentileMethod: an ExactQuantiles while exact, a
/// QuantileSketch once sketched. `automatic` keeps the first `exact_cap` samples exactly and
/// folds them (in arrival order) into the sketch when one more arrives, so a series of n <= cap
/// samples is exact and bit-identical to `exact`, and one of n > cap is bit-identical to
/// `sketch` fed the same samples. Memory: 8 B per sample while exact (at most 8 * cap B), then
/// the sketch's. add() is O(1) (the fold, once, O(cap)).
class Percentiles {
 public:
  /// 2^20 samples (8 MiB) per series: every run of under about a million measured requests per
  /// tenant stays exact.
  static constexpr std::size_t kDefaultExactCap = std::size_t{1} << 20;

  explicit Percentiles(PercentileMethod method = PercentileMethod::exact,
                       std::size_t exact_cap = kDefaultExactCap);

  void add(std::int64_t value) {
    if (exact_active_) {
      if (exact_.count() < cap_) {
        exact_.add(value);
        return;
      }
      fold();
    }
    sketch_.add(value);
  }
  /// Reserves room for N exact samples (no more than the cap; nothing once sketched).
  void reserve(std::size_t n);
  std::size_t count() const { return exact_active_ ? exact_.count() : sketch_.count(); }
  double mean() const { return exact_active_ ? exact_.mean() : sketch_.mean(); }
  /// Nearest rank; exact while exact, else within QuantileSketch::kRelativeError. Not const:
  /// the exact selection partitions the samples in place.
  std::int64_t quantile(double q) {
    return exact_active_ ? exact_.quantile(q) : sketch_.quantile(q);
  }
  std::int64_t max() { return exact_active_ ? exact_.max() : sketch_.max(); }
  /// quantile(qs[i]) into out[i] for i < k (exact: one gathering pass for all).
  void quantiles(const double* qs, std::size_t k, std::int64_t* out) {
    if (exact_active_) {
      exact_.quantiles(qs, k, out);
    } else {
      for (std::size_t i = 0; i < k; ++i) out[i] = sketch_.quantile(qs[i]);
    }
  }
  /// Confidence intervals of quantile(qs[i]) at CONFIDENCE into out[i] (quantile_interval.hpp).
  /// Exact: order statistics widened by batch means over the samples. Sketched: the same ranks,
  /// values within the sketch's error, the dependence of each of kReportedQuantiles as measured
  /// on the exact samples before the fold (1 for a series sketched from its first sample, or
  /// for a q not in kReportedQuantiles: independence assumed). POINTS: quantiles(qs, k) if the
  /// caller has them (exact: one selection pass fewer), else nullptr.
  void intervals(const double* qs, std::size_t k, double confidence, QuantileInterval* out,
                 const std::int64_t* points = nullptr);
  /// Bytes held (the exact samples' capacity plus the sketch's buckets). O(1).
  std::size_t memory_bytes() const { return exact_.memory_bytes() + sketch_.memory_bytes(); }
  /// True while every sample is kept (the reported quantiles are exact).
  bool exact() const { return exact_active_; }
  /// The series as bytes, appended to OUT: 'e' and ExactQuantiles::encode while exact, else
  /// 's' and QuantileSketch::encode. What a cluster's workload pod hands back from another
  /// process (models/cluster/workload_pods.hpp). decode gives a series whose count, mean, max
  /// and every quantile(q) equal this one's bit for bit (exact: an `exact` series of the same
  /// samples in ascending order; sketched: a `sketch` one); the intervals' dependence is not
  /// carried (1 for a decoded sketch). O(n log n) exact, O(buckets) sketched.
  void encode(std::string& out) const;
  /// What encode wrote at IN[AT...]; AT moves past it. Throws std::runtime_error on a short
  /// or corrupt buffer.
  static Percentiles decode(const std::string& in, std::size_t& at);
  /// Adds every sample of OTHER: both exact, the samples appended (stays exact, whatever the
  /// cap); else both folded into the sketch (QuantileSketch::merge). Merging the same series
  /// in the same order gives the same result bit for bit. O(other's samples or buckets).
  void merge(const Percentiles& other);

 private:
  void fold();

  ExactQuantiles exact_;
  QuantileSketch sketch_;
  std::size_t cap_;
  bool exact_active_;
  std::array<double, 4> folded_dependence_ = {1, 1, 1, 1};  // of kReportedQuantiles, at the fold
};

/// Time integral of a piecewise-constant value (utilization, memory in use). O(1) per update.
class TimeWeightedValue {
 public:
  /// The value becomes `value` at time `now` (now must not decrease).
  void set(Nanos now, double value) {
    integral_ += value_ * static_cast<double>(now - last_);
    last_ = now;
    value_ = value;
    peak_ = value > peak_ ? value : peak_;
  }
  /// set() for a value no larger than peak() (one set() before it): the same integral and
  /// peak, without the comparison.
  void set_under_peak(Nanos now, double value) {
    integral_ += value_ * static_cast<double>(now - last_);
    last_ = now;
    value_ = value;
  }
  /// Integral of the value over [0, now] (value x ns); windows are differences of two calls.
  double integral(Nanos now) const { return integral_ + value_ * static_cast<double>(now - last_); }
  double value() const { return value_; }
  double peak() const { return peak_; }

 private:
  Nanos last_ = 0;
  double value_ = 0;
  double integral_ = 0;
  double peak_ = 0;
};

}  // namespace gpumux
