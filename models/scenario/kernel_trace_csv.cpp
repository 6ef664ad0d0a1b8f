// Kernel traces: one kernel per CSV row (format csv; kernel_trace.hpp lists the columns),
// including the Orion per-kernel files (Name, Profile, SM_usage, Duration) read unchanged.
#include "models/scenario/kernel_trace_internal.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace gpumux {
using namespace kernel_trace_detail;
namespace {

std::int64_t integer_field(const std::string& text, const std::string& column,
                           const std::string& path, int line) {
  const double value = number_field(text, column, path, line);
  if (value < 0 || value != std::floor(value) || value > 9e18) {
    fail(path, line, column + ": expected a non-negative integer, got '" + text + "'");
  }
  return static_cast<std::int64_t>(value);
}

// "128" or "128x1x1" (also "(128, 1, 1)" / "[128,1,1]").
void dims_field(const std::string& text, std::int64_t out[3], const std::string& column,
                const std::string& path, int line) {
  std::string cleaned;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cleaned += c;
    } else if (c == 'x' || c == 'X' || c == ',' || c == ' ' || c == ';') {
      if (!cleaned.empty() && cleaned.back() != ' ') cleaned += ' ';
    } else if (c != '(' && c != ')' && c != '[' && c != ']') {
      fail(path, line, column + ": expected X or XxYxZ, got '" + text + "'");
    }
  }
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    while (pos < cleaned.size() && cleaned[pos] == ' ') ++pos;
    if (pos >= cleaned.size()) {
      out[i] = i == 0 ? 0 : 1;
      continue;
    }
    const std::size_t stop = cleaned.find(' ', pos);
    // from_chars, not stoll: a dimension beyond int64 is a line error, not std::out_of_range
    // escaping as an internal error (a fuzz finding, tests/fuzz/corpus/crash-csv-dims-range).
    const std::size_t end = stop == std::string::npos ? cleaned.size() : stop;
    long long value = 0;
    const auto [ptr, ec] = std::from_chars(cleaned.data() + pos, cleaned.data() + end, value);
    if (ec != std::errc() || ptr != cleaned.data() + end) {
      fail(path, line, column + ": dimension out of range in '" + text + "'");
    }
    out[i] = value;
    pos = stop == std::string::npos ? cleaned.size() : stop;
  }
  if (out[0] <= 0) fail(path, line, column + ": expected X or XxYxZ, got '" + text + "'");
}

}  // namespace

KernelTrace parse_csv_kernel_trace(std::istream& in, const std::string& path) {
  KernelTrace trace;
  trace.source = path;
  trace.format = KernelTraceFormat::csv;
  std::string line;
  int number = 0;
  if (!read_line(in, line, number)) fail(path, 1, "empty file: expected a header row");
  const std::vector<std::string> header = split_csv(line, path, number);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(lower(header[i]), i);
  const auto find = [&](std::initializer_list<const char*> names) -> std::optional<std::size_t> {
    for (const char* n : names) {
      const auto it = at.find(n);
      if (it != at.end()) return it->second;
    }
    return std::nullopt;
  };
  const auto name_col = find({"name", "kernel", "kernel_name"});
  const auto duration_col = find({"duration_ns", "duration"});
  if (!name_col) fail(path, 1, "missing column 'name' (header: " + line + ")");
  if (!duration_col) fail(path, 1, "missing column 'duration_ns' (header: " + line + ")");
  const auto grid_col = find({"grid"});
  const auto block_col = find({"block"});
  if (grid_col.has_value() != block_col.has_value()) {
    fail(path, 1,
         std::string("missing column '") + (grid_col ? "block" : "grid") +
             "': give grid and block together");
  }
  const auto regs_col = find({"registers_per_thread", "registers"});
  const auto smem_col = find({"shared_memory_bytes", "shared_memory"});
  const auto fraction_col = find({"sm_fraction"});
  const auto usage_col = find({"sm_usage"});
  const auto bound_col = find({"memory_bound"});
  const auto profile_col = find({"profile"});
  const auto gap_col = find({"gap_ns"});
  const auto start_col = find({"start_ns"});
  const auto stream_col = find({"stream"});
  if (gap_col && start_col) fail(path, 1, "give gap_ns or start_ns, not both");
  trace.timed = gap_col.has_value() || start_col.has_value();

  Nanos clock = 0;
  while (read_line(in, line, number)) {
    if (strip_whitespace(line).empty()) continue;
    const std::vector<std::string> f = split_csv(line, path, number);
    const auto field = [&](std::size_t column) -> const std::string& {
      if (column >= f.size()) {
        fail(path, number,
             "missing field '" + header[column] + "' (" + std::to_string(f.size()) + " of " +
                 std::to_string(header.size()) + " columns)");
      }
      return f[column];
    };
    TraceKernel k;
    k.row = number;
    k.name = field(*name_col);
    const Nanos duration = integer_field(field(*duration_col), header[*duration_col], path, number);
    if (duration <= 0) fail(path, number, header[*duration_col] + ": must be greater than zero");
    if (grid_col) {
      dims_field(field(*grid_col), k.grid, header[*grid_col], path, number);
      dims_field(field(*block_col), k.block, header[*block_col], path, number);
    }
    if (regs_col) {
      k.registers_per_thread = static_cast<int>(std::min<std::int64_t>(
          65536, integer_field(field(*regs_col), header[*regs_col], path, number)));
    }
    if (smem_col)
      k.shared_memory = integer_field(field(*smem_col), header[*smem_col], path, number);
    if (fraction_col) {
      k.sm_fraction = number_field(field(*fraction_col), header[*fraction_col], path, number);
      if (!(k.sm_fraction > 0 && k.sm_fraction <= 1)) {
        fail(path, number, header[*fraction_col] + ": must be in (0, 1]");
      }
    }
    if (usage_col) {
      k.sm_usage = static_cast<int>(std::min<std::int64_t>(
          1 << 20, integer_field(field(*usage_col), header[*usage_col], path, number)));
    }
    if (bound_col) {
      k.memory_bound = number_field(field(*bound_col), header[*bound_col], path, number);
      if (!(k.memory_bound >= 0 && k.memory_bound <= 1)) {
        fail(path, number, header[*bound_col] + ": must be in [0, 1]");
      }
    } else if (profile_col) {
      // Orion: 1 = compute-bound, 0 = memory-bound, -1 = neither (roofline against a knee).
      const double p = number_field(field(*profile_col), header[*profile_col], path, number);
      if (p == 1) {
        k.memory_bound = kComputeBoundMemoryShare;
      } else if (p == 0) {
        k.memory_bound = kMemoryBoundMemoryShare;
      } else if (p == -1) {
        k.memory_bound = kNeitherMemoryShare;
      } else {
        fail(path, number,
             header[*profile_col] + ": expected 1, 0 or -1, got '" + field(*profile_col) + "'");
      }
    }
    if (stream_col) {
      // number_field is finite; clamped into int64 before the conversion (9e18 < 2^63).
      k.stream = static_cast<std::int64_t>(std::clamp(
          number_field(field(*stream_col), header[*stream_col], path, number), -9e18, 9e18));
    }
    if (start_col) {
      k.start = integer_field(field(*start_col), header[*start_col], path, number);
    } else {
      const Nanos gap =
          gap_col ? integer_field(field(*gap_col), header[*gap_col], path, number) : 0;
      k.start = clock + gap;
    }
    k.end = k.start + duration;
    clock = k.end;
    trace.kernels.push_back(std::move(k));
  }
  if (start_col) sort_by_start(trace);
  return trace;
}

}  // namespace gpumux
