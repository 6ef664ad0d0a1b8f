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
#include "models/workload/recorded_trace.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

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
