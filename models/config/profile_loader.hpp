#pragma once
// Reading device profiles (models/gpu/device_profile.hpp) from calibration/profiles/NAME.yaml
// (embedded into the binary at build time) or from a path.
// Every number in a profile file carries `source:` (where it was published or measured) or
// `assumption:` (why this value was chosen when no source exists); the loader rejects a number
// that has neither. Units inside the profile: as in scenario files (docs/reference/scenarios.md).
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"

namespace gpumux {

/// Names of the profiles compiled into the binary, sorted.
std::vector<std::string> embedded_profile_names();

/// The embedded profile name whose `nvidia_smi_name` matches `name` ("NVIDIA H100 80GB HBM3",
/// case-insensitive; spaces, '-' and '_' are interchangeable, as in the GPU feature discovery
/// label NVIDIA-H100-80GB-HBM3; a leading "NVIDIA " may be left out), or "" when none does.
std::string embedded_profile_for_alias(const std::string& name);

/// Loads a profile by name (embedded, or an nvidia-smi name of one) or by path (anything containing
/// '/' or ending in .yaml; relative paths resolve against `base_dir`). Results are cached per
/// process. Throws InputError naming the file, line and key of a bad or unsourced value, or listing
/// the known profile names when the name is unknown.
const DeviceProfile& load_device_profile(const std::string& name_or_path,
                                         const std::string& base_dir = "");

/// The text of the profile document load_device_profile reads for `name_or_path` (an embedded
/// profile's, or the file's), for tools that write an edited copy (`gpumux calibrate`). Throws
/// InputError as load_device_profile.
std::string device_profile_text(const std::string& name_or_path, const std::string& base_dir = "");

/// Parses a profile document (for tests and tools). Throws InputError.
DeviceProfile parse_device_profile(const std::string& yaml_text, const std::string& source_name);

}  // namespace gpumux
