#pragma once
// Text formatting of the tables: three significant digits with an adaptive unit ("1.23 ms",
// "80.0 GiB"), and a column-aligned text table. Non-finite values print as "-".
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/output/metric_table.hpp"

namespace gpumux {

/// The one duration format of the text tables: "420 ns", "420 us", "1.50 ms", "42.0 s" below a
/// minute (three significant digits), then a clock reading: "1m30s", "30m", "2h05m", "3d4h".
/// JSON, CSV and HDF5 keep nanoseconds or seconds.
std::string format_duration_ns(double ns);
std::string format_bytes(double bytes);
std::string format_si(double value);
std::string format_count(double value);
std::string format_rate(double per_s);
std::string format_percent(double fraction);
std::string format_factor(double factor);

/// A confidence interval "[1.02 ms, 1.10 ms]"; a bound the samples do not give prints "-".
std::string format_interval_ns(const nlohmann::ordered_json* low,
                               const nlohmann::ordered_json* high);

/// A summary value (nullptr or null = "-") as FORMAT prints it.
std::string format_metric(MetricFormat format, const nlohmann::ordered_json* value);

/// Columns sized to their widest cell; the first `left_columns` are left-aligned (names), the
/// rest right-aligned (numbers).
class TextTable {
 public:
  TextTable(std::vector<std::string> headers, std::size_t left_columns)
      : headers_(std::move(headers)), left_columns_(left_columns) {}
  void add_row(std::vector<std::string> row);
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::size_t left_columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpumux
