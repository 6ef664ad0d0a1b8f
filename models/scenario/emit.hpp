#pragma once
// Writes a (resolved) Scenario back as YAML, with every default filled, so each result file
// reproduces itself: load_scenario_text(emit_scenario_yaml(s)) yields an equivalent scenario.
// Expanded entries (gpu count, tenant replicas) are written expanded.
#include <string>

#include "models/scenario/scenario.hpp"

namespace gpumux {

std::string emit_scenario_yaml(const Scenario& scenario);

}  // namespace gpumux
