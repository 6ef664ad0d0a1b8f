#pragma once
// The size limit of `gpumux plan`, shared by the planner (models/plan) and the scenario loader
// so that `validate` and `plan` refuse the same scenarios with the same message.

namespace gpumux {

/// The most tenants `gpumux plan` searches; `validate` refuses a planning scenario with more.
/// The search grows with the tenant subsets, about 2.5x per tenant: identical tenants (50/s of
/// a 2 ms kernel, p99 20 ms, max_gpus 3, one H100 model, --jobs 2, the shared 2-core machine)
/// took 0.24 s at 6, 2.2 s at 8 and 12.9 s at 10; 14 ran past 900 s (issue 27). 10 keeps a plan
/// under a minute.
inline constexpr int kMaxPlanTenants = 10;

}  // namespace gpumux
