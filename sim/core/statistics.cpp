#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace gpumux {

std::int64_t ExactQuantiles::quantile(double q) {
  if (values_.empty()) return 0;
  if (!sorted_) {
    partitioned_below_ = 0;
    sorted_ = true;  // "selection state valid" from here on
  }
  const double n = static_cast<double>(values_.size());
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * n));
  if (rank < 1) rank = 1;
  if (rank > values_.size()) rank = values_.size();
  const std::size_t index = rank - 1;
  // Elements before partitioned_below_ are all <= the rest, so a higher rank only needs the
  // tail partitioned.
  const auto first = values_.begin() + static_cast<std::ptrdiff_t>(
                                           index >= partitioned_below_ ? partitioned_below_ : 0);
  std::nth_element(first, values_.begin() + static_cast<std::ptrdiff_t>(index), values_.end());
  partitioned_below_ = index;
  return values_[index];
}

std::int64_t ExactQuantiles::max() {
  if (values_.empty()) return 0;
  return *std::max_element(values_.begin(), values_.end());
}

}  // namespace gpumux
