// `gpumux calibrate` on calibration/microbench's CSVs: reading, the fit, the profile entries
// (microbench_fit.hpp).
#include "models/app/microbench_fit.hpp"

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

namespace gpumux {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- reading

// A CSV file: its header and rows, each with its 1-based line.
struct Table {
  std::string file;
  int header_line = 0;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;

  int column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
  bool has(const std::string& name) const { return column(name) >= 0; }
  void require(const std::vector<std::string>& names, const std::string& what) const {
    for (const std::string& name : names) {
      if (!has(name)) {
        point_error(file, header_line, name,
                    "missing column (" + what + " needs " + join(names, ", ") +
                        "; header: " + join(header, ",") + ")");
      }
    }
  }
};

std::ifstream open_data_file(const std::string& file) {
  std::ifstream in(file);
  if (!std::filesystem::is_regular_file(file) || !in) {
    throw InputError(file + ": cannot read the calibration file (not a readable regular file)");
  }
  return in;
}

// The file's rows; `header_only` stops after the header. Blank lines and # comments are skipped.
Table read_table(const std::string& file, bool header_only = false) {
  std::ifstream in = open_data_file(file);
  Table t;
  t.file = file;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
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

// ---------------------------------------------------------------- statistics

std::vector<double> in_us(const std::vector<std::int64_t>& ns) {
  std::vector<double> out;
  out.reserve(ns.size());
  for (const std::int64_t v : ns) out.push_back(static_cast<double>(v) / 1000.0);
  return out;
}

double median_us(const std::vector<std::int64_t>& ns) { return percentile_linear(in_us(ns), 50); }

double median_abs(std::vector<double> v) {
  if (v.empty()) return kNaN;
  for (double& x : v) x = std::abs(x);
  return percentile_linear(v, 50);
}

// ---------------------------------------------------------------- time-slicing

struct Spinner {
  std::int64_t block = 0, start = 0, end = 0;
  std::vector<std::int64_t> gap_start, gap_end;  // sorted by start (stable)
};

// fit.py spinners(): per process its lowest logged block among the "spin" rows, with its gaps.
std::map<std::int64_t, Spinner> spinners(const std::vector<SpinnerBlock>& meta,
                                         const std::vector<SpinnerGap>& gaps) {
  std::map<std::int64_t, Spinner> procs;
  for (const SpinnerBlock& b : meta) {
    if (b.role != "spin") continue;
    const auto it = procs.find(b.process_id);
    if (it != procs.end() && it->second.block <= b.block) continue;
    procs[b.process_id] = Spinner{b.block, b.kernel_start_ns, b.kernel_end_ns, {}, {}};
  }
  for (auto& [p, d] : procs) {
    std::vector<const SpinnerGap*> mine;
    for (const SpinnerGap& g : gaps) {
      if (g.process_id == p && g.block == d.block) mine.push_back(&g);
    }
    std::stable_sort(mine.begin(), mine.end(), [](const SpinnerGap* a, const SpinnerGap* b) {
      return a->start_ns < b->start_ns;
    });
    for (const SpinnerGap* g : mine) {
      d.gap_start.push_back(g->start_ns);
      d.gap_end.push_back(g->end_ns);
    }
  }
  return procs;
}

}  // namespace

double percentile_linear(std::vector<double> x, double q) {
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const double index = q / 100.0 * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(index));
  const double t = index - static_cast<double>(lo);
  if (lo + 1 >= x.size()) return x.back();
  const double a = x[lo], b = x[lo + 1], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;  // numpy's _lerp
}

