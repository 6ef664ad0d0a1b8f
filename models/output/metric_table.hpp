#pragma once
// The metric table: every per-tenant and per-device number gpumux reports, listed once. Each
// entry names the metric in every output and says how to get it from the RunResult; the JSON
// summary (summary_json), the HDF5 /tenants and /devices columns with their `units` and
// `description` attributes, the text tables (`--format table`), CSV (`--format csv`), the
// bindings' tenants()/devices() rows and, through them or the file, the Python DataFrames are
// all generated from it. Adding a metric = one entry here plus its computation (CONTRIBUTING.md,
// "Adding a metric"); definitions live in docs/metrics.md.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "models/run/result.hpp"

namespace gpumux {

/// Storage type of a metric (the HDF5 column type; JSON numbers or strings accordingly).
enum class MetricType : std::uint8_t {
  text,  ///< string (HDF5: fixed-length UTF-8)
  i32,
  i64,
  f64,
  flag,  ///< verdict: 1 yes, 0 no, -1 not applicable (HDF5 int8; JSON bool)
};

/// How the text tables print a value.
enum class MetricFormat : std::uint8_t {
  text,
  count,     ///< 12345
  number,    ///< 1.23, 45.6, 1.23k (three significant digits)
  duration,  ///< 12.3 ms (value in ns)
  rate,      ///< 123/s
  factor,    ///< 1.23x
  percent,   ///< 45.6% (value a fraction)
  bytes,     ///< 80.0 GiB
  verdict,   ///< met / MISSED / inconclusive / - (a flag, or a verdict name)
  /// A percentile's confidence interval "[1.02 ms, 1.10 ms]" read from the JSON paths
  /// interval_of + "_low" and + "_high" (null bound: "-"); text tables only.
  interval,
};

/// Which text table shows a metric.
enum class TextTableId : std::uint8_t {
  none,
  main,  ///< the run's tenant (or device) table
  llm,   ///< the run's LLM tenant table (shown when a tenant has TTFT)
};

/// A metric's value; monostate = none (JSON null, CSV empty, table "-").
using MetricValue = std::variant<std::monostate, std::int64_t, double, std::string>;

template <class Row>
struct Metric {
  std::string column;       ///< HDF5 column, bindings/DataFrame column ("latency_p99_ns")
  std::string json;         ///< dotted path in the summary object ("latency_ns.p99"); "" = none
  std::string unit;         ///< "ns", "count", "1/s", "1", "bytes", "s", "USD", "" (HDF5 `units`)
  std::string description;  ///< one line (HDF5 `description`, Python metric tables)
  MetricType type = MetricType::f64;
  MetricFormat format = MetricFormat::count;
  TextTableId table = TextTableId::none;  ///< the run's text table that shows it
  std::string header;                     ///< its column header there
  std::string compare;  ///< its row label in `compare`'s per-tenant / device tables; "" = none
  std::string csv;      ///< CSV column name (units in the name); "" = not in CSV
  bool h5 = true;       ///< a column of the HDF5 table (and of the bindings' rows)
  /// What the HDF5 column holds when the value is none (i64: 0, or -1 for a bound the samples
  /// do not give; Python reads a negative bound as NaN).
  std::int64_t h5_none = 0;
  /// MetricFormat::interval only: the JSON path of the percentile whose bounds it shows
  /// ("latency_ns.p99": the bounds are at "latency_ns.p99_low" and "latency_ns.p99_high").
  std::string interval_of;
  std::function<MetricValue(const Row&)> get;
  /// In the JSON summary (and CSV) only when this is true (e.g. ttft when the tenant has
  /// tokens, SLO keys when it has that target); unset = always.
  std::function<bool(const Row&)> in_summary;
};

using TenantMetric = Metric<TenantResult>;
using DeviceMetric = Metric<DeviceResult>;

/// Per tenant, in column / key order (name first).
const std::vector<TenantMetric>& tenant_metrics();
/// Per device, in column / key order (name first).
const std::vector<DeviceMetric>& device_metrics();

/// The metric table as JSON rows {scope, column, json, unit, description, type, h5, format,
/// table, header, compare, csv} (exported by the bindings as gpumux metric_table(): Python's
/// compare(), sweep() and HTML report take their columns from it).
nlohmann::ordered_json metric_table_json();

/// `units` and `description` of a column of the HDF5 table TABLE ("tenants", "requests", ...):
/// metrics from the table above, record columns (/requests, /events, /kernels, /timeseries,
/// /slos) from a second short list in the same file.
std::pair<std::string, std::string> column_meta(const std::string& table,
                                                const std::string& column);

/// The value at a dotted path of a summary object (nullptr when absent).
const nlohmann::ordered_json* json_at(const nlohmann::ordered_json& object,
                                      const std::string& path);

}  // namespace gpumux
