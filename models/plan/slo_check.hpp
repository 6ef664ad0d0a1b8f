#pragma once
// The per-tenant verdict `gpumux plan` applies to a simulated run, on top of the run's SLO
// verdicts (models/run/slo.hpp: one target per key, p50..p999, ttft_*, tpot_*, each with its
// confidence interval): every target met with headroom, no failed request (OOM, a neighbour's
// fault, MPS client rejection) and no OOM event. Best-effort tenants only need to run without
// failures. With headroom h a target T is judged against T x (1 - h), by the run's rule:
//   met           the quantile's upper confidence bound is at most T x (1 - h);
//   missed        its lower bound is above T x (1 - h), or it has no samples;
//   inconclusive  otherwise (the interval straddles T x (1 - h), or has no upper bound): the
//                 planner simulates a longer window, and never ranks a setup on it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpumux {

struct PlanSloTarget {
  std::string key;    ///< "p99", "ttft_p99", ...
  std::string label;  ///< "p99", "TTFT p99", ...
  double target_ns = 0;
  std::optional<double> value_ns;         ///< unset: no samples
  std::optional<double> low_ns, high_ns;  ///< confidence interval; unset: no bound
  std::int64_t samples = 0;               ///< samples behind value_ns
};

struct PlanSloInput {
  std::string name;
  bool best_effort = false;
  std::int64_t failed = 0;
  std::int64_t oom_events = 0;
  std::vector<PlanSloTarget> targets;
  double headroom = 0;  ///< fraction of each target kept free
};

struct PlanSloVerdict {
  bool met = true;
  /// Not met only because a target's interval straddles its allowance (no failure, no miss):
  /// a longer window can decide it.
  bool inconclusive = false;
  double worst_ratio = 0;  ///< max value / target (0 without targets)
  std::string reason;      ///< the first miss, e.g. "embed p99 11.6 ms > 10 ms"
  /// The target closest to being missed, with the samples behind it, e.g.
  /// "p99 4.2 ms / 10 ms (2991 samples, CI [4.0 ms, 4.5 ms])".
  std::string worst;
  std::int64_t worst_samples = 0;  ///< samples behind the worst ratio
  /// max over the targets of the confidence interval's upper bound / target (the value's ratio
  /// where the samples give no upper bound): the headroom the interval leaves, 1 - this.
  double worst_bound_ratio = 0;
};

PlanSloVerdict check_plan_slo(const PlanSloInput& in);

// The futility rule's projection (docs/plan.md, "Stopping a unit that cannot be met"). A unit
// whose verdict is inconclusive after a measured window m (duration - warmup) would be simulated
// over the longer windows m_1 < ... < m_K of its ladder up to plan.max_duration, and is feasible
// only if every target is met over one of them. Take a target with estimate p, interval [L, H]
// at confidence c (z = Phi^-1(1 - (1 - c)/2)) and allowance A = T x (1 - headroom), whose
// estimate is above its allowance (p > A; A < H: it straddles). It is met at window k only if
// the estimate falls to p_k <= A - (H_k - p_k). The quantile estimate behaves as a mean of its
// samples (Bahadur's representation: Serfling, Approximation Theorems of Mathematical
// Statistics, 1980, sec. 2.5), so its fall is scaled by the interval's lower side (the density
// of the samples just below p) and the interval narrows as 1/sqrt(samples); with r_k = m / m_k:
//   s     = kappa x (p - L) / z                 the estimate's standard error downwards, now
//   p_k   ~ N(p, s^2 (1 - r_k))                 the estimate over m_k given p (the later samples
//                                               extend the same series: a Brownian bridge)
//   H_k   = p_k + (H - p) sqrt(r_k)
//   P(met at k) = Phi((A - p - (H - p) sqrt(r_k)) / (s sqrt(1 - r_k)))
// The unit is met at some k only if each of its targets is, so
//   P(the unit is met on the rest of its ladder) <= min over such targets of sum_k P(met at k)
// (a union bound over the windows). This is the conditional power of a group-sequential test
// (Lan, Simon & Halperin, "Stochastically curtailed tests in long-term clinical trials",
// Communications in Statistics C 1(3), 1982): stopping when it is small is stopping for
// futility. A target whose estimate is at or under its allowance (p <= A), or without both
// bounds, is not projected: a unit none of whose targets is projected gets 1, never stopped.
// kappa > 1 widens s for the error of the interval itself.
// Returns that bound (1 also when a tenant failed or was OOM-killed: decided already; 0 when no
// later window is longer than m).
double plan_met_probability(std::span<const PlanSloInput> tenants, double confidence,
                            double measured_s, std::span<const double> later_measured_s,
                            double kappa);

/// assumption: the futility rule stops a unit when the bound above is at most this (1 %): the
/// chance, under the projection, that a stopped unit would have been met within the bound.
inline constexpr double kPlanFutilityProbability = 0.01;
/// assumption: kappa, how much wider than the interval says the projection takes the standard
/// error (1.5: the interval's own dependence estimate is from 20 batches, and a tail quantile
/// moves with the few bursts behind it).
inline constexpr double kPlanFutilityKappa = 1.5;

}  // namespace gpumux
