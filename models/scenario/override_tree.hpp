#pragma once
// `--set KEY=VALUE` overrides applied to a parsed YAML tree, for readers of parts of a scenario
// file that live above the scenario layer (models/cluster/cluster_loader.hpp reads `cluster:`).
// The scenario loader applies them the same way (models/scenario/overrides.cpp).
#include <string>
#include <vector>

#include "models/config/yaml_reader.hpp"
#include "models/scenario/loader.hpp"

namespace gpumux {

/// Applies each override whose key path starts with `prefix` (all when empty) to `root`, with
/// the prefix removed, and records it in `ctx` so that an error in its value names `--set`.
/// Throws InputError for a path that does not exist or a value that is not YAML.
void apply_overrides(YAML::Node& root, yaml::Context& ctx, const std::vector<Override>& overrides,
                     const std::string& prefix = "");

}  // namespace gpumux
