// calibration/microbench's CSV files for `gpumux calibrate`: reading (microbench_read.hpp) and
// the kind of each file (microbench_fit.hpp).
#include "models/app/microbench_read.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "models/app/calibrate.hpp"
#include "models/config/input_error.hpp"
#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/utf8.hpp"

namespace gpumux {
namespace microbench_detail {

std::ifstream open_data_file(const std::string& file) {
  std::ifstream in(file);
  if (!std::filesystem::is_regular_file(file) || !in) {
    throw InputError(file + ": cannot read the calibration file (not a readable regular file)");
  }
  return in;
}

// The file's rows; `header_only` stops after the header. Blank lines and # comments are skipped.
Table read_table(const std::string& file, bool header_only) {
  std::ifstream in = open_data_file(file);
  Table t;
  t.file = file;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const auto bad = find_invalid_utf8(line)) point_error(file, number, "line", bad->message());
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const std::invalid_argument& e) {
      point_error(file, number, "line", e.what());
    }
    if (t.header.empty()) {
      t.header = fields;
      t.header_line = number;
      if (header_only) return t;
      continue;
    }
    if (fields.size() != t.header.size()) {
      point_error(file, number, "row",
                  std::to_string(fields.size()) + " fields where the header has " +
                      std::to_string(t.header.size()));
    }
    t.rows.push_back(std::move(fields));
    t.lines.push_back(number);
  }
  if (t.header.empty()) point_error(file, std::max(number, 1), "header", "empty file");
  return t;
}

std::int64_t count_cell(const Table& t, std::size_t row, const std::string& column) {
  const std::string& text = t.rows[row][static_cast<std::size_t>(t.column(column))];
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || v < 0) {
    point_error(t.file, t.lines[row], column,
                "expected a non-negative whole number, got '" + text + "'");
  }
  return v;
}

double number_cell(const Table& t, std::size_t row, const std::string& column) {
  const std::string& text = t.rows[row][static_cast<std::size_t>(t.column(column))];
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) {
    point_error(t.file, t.lines[row], column, "expected a non-negative number, got '" + text + "'");
  }
  return v;
}

void check_interval(const Table& t, std::size_t row, const std::string& from, const std::string& to,
                    std::int64_t start, std::int64_t end) {
  if (end < start) {
    point_error(t.file, t.lines[row], to,
                std::to_string(end) + " is before " + from + " " + std::to_string(start));
  }
}

const std::vector<std::string> kMetaColumns = {"process_id", "block", "kernel_start_ns",
                                               "kernel_end_ns"};
const std::vector<std::string> kGapColumns = {"process_id", "block", "gap_start_ns", "gap_end_ns"};
const std::vector<std::string> kKernelColumns = {"process_id", "batch", "gpu_start_ns",
                                                 "gpu_end_ns"};
const std::vector<std::string> kLaunchColumns = {"metric", "param", "value", "unit"};

// Two columns bounding an interval: non-negative whole numbers, the end not before the start.
std::pair<std::int64_t, std::int64_t> interval_cells(const Table& t, std::size_t row,
                                                     const std::string& from,
                                                     const std::string& to) {
  const std::int64_t start = count_cell(t, row, from), end = count_cell(t, row, to);
  check_interval(t, row, from, to, start, end);
  return {start, end};
}

// Every row of `file` through `read(table, row)`, after checking its columns.
template <typename Row, typename Read>
std::vector<Row> read_rows(const std::string& file, const std::vector<std::string>& columns,
                           const std::string& what, Read read) {
  const Table t = read_table(file);
  t.require(columns, what);
  std::vector<Row> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) out.push_back(read(t, i));
  return out;
}

std::vector<SpinnerBlock> read_meta(const std::string& file) {
  return read_rows<SpinnerBlock>(
      file, kMetaColumns, "a timeslice_probe meta CSV", [](const Table& t, std::size_t i) {
        SpinnerBlock b;
        b.process_id = count_cell(t, i, "process_id");
        b.block = count_cell(t, i, "block");
        b.role = t.has("role") ? t.rows[i][static_cast<std::size_t>(t.column("role"))] : "spin";
        std::tie(b.kernel_start_ns, b.kernel_end_ns) =
            interval_cells(t, i, "kernel_start_ns", "kernel_end_ns");
        return b;
      });
}

