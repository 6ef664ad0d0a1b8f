// TenantStats: the tightest SLO target of a tenant; TenantStatsRecorder set-up (the rest is
// inline in the header).
#include "models/run/tenant_stats.hpp"

#include <algorithm>

#include "models/scenario/scenario.hpp"

namespace gpumux::run {

TenantStats::TenantStats(const SloSpec& slo, PercentileMethod method)
    : latency(method),
      queueing(method),
      time_to_first_token(method),
      time_per_output_token(method) {
  for (const auto& target : {slo.p50, slo.p90, slo.p99, slo.p999}) {
    if (target) smallest_slo = std::min(smallest_slo, *target);
  }
}

TenantStatsRecorder::TenantStatsRecorder(const std::vector<TenantSpec>& tenants,
                                         PercentileMethod method) {
  stats_.reserve(tenants.size());
  for (const TenantSpec& t : tenants) stats_.emplace_back(t.slo, method);
}

void TenantStatsRecorder::reserve(std::size_t tenant, std::size_t expected) {
  stats_[tenant].latency.reserve(expected);
  stats_[tenant].queueing.reserve(expected);
}

}  // namespace gpumux::run
