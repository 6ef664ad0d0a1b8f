#pragma once
// Internal to models/app/microbench_*.cpp: reading calibration/microbench's CSV files (one
// Table per file, cells checked with the file, line and column in every error).
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/app/calibrate.hpp"
#include "models/app/microbench_fit.hpp"
#include "sim/util/strings.hpp"

namespace gpumux::microbench_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

/// The file open for reading; InputError "FILE: cannot read ..." when it is not a readable
/// regular file.
std::ifstream open_data_file(const std::string& file);
/// The file's rows; `header_only` stops after the header. Blank lines and # comments are skipped.
Table read_table(const std::string& file, bool header_only = false);
/// A cell that must be a non-negative whole number / number (else FILE:LINE: COLUMN: WHY).
std::int64_t count_cell(const Table& t, std::size_t row, const std::string& column);
double number_cell(const Table& t, std::size_t row, const std::string& column);
/// The rows of a STEM_meta.csv, STEM_gaps.csv, STEM_kernels.csv, launch.csv (metric -> value,
/// samples), each cell checked.
std::vector<SpinnerBlock> read_meta(const std::string& file);
std::vector<SpinnerGap> read_gaps(const std::string& file);
std::vector<ShortKernel> read_kernels(const std::string& file);
std::map<std::string, std::pair<double, int>> read_launch(const std::string& file);
bool ends_with(const std::string& text, const std::string& tail);
/// The file name without its folders.
std::string base_name(const std::string& path);

}  // namespace gpumux::microbench_detail
