#pragma once
// Statistics primitives. Metrics built on them are defined once, in docs/metrics.md.
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// Exact order statistics of integer samples (latencies). Stores every sample (8 B each);
/// quantiles sort once, lazily. Quantile definition: nearest rank, q-quantile =
/// sorted[ceil(q * n) - 1] (so p50 of {1,2,3,4} is 2, max = quantile(1.0)).
class ExactQuantiles {
 public:
  void add(std::int64_t value) {
    values_.push_back(value);
    sorted_ = false;
    sum_ += static_cast<double>(value);
  }
  std::size_t count() const { return values_.size(); }
  double mean() const { return values_.empty() ? 0.0 : sum_ / static_cast<double>(values_.size()); }
  /// q in [0, 1]; 0 when empty. O(n log n) the first time after an add, then O(1).
  std::int64_t quantile(double q);
  std::int64_t max();

 private:
  std::vector<std::int64_t> values_;
  double sum_ = 0;
  bool sorted_ = true;
};

/// Time integral of a piecewise-constant value (utilization, memory in use). O(1) per update.
class TimeWeightedValue {
 public:
  /// The value becomes `value` at time `now` (now must not decrease).
  void set(Nanos now, double value);
  /// Integral of the value over [0, now] (value x ns); windows are differences of two calls.
  double integral(Nanos now) const;
  double value() const { return value_; }
  double peak() const { return peak_; }

 private:
  Nanos last_ = 0;
  double value_ = 0;
  double integral_ = 0;
  double peak_ = 0;
};

}  // namespace gpumux
