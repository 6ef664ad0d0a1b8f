#pragma once
// A kernel trace as recorded by a profiler (nsys, the PyTorch profiler, a csv) and Nsight
// Compute metrics joined to it by kernel name, before any model: what the readers
// (models/scenario/kernel_trace.hpp) produce and the trace model (kernel_trace_model.hpp) turns
// into a request's kernels. Times are ns in the trace's own clock; sizes bytes.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workload/workload_spec.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

/// One kernel launch as recorded.
struct TraceKernel {
  std::string name;
  Nanos start = 0;  ///< ns in the trace's clock
  Nanos end = 0;    ///< > start
  std::int64_t stream = 0;
  std::int64_t device = 0;            ///< GPU of the recording (nsys deviceId, torch args.device)
  std::int64_t grid[3] = {0, 0, 0};   ///< 0 = not recorded
  std::int64_t block[3] = {0, 0, 0};  ///< 0 = not recorded
  int registers_per_thread = 0;       ///< 0 = not recorded
  std::int64_t shared_memory = 0;     ///< bytes per block, static + dynamic
  double blocks_per_sm = 0;           ///< as the profiler estimated it (torch), 0 = not recorded
  double sm_fraction = 0;             ///< csv only, 0 = not given
  int sm_usage = 0;          ///< csv only (Orion SM_usage): SMs the grid needs, 0 = not given
  double memory_bound = -1;  ///< csv only, [0, 1]; < 0 = not given
  int row = 0;               ///< csv line / nsys rowid / index in traceEvents

  Nanos duration() const { return end - start; }
  bool has_grid() const { return grid[0] > 0 && block[0] > 0; }
  // Products saturate at INT64_MAX: dimensions come from the file (a csv may hold 9e18x9e18).
  std::int64_t blocks() const {
    return checked::mul_saturating(
        checked::mul_saturating(grid[0], std::max<std::int64_t>(1, grid[1])),
        std::max<std::int64_t>(1, grid[2]));
  }
  std::int64_t threads_per_block() const {
    return checked::mul_saturating(
        checked::mul_saturating(block[0], std::max<std::int64_t>(1, block[1])),
        std::max<std::int64_t>(1, block[2]));
  }
};

/// One copy (memcpy / memset) as recorded: it occupies its stream (copy engine), not SMs.
struct TraceCopy {
  Nanos start = 0, end = 0;
  std::int64_t bytes = 0;
  std::int64_t stream = 0;
  std::string kind;  ///< "HtoD", "DtoH", "DtoD", "memset", ... as far as the format says
};

struct KernelTrace {
  std::string source;  ///< the file, for messages
  KernelTraceFormat format = KernelTraceFormat::csv;
  std::vector<TraceKernel> kernels;  ///< sorted by start (csv: file order)
  std::vector<TraceCopy> copies;     ///< sorted by start
  /// Whether start times (and so the gaps between kernels) were recorded. A csv with durations
  /// only has none: its kernels are taken as launched back to back, each paying the launch
  /// overhead of the GPU it runs on.
  bool timed = true;
  /// Peak bytes allocated on the GPU according to the trace's allocation records; unset when
  /// the format or the file has none.
  std::optional<std::int64_t> peak_memory;
};

/// Per-kernel-name Nsight Compute throughputs (percent of peak).
struct NcuMetrics {
  double sm_pct = 0;    ///< sm__throughput.avg.pct_of_peak_sustained_elapsed
  double dram_pct = 0;  ///< dram__throughput.avg.pct_of_peak_sustained_elapsed
};

/// Default `memory_bound` of a kernel whose trace says nothing better (no ncu metrics, no csv
/// column), by the class its name falls in (kernel_trace_model.hpp, kernel_name_class). These are
/// assumptions (docs/traces.md): a GEMM or convolution spends most of its time on the SMs; an
/// elementwise, reduction, normalisation, copy or embedding kernel streams HBM.
inline constexpr double kComputeBoundMemoryShare = 0.1;
inline constexpr double kMemoryBoundMemoryShare = 0.9;
inline constexpr double kNeitherMemoryShare = 0.5;

/// The join key of a kernel name: without "void ", template arguments, parameters and
/// namespaces ("void at::native::foo<4>(int)" -> "foo").
std::string ncu_key(const std::string& name);

}  // namespace gpumux
