#pragma once
// The machine types `gpumux plan` may buy nodes of on a node platform (gke, device-plugin,
// mig-parted; docs/plan.md, "Platforms"): GPUs per node and the price of the host around them.
//
// Price of a node per hour = host + gpus x the GPU model's price (`plan.gpus[].cost_per_hour`).
// Google Cloud bills an accelerator-optimized machine as its attached GPUs plus its predefined
// vCPUs, memory and bundled local SSD (source: GCP, "Accelerator-optimized machine family",
// https://cloud.google.com/compute/docs/accelerator-optimized-machines), so the host part is the
// machine type's price without its GPUs.
// The machine types and their host prices are data: a price table (calibration/prices/*.yaml,
// built into the binary; its provider, region, pricing, currency, date and source are fields).
// The built-in one is GCP us-central1 on-demand (source: the SkyPilot catalog of GCP prices,
// catalogs/v8/gcp/vms.csv, https://github.com/skypilot-org/skypilot-catalog, Apache-2.0;
// GPUs per machine type: GCP, "GPU machine types", https://cloud.google.com/compute/docs/gpus).
// `plan.prices: FILE` (or `gpumux plan --prices FILE`) replaces it with a file of that form.
// Cost: the built-in table is parsed once; a file once per path and process; lookups are linear.
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace gpumux {

struct MachineType {
  std::string name;               ///< e.g. "a3-highgpu-8g"
  std::string gpu_model;          ///< device profile name (calibration/profiles)
  int gpus = 1;                   ///< GPUs per node
  double host_cost_per_hour = 0;  ///< the table's currency per hour, without the GPUs
};

/// A price table: machine types and their host prices, with where and when they hold.
struct PriceTable {
  std::string provider, region, pricing, currency, date, source;
  std::string origin;                 ///< "built-in" or the file it was read from
  std::vector<MachineType> machines;  ///< in the file's order
  /// "gcp us-central1 on-demand USD, 2026-12-03 (built-in)": one line for plan outputs.
  std::string summary() const;
};

/// Reads a price table (YAML: provider, region, pricing, currency, date, source, machines:
/// [{name, gpu_model, gpus, host_per_hour}]). Throws InputError naming `source_name`, line and
/// key: unknown or missing keys, a duplicate machine name, gpus < 1, a negative price, a date
/// that is not YYYY-MM-DD.
PriceTable parse_price_table(const std::string& yaml_text, const std::string& source_name);

/// The built-in table (calibration/prices/gcp-us-central1.yaml).
const PriceTable& builtin_price_table();

/// The table a plan prices nodes with: plan.prices (read once per path), else the built-in one.
/// Throws InputError at plan.prices when the file is missing or invalid, or when its currency
/// differs from plan.gpus'.
const PriceTable& plan_price_table(const PlanSpec& plan);

/// The machine types a plan may buy: `plan.machines` (or the whole catalog) restricted to the
/// GPU models of `gpu_models` (device profile names of plan.gpus); empty on `bare`. Throws
/// InputError at plan.machines / plan.platform: machines on bare, an unknown machine type, no
/// machine type with a GPU of plan.gpus. Shared by the planner and `gpumux validate`. The
/// pointers point into plan_price_table(plan), which lives as long as the process.
std::vector<const MachineType*> plan_machine_types(const PlanSpec& plan,
                                                   const std::vector<std::string>& gpu_models);

}  // namespace gpumux
