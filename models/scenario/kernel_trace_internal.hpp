#pragma once
// Private to models/scenario/kernel_trace*.cpp: the helpers the kernel-trace readers share
// (defined in kernel_trace.cpp). One file per format:
//   kernel_trace.cpp        shared helpers, format names, read_kernel_trace (dispatch, checks)
//   kernel_trace_nsys.cpp   Nsight Systems SQLite export
//   kernel_trace_torch.cpp  PyTorch profiler / Kineto Chrome-trace JSON
//   kernel_trace_csv.cpp    one kernel per CSV row (also the Orion per-kernel files)
//   kernel_trace_ncu.cpp    ncu --csv metrics, joined to kernels by name
// What the kernels become (occupancy, sm_fraction, rescaling, selection) is
// kernel_trace_model.cpp.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/kernel_trace.hpp"
#include "models/scenario/trace_fields.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {
namespace kernel_trace_detail {

using trace_fields::fail;  // "FILE:LINE: MESSAGE" (trace_fields.hpp)
[[noreturn]] void fail_key(const std::string& file, const std::string& key,
                           const std::string& message);
using trace_fields::lower;
/// Fails (file error) for a missing file, a directory, a device or a file over LIMIT bytes.
void check_readable(const std::string& path, std::int64_t limit);
/// The whole file, at most input_file::kMaxTraceBytes (sim/util/input_file.hpp).
std::string read_whole(const std::string& path);
void sort_by_start(KernelTrace& trace);

/// The fields of one CSV line (sim/util/csv.hpp); an unterminated quote is an InputError at
/// PATH:NUMBER.
std::vector<std::string> split_csv(const std::string& line, const std::string& path, int number);
/// Reads one line, counting NUMBER (1-based), dropping '\r' and a UTF-8 byte-order mark.
bool read_line(std::istream& in, std::string& line, int& number);
/// TEXT as a finite number (thousands separators dropped), else an InputError naming COLUMN.
double number_field(const std::string& text, const std::string& column, const std::string& path,
                    int line);

/// The nsys reader (kernel_trace_nsys.cpp).
KernelTrace read_nsys(const std::string& path);

}  // namespace kernel_trace_detail
}  // namespace gpumux
