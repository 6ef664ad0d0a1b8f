#pragma once
// Test helper: simulate a scenario given as YAML text (through the same loader, resolver and
// runner as the CLI).
#include <string>

#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux::testing {

inline RunResult run_yaml(const std::string& yaml) {
  return simulate(resolve_scenario(load_scenario_text(yaml, "test.yaml")));
}

inline const TenantResult& tenant(const RunResult& r, const std::string& name) {
  for (const TenantResult& t : r.tenants) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tenant " + name);
}

inline const DeviceResult& device(const RunResult& r, const std::string& name) {
  for (const DeviceResult& d : r.devices) {
    if (d.name == name) return d;
  }
  throw std::runtime_error("no device " + name);
}

}  // namespace gpumux::testing