std::vector<SpinnerGap> read_gaps(const std::string& file) {
  return read_rows<SpinnerGap>(
      file, kGapColumns, "a timeslice_probe gaps CSV", [](const Table& t, std::size_t i) {
        SpinnerGap g;
        g.process_id = count_cell(t, i, "process_id");
        g.block = count_cell(t, i, "block");
        std::tie(g.start_ns, g.end_ns) = interval_cells(t, i, "gap_start_ns", "gap_end_ns");
        return g;
      });
}

std::vector<ShortKernel> read_kernels(const std::string& file) {
  return read_rows<ShortKernel>(
      file, kKernelColumns, "a timeslice_probe kernels CSV", [](const Table& t, std::size_t i) {
        ShortKernel k;
        (void)count_cell(t, i, "process_id");
        k.batch = count_cell(t, i, "batch");
        std::tie(k.gpu_start_ns, k.gpu_end_ns) = interval_cells(t, i, "gpu_start_ns", "gpu_end_ns");
        if (t.has("host_submit_ns") && t.has("host_done_ns")) {
          (void)interval_cells(t, i, "host_submit_ns", "host_done_ns");
        }
        return k;
      });
}

// metric -> (value, the file's line)
std::map<std::string, std::pair<double, int>> read_launch(const std::string& file) {
  const Table t = read_table(file);
  t.require(kLaunchColumns, "a launch_probe CSV");
  std::map<std::string, std::pair<double, int>> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const std::string& metric = t.rows[i][static_cast<std::size_t>(t.column("metric"))];
    out[metric] = {number_cell(t, i, "value"), t.lines[i]};
  }
  return out;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace microbench_detail

using namespace microbench_detail;

// ---------------------------------------------------------------- kinds

namespace {

// A kernel trace (docs/traces.md) records each kernel's name, duration and launch shape, not its
// FLOPs or bytes, so no roofline time to subtract from its duration: it cannot inform a fixed
// cost per kernel (docs/calibration.md, "Kernel traces").
[[noreturn]] void refuse_kernel_trace(const std::string& path, int line) {
  point_error(path, line, "header",
              "a kernel trace: gpumux calibrate cannot fit per-kernel fixed costs from it (its "
              "kernels carry no FLOPs or bytes to predict their roofline time; docs/calibration.md"
              ", \"Kernel traces\")");
}

}  // namespace

CalibrationFileKind calibration_file_kind(const std::string& path) {
  const std::string name = base_name(path);
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".sqlite" || extension == ".json") {
    (void)open_data_file(path);
    refuse_kernel_trace(path, 1);
  }
  // run_all.sh's bookkeeping, by name: resolution.csv may be empty (no timer line in the log)
  // and nvidia-smi's query may hold its error text.
  if (name == "resolution.csv" || (name.rfind("nvidia-smi", 0) == 0 && ends_with(name, ".csv"))) {
    (void)open_data_file(path);
    return CalibrationFileKind::other_run_output;
  }
  const Table t = read_table(path, /*header_only=*/true);
  const auto has = [&](const char* column) { return t.has(column); };
  const auto has_any_case = [&](const std::string& column) {
    return std::any_of(t.header.begin(), t.header.end(), [&](std::string field) {
      std::transform(field.begin(), field.end(), field.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return field == column;
    });
  };
  if (has_any_case("name") && (has_any_case("duration_ns") || has_any_case("duration"))) {
    refuse_kernel_trace(path, t.header_line);
  }
  if (has("gap_start_ns") || ends_with(name, "_gaps.csv")) return CalibrationFileKind::spinner_gaps;
  if (has("gpu_start_ns") || ends_with(name, "_kernels.csv"))
    return CalibrationFileKind::short_kernels;
  if (has("kernel_start_ns") || ends_with(name, "_meta.csv"))
    return CalibrationFileKind::spinner_meta;
  if (has("id") || has("model")) return CalibrationFileKind::catalog_points;
  if (has("metric") || name == "launch.csv") return CalibrationFileKind::launch;
  if (t.header.size() == 2 && t.header[0] == "key" && t.header[1] == "value")
    return CalibrationFileKind::run_facts;
  if (t.header.size() == 2 && t.header[0] == "step" && t.header[1] == "rc")
    return CalibrationFileKind::run_steps;
  point_error(path, t.header_line, "header",
              "not a file gpumux calibrate reads: expected catalog points (id,source,model,...) "
              "or calibration/microbench output (*_meta.csv, *_gaps.csv, *_kernels.csv, "
              "launch.csv, device.csv, run-info.csv); header: " +
                  join(t.header, ","));
}

