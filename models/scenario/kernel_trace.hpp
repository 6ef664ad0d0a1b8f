#pragma once
// Kernel traces recorded by real profilers, read as they are (docs/traces.md):
//
//   nsys   Nsight Systems SQLite export (`nsys profile --export=sqlite`, or `nsys export
//          --type sqlite`). Tables: CUPTI_ACTIVITY_KIND_KERNEL (start, end, streamId, gridX/Y/Z,
//          blockX/Y/Z, registersPerThread, staticSharedMemory, dynamicSharedMemory, shortName /
//          demangledName -> StringIds(id, value)); CUPTI_ACTIVITY_KIND_MEMCPY (start, end,
//          bytes, copyKind, streamId) when present; CUDA_GPU_MEMORY_USAGE_EVENTS (start, bytes,
//          memKind, memoryOperationType: 0 allocation, 1 free) when present (peak memory).
//   torch  PyTorch profiler / Kineto Chrome-trace JSON (`prof.export_chrome_trace(PATH)`): the
//          `traceEvents` array; events with `cat: "kernel"` (`ts`, `dur` in microseconds,
//          `args.grid`, `args.block`, `args["registers per thread"]`, `args["shared memory"]`,
//          `args["blocks per SM"]`, `args["est. achieved occupancy %"]`, `args.stream`),
//          `cat: "gpu_memcpy"` / `"gpu_memset"` copies, and `[memory]` instant events
//          (`args["Total Allocated"]`, `args["Total Reserved"]`, `args["Device Type"]` 1 = CUDA)
//          for peak memory.
//   csv    one kernel per row, header names (case-insensitive):
//            name                                      required
//            duration_ns | Duration                     required (integer ns)
//            grid, block ("X" or "XxYxZ")               optional, give both or neither
//            registers_per_thread, shared_memory_bytes  optional (occupancy with grid/block)
//            sm_fraction (0..1] | SM_usage (SMs)        optional, instead of grid/block
//            memory_bound [0..1] | Profile (1 compute-bound, 0 memory-bound, -1 neither)
//            gap_ns                                     optional: idle time before the kernel
//            start_ns                                   optional: start time (instead of gaps)
//            stream                                     optional (default 0)
//          The Orion per-kernel files (Name,Profile,Memory_footprint,SM_usage,Duration) read
//          unchanged; other columns are ignored.
//   ncu    (join, not a trace) `ncu --csv` output with the metrics
//          sm__throughput.avg.pct_of_peak_sustained_elapsed and
//          dram__throughput.avg.pct_of_peak_sustained_elapsed, one row per (kernel, metric)
//          ("raw" layout: Kernel Name, Metric Name, Metric Value) or one row per kernel with the
//          metric names as columns; averaged per kernel name.
//
// Every failure throws InputError naming the file (and the row, table or key): a missing file, a
// file that is not a SQLite database or is truncated, a JSON without `traceEvents`, a CSV
// without a required column, a trace without kernels. Times are kept in the trace's own clock
// (ns); selection and the conversion to model kernels are in kernel_trace_model.hpp.
#include <algorithm>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
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

/// "nsys" | "torch" | "csv" (also "sqlite", "kineto", "pytorch"). Throws std::invalid_argument
/// listing the known names.
KernelTraceFormat parse_kernel_trace_format(const std::string& name);
const char* kernel_trace_format_name(KernelTraceFormat format);

/// Reads a trace file. Throws InputError (see above).
KernelTrace read_kernel_trace(const std::string& path, KernelTraceFormat format);

/// The text formats from a stream; `source_name` is used in messages.
KernelTrace parse_torch_trace(std::istream& in, const std::string& source_name);
KernelTrace parse_csv_kernel_trace(std::istream& in, const std::string& source_name);

/// Reads `ncu --csv` metrics, keyed by kernel name (the full name as ncu prints it, and the
/// name up to the first '(' or '<', so demangled and short names both match).
std::map<std::string, NcuMetrics> read_ncu_metrics(const std::string& path);
std::map<std::string, NcuMetrics> parse_ncu_metrics(std::istream& in,
                                                    const std::string& source_name);

}  // namespace gpumux
