#pragma once
// Statistics primitives. Metrics built on them are defined once, in docs/metrics.md.
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// Exact order statistics of integer samples (latencies). Stores every sample (8 B each).
/// Quantile definition: nearest rank, q-quantile = sorted[ceil(q * n) - 1] (so p50 of
/// {1,2,3,4} is 2, max = quantile(1.0)). quantile() selects with nth_element, O(n) per call and
/// no full sort; asking for increasing q reuses the partition of the previous call.
class ExactQuantiles {
 public:
  void reserve(std::size_t n) { values_.reserve(n); }
  void add(std::int64_t value) {
    values_.push_back(value);
    sorted_ = false;
    sum_ += static_cast<double>(value);
  }
  std::size_t count() const { return values_.size(); }
  double mean() const { return values_.empty() ? 0.0 : sum_ / static_cast<double>(values_.size()); }
  /// q in [0, 1]; 0 when empty. O(n) (O(n - previous rank) for increasing q).
  std::int64_t quantile(double q);
  std::int64_t max();

 private:
  std::vector<std::int64_t> values_;
  double sum_ = 0;
  bool sorted_ = true;
  std::size_t partitioned_below_ = 0;  // values_[0, this) are <= every later element
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
