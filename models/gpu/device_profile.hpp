#pragma once
// Device profiles: the hardware numbers of one GPU model (SMs, memory, bandwidths, L2, launch
// and switch timings, MIG geometry). This is the data only; models/config/profile_loader.hpp reads
// it from calibration/profiles/NAME.yaml (embedded into the binary at build time) or a path.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// One MIG GPU-instance profile, e.g. H100 "3g.40gb".
struct MigProfileSpec {
  std::string name;            ///< "3g.40gb"
  int sms = 0;                 ///< multiprocessors of one instance
  std::int64_t memory = 0;     ///< bytes usable by CUDA in the instance
  int memory_slices = 0;       ///< of the GPU's `memory_slices` (8 on A100/H100/H200)
  int compute_slices = 0;      ///< of the GPU's `compute_slices` (7)
  int max_count = 0;           ///< at most this many instances of this profile per GPU
  std::vector<int> placements; ///< allowed start memory slices, e.g. {0, 4}
};

struct DeviceProfile {
  std::string name;          ///< file stem, e.g. "h100-sxm-80gb"
  std::string display_name;  ///< e.g. "NVIDIA H100 SXM5 80GB"
  /// Names `nvidia-smi --query-gpu=name` prints for this model (`nvidia_smi_name:` in the
  /// profile, with its source), e.g. "NVIDIA H100 80GB HBM3"; accepted as `model:` aliases.
  std::vector<std::string> nvidia_smi_names;
  int sms = 0;                       ///< SMs enabled on the whole GPU (non-MIG)
  std::int64_t memory = 0;           ///< bytes usable on the whole GPU
  double hbm_bandwidth = 0;          ///< bytes/s, datasheet peak
  double hbm_bandwidth_measured = 0; ///< bytes/s, measured achievable (0 = unknown)
  std::int64_t l2_cache = 0;         ///< bytes
  double l2_bandwidth = 0;           ///< bytes/s, measured L2 read plateau (L2 capacity law)
  /// Per kernel in a stream: time between a kernel becoming launchable (its predecessor done,
  /// its CPU issue reached) and its start, ns (models/workload docs; gpu-benches intercept).
  Nanos launch_overhead = 0;
  Nanos graph_launch_overhead = 0;   ///< the same for kernels of a CUDA graph (`cuda_graph: true`)
  // time-slicing defaults
  Nanos timeslice = 0;
  Nanos context_switch = 0;
  Nanos preemption_latency = 0;
  Nanos cache_refill = 0;
  // MPS defaults
  int mps_max_clients = 48;
  // MIG geometry; mig_profiles empty = the GPU does not support MIG
  int memory_slices = 0;
  int compute_slices = 0;
  std::vector<MigProfileSpec> mig_profiles;
  std::map<std::string, std::vector<std::string>> mig_layouts;  ///< named layouts (mig-parted)

  /// Key paths of the values marked `assumption:` rather than `source:` ("context_switch",
  /// "mig.profiles.2.sms", ...), so results can say which of their inputs are unmeasured.
  std::vector<std::string> assumed;
  std::string source_path;   ///< file it came from, or "embedded:NAME"
  std::string content_hash;  ///< FNV-1a 64 of the file text, 16 hex digits

  /// Lookup by name; nullptr when the GPU has no such MIG profile.
  const MigProfileSpec* find_mig_profile(const std::string& profile_name) const;
};

}  // namespace gpumux
