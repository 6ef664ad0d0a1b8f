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

}  // namespace gpumux
