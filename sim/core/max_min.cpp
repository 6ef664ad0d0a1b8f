#include "sim/core/max_min.hpp"

#include <algorithm>
#include <limits>

namespace gpumux {

void MaxMinProblem::clear() {
  capacities_.clear();
  weights_.clear();
  bounds_.clear();
  terms_.clear();
  rates_.clear();
}

int MaxMinProblem::add_constraint(double capacity) {
  capacities_.push_back(std::max(0.0, capacity));
  return static_cast<int>(capacities_.size() - 1);
}

int MaxMinProblem::add_variable(double weight, double upper_bound) {
  weights_.push_back(weight > 0 ? weight : 1.0);
  bounds_.push_back(std::max(0.0, upper_bound));
  return static_cast<int>(weights_.size() - 1);
}

void MaxMinProblem::add_consumption(int variable, int constraint, double amount) {
  if (amount > 0) terms_.push_back(Term{variable, constraint, amount});
}

void MaxMinProblem::solve() {
  const std::size_t n = weights_.size();
  const std::size_t m = capacities_.size();
  rates_.assign(n, 0.0);
  remaining_.assign(capacities_.begin(), capacities_.end());
  frozen_.assign(n, 0);
  saturated_.assign(m, 0);
  // Relative tolerance for "saturated" and "at bound".
  constexpr double kEpsilon = 1e-12;

  std::size_t unfrozen = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (bounds_[i] <= 0) {
      frozen_[i] = 1;
      --unfrozen;
    }
  }
  while (unfrozen > 0) {
    load_.assign(m, 0.0);
    for (const Term& t : terms_) {
      if (!frozen_[static_cast<std::size_t>(t.variable)]) {
        load_[static_cast<std::size_t>(t.constraint)] +=
            t.amount * weights_[static_cast<std::size_t>(t.variable)];
      }
    }
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < m; ++j) {
      if (load_[j] > 0) step = std::min(step, remaining_[j] / load_[j]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen_[i]) step = std::min(step, (bounds_[i] - rates_[i]) / weights_[i]);
    }
    step = std::max(step, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen_[i]) rates_[i] += step * weights_[i];
    }
    for (std::size_t j = 0; j < m; ++j) {
      remaining_[j] -= step * load_[j];
      if (load_[j] > 0 && remaining_[j] <= kEpsilon * std::max(1.0, capacities_[j])) {
        remaining_[j] = 0;
        saturated_[j] = 1;
      }
    }
    // Freeze variables at their bound or touching a saturated constraint.
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen_[i] && rates_[i] >= bounds_[i] * (1 - kEpsilon)) {
        rates_[i] = bounds_[i];
        frozen_[i] = 1;
        --unfrozen;
      }
    }
    for (const Term& t : terms_) {
      const auto i = static_cast<std::size_t>(t.variable);
      if (!frozen_[i] && saturated_[static_cast<std::size_t>(t.constraint)]) {
        frozen_[i] = 1;
        --unfrozen;
      }
    }
  }
}

}  // namespace gpumux
