#pragma once
// MIG placement: does a list of GPU-instance profiles fit on one GPU, and where?
//
// Model (NVIDIA MIG User Guide, Supported MIG Profiles; real `nvidia-smi mig -lgipp` output, whose
// placements count memory slices): a GPU has `memory_slices` (8) memory slices and `compute_slices`
// (7) compute slices. A GPU instance of profile P occupies P.memory_slices consecutive memory
// slices starting at one of P.placements, and P.compute_slices compute slices. A layout fits
// when every instance gets a start such that no two instances share a memory slice, the compute
// slices add up to at most compute_slices, and no profile is used more than its max_count.
// The search is exhaustive backtracking over starts (at most 7 instances x 8 starts), so a
// layout is rejected only when no placement exists at all. Cost: microseconds.
#include <stdexcept>
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"

namespace gpumux {

struct MigInstancePlacement {
  int index = 0;  ///< position in the layout as written (the tenant's "gpu0/INDEX")
  const MigProfileSpec* profile = nullptr;
  int start = 0;                                              ///< first memory slice
  int end() const { return start + profile->memory_slices; }  ///< one past the last slice
};

struct MigFitResult {
  bool fits = false;
  std::vector<MigInstancePlacement> placements;  ///< when it fits, in layout order
  /// When it does not fit: one line, e.g. "3g.40gb (#2) needs memory slices 0-3 or 4-7;
  /// 0-3 are used by 4g.40gb (#0), 4-7 by 1g.10gb (#1)". Names unknown profiles with the list
  /// of known ones, and max-count violations ("1g.10gb+me: at most 1 per GPU, layout has 2").
  std::string reason;
};

/// The share of its GPU a MIG instance holds, for cost (tenant and cluster layers alike): its
/// compute slices over the GPU's, 1/7 for 1g.10gb and 2/7 for 2g.20gb on an A100 or H100. The
/// profile's `Ng` counts "GPU slices" (NVIDIA MIG User Guide, Terminology: a GPU slice is the
/// smallest fraction of the GPU, one SM slice with one memory slice; 7 on A100/H100), the seven
/// 1g instances of the all-1g layout hold the whole GPU between them (memory slices would give
/// 7/8, leaving 1/8 of the price to nobody though no instance can be added), and the cluster
/// layer counts allocation and fragmentation in the same slices. docs/cluster.md, "Cost shares
/// of MIG instances". A GPU without a stated slice count: 7 (source: the same guide).
inline double mig_cost_fraction(int instance_compute_slices, int gpu_compute_slices) {
  const int total = gpu_compute_slices > 0 ? gpu_compute_slices : 7;
  return static_cast<double>(instance_compute_slices) / total;
}

/// Checks a layout; never throws for a layout that does not fit (see reason).
MigFitResult fit_mig_layout(const DeviceProfile& gpu, const std::vector<std::string>& profiles);

/// Text for `gpumux mig MODEL`: the profile table (SMs, memory, slices, max, placements) and
/// the named layouts with the placement each one gets.
std::string describe_mig(const DeviceProfile& gpu);

}  // namespace gpumux
