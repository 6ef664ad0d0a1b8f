#pragma once
// What `gpumux validate` can tell will fail before a run (issue 7, item 5), from the resolved
// scenario and the bounds of bounds.hpp:
//  errors (the run would fail for sure)
//   - a tenant's static memory exceeds its device's memory (or its MPS pinned limit): it is
//     OOM-killed at t = 0;
//   - static memory + one request's memory_per_request exceeds it: every request fails (a MIG
//     instance too small for the tenant's kernels' memory);
//   - more tenants on a device than its strategy takes (Strategy::limits, asked of every
//     strategy: one MPS server's client limit under mps and mps-static-partition): the device
//     would refuse a client at start;
//  warnings (likely to fail, or shared)
//   - the tenants of a device together need more memory at start (or at their first requests)
//     than it has: one of them is OOM-killed;
//   - a tenant's offered load is at or above what its device can serve with the tenant alone
//     (max_in_flight / service time), or a device's tenants together offer more SM or HBM time
//     than it has: queues grow without bound.
// Each finding names the tenant, the device and both numbers, at the key's file:line:column.
#include <string>
#include <vector>

#include "models/scenario/resolve.hpp"

namespace gpumux {

struct CapacityFinding {
  bool error = false;
  SourceLocation where;
  std::string message;
  std::string text() const;  ///< "FILE:LINE:COL: KEY: message"
};

std::vector<CapacityFinding> capacity_findings(const ResolvedScenario& resolved);

/// A planning scenario (plan:, tenants without devices): each GPU model exists and each tenant's
/// static memory fits at least one of them. Throws InputError.
void check_plan_scenario(const Scenario& scenario);

}  // namespace gpumux