TimesliceSamples analyze_timeslice_run(const std::vector<SpinnerBlock>& meta,
                                       const std::vector<SpinnerGap>& gaps) {
  TimesliceSamples out;
  const std::map<std::int64_t, Spinner> procs = spinners(meta, gaps);
  out.spinners = static_cast<int>(procs.size());
  if (procs.empty()) return out;
  std::int64_t w0 = std::numeric_limits<std::int64_t>::min();
  std::int64_t w1 = std::numeric_limits<std::int64_t>::max();
  for (const auto& [p, d] : procs) {
    w0 = std::max(w0, d.start);
    w1 = std::min(w1, d.end);
  }
  // Each spinner's runs: kernel start and gap ends -> gap starts and kernel end.
  struct Run {
    std::int64_t start, end;
  };
  std::map<std::int64_t, std::vector<Run>> runs;
  for (const auto& [p, d] : procs) {
    std::vector<Run>& r = runs[p];
    r.push_back({d.start, d.gap_start.empty() ? d.end : d.gap_start.front()});
    for (std::size_t i = 0; i < d.gap_end.size(); ++i) {
      r.push_back({d.gap_end[i], i + 1 < d.gap_start.size() ? d.gap_start[i + 1] : d.end});
    }
  }
  struct Slice {
    std::int64_t start, end, process;
    bool operator<(const Slice& o) const {
      return std::tie(start, end, process) < std::tie(o.start, o.end, o.process);
    }
  };
  std::vector<Slice> merged;
  for (const auto& [p, d] : procs) {
    // The other spinners' runs, sorted by start, to find those overlapping a gap.
    std::vector<Run> others;
    for (const auto& [q, r] : runs) {
      if (q != p) others.insert(others.end(), r.begin(), r.end());
    }
    std::sort(others.begin(), others.end(),
              [](const Run& a, const Run& b) { return a.start < b.start; });
    std::int64_t longest = 0;
    for (const Run& r : others) longest = std::max(longest, r.end - r.start);
    std::vector<bool> is_switch(d.gap_start.size(), false);
    for (std::size_t i = 0; i < d.gap_start.size(); ++i) {
      const std::int64_t gs = d.gap_start[i], ge = d.gap_end[i];
      // A run overlapping [gs, ge] starts before ge and after gs - longest.
      auto it = std::lower_bound(others.begin(), others.end(), gs - longest,
                                 [](const Run& r, std::int64_t t) { return r.start < t; });
      for (; it != others.end() && it->start < ge; ++it) {
        if (std::min(ge, it->end) - std::max(gs, it->start) > 0) {
          is_switch[i] = true;
          break;
        }
      }
      if (is_switch[i] && gs >= w0 && ge <= w1) out.waits.push_back(ge - gs);
    }
    // Slices: runs joined across stalls.
    std::vector<std::int64_t> ss{d.start}, se;
    for (std::size_t i = 0; i < d.gap_start.size(); ++i) {
      if (!is_switch[i]) continue;
      se.push_back(d.gap_start[i]);
      ss.push_back(d.gap_end[i]);
    }
    se.push_back(d.end);
    for (std::size_t i = 0; i < ss.size(); ++i) {
      merged.push_back({ss[i], se[i], p});
      const bool inner = i > 0 && i + 1 < ss.size();
      if (inner && ss[i] >= w0 && se[i] <= w1) out.slices.push_back(se[i] - ss[i]);
    }
  }
  std::sort(merged.begin(), merged.end());
  for (std::size_t i = 0; i + 1 < merged.size(); ++i) {
    const Slice& a = merged[i];
    const Slice& b = merged[i + 1];
    if (a.process == b.process || a.end < w0 || b.start > w1) continue;
    if (b.start >= a.end) out.switches.push_back(b.start - a.end);
  }
  return out;
}

