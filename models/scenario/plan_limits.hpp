#pragma once
// The size limit of `gpumux plan`, shared by the planner (models/plan) and the scenario loader
// so that `validate` and `plan` refuse the same scenarios with the same message.

namespace gpumux {

/// The most tenants `gpumux plan` searches; `validate` refuses a planning scenario with more.
/// Up to 10 tenants the search is exact (a DP over tenant subsets, 3^n); above, a scalable
/// search builds a setup and proves a lower bound (docs/plan.md, "Many tenants"). 64 is the
/// width of the planner's tenant sets (one bit per tenant).
inline constexpr int kMaxPlanTenants = 64;

}  // namespace gpumux
