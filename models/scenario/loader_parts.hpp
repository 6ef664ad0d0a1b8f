#pragma once
// Internal to the scenario loader (loader.cpp): the readers of each part of a scenario document —
// read_workload.cpp (arrivals, tokens, batching), read_request.cpp (the request's kernels: listed,
// a kernel trace or a catalog model), read_llm.cpp (an `llm:` card, `engine_cpu:`), read_gpus.cpp
// (gpus entries, `mig:`, the `sharing:` block through the strategy registry), read_tenants.cpp
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

// read_workload.cpp: the values a workload draws, shared with the request's readers.
/// A duration fixed or drawn from a distribution ({fixed: V}, {exponential: MEAN}, ...).
DurationDistribution distribution_of(yaml::Context& ctx, const yaml::Field& field);
/// A token count, fixed or drawn (plain numbers, no units).
DurationDistribution token_count_of(yaml::Context& ctx, const yaml::Field& field);
/// Which token count a kernel's repeat or duration scales with (`input`, `output`, `batch`).
TokenCount token_kind_of(yaml::Context& ctx, const yaml::Field& field, const char* what);
/// A non-negative duration in ns with sub-nanosecond resolution ("25ps", "0.4ns").
double fine_duration_ns(yaml::Context& ctx, const yaml::Field& field);

/// read_request.cpp: the workload's `request:` block (kernels, a kernel trace or a catalog
/// model, host_gap, cuda_graph) into W.
void read_request(yaml::Context& ctx, const yaml::MapReader& map, WorkloadSpec& w);
/// read_request.cpp: `workload: {model: NAME, batch: N, ...}` (docs/workloads.md), the catalog
/// model MODEL (the field) and the keys beside it in MAP; the kernels are built at resolve.
CatalogRequestSpec catalog_request_of(yaml::Context& ctx, const yaml::MapReader& map,
                                      const yaml::Field& model);
/// read_request.cpp: `host: {cpu_speed: S}` (a named host or a relative speed, host_cpu.hpp)
/// into H's cpu_speed and cpu_name.
void host_cpu_speed_of(yaml::Context& ctx, const yaml::Field& field, HostOverrides& h);

// read_llm.cpp: an `llm:` card (a named one's architecture from the catalog) and `engine_cpu:`.
LlmCard llm_card_of(yaml::Context& ctx, const yaml::Field& field);
EngineCpu engine_cpu_of(yaml::Context& ctx, const yaml::Field& field);
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
