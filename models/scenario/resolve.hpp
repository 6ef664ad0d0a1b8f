#pragma once
// Resolution: a loaded Scenario checked against the device profiles and turned into the list of
// devices the simulator builds (whole GPUs and MIG instances), with profile defaults filled.
//
// Checks (each an InputError naming file, line, column and key path): the GPU model exists; the
// MIG layout fits the GPU's placement rules (mig_layout.hpp); every tenant names an existing
// device ("gpu0", or "gpu0/INDEX" on a MIG GPU — a MIG GPU must be addressed by instance); an
// exclusive device has at most one tenant; a device has at most `replicas` tenants when set;
// time-slicing rejects tenants asking for more than one GPU (both by the strategy); a data-parallel
// tenant (several devices) may not use a MIG instance (no NCCL / peer-to-peer between MIG
// instances); faults name existing tenants; trace files parse (errors name the trace file and
// line). Fills in the scenario: each GPU's strategy fills its parameter block from the profile
// (Strategy::fill_defaults: e.g. time-slicing's timeslice / context_switch / preemption_latency /
// cache_refill, MPS's client limit and `replicas` thread share) and fits it to every device after
// placement (Strategy::fit_device: e.g. MPS's per-client memory of `replicas` and its client
// limit inside a MIG instance); the strategy also refuses placements it cannot serve
// (placement_error, multi_gpu_error). The rules themselves live in models/strategies/.
#include <string>
#include <vector>

#include "models/gpu/device.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/trace_reader.hpp"

namespace gpumux {

struct DeviceProfile;

struct ResolvedDevice {
  DeviceGeometry geometry;
  SharingSpec sharing;  ///< all defaults filled, fitted to this device
  int gpu = 0;          ///< index into Scenario::gpus
  int mig_instance = -1;
  std::vector<int> tenants;  ///< indices into Scenario::tenants
  double cost_per_hour = 0;  ///< price of the device's share of its GPU
  /// Sharing parameters the scenario left unset and the profile filled, by profile key
  /// ("context_switch", "mps_max_clients", ...).
  std::vector<std::string> profile_defaults;
};

struct ResolvedScenario {
  Scenario scenario;  ///< with sharing defaults filled
  std::vector<ResolvedDevice> devices;
  std::vector<int> tenant_device;                  ///< first device index per tenant
  std::vector<std::vector<int>> tenant_devices;    ///< every device index per tenant
  std::vector<const DeviceProfile*> gpu_profiles;  ///< per Scenario::gpus entry
  /// Per tenant: its trace (arrivals: {process: trace}), every row checked here so that
  /// `validate` catches a corrupt trace, but only its summary kept (row count, fingerprint): the
  /// run reads the rows again through a TraceCursor (trace_reader.hpp). rows == 0 for other
  /// processes.
  std::vector<TraceSummary> traces;
};

/// Throws InputError on the first problem found.
ResolvedScenario resolve_scenario(Scenario scenario);

}  // namespace gpumux
