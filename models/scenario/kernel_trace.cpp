// Shared by the kernel-trace readers (kernel_trace_internal.hpp lists the file of each format):
// InputError helpers, text helpers, line and number reading for the CSV-based formats, the
// format names, and read_kernel_trace (the file checks and the dispatch to one reader).
#include "models/scenario/kernel_trace.hpp"

#include <sstream>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "models/scenario/kernel_trace_internal.hpp"
#include "sim/util/csv.hpp"
#include "sim/util/utf8.hpp"

namespace gpumux {
namespace kernel_trace_detail {

[[noreturn]] void fail_key(const std::string& file, const std::string& key,
                           const std::string& message) {
  SourceLocation where;
  where.file = file;
  where.key_path = key;
  throw InputError(where, message);
}

void check_readable(const std::string& path, std::int64_t limit) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, 0, "kernel trace not found");
  if (std::filesystem::is_directory(path, ec)) fail(path, 0, "is a directory, not a kernel trace");
  try {
    input_file::check(path, limit, "kernel trace");
  } catch (const input_file::FileError& e) {
    fail(path, 0, e.what());
  }
}

std::string read_whole(const std::string& path) {
  check_readable(path, input_file::kMaxTraceBytes);
  try {
    return input_file::read(path, input_file::kMaxTraceBytes, "kernel trace");
  } catch (const input_file::FileError& e) {
    fail(path, 0, e.what());
  }
}

void sort_by_start(KernelTrace& trace) {
  std::stable_sort(trace.kernels.begin(), trace.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start < b.start; });
  std::stable_sort(trace.copies.begin(), trace.copies.end(),
                   [](const TraceCopy& a, const TraceCopy& b) { return a.start < b.start; });
}

std::vector<std::string> split_csv(const std::string& line, const std::string& path, int number) {
  // Kernel names go into the results (JSON, HDF5), which must be UTF-8.
  if (const auto bad = find_invalid_utf8(line)) fail(path, number, bad->message());
  try {
    return split_csv_line(line);
  } catch (const std::invalid_argument& e) {
    fail(path, number, e.what());
  }
}

bool read_line(std::istream& in, std::string& line, int& number) {
  if (!std::getline(in, line)) return false;
  ++number;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  return true;
}

double number_field(const std::string& text, const std::string& column, const std::string& path,
                    int line) {
  std::string cleaned;
  for (const char c : text) {
    if (c != ',') cleaned += c;  // ncu prints thousands separators inside quotes
  }
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(cleaned, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (cleaned.empty() || used != cleaned.size() || !std::isfinite(value)) {
    fail(path, line, column + ": expected a number, got '" + text + "'");
  }
  return value;
}

}  // namespace kernel_trace_detail

using namespace kernel_trace_detail;

KernelTraceFormat parse_kernel_trace_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "nsys" || n == "sqlite" || n == "nsight-systems") return KernelTraceFormat::nsys;
  if (n == "torch" || n == "kineto" || n == "pytorch") return KernelTraceFormat::torch;
  if (n == "csv") return KernelTraceFormat::csv;
  throw std::invalid_argument("unknown kernel trace format '" + name +
                              "' (known: nsys, torch, csv)");
}

const char* kernel_trace_format_name(KernelTraceFormat format) {
  switch (format) {
    case KernelTraceFormat::nsys:
      return "nsys";
    case KernelTraceFormat::torch:
      return "torch";
    case KernelTraceFormat::csv:
      return "csv";
  }
  return "csv";
}

KernelTrace read_kernel_trace(const std::string& path, KernelTraceFormat format) {
  KernelTrace trace;
  if (format == KernelTraceFormat::nsys) {
    check_readable(path, input_file::kMaxSqliteBytes);
    trace = read_nsys(path);
  } else {
    std::istringstream in(read_whole(path));
    trace = format == KernelTraceFormat::torch ? parse_torch_trace(in, path)
                                               : parse_csv_kernel_trace(in, path);
  }
  if (trace.kernels.empty()) {
    fail(path, 0,
         std::string("no kernels in the trace (") + kernel_trace_format_name(format) + " format)");
  }
  return trace;
}

}  // namespace gpumux
