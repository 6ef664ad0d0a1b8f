#pragma once
// The NVIDIA k8s-device-plugin configuration file (`--config-file`, the ConfigMap the Helm chart
// mounts) -> GpuSharingConfig: what the plugin advertises for each GPU of a node.
// source: NVIDIA k8s-device-plugin README, "As a configuration file" and "Shared Access to GPUs",
// and the schema in api/config/v1 (github.com/NVIDIA/k8s-device-plugin, commit 1b826acc,
// Apache-2.0); the fixtures tests/data/cluster/device-plugin-*.yaml are the README's examples.
//
// Read (and checked as the plugin checks it):
//   version: v1                      (optional, as in the plugin; another value is an error)
//   flags.migStrategy: none|single|mixed  (default none)
//   sharing.timeSlicing | sharing.mps:    (not both: the README calls them mutually exclusive)
//     renameByDefault: bool          (advertise NAME.shared)
//     failRequestsGreaterThanOne: bool  (default false; true for mps, as api/config/v1/config.go)
//     resources: [{name, replicas >= 2, rename?, devices?: all | N | [index, "0:1", UUID...]}]
//       name: nvidia.com/gpu or nvidia.com/mig-PROFILE (a name without a prefix gets nvidia.com/,
//       as the plugin's NewResourceName); mig-* needs migStrategy mixed; mps takes no mig-*
//       resource ("sharing using MPS is not supported for MIG devices", internal/plugin/mps.go).
// Accepted and ignored (they do not change what is advertised in a simulation): the other flags
// (failOnInitError, nvidiaDriverRoot, mpsRoot, gdsEnabled, ..., each type-checked when it is a
// boolean), everything under flags.plugin, flags.gfd, resources (pattern renames of GPU
// products) and imex. An unknown key at the levels gpumux reads is an error with a hint (the
// plugin would silently ignore a misspelt key such as renameByDefualt).
// Every error is an InputError "FILE:LINE:COLUMN: KEY.PATH: message". Cost: linear in the file.
#include <string>

#include "models/cluster/cluster_spec.hpp"
#include "models/config/yaml_reader.hpp"

namespace gpumux::cluster {

/// Reads a device-plugin config document at `document` (the root of its own file, or an inline
/// mapping inside a cluster file; key paths and locations come from `ctx`). Sets mig_strategy,
/// sharing, shared, fail_requests_greater_than_one, rename_by_default, device_sharing (the
/// strategy time-slicing or mps, replicas = those of nvidia.com/gpu if listed, else of the first
/// resource), source and where. mig_devices stay empty (a MIG layout comes from mig-parted).
GpuSharingConfig read_device_plugin_config(yaml::Context& ctx, const yaml::Field& document);

/// Parses a device-plugin config from text; `source_name` names it in errors.
GpuSharingConfig parse_device_plugin_config(const std::string& yaml_text,
                                            const std::string& source_name);

/// Loads a device-plugin config file. Throws InputError (missing file, syntax, schema).
GpuSharingConfig load_device_plugin_config(const std::string& path);

}  // namespace gpumux::cluster
