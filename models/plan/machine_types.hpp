#pragma once
// The machine types `gpumux plan` may buy nodes of on a node platform (gke, device-plugin,
// mig-parted; docs/plan.md, "Platforms"): GPUs per node and the price of the host around them.
//
// Price of a node per hour = host + gpus x the GPU model's price (`plan.gpus[].cost_per_hour`).
// Google Cloud bills an accelerator-optimized machine as its attached GPUs plus its predefined
// vCPUs, memory and bundled local SSD (source: GCP, "Accelerator-optimized machine family",
// https://cloud.google.com/compute/docs/accelerator-optimized-machines), so the host part is the
// machine type's price without its GPUs.
//  - GPUs per machine type: source: GCP, "GPU machine types",
//    https://cloud.google.com/compute/docs/gpus (A3 High: a3-highgpu-1g/2g/4g/8g, H100 80GB;
//    A2 Standard: a2-highgpu-1g/2g/4g/8g and a2-megagpu-16g, A100 40GB; A2 Ultra:
//    a2-ultragpu-1g/2g/4g/8g, A100 80GB; A3 Ultra: a3-ultragpu-8g, H200 141GB).
//  - Host prices: source: the SkyPilot catalog of GCP prices, catalogs/v8/gcp/vms.csv
//    (https://github.com/skypilot-org/skypilot-catalog, Apache-2.0; commit 006059e0f18a),
//    column Price of the machine type's row (no AcceleratorName: the VM without its GPUs),
//    region us-central1, on-demand, USD per hour.
// A price is a parameter: `plan.machines` selects machine types, `plan.gpus` prices the GPUs.
// Cost: a table lookup.
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace gpumux {

struct MachineType {
  std::string name;               ///< e.g. "a3-highgpu-8g"
  std::string gpu_model;          ///< device profile name (calibration/profiles)
  int gpus = 1;                   ///< GPUs per node
  double host_cost_per_hour = 0;  ///< USD per hour without the GPUs (us-central1, on-demand)
  std::string provider = "gcp";
};

/// Every machine type gpumux knows, in catalog order (by GPU model, then GPUs per node).
const std::vector<MachineType>& machine_types();

/// The machine type named `name`, nullptr when unknown.
const MachineType* find_machine_type(const std::string& name);

/// The machine types a plan may buy: `plan.machines` (or the whole catalog) restricted to the
/// GPU models of `gpu_models` (device profile names of plan.gpus); empty on `bare`. Throws
/// InputError at plan.machines / plan.platform: machines on bare, an unknown machine type, no
/// machine type with a GPU of plan.gpus. Shared by the planner and `gpumux validate`.
std::vector<const MachineType*> plan_machine_types(const PlanSpec& plan,
                                                   const std::vector<std::string>& gpu_models);

}  // namespace gpumux