ShortKernelSamples analyze_short_kernel_run(const std::vector<SpinnerBlock>& meta,
                                            const std::vector<SpinnerGap>& gaps,
                                            const std::vector<ShortKernel>& kernels) {
  ShortKernelSamples out;
  std::set<std::int64_t> batches;
  for (const ShortKernel& k : kernels) batches.insert(k.batch);
  out.synchronous = !kernels.empty() && batches.size() == kernels.size();
  const std::map<std::int64_t, Spinner> procs = spinners(meta, gaps);
  out.spinners = static_cast<int>(procs.size());
  if (procs.empty() || kernels.empty()) return out;
  const Spinner& d = procs.begin()->second;  // the lowest process id
  if (d.gap_start.empty()) return out;
  std::map<std::size_t, std::pair<std::int64_t, std::int64_t>> hit;  // gap -> first start, last end
  for (const ShortKernel& k : kernels) {
    const auto after = std::upper_bound(d.gap_start.begin(), d.gap_start.end(), k.gpu_start_ns);
    if (after == d.gap_start.begin()) continue;
    const auto gap = static_cast<std::size_t>(after - d.gap_start.begin()) - 1;
    if (d.gap_end[gap] < k.gpu_end_ns) continue;
    const auto [it, fresh] = hit.try_emplace(gap, k.gpu_start_ns, k.gpu_end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, k.gpu_start_ns);
      it->second.second = std::max(it->second.second, k.gpu_end_ns);
    }
  }
  for (const auto& [gap, span] : hit) {
    out.switch_in.push_back(span.first - d.gap_start[gap]);
    out.switch_out.push_back(d.gap_end[gap] - span.second);
  }
  return out;
}

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
      return {"kernel_fixed_cost", "block_round_cost", "host_per_request"};
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

