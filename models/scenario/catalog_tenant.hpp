#pragma once
// A scenario's catalog tenants (`workload: {model: NAME, ...}`): the workload catalog's model
// (models/workload/catalog_model.hpp, docs/workloads.md) applied to a tenant of a Scenario, with
// the scenario's contention law and its key locations for messages. resolve_scenario() calls
// apply_catalog on the tenant's GPU model; `gpumux plan` and the cluster loader need the kernels
// before tenants are placed (with_catalog_kernels). Cost: build_catalog_workload's, once per
// length a tenant's seq_len can draw.
#include <cstdint>
#include <string>

#include "models/gpu/device_profile.hpp"
#include "models/scenario/scenario.hpp"
#include "models/workload/catalog_model.hpp"

namespace gpumux {

/// catalog_timing_profile under the scenario's `contention_law:`. O(1).
DeviceProfile catalog_timing_profile(const Scenario& scenario, const DeviceProfile& gpu);

/// build_catalog_workload under the scenario's `contention_law:`, its InputError at the
/// scenario's location of the offending key (`tenant_path`.workload.KEY, else its nearest
/// written ancestor).
CatalogWorkload build_catalog_workload(const Scenario& scenario, const CatalogRequestSpec& request,
                                       const std::string& tenant_path, const DeviceProfile& gpu,
                                       int data_parallel, bool cuda_graph = false,
                                       int library_sms = 0, double device_l2 = 0);

/// A catalog tenant (`workload.model`) on `gpu`: its kernels and their origins (`catalog`), its
/// host_gap (the runtime's dispatch), and its memory (start-up and per request) unless the
/// scenario sets `memory:` / `workload.memory_per_request:`. resolve_scenario() calls it with
/// the tenant's GPU model and the SMs and L2 bytes of its device (`library_sms`, `device_l2`;
/// 0 = the whole GPU's).
/// Throws InputError as build_catalog_workload.
void apply_catalog(const Scenario& scenario, TenantSpec& tenant, const DeviceProfile& gpu,
                   int library_sms = 0, double device_l2 = 0);

/// The most distinct lengths a seq_len distribution may span, and the most a scenario's catalog
/// tenants may span together (replicas each; `allow_large: true` lifts the second): each length's
/// kernels are built and kept, about 0.2 MB and 1 ms per length (BERT-base, 2026-12-08).
inline constexpr std::int64_t kMaxCatalogLengths = 4096;

/// The lengths a catalog tenant's seq_len distribution has built (0 for a fixed length), checked
/// as apply_catalog checks them (InputError at its seq_len key). O(lengths).
std::int64_t catalog_length_count(const Scenario& scenario, const TenantSpec& tenant);

/// Refuses (InputError at the seq_len key of the tenant that goes over) a scenario whose catalog
/// tenants' seq_len distributions span more than kMaxCatalogLengths lengths in all, unless it
/// sets allow_large. resolve_scenario() and with_catalog_kernels() call it. O(lengths).
void check_catalog_length_budget(const Scenario& scenario);

/// The scenario with apply_catalog on `gpu` for every catalog tenant: for callers that need
/// kernels and memory before tenants are placed (`gpumux plan`'s bounds and memory checks).
Scenario with_catalog_kernels(Scenario scenario, const DeviceProfile& gpu);

}  // namespace gpumux
