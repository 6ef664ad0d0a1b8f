#pragma once
// The per-tenant verdict `gpumux plan` applies to a simulated run, on top of the run's SLO
// verdicts (models/run/slo.hpp: one target per key, p50..p999, ttft_*, tpot_*): every target
// met with headroom (value <= target x (1 - headroom); a target without samples is missed), no
// failed request (OOM, a neighbour's fault, MPS client rejection) and no OOM event. Best-effort
// tenants only need to run without failures.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumux {

struct PlanSloTarget {
  std::string key;    ///< "p99", "ttft_p99", ...
  std::string label;  ///< "p99", "TTFT p99", ...
  double target_ns = 0;
  std::optional<double> value_ns;  ///< unset: no samples
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
  double worst_ratio = 0;  ///< max value / target (0 without targets)
  std::string reason;      ///< the first miss, e.g. "embed p99 11.6 ms > 10 ms"
  std::string worst;       ///< the target closest to being missed, e.g. "p99 4.2 ms / 10 ms"
};

PlanSloVerdict check_plan_slo(const PlanSloInput& in);

}  // namespace gpumux
