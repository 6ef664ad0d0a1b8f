#pragma once
// From a recorded kernel trace (recorded_trace.hpp, read by models/scenario/kernel_trace.hpp) to
// the kernels of a request (KernelSpec), for the GPU model the request runs on. docs/traces.md has
// the derivation; in short:
//
//   Selection   kernels of `select.device` (required when the trace holds several GPUs) and
//               `select.stream` (all streams by default) lying wholly inside `select.window`
//               [t0, t1] (times after the trace's first kernel start).
//   Occupancy   blocks per SM B_sm = min(max_blocks, floor(max_threads / threads),
//               floor(floor(registers / (ceil(regs x 32 / 256) x 256)) / warps),
//               floor(shared_per_SM / (shared_per_block + reserved))), on the per-SM limits of
//               the profile (`sm_limits:`, CUDA Programming Guide per compute capability).
//   Grid        blocks B = gridX x gridY x gridZ; the block scheduler places them breadth-first,
//               so sm_fraction f = min(1, B / S) and waves W = max(1, B / (B_sm x S)).
//               Without grid and block: the csv's sm_fraction, or SM_usage / S, else 1.
//   Boundedness m from `ncu --csv` joined by kernel name: m = dram% / (dram% + sm%); else the
//               csv's memory_bound / Profile; else the kernel-name class default
//               (kernel_name_class, kComputeBoundMemoryShare ...), an assumption.
//   Timing      duration = end - start; gaps g = start - (end of the previous kernel of the same
//               stream) become host time: host_before = max(0, g - L_rec) and, when g < L_rec,
//               the kernel's own launch overhead min(g, L_target) (it was already queued), so a
//               replay on the recorded GPU, alone, reproduces every start exactly.
//   Rescale     on another model T (recorded on R): d_T = d_R x ((1 - m) c + m b), with
//               c = (clock_R / clock_T) x (W_T / W_R) (more SMs help only a kernel with more than
//               one wave; sm_fraction-only kernels: S_R clock_R / (S_T clock_T) at f = 1, else the
//               clock ratio) and b = B_HBM,R / B_HBM,T (datasheet bandwidths of the profiles).
//   Copies      memcpy/memset time stays in the gaps of its stream (host time; not rescaled).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/kernel_run.hpp"
#include "models/workload/recorded_trace.hpp"

namespace gpumux {

struct KernelTraceSelect {
  std::optional<std::int64_t> stream;  ///< unset = every stream
  /// GPU of a recording that holds several (nsys deviceId, torch args.device); unset = the
  /// only one (a trace of several GPUs without it is an error).
  std::optional<std::int64_t> device;
  std::optional<Nanos> window_start;  ///< ns after the trace's first kernel start
  std::optional<Nanos> window_end;
};

/// "compute" (GEMM, convolution, attention), "memory" (elementwise, reduction, normalisation,
/// copy, embedding, GEMV) or "other", from the kernel's name.
const char* kernel_name_class(const std::string& name);

/// The class default memory_bound of a kernel name (kComputeBoundMemoryShare, ...).
double default_memory_bound(const std::string& name);

/// Resident blocks per SM of a kernel under `limits`; 0 when the trace lacks the block size or
/// the profile lacks sm_limits.
int blocks_per_sm(const TraceKernel& kernel, const SmLimits& limits);

/// The per-block resources a recorded kernel takes on an SM (contention law 1c).
BlockFootprint footprint_of(const TraceKernel& kernel);

/// A grid of `blocks` blocks alone on a GPU of `sms` SMs, `bps` resident blocks per SM (0 =
/// unknown): the block scheduler places blocks breadth-first, so sm_fraction = min(1, blocks /
/// sms) and waves = max(1, blocks / (bps x sms)) (1 when bps is unknown). Also used by the
/// workload catalog (catalog_model.hpp).
struct GridShape {
  double sm_fraction = 1.0;
  double waves = 1.0;
};
GridShape grid_shape(std::int64_t blocks, int bps, int sms);

/// `spec`'s grid alone on a GPU of `sms` SMs: its sm_fraction and waves (grid_shape) and, when
/// the occupancy is known (bps > 0) and the grid fits an int, its blocks, blocks_per_sm and
/// block footprint (contention law 1c: co-residency; law 2: whole waves); otherwise it keeps
/// only its shape (whole-SM residency, fluid waves). The catalog's kernels and a trace's. O(1).
void set_kernel_grid(KernelSpec& spec, std::int64_t blocks, int bps, int sms,
                     const BlockFootprint& footprint);

struct ConvertedTrace {
  std::vector<KernelSpec> kernels;     ///< in launch order; KernelSpec::lane = stream index
  std::vector<KernelOrigins> origins;  ///< per kernel: trace, ncu or the class default
  std::vector<std::int64_t> streams;   ///< recorded stream id of each lane
  Nanos recorded_span = 0;  ///< first selected kernel start to last end (incl. host gaps)
  Nanos recorded_busy = 0;  ///< sum of the selected kernels' recorded durations
  std::size_t copies = 0;   ///< memcpy/memset records inside the selection (kept as host time)
  std::optional<std::int64_t> peak_memory;  ///< from the trace's allocation records
  int ncu_matched = 0;                      ///< kernels whose memory_bound came from ncu metrics
  int class_defaults = 0;  ///< kernels whose memory_bound is the name-class assumption
};

/// Converts the selected kernels for replay on `target`, recorded on `recorded`. `ncu` may be
/// null. Throws InputError naming the trace (key `select`) when no kernel is selected, and when
/// the replay GPU differs from the recorded one but a profile lacks boost_clock.
ConvertedTrace convert_kernel_trace(const KernelTrace& trace, const KernelTraceSelect& select,
                                    const DeviceProfile& recorded, const DeviceProfile& target,
                                    const std::map<std::string, NcuMetrics>* ncu = nullptr);

}  // namespace gpumux
