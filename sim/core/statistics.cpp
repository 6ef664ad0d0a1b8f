#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace gpumux {

std::int64_t ExactQuantiles::quantile(double q) {
  if (values_.empty()) return 0;
  if (!sorted_) {
    std::sort(values_.begin(), values_.end());
    sorted_ = true;
  }
  const double n = static_cast<double>(values_.size());
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * n));
  if (rank < 1) rank = 1;
  if (rank > values_.size()) rank = values_.size();
  return values_[rank - 1];
}

std::int64_t ExactQuantiles::max() { return quantile(1.0); }

void TimeWeightedValue::set(Nanos now, double value) {
  integral_ += value_ * static_cast<double>(now - last_);
  last_ = now;
  value_ = value;
  peak_ = std::max(peak_, value);
}

double TimeWeightedValue::integral(Nanos now) const {
  return integral_ + value_ * static_cast<double>(now - last_);
}

}  // namespace gpumux