const MicrobenchValue* MicrobenchFit::find(const std::string& key) const {
  for (const MicrobenchValue& v : values) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

// ---------------------------------------------------------------- the fit

MicrobenchFit fit_microbench(const std::vector<std::string>& files) {
  MicrobenchFit fit;
  fit.timeslice_us = fit.switch_us = fit.switch_in_us = fit.switch_out_us = kNaN;
  fit.wait_in_sample = fit.wait_out_of_sample = kNaN;
  // Runs by stem (the file name less _meta.csv, _gaps.csv, _kernels.csv).
  struct RunFiles {
    std::string meta, gaps, kernels;
  };
  std::map<std::string, RunFiles> runs;  // sorted by stem: a deterministic order
  std::string launch_file;
  for (const std::string& file : files) {
    const CalibrationFileKind kind = calibration_file_kind(file);
    const std::string name = base_name(file);
    const auto stem = [&](const std::string& tail) {
      return ends_with(name, tail) ? name.substr(0, name.size() - tail.size())
                                   : std::filesystem::path(name).stem().string();
    };
    const auto place = [&](std::string RunFiles::*slot, const std::string& tail) {
      std::string& at = runs[stem(tail)].*slot;
      if (!at.empty()) {
        throw InputError(file + ": a second " + tail.substr(1) + " for run '" + stem(tail) +
                         "' (the first: " + at + ")");
      }
      at = file;
    };
    switch (kind) {
      case CalibrationFileKind::spinner_meta:
        place(&RunFiles::meta, "_meta.csv");
        break;
      case CalibrationFileKind::spinner_gaps:
        place(&RunFiles::gaps, "_gaps.csv");
        break;
      case CalibrationFileKind::short_kernels:
        place(&RunFiles::kernels, "_kernels.csv");
        break;
      case CalibrationFileKind::launch:
        if (!launch_file.empty()) {
          throw InputError(file + ": a second launch_probe CSV (the first: " + launch_file + ")");
        }
        launch_file = file;
        break;
      case CalibrationFileKind::run_facts: {
        const Table t = read_table(file);
        for (std::size_t i = 0; i < t.rows.size(); ++i) {
          const std::string& key = t.rows[i][0];
          const std::string& value = t.rows[i][1];
          if (key == "name") fit.gpu = value;
          if (key == "date_utc") {
            const std::string day = value.substr(0, 10);
            const bool ok = day.size() == 10 && day[4] == '-' && day[7] == '-' &&
                            std::all_of(day.begin(), day.end(), [](char c) {
                              return std::isdigit(static_cast<unsigned char>(c)) || c == '-';
                            });
            if (!ok)
              point_error(file, t.lines[i], "date_utc",
                          "expected YYYY-MM-DD..., got '" + value + "'");
            fit.date = day;
          }
        }
        break;
      }
      case CalibrationFileKind::run_steps:
        (void)read_table(file);  // readable, well-formed
        break;
      case CalibrationFileKind::other_run_output:
        break;
      case CalibrationFileKind::catalog_points:
        throw InputError(file + ": catalog points, not microbenchmark output");
    }
  }
  // Time-slicing and short-kernel runs.
  std::vector<std::int64_t> slices, switches;
  std::vector<std::string> slice_files, switch_out_files;
  struct RunResult {
    std::string stem;
    TimesliceSamples samples;
  };
  std::vector<RunResult> ts_runs;
  const ShortKernelSamples* chosen = nullptr;
  std::vector<std::pair<std::string, ShortKernelSamples>> sk_runs;
  for (const auto& [stem, rf] : runs) {
    if (rf.meta.empty() || rf.gaps.empty()) {
      const std::string& given =
          rf.meta.empty() ? (rf.gaps.empty() ? rf.kernels : rf.gaps) : rf.meta;
      throw InputError(given + ": run '" + stem + "' needs both " + stem + "_meta.csv and " + stem +
                       "_gaps.csv among the data files (timeslice_probe writes them "
                       "together)");
    }
    const std::vector<SpinnerBlock> meta = read_meta(rf.meta);
    const std::vector<SpinnerGap> gaps = read_gaps(rf.gaps);
    if (!rf.kernels.empty()) {
      sk_runs.emplace_back(stem, analyze_short_kernel_run(meta, gaps, read_kernels(rf.kernels)));
      continue;
    }
    ts_runs.push_back({stem, analyze_timeslice_run(meta, gaps)});
  }
  // The short-kernel run that informs the split: synchronous, beside a spinner (run_all.sh's
  // sk_sync; fit.py takes that one by name, so it goes first).
  std::stable_sort(sk_runs.begin(), sk_runs.end(), [](const auto& a, const auto& b) {
    return (a.first == "sk_sync") > (b.first == "sk_sync");
  });
  std::string chosen_stem;
  for (const auto& [stem, s] : sk_runs) {
    if (s.synchronous && s.spinners > 0 && !s.switch_out.empty()) {
      chosen = &s;
      chosen_stem = stem;
      break;
    }
  }
  std::vector<const RunResult*> sliced;
  for (const RunResult& r : ts_runs) {
    if (r.samples.spinners < 2) continue;
    sliced.push_back(&r);
    slices.insert(slices.end(), r.samples.slices.begin(), r.samples.slices.end());
    switches.insert(switches.end(), r.samples.switches.begin(), r.samples.switches.end());
    slice_files.push_back(runs.at(r.stem).meta);
    slice_files.push_back(runs.at(r.stem).gaps);
  }
  if (!slices.empty()) fit.timeslice_us = median_us(slices);
  if (!switches.empty()) fit.switch_us = median_us(switches);
  if (chosen != nullptr) {
    fit.switch_in_us = median_us(chosen->switch_in);
    fit.switch_out_us = median_us(chosen->switch_out);
    switch_out_files = {runs.at(chosen_stem).meta, runs.at(chosen_stem).gaps,
                        runs.at(chosen_stem).kernels};
  }
  // Leave one time-slicing run out: T and S without it; the wait law on it.
  std::vector<double> fold_t, fold_s, err_in, err_out;
  for (const RunResult* left : sliced) {
    std::vector<std::int64_t> t, s;
    for (const RunResult* r : sliced) {
      if (r == left) continue;
      t.insert(t.end(), r->samples.slices.begin(), r->samples.slices.end());
      s.insert(s.end(), r->samples.switches.begin(), r->samples.switches.end());
    }
    const double ft = t.empty() ? kNaN : median_us(t);
    const double fs = s.empty() ? kNaN : median_us(s);
    if (!t.empty()) fold_t.push_back(ft);
    if (!s.empty()) fold_s.push_back(fs);
    if (left->samples.waits.empty() || std::isnan(fit.timeslice_us) || std::isnan(fit.switch_us))
      continue;
    const double n1 = left->samples.spinners - 1;
    MicrobenchFit::WaitCheck w;
    w.run = left->stem;
    w.spinners = left->samples.spinners;
    w.measured_us = median_us(left->samples.waits);
    w.in_sample_us = n1 * (fit.timeslice_us + fit.switch_us) + fit.switch_us;
    w.out_of_sample_us = std::isnan(ft) || std::isnan(fs) ? kNaN : n1 * (ft + fs) + fs;
    err_in.push_back(w.in_sample_us / w.measured_us - 1);
    if (!std::isnan(w.out_of_sample_us)) err_out.push_back(w.out_of_sample_us / w.measured_us - 1);
    fit.waits.push_back(w);
  }
  fit.wait_in_sample = median_abs(err_in);
  fit.wait_out_of_sample = median_abs(err_out);
  const auto add = [&](const std::string& key, double value, const std::string& unit,
                       const std::string& law, std::vector<std::string> from, int samples,
                       const std::vector<double>& folds) {
    MicrobenchValue v;
    v.key = key;
    v.value = value;
    v.unit = unit;
    v.law = law;
    v.files = std::move(from);
    v.samples = samples;
    v.folds = static_cast<int>(folds.size());
    v.fold_min = v.fold_max = value;
    for (const double f : folds) {
      v.fold_min = std::min(v.fold_min, f);
      v.fold_max = std::max(v.fold_max, f);
    }
    fit.values.push_back(std::move(v));
  };
  std::string spans;
  {
    std::set<int> ns;
    for (const RunResult* r : sliced) ns.insert(r->samples.spinners);
    if (!ns.empty()) {
      spans = std::to_string(*ns.begin());
      if (ns.size() > 1) spans += "-" + std::to_string(*ns.rbegin());
    }
  }
  if (!std::isnan(fit.timeslice_us)) {
    add("timeslice", fit.timeslice_us, "us",
        "median slice between context switches of " + spans + " spinning processes", slice_files,
        static_cast<int>(slices.size()), fold_t);
  }
  if (!std::isnan(fit.switch_us)) {
    if (!std::isnan(fit.switch_out_us)) {
      std::vector<std::string> both = switch_out_files;
      both.insert(both.end(), slice_files.begin(), slice_files.end());
      add("context_switch", fit.switch_out_us, "us",
          "median idle from a short kernel's end to the resume of the spinner beside it",
          switch_out_files, static_cast<int>(chosen->switch_out.size()), {});
      std::vector<double> fold_p;
      for (const double s : fold_s) fold_p.push_back(std::max(s - fit.switch_out_us, 0.0));
      add("preemption_latency", std::max(fit.switch_us - fit.switch_out_us, 0.0), "us",
          "S - context_switch, S = median idle between two spinning contexts", both,
          static_cast<int>(switches.size()), fold_p);
    } else {
      add("context_switch", fit.switch_us, "us",
          "median idle between two spinning contexts, save + restore", slice_files,
          static_cast<int>(switches.size()), fold_s);
    }
  }
  if (!launch_file.empty()) {
    const auto launch = read_launch(launch_file);
    const auto take = [&](const char* metric, const char* key, const char* unit, const char* law) {
      const auto it = launch.find(metric);
      if (it != launch.end()) add(key, it->second.first, unit, law, {launch_file}, 1, {});
    };
    take("launch_stream_us", "launch_overhead", "us",
         "empty kernels back to back on one stream, median of the repetitions (launch_probe)");
    take("launch_graph_us", "graph_launch_overhead", "us",
         "empty kernels of a CUDA graph, median of the repetitions (launch_probe)");
    take("bw_read_GBps", "hbm_bandwidth_measured", "GB/s",
         "read kernel over a large buffer, best of the repetitions (launch_probe)");
  }
  // microbench_keys() order.
  std::vector<MicrobenchValue> ordered;
  for (const std::string& key : microbench_keys()) {
    if (const MicrobenchValue* v = fit.find(key)) ordered.push_back(*v);
  }
  fit.values = std::move(ordered);
  return fit;
}

// ---------------------------------------------------------------- output

namespace {

std::string number_text(double v, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << v;
  return s.str();
}

std::string value_text(const MicrobenchValue& v) {
  if (v.unit == "us") return std::to_string(std::llround(v.value * 1000.0)) + "ns";
  return number_text(v.value, 10) + v.unit;
}

std::string percent(double fraction) {
  return std::isnan(fraction) ? "n/a" : number_text(100 * fraction, 3) + " %";
}

}  // namespace

std::string with_microbench_values(const std::string& profile_text, const MicrobenchFit& fit,
                                   const std::vector<std::string>& keys, const std::string& date) {
  std::vector<const MicrobenchValue*> chosen;
  for (const MicrobenchValue& v : fit.values) {
    if (keys.empty() || std::find(keys.begin(), keys.end(), v.key) != keys.end()) {
      chosen.push_back(&v);
    }
  }
  if (chosen.empty()) return profile_text;
  std::vector<std::string> top;
  for (const MicrobenchValue* v : chosen) top.push_back(v->key);
  std::string out = without_top_keys(profile_text, top);
  out +=
      "\n# Fitted by gpumux calibrate from calibration/microbench output (docs/calibration.md)\n";
  for (const MicrobenchValue* v : chosen) {
    std::ostringstream why;
    why << "gpumux calibrate " << join(v->files, " ") << " (" << date;
    if (!fit.gpu.empty()) why << "; " << fit.gpu;
    why << "; " << v->law << ", n=" << v->samples;
    if (v->folds > 0) {
      why << "; leave one run out: " << number_text(v->fold_min, 6) << "-"
          << number_text(v->fold_max, 6) << " " << v->unit << " over " << v->folds << " folds";
    } else {
      why << "; one run: no cross-validation fold";
    }
    if ((v->key == "timeslice" || v->key == "context_switch" || v->key == "preemption_latency") &&
        !fit.waits.empty()) {
      why << "; wait (N-1)(T+S)+S median |error| " << percent(fit.wait_in_sample) << " in sample, "
          << percent(fit.wait_out_of_sample) << " leaving the run out";
    }
    why << ")";
    out += v->key + ": {value: " + value_text(*v) + ", fitted: " + yaml_quoted(why.str()) + "}\n";
  }
  return out;
}

std::string microbench_report(const MicrobenchFit& fit) {
  std::ostringstream out;
  out << "## Fitted from calibration/microbench output";
  if (!fit.gpu.empty()) out << " (" << fit.gpu << (fit.date.empty() ? "" : ", " + fit.date) << ")";
  out << "\n\n| parameter | value | samples | leave one run out | law "
         "|\n|---|---:|---:|---:|---|\n";
  for (const MicrobenchValue& v : fit.values) {
    out << "| `" << v.key << "` | " << number_text(v.value, 6) << " " << v.unit << " | "
        << v.samples << " | "
        << (v.folds > 0 ? number_text(v.fold_min, 6) + " - " + number_text(v.fold_max, 6) + " " +
                              v.unit + " (" + std::to_string(v.folds) + " folds)"
                        : std::string("one run"))
        << " | " << v.law << " |\n";
  }
  if (fit.values.empty()) out << "| (none measured) | | | | |\n";
  if (!fit.waits.empty()) {
    out << "\nA spinner's wait (its switch gap) against the round-robin law (N-1)(T+S)+S: median "
           "|error| "
        << percent(fit.wait_in_sample) << " in sample, " << percent(fit.wait_out_of_sample)
        << " with T and S refitted without the run.\n\n| run | N | measured | in sample | out of "
           "sample |\n|---|---:|---:|---:|---:|\n";
    for (const MicrobenchFit::WaitCheck& w : fit.waits) {
      out << "| " << w.run << " | " << w.spinners << " | " << number_text(w.measured_us, 6)
          << " us | " << number_text(w.in_sample_us, 6) << " us | "
          << number_text(w.out_of_sample_us, 6) << " us |\n";
    }
  }
  return out.str();
}

}  // namespace gpumux