const std::vector<std::string>& microbench_keys() {
  static const std::vector<std::string> keys = {
      "timeslice",       "context_switch",        "preemption_latency",
      "launch_overhead", "graph_launch_overhead", "hbm_bandwidth_measured"};
  return keys;
}

std::vector<std::string> keys_informed_by(CalibrationFileKind kind) {
  switch (kind) {
    case CalibrationFileKind::catalog_points:
      return catalog_fit_keys();
    case CalibrationFileKind::spinner_meta:
    case CalibrationFileKind::spinner_gaps:
      return {"timeslice", "context_switch", "preemption_latency"};
    case CalibrationFileKind::short_kernels:
      return {"context_switch", "preemption_latency"};
    case CalibrationFileKind::launch:
      return {"launch_overhead", "graph_launch_overhead", "hbm_bandwidth_measured"};
    default:
      return {};
  }
}

CalibrationInputs classify_calibration_inputs(const std::vector<std::string>& given) {
  CalibrationInputs d;
  for (const std::string& path : given) {
    if (std::filesystem::is_directory(path)) {
      std::vector<std::string> inside;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().extension() == ".csv") {
          inside.push_back(entry.path().string());
        }
      }
      std::sort(inside.begin(), inside.end());
      if (inside.empty()) throw InputError(path + ": a folder with no .csv file");
      d.all.insert(d.all.end(), inside.begin(), inside.end());
      d.from_folder.insert(inside.begin(), inside.end());
    } else {
      d.all.push_back(path);
    }
  }
  for (const std::string& file : d.all) {
    const CalibrationFileKind kind = calibration_file_kind(file);
    d.kind[file] = kind;
    (kind == CalibrationFileKind::catalog_points ? d.catalog : d.microbench).push_back(file);
  }
  return d;
}

FitKeys split_fit_keys(const std::vector<std::string>& keys, const CalibrationInputs& data,
                       const std::string& option) {
  FitKeys out;
  const auto& catalog = catalog_fit_keys();
  const auto& mb = microbench_keys();
  const auto has = [](const std::vector<std::string>& list, const std::string& key) {
    return std::find(list.begin(), list.end(), key) != list.end();
  };
  for (const std::string& key : keys) {
    if (has(catalog, key)) {
      out.catalog.push_back(key);
    } else if (has(mb, key)) {
      out.microbench.push_back(key);
    } else {
      throw InputError(option + ": unknown parameter '" + key + "' (" + join(catalog, ", ") + ", " +
                       join(mb, ", ") + ")");
    }
  }
  for (auto key = keys.begin(); key != keys.end(); ++key) {
    // `--fit kernel_fixed_cost,kernel_fixed_cost` was fitted once without a word (as `compare
    // --strategies mig,mig` is refused).
    if (std::find(keys.begin(), key, *key) != key) {
      throw InputError(option + ": '" + *key + "' listed twice");
    }
  }
  if (keys.empty()) return out;
  for (const std::string& key : keys) {
    const bool informed = std::any_of(data.kind.begin(), data.kind.end(), [&](const auto& fk) {
      return has(keys_informed_by(fk.second), key);
    });
    if (!informed) throw InputError(option + " " + key + ": no data file given informs it");
  }
  for (const std::string& file : data.all) {
    const auto informs = keys_informed_by(data.kind.at(file));
    // Run facts inform the provenance only; a folder's other files are what the run wrote.
    if (informs.empty() || data.from_folder.count(file)) continue;
    const bool useful = std::any_of(informs.begin(), informs.end(),
                                    [&](const std::string& k) { return has(keys, k); });
    if (!useful) {
      throw InputError(file + ":1: header: this file informs " + join(informs, ", ") +
                       ", none of " + option + " " + join(keys, ","));
    }
  }
  return out;
}

void refuse_mixed_calibration_inputs(const CalibrationInputs& data,
                                     const std::string& output_hint) {
  if (data.catalog.empty() || data.microbench.empty()) return;
  // The catalog points' times depend on launch_overhead and hbm_bandwidth_measured: fitted
  // beside them, kernel_fixed_cost would absorb the old values.
  throw InputError(data.microbench.front() +
                   ": calibration/microbench output and catalog points in one call; fit the "
                   "microbenchmarks first (" +
                   output_hint + "), then the points with profile MY.yaml");
}

const MicrobenchValue* MicrobenchFit::find(const std::string& key) const {
  for (const MicrobenchValue& v : values) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

}  // namespace gpumux
