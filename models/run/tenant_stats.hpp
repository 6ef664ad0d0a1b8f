#pragma once
// TenantStats: one tenant's statistics over its measured requests (those that arrived after
// warm-up): counts, latency / queueing / time-to-first-token / time-per-output-token samples
// (ns), slowdown, SLO violations, OOM events. Owns the rule for what a completed and a failed
// request add. O(1) per request; the four sample series are Percentiles (sim/core/statistics.hpp)
// by the scenario's `output.percentiles`: 8 B per sample while exact, a bounded sketch after.
// TenantStatsRecorder: every tenant's TenantStats, filled as a Recorder (recorder.hpp) from the
// run's request, arrival and event calls: the result's statistics are an observer like any other.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/core/statistics.hpp"
#include "sim/core/time.hpp"

#include "models/run/recorder.hpp"

namespace gpumux {

struct SloSpec;
struct TenantSpec;

namespace run {

struct TenantStats {
  TenantStats(const SloSpec& slo, PercentileMethod method);

  /// A request that completed at r.finish (measured ones only). Inline: once per request.
  void count_completion(const RequestOutcome& outcome) {
    if (!outcome.measured) return;
    const RequestRecord& r = outcome.record;
    ++completed;
    output_tokens += outcome.output_tokens;
    const Nanos lat = r.finish_ns - r.arrival_ns;
    latency.add(lat);
    queueing.add(r.start_ns - r.arrival_ns);
    if (outcome.first_token >= 0) {
      time_to_first_token.add(outcome.first_token - r.arrival_ns);
      // TPOT: (latency - ttft) / (output_tokens - 1), the mean gap between output tokens.
      if (outcome.output_tokens > 1) {
        time_per_output_token.add(
            std::llround(static_cast<double>(r.finish_ns - outcome.first_token) /
                         static_cast<double>(outcome.output_tokens - 1)));
      }
    }
    slowdown_sum += static_cast<double>(lat) / std::max(1.0, outcome.solo_latency_ns);
    if (lat > smallest_slo) ++slo_violations;
  }
  /// A request that failed: a failure and, when the tenant has an SLO, a violation of it.
  void count_failure(const RequestOutcome& outcome) {
    if (!outcome.measured) return;
    ++failed;
    if (smallest_slo != kNever) ++slo_violations;
  }

  Percentiles latency, queueing, time_to_first_token, time_per_output_token;
  double slowdown_sum = 0;
  std::int64_t requests = 0, completed = 0, failed = 0, oom_events = 0, slo_violations = 0;
  std::int64_t output_tokens = 0;  // of the completed measured requests
  Nanos smallest_slo = kNever;     // the tightest latency target; kNever: best-effort
};

/// Every tenant's TenantStats (index = tenant), as a recorder. `final`: the run calls it
/// directly, so the calls inline. OOM events count whether or not measured (as before).
class TenantStatsRecorder final : public Recorder {
 public:
  explicit TenantStatsRecorder(const std::vector<TenantSpec>& tenants,
                               PercentileMethod method = PercentileMethod::automatic);

  void on_request_arrived(std::uint32_t tenant, Nanos, bool measured) override {
    if (measured) ++stats_[tenant].requests;
  }
  void on_request_completed(const RequestOutcome& outcome) override {
    stats_[outcome.record.tenant].count_completion(outcome);
  }
  void on_request_failed(const RequestOutcome& outcome) override {
    stats_[outcome.record.tenant].count_failure(outcome);
  }
  void on_event(const EventRecord& event) override {
    if (event.kind == EventKind::oom && event.tenant >= 0) {
      ++stats_[static_cast<std::size_t>(event.tenant)].oom_events;
    }
  }

  const TenantStats& tenant(std::size_t index) const { return stats_[index]; }
  /// Reserves room for EXPECTED latency samples of TENANT (avoids regrowing large vectors; no
  /// more than the exact cap, nothing for a sketch).
  void reserve(std::size_t tenant, std::size_t expected);

 private:
  std::vector<TenantStats> stats_;
};

}  // namespace run
}  // namespace gpumux
