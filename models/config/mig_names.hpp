#pragma once
// MIG layouts as a user writes them: PROFILE:COUNT items ("3g.40gb:2"), comma lists and named
// layouts ("all-balanced", from the device profile), expanded to the list of GPU-instance
// profile names that models/gpu/mig_layout.hpp places. Errors are InputErrors.
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"

namespace gpumux {

/// "3g.40gb:2" -> {"3g.40gb", "3g.40gb"} (the mig-parted / GKE PROFILE:COUNT syntax; a count
/// from 1 to 7); "3g.40gb" -> {"3g.40gb"}. Throws std::invalid_argument with a short reason.
std::vector<std::string> expand_profile_count(const std::string& item);

/// Expands a layout name (e.g. "all-balanced", "all-1g") or returns the list unchanged.
/// A single string with commas ("3g.40gb,1g.10gb") is split; PROFILE:COUNT items repeat. Throws
/// InputError for an unknown layout name (listing the known ones).
std::vector<std::string> expand_mig_layout(const DeviceProfile& gpu,
                                           const std::vector<std::string>& names_or_layout);

}  // namespace gpumux
