#pragma once
// Internal to the scenario loader (loader.cpp): the readers of each part of a scenario document,
// one file each — read_workload.cpp (arrivals, kernels, tokens, batching), read_gpus.cpp (gpus
// entries, `mig:`, the `sharing:` block through the strategy registry), read_tenants.cpp
// (tenants, SLOs, faults, output) and overrides.cpp (`--set` edits of the YAML tree). All read
// through the one YAML reader (models/config/yaml_reader.hpp) and fail with InputError.
#include <set>
#include <string>
#include <vector>

#include "models/config/yaml_reader.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/scenario.hpp"

namespace gpumux::scenario_detail {

WorkloadSpec workload_of(yaml::Context& ctx, const yaml::Field& field);
GpuSpec gpu_of(yaml::Context& ctx, const yaml::Field& field);
TenantSpec tenant_of(yaml::Context& ctx, const yaml::Field& field, const std::vector<GpuSpec>& gpus,
                     const std::vector<std::string>& gpu_names, bool planning = false);
FaultSpec fault_of(yaml::Context& ctx, const yaml::Field& field,
                   const std::vector<TenantSpec>& written, const std::set<std::string>& expanded);
OutputSpec output_of(yaml::Context& ctx, const yaml::Field& field);

/// Applies one --set to the YAML tree and returns its normalised key path (sequence indices
/// without leading zeros) for Context::add_override.
std::string apply_override(YAML::Node& root, const Override& override);

}  // namespace gpumux::scenario_detail
