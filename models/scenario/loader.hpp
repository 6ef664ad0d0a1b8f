#pragma once
// Scenario loading: YAML text -> typed Scenario (scenario.hpp). Cost: linear in the document.
//
// What it checks: YAML syntax; every key known (unknown keys are errors, with a "did you mean"
// hint when one is close); types; units as in docs/reference/scenarios.md (durations 250ns 10us
// 1024us 2ms 1.5s 2m 1h; sizes 512MiB 10GiB 80GB; bandwidth 3.35TB/s; rates 50/s 3000/min;
// fractions plain numbers; a bare number where a unit is required is an error); value ranges;
// required keys; name uniqueness; expansion of gpus[].count and tenants[].replicas. It does NOT
// check anything that needs a device profile (see resolve.hpp). Every failure throws InputError
// naming file, line, column and key path.
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace gpumux {

/// One `--set KEY=VALUE` override: a dotted path into the document (sequence elements by
/// index: "gpus.0.sharing.timeslice") and a YAML value ("2ms", "80/s", "{process: closed}").
struct Override {
  std::string key_path;
  std::string value;
};

/// Parses "KEY=VALUE"; throws InputError naming the flag when there is no '='.
Override parse_override(const std::string& text);

/// The values `plan.platform` takes (docs/plan.md, "Platforms"), in the order messages list them.
/// The loader validates with this table and `gpumux completion` completes from it.
const std::vector<std::string>& plan_platform_names();

/// The canonical values `plan.strategies` takes (`exclusive` is also accepted for `dedicated`).
const std::vector<std::string>& plan_strategy_names();

/// Loads a scenario file. Throws InputError (missing file, syntax, schema, units).
Scenario load_scenario_file(const std::string& path, const std::vector<Override>& overrides = {});

/// Loads a scenario from YAML text; `source_name` is used in error messages and to resolve
/// relative trace paths (its directory).
Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides = {});

}  // namespace gpumux
