// TenantStats: the tightest SLO target of a tenant (the rest is inline in the header).
#include "models/run/tenant_stats.hpp"

#include <algorithm>

#include "models/scenario/scenario.hpp"

namespace gpumux::run {

TenantStats::TenantStats(const SloSpec& slo) {
  for (const auto& target : {slo.p50, slo.p90, slo.p99, slo.p999}) {
    if (target) smallest_slo = std::min(smallest_slo, *target);
  }
}

}  // namespace gpumux::run
