#pragma once
// Weighted max-min fair sharing of capacities among variables (SimGrid's lmm, simplified).
//
// Problem: variables i with weight w_i > 0 and upper bound u_i > 0; constraints j with
// capacity C_j >= 0; consumption a_ij >= 0 (variable i at rate r_i uses a_ij * r_i of j).
//   find r such that  for every j:  sum_i a_ij r_i <= C_j,   0 <= r_i <= u_i,
// and r is weighted max-min fair: no r_i / w_i can grow without lowering some r_k / w_k that is
// not larger. Progressive filling: raise every unfrozen r_i = w_i * lambda together; at each
// step the first constraint to saturate (or bound to be hit) freezes the variables it limits.
//
// Closed forms used by the tests: two equal variables on one constraint each get C/(2a); a
// variable whose bound is below its fair share keeps its bound and the other gets the rest.
// Cost: O(steps x nonzeros), steps <= number of variables. Sizes here are small (kernels
// running on one device), so the solver keeps everything in flat vectors and allocates nothing
// once warmed up.
#include <cstdint>
#include <vector>

namespace gpumux {

class MaxMinProblem {
 public:
  /// Removes all variables and constraints (keeps memory).
  void clear();
  /// Adds a constraint; returns its index.
  int add_constraint(double capacity);
  /// Adds a variable; returns its index.
  int add_variable(double weight, double upper_bound);
  /// Variable `variable` consumes `amount` of `constraint` per unit of rate (amount >= 0).
  void add_consumption(int variable, int constraint, double amount);

  /// Solves; rates() then holds r_i. Deterministic (no dependence on hash order).
  void solve();
  const std::vector<double>& rates() const { return rates_; }
  double rate(int variable) const { return rates_[static_cast<std::size_t>(variable)]; }
  int variable_count() const { return static_cast<int>(weights_.size()); }

 private:
  struct Term {
    int variable;
    int constraint;
    double amount;
  };
  std::vector<double> capacities_;
  std::vector<double> weights_;
  std::vector<double> bounds_;
  std::vector<Term> terms_;
  std::vector<double> rates_;
  // scratch
  std::vector<double> remaining_;
  std::vector<double> load_;
  std::vector<char> frozen_;
  std::vector<char> saturated_;
};

}  // namespace gpumux
