// `gpumux calibrate`'s input: measured points from CSV files (calibrate.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/app/calibrate.hpp"
#include "models/config/input_error.hpp"
#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/utf8.hpp"

namespace gpumux {

void point_error(const std::string& file, int line, const std::string& column,
                 const std::string& why) {
  throw InputError(file + ":" + std::to_string(line) + ": " + column + ": " + why);
}

namespace {

double positive_number(const std::string& text, const std::string& file, int line,
                       const std::string& column) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || !(v > 0)) {
    point_error(file, line, column, "expected a positive number, got '" + text + "'");
  }
  return v;
}

int count_or_zero(const std::string& text, const std::string& file, int line,
                  const std::string& column) {
  if (text.empty()) return 0;
  const double v = positive_number(text, file, line, column);
  if (v != std::floor(v) || v > 1e9) {
    point_error(file, line, column, "expected a whole number, got '" + text + "'");
  }
  return static_cast<int>(v);
}

// The columns a catalog points file may have (docs/calibration.md); others are ignored.
const std::set<std::string>& known_columns() {
  static const std::set<std::string> columns = {
      "id",    "source",  "model",         "phase",   "batch",     "seq_len",
      "dtype", "runtime", "profile",       "mig",     "metric",    "value",
      "unit",  "note",    "memory_format", "harness", "cuda_graph"};
  return columns;
}

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A header names each column once, and a known column in its own spelling: a second `cuda_graph`
// column was read in place of the first, and `CUDA_GRAPH` was ignored (every point then a stream
// launch), both silently.
void check_header(const std::vector<std::string>& header, const std::string& file, int number) {
  std::set<std::string> seen;
  for (const std::string& column : header) {
    if (!seen.insert(column).second) {
      point_error(file, number, "header", "column '" + column + "' named twice");
    }
    const std::string lower = lower_case(trim(column));
    if (!known_columns().count(column) && known_columns().count(lower)) {
      point_error(file, number, "header",
                  "unknown column '" + column + "' (did you mean '" + lower + "'?)");
    }
  }
}

// A harness name becomes a key of the written profile's harness_per_request: a plain name (letters,
// digits, '.', '_', '-', starting with a letter or digit, and not YAML's null); YAML's own
// characters (`[x]`, `a: b`, `#x`) and a `null` name broke the profile calibrate writes.
void check_harness_name(const std::string& name, const std::string& file, int number) {
  const bool plain =
      !name.empty() && std::isalnum(static_cast<unsigned char>(name.front())) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  // YAML reads these spellings as a null key, not as a name.
  const bool yaml_null = name == "null" || name == "Null" || name == "NULL";
  if (!plain || yaml_null) {
    point_error(file, number, "harness",
                "expected a harness name of letters, digits, '.', '_' and '-', starting with "
                "a letter or digit and not null (e.g. mlperf-loadgen), empty or none, got '" +
                    name + "'");
  }
}

// One line's fields (sim/util/csv.hpp); an unterminated quote is an error at the line.
std::vector<std::string> csv_fields(const std::string& line, const std::string& file, int number) {
  try {
    return split_csv_line(line);
  } catch (const std::invalid_argument& e) {
    point_error(file, number, "line", e.what());
  }
}

}  // namespace

std::vector<CalibrationPoint> read_calibration_points(const std::vector<std::string>& files) {
  std::vector<CalibrationPoint> points;
  std::set<std::string> ids;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!std::filesystem::is_regular_file(file) || !in) {
      throw InputError(file + ": cannot read the calibration file (not a readable regular file)");
    }
    std::string line;
    std::vector<std::string> header;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      // Text that is not UTF-8 would reach the written profile (its provenance names the
      // sources), which gpumux then refuses to read.
      if (const auto bad = find_invalid_utf8(line))
        point_error(file, number, "line", bad->message());
      if (trim(line).empty() || trim(line)[0] == '#') continue;
      const std::vector<std::string> fields = csv_fields(line, file, number);
      if (header.empty()) {
        header = fields;
        check_header(header, file, number);
        for (const char* need : {"id", "source", "model", "profile", "metric", "value", "unit"}) {
          if (std::find(header.begin(), header.end(), need) == header.end()) {
            point_error(file, number, need, "missing column (header: " + join(header, ",") + ")");
          }
        }
        continue;
      }
      if (fields.size() != header.size()) {
        point_error(file, number, "row",
                    std::to_string(fields.size()) + " fields where the header has " +
                        std::to_string(header.size()));
      }
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
      CalibrationPoint p;
      p.file = file;
      p.line = number;
      p.id = row["id"];
      p.source = row["source"];
      p.model = row["model"];
      p.phase = row["phase"];
      p.dtype = row["dtype"];
      p.runtime = row["runtime"];
      p.profile = row["profile"];
      p.mig = row["mig"];
      p.memory_format = row["memory_format"];
      p.harness = row["harness"];
      if (p.harness == "none") p.harness.clear();
      if (!p.harness.empty()) check_harness_name(p.harness, file, number);
      const std::string graph = row["cuda_graph"];
      if (graph == "true") {
        p.cuda_graph = true;
      } else if (!graph.empty() && graph != "false") {
        point_error(file, number, "cuda_graph",
                    "expected true, false or empty, got '" + graph + "'");
      }
      p.metric = row["metric"];
      p.unit = row["unit"];
      for (const char* need : {"id", "source", "model", "profile"}) {
        if (row[need].empty()) point_error(file, number, need, "must not be empty");
      }
      if (!ids.insert(p.id).second) point_error(file, number, "id", "duplicate id '" + p.id + "'");
      p.batch = count_or_zero(row["batch"], file, number, "batch");
      p.seq_len = count_or_zero(row["seq_len"], file, number, "seq_len");
      p.value = positive_number(row["value"], file, number, "value");
      if (p.metric == "latency") {
        const std::map<std::string, double> scale{{"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
        const auto unit = scale.find(p.unit);
        if (unit == scale.end()) point_error(file, number, "unit", "latency in us, ms or s");
        p.target_s = p.value * unit->second;
      } else if (p.metric == "throughput") {
        if (p.unit.size() < 3 || p.unit.compare(p.unit.size() - 2, 2, "/s") != 0) {
          point_error(file, number, "unit", "throughput in items/s (e.g. img/s, seq/s)");
        }
        p.target_s = std::max(1, p.batch) / p.value;
      } else {
        point_error(file, number, "metric",
                    "unknown metric '" + p.metric + "' (latency or throughput)");
      }
      // A request alone takes at least a kernel launch (microseconds) and calibrate simulates
      // at most 1000 s for it; a time outside 1 us - 1000 s is a wrong value or unit (1e300 ms
      // overflowed the fitted nanoseconds, 1e-300 ms printed errors of 1e301 %).
      if (!(p.target_s >= 1e-6 && p.target_s <= 1000)) {
        std::ostringstream time;
        time << p.target_s;
        point_error(file, number, "value",
                    "'" + row["value"] + " " + p.unit + "' is a request time of " + time.str() +
                        " s, outside 1 us - 1000 s (a wrong value or unit?)");
      }
      points.push_back(p);
    }
  }
  if (points.empty()) {
    throw InputError(join(files, ", ") +
                     ": no measured point (only a header, blank or comment "
                     "lines): nothing to fit");
  }
  return points;
}

}  // namespace gpumux
