#pragma once
// TenantStats: one tenant's statistics over its measured requests (those that arrived after
// warm-up): counts, latency / queueing / time-to-first-token / time-per-output-token samples
// (ns), slowdown, SLO violations, OOM events. Owns the rule for what a completed and a failed
// request add. O(1) per request; 8 B per latency sample (exact quantiles).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/core/statistics.hpp"
#include "sim/core/time.hpp"

#include "models/run/request.hpp"

namespace gpumux {

struct SloSpec;

namespace run {

struct TenantStats {
  explicit TenantStats(const SloSpec& slo);

  /// A request that completed at r.finish (measured ones only). Inline: once per request.
  void count_completion(const Request& r) {
    if (!r.measured) return;
    ++completed;
    const Nanos lat = r.finish - r.arrival;
    latency.add(lat);
    queueing.add(r.start - r.arrival);
    if (r.first_token >= 0) {
      time_to_first_token.add(r.first_token - r.arrival);
      // TPOT: (latency - ttft) / (output_tokens - 1), the mean gap between output tokens.
      if (r.output_tokens > 1) {
        time_per_output_token.add(std::llround(static_cast<double>(r.finish - r.first_token) /
                                               static_cast<double>(r.output_tokens - 1)));
      }
    }
    slowdown_sum += static_cast<double>(lat) / std::max(1.0, r.solo_latency);
    if (lat > smallest_slo) ++slo_violations;
  }
  /// A request that failed: a failure and, when the tenant has an SLO, a violation of it.
  void count_failure(const Request& r) {
    if (!r.measured) return;
    ++failed;
    if (smallest_slo != kNever) ++slo_violations;
  }

  ExactQuantiles latency, queueing, time_to_first_token, time_per_output_token;
  double slowdown_sum = 0;
  std::int64_t requests = 0, completed = 0, failed = 0, oom_events = 0, slo_violations = 0;
  Nanos smallest_slo = kNever;  // the tightest latency target; kNever: best-effort
};

}  // namespace run
}  // namespace gpumux
