#pragma once
// The size limit of `gpumux plan`, shared by the planner (models/plan) and the scenario loader
// so that `validate` and `plan` refuse the same scenarios with the same message.

namespace gpumux {

/// The most tenants `gpumux plan` searches (its tenant subsets are 32-bit masks, and the search
/// grows with the subsets); `validate` refuses a planning scenario with more.
inline constexpr int kMaxPlanTenants = 14;

}  // namespace gpumux
