#pragma once
// nvidia mig-parted configuration files (the `nvidia-mig-parted apply -f FILE -c NAME` input, and
// the GPU operator's mig-parted ConfigMap) -> the MIG layout of every GPU of a pool.
// source: github.com/NVIDIA/mig-parted (commit bd7160f4, Apache-2.0): api/spec/v1/spec.go (the
// schema and its checks), pkg/types/mig_config.go (mig-devices counts), examples/config.yaml and
// deployments/systemd/config-default.yaml (fixtures in tests/data/cluster/).
//
//   version: v1                                    (required, as mig-parted requires it)
//   mig-configs:
//     NAME:                                        (at least one entry)
//       - device-filter: "0x20B210DE" | [ ... ]    (optional: PCI device ids the entry is for)
//         devices: all | [0, 1, ...]               (required)
//         mig-enabled: true|false                  (required)
//         mig-devices: {"1g.10gb": 7, ...}         (required when enabled; empty when disabled)
// Reading checks the whole file as mig-parted does (unknown keys are errors: mig-parted refuses
// "unexpected field"); profile names are checked for their form only, because one file serves
// many GPU models (1g.5gb is an A100-40GB profile, 1g.10gb one of A100-80GB and H100).
// Selecting a config (apply_mig_parted_config) checks it against the pool's device profile:
// entries whose device-filter names another GPU are skipped, each layout must fit the GPU
// (models/gpu/mig_layout.hpp), device indices must exist on the node.
// Every error is an InputError "FILE:LINE:COLUMN: KEY.PATH: message". Cost: linear in the file;
// selecting a config costs one MIG placement search (microseconds) per distinct layout.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/cluster/cluster_spec.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/gpu/device_profile.hpp"

namespace gpumux::cluster {

/// One entry of a mig-parted config: which GPUs of a node it is for and their MIG layout.
struct MigPartedEntry {
  std::vector<std::string> device_filter;  ///< PCI device ids ("0x20B210DE"); empty = any GPU
  bool all_devices = true;                 ///< `devices: all`
  std::vector<int> devices;                ///< `devices: [0, 1]` (GPU indices on the node)
  bool mig_enabled = false;
  /// `mig-devices` in file order: profile name -> instances (>= 0).
  std::vector<std::pair<std::string, int>> mig_devices;
  SourceLocation where;              ///< the entry
  SourceLocation mig_devices_where;  ///< its `mig-devices` key (or the entry)
};

/// A whole mig-parted file: every named config.
struct MigPartedFile {
  std::map<std::string, std::vector<MigPartedEntry>> configs;
  std::string source;  ///< the file it was read from
};

/// Reads a mig-parted document at `document` (its own file, or an inline mapping).
MigPartedFile read_mig_parted_config(yaml::Context& ctx, const yaml::Field& document);
/// Parses mig-parted YAML text; `source_name` names it in errors.
MigPartedFile parse_mig_parted_config(const std::string& yaml_text, const std::string& source_name);
/// Loads a mig-parted file. Throws InputError (missing file, syntax, schema).
MigPartedFile load_mig_parted_config(const std::string& path);

/// The PCI device ids (mig-parted's device-filter spelling, "0x20B210DE") of the GPU family of a
/// device profile, or empty when gpumux does not know them. A family shares one MIG geometry.
/// source: the device-filter lists and their comments in mig-parted's
/// deployments/systemd/config-default.yaml (commit bd7160f4): "H100-80GB, H800-80GB, A100-80GB,
/// A800-80GB" (8 ids), "A100-40GB, A800-40GB" (4 ids), "A30-24GB", "H100 NVL, H800 NVL",
/// "H200 141GB, H200 NVL".
std::vector<std::string> mig_parted_device_ids(const std::string& profile_name);

/// Applies config `name` of `file` to every GPU of a pool of `gpu` with `gpus_per_node` GPUs:
/// sets out.mig_devices (one layout for all GPUs) or out.mig_devices_by_index (every index, when
/// the layouts differ; a GPU with MIG disabled gets an empty list), and out.source. `name_where`
/// is where the config name was written (for "no config named ..." and "no entry for MODEL").
/// Throws InputError: unknown name; no entry applies to the model; an index beyond the node; an
/// index in two entries; a layout that does not fit (the placement search's reason); MIG on a
/// GPU without MIG; MIG enabled with no instance (the GPU would offer nothing).
void apply_mig_parted_config(const MigPartedFile& file, const std::string& name,
                             const SourceLocation& name_where, const DeviceProfile& gpu,
                             int gpus_per_node, GpuSharingConfig& out);

}  // namespace gpumux::cluster
