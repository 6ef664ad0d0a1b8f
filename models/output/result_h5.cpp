// HDF5 result files. Layout (schema_version 1), all tables 1-D compound datasets, packed,
// chunked, shuffle + deflate, maxdims unlimited (zero rows is valid): /requests and /kernels in
// chunks of 4,096 rows encoded by sim/io/table_stream (streamed during `gpumux run -o` and
// `gpumux compare -o`, from memory otherwise: the same bytes), the other tables <= 16,384 rows per
// chunk, zlib level 1; every table carries `units` and `description` attributes, JSON objects
// {column: text} (json.loads(ds.attrs["units"])["latency_p99_ns"]):
//   root attributes: gpumux_version, schema_version (int64 1), scenario (name), scenario_yaml,
//     seed (uint64), calibration (JSON object profile -> hash), status, sim_time_ns (int64),
//     events (uint64), wall_s (double), percentiles (JSON object: summary_json's "percentiles",
//     how the quantiles were computed), strategy (only when set); compare files add
//     strategies (JSON array of labels).
//   /summary            scalar UTF-8 string: summary_json (compare file: JSON array of them)
//   /requests           tenant u32, request_id u64, arrival_ns i64, start_ns i64, finish_ns i64,
//                       status enum<u8>{kRequestStatusNames}
//   /tenants            one row per tenant, columns = the metric table's tenant metrics
//                       (metric_table.cpp: name, device, requests, ..., latency_*, queueing_*,
//                       ttft_*, tpot_*, slowdown_mean, ..., slo_met i8, oom_events, ...)
//   /tenant_names       1-D variable-length UTF-8 string dataset, element i = the name of tenant
//                       index i (the `tenant` column of /requests, /events, /kernels, /slos; same
//                       order as /tenants rows), so h5dump -d /tenant_names maps indices to names
//   /devices            one row per device, columns = the metric table's device metrics
//   /slos               tenant u32, key str ("p99", "ttft_p99", ...), target_ns, value_ns i64
//                       (-1: no samples), samples i64, low_ns, high_ns i64 (the confidence
//                       interval; -1: no bound), verdict enum<u8>{kSloVerdictNames}, met u8 (1:
//                       verdict met): one row per SLO target (models/run/slo.hpp)
//   /events             time_ns i64, kind enum<u8>{kEventKindNames}, tenant i32, device i32
//                       (-1 = none), detail str
//   /timeseries/<dev>   time_ns i64, sm_busy, dram_busy f64, memory_used_bytes i64; '/' in the
//                       device name becomes '_', the real name is the dataset's `device` attribute
//   /kernels            tenant u32, request_id u64, kernel_index u32, device i32, start_ns,
//                       finish_ns i64 (omitted when there are no kernel records)
// Strings are fixed-length (longest value), NUL-padded UTF-8.
//
// This file: the tables and the whole-file writers; a file streamed during the run is
// result_h5_stream.cpp; what both use is result_h5_tables.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "models/config/input_error.hpp"
#include "models/output/metric_table.hpp"
#include "models/output/result_io.hpp"
#include "models/run/slo.hpp"
#include "sim/io/hdf5_file.hpp"
#include "sim/io/output_target.hpp"
#include "sim/io/table_stream.hpp"
#include "models/output/result_h5_tables.hpp"

namespace gpumux {

namespace result_h5 {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kSchemaVersion = 1;

// HDF5 link names cannot contain '/' (and "." names the group itself).
std::string encode_name(const std::string& name, std::set<std::string>& used) {
  std::string encoded = name;
  for (char& c : encoded) {
    if (c == '/') c = '_';
  }
  if (encoded.empty() || encoded == "." || encoded == "..") encoded = "_" + encoded;
  std::string unique = encoded;
  for (int n = 2; !used.insert(unique).second; ++n) unique = fmt::format("{}~{}", encoded, n);
  return unique;
}

template <class Range, class Get>
std::size_t longest(const Range& range, Get get) {
  std::size_t n = 1;
  for (const auto& item : range) n = std::max(n, get(item).size());
  return n;
}

// `units` and `description` of every column of TABLE (column_meta, metric_table.hpp).
namespace {

// The "units" and "description" attributes of TABLE's columns (TYPE), as JSON text.
std::pair<std::string, std::string> column_notes(const h5::CompoundType& type,
                                                 const std::string& table) {
  Json units = Json::object();
  Json description = Json::object();
  const int members = H5Tget_nmembers(type.id());
  for (int i = 0; i < members; ++i) {
    char* raw = H5Tget_member_name(type.id(), static_cast<unsigned>(i));
    if (raw == nullptr) continue;
    const std::string column(raw);
    H5free_memory(raw);
    const auto [unit, text] = column_meta(table, column);
    units[column] = unit;
    description[column] = text;
  }
  return {units.dump(), description.dump()};
}

void annotate(h5::Dataset& dataset, const std::pair<std::string, std::string>& notes) {
  dataset.set_attribute("units", notes.first);
  dataset.set_attribute("description", notes.second);
}

}  // namespace

void annotate(h5::Dataset& dataset, const h5::CompoundType& type, const std::string& table) {
  annotate(dataset, column_notes(type, table));
}

// A table with one row per ROWS element and one column per metric stored in HDF5.
template <class Row>
void write_metric_table(h5::Group& group, const std::string& name,
                        const std::vector<Metric<Row>>& metrics, const std::vector<Row>& rows) {
  struct Column {
    const Metric<Row>* metric;
    std::size_t offset, length;
  };
  h5::CompoundType type;
  std::vector<Column> columns;
  for (const Metric<Row>& m : metrics) {
    if (!m.h5) continue;
    Column c{&m, 0, 0};
    switch (m.type) {
      case MetricType::text:
        c.length = longest(rows, [&](const Row& r) { return std::get<std::string>(m.get(r)); });
        c.offset = type.add_fixed_string(m.column, c.length);
        break;
      case MetricType::i32:
        c.offset = type.add(m.column, H5T_NATIVE_INT32);
        break;
      case MetricType::i64:
        c.offset = type.add(m.column, H5T_NATIVE_INT64);
        break;
      case MetricType::f64:
        c.offset = type.add(m.column, H5T_NATIVE_DOUBLE);
        break;
      case MetricType::flag:
        c.offset = type.add(m.column, H5T_NATIVE_INT8);
        break;
    }
    columns.push_back(c);
  }
  h5::Dataset dataset =
      group.write_table(name, type, rows.size(), [&](std::byte* out, std::size_t i) {
        for (const Column& c : columns) {
          const MetricValue value = c.metric->get(rows[i]);
          const auto* integer = std::get_if<std::int64_t>(&value);
          const auto* real = std::get_if<double>(&value);
          switch (c.metric->type) {
            case MetricType::text:
              h5::put_string(out, c.offset, c.length, std::get<std::string>(value));
              break;
            case MetricType::i32:
              h5::put(out, c.offset, static_cast<std::int32_t>(integer ? *integer : 0));
              break;
            case MetricType::i64:
              h5::put(out, c.offset, integer ? *integer : c.metric->h5_none);
              break;
            case MetricType::f64:
              h5::put(out, c.offset, real ? *real : 0.0);
              break;
            case MetricType::flag:
              h5::put(out, c.offset, static_cast<std::int8_t>(integer ? *integer : -1));
              break;
          }
        }
      });
  annotate(dataset, type, name);
}

// A record table (/requests, /kernels) from memory: the same chunks as a streamed one.
template <class Table, class Record>
void write_records(h5::Group& group, const std::string& name, const std::vector<Record>& records) {
  const Table table;
  h5::BackgroundWriter inline_writer(0);
  h5::TableStream stream(group, name, table.type, inline_writer);
  for (const Record& r : records) table.put(stream.next_row(), r);
  stream.finish();
  inline_writer.drain();
  annotate(stream.dataset(), table.type, name);
}

// The tenant-name table: element i names tenant index i. A plain variable-length string
// dataset (not a compound table, no NUL padding), so h5dump and h5py show the names as they
// are; `units`/`description` follow the tables' convention with the one key "name".
void write_tenant_names(h5::Group& group, const std::vector<TenantResult>& tenants) {
  const h5::Handle type = h5::vlen_string_type();
  h5::Dataset dataset = group.create_table("tenant_names", type.id(), tenants.size());
  std::vector<const char*> names;
  names.reserve(tenants.size());
  for (const TenantResult& t : tenants) names.push_back(t.name.c_str());
  dataset.write_rows(names.data(), type.id(), 0, names.size());
  Json units = Json::object();
  units["name"] = "";
  Json description = Json::object();
  description["name"] =
      "tenant name; element i names tenant index i of /requests, /events and /kernels "
      "(row i of /tenants)";
  dataset.set_attribute("units", units.dump());
  dataset.set_attribute("description", description.dump());
}

void write_slos(h5::Group& group, const RunResult& result) {
  struct Row {
    std::uint32_t tenant;
    const SloCheck* check;
  };
  const std::vector<TenantSlo> slos = evaluate_slos(result);
  std::vector<Row> rows;
  for (std::size_t t = 0; t < slos.size(); ++t) {
    for (const SloCheck& c : slos[t].checks) rows.push_back({static_cast<std::uint32_t>(t), &c});
  }
  const std::size_t key_length = longest(rows, [](const Row& r) { return r.check->key; });
  h5::CompoundType type;
  const std::size_t tenant = type.add("tenant", H5T_NATIVE_UINT32);
  const std::size_t key = type.add_fixed_string("key", key_length);
  const std::size_t target = type.add("target_ns", H5T_NATIVE_INT64);
  const std::size_t value = type.add("value_ns", H5T_NATIVE_INT64);
  const std::size_t samples = type.add("samples", H5T_NATIVE_INT64);
  const std::size_t low = type.add("low_ns", H5T_NATIVE_INT64);
  const std::size_t high = type.add("high_ns", H5T_NATIVE_INT64);
  const h5::Handle verdict_type = h5::u8_enum_type(names_of(kSloVerdictNames));
  const std::size_t verdict = type.add("verdict", verdict_type.id());
  const std::size_t met = type.add("met", H5T_NATIVE_UINT8);
  h5::Dataset dataset =
      group.write_table("slos", type, rows.size(), [&](std::byte* out, std::size_t i) {
        const SloCheck& c = *rows[i].check;
        h5::put(out, tenant, rows[i].tenant);
        h5::put_string(out, key, key_length, c.key);
        h5::put(out, target, c.target_ns);
        h5::put(out, value, c.value_ns.value_or(-1));
        h5::put(out, samples, c.samples);
        h5::put(out, low, c.low_ns.value_or(-1));
        h5::put(out, high, c.high_ns.value_or(-1));
        h5::put(out, verdict, static_cast<std::uint8_t>(c.verdict));
        h5::put(out, met, static_cast<std::uint8_t>(c.met() ? 1 : 0));
      });
  annotate(dataset, type, "slos");
}

void write_events(h5::Group& group, const std::vector<EventRecord>& events) {
  const std::size_t detail_length = longest(events, [](const auto& e) { return e.detail; });
  const h5::Handle kind_type = h5::u8_enum_type(names_of(kEventKindNames));
  h5::CompoundType type;
  const std::size_t time = type.add("time_ns", H5T_NATIVE_INT64);
  const std::size_t kind = type.add("kind", kind_type.id());
  const std::size_t tenant = type.add("tenant", H5T_NATIVE_INT32);
  const std::size_t device = type.add("device", H5T_NATIVE_INT32);
  const std::size_t detail = type.add_fixed_string("detail", detail_length);
  h5::Dataset dataset =
      group.write_table("events", type, events.size(), [&](std::byte* row, std::size_t i) {
        const EventRecord& e = events[i];
        h5::put(row, time, e.time_ns);
        h5::put(row, kind, static_cast<std::uint8_t>(e.kind));
        h5::put(row, tenant, e.tenant);
        h5::put(row, device, e.device);
        h5::put_string(row, detail, detail_length, e.detail);
      });
  annotate(dataset, type, "events");
}

void write_timeseries(h5::Group& parent, const RunResult& result) {
  h5::Group group = parent.create_group("timeseries");
  h5::CompoundType type;
  const std::size_t time = type.add("time_ns", H5T_NATIVE_INT64);
  const std::size_t sm_busy = type.add("sm_busy", H5T_NATIVE_DOUBLE);
  const std::size_t dram_busy = type.add("dram_busy", H5T_NATIVE_DOUBLE);
  const std::size_t memory = type.add("memory_used_bytes", H5T_NATIVE_INT64);
  // Every device gets a series (empty when it was never sampled), in the devices' order.
  std::vector<std::string> names;
  for (const DeviceResult& d : result.devices) names.push_back(d.name);
  for (const auto& [name, samples] : result.timeseries) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  static const std::vector<TimeseriesSample> kNoSamples;
  std::set<std::string> used;
  // One series' notes for all (a 512-GPU run built the same JSON 512 times).
  const std::pair<std::string, std::string> notes = column_notes(type, "timeseries");
  for (const std::string& name : names) {
    const auto it = result.timeseries.find(name);
    const auto& samples = it != result.timeseries.end() ? it->second : kNoSamples;
    h5::Dataset dataset = group.write_table(encode_name(name, used), type, samples.size(),
                                            [&](std::byte* row, std::size_t i) {
                                              h5::put(row, time, samples[i].time_ns);
                                              h5::put(row, sm_busy, samples[i].sm_busy);
                                              h5::put(row, dram_busy, samples[i].dram_busy);
                                              h5::put(row, memory, samples[i].memory_used_bytes);
                                            });
    dataset.set_attribute("device", name);
    annotate(dataset, notes);
  }
}

// What a reader needs to interpret one run without its summary string.
void write_run_attributes(h5::Group& group, const RunResult& result) {
  group.set_attribute("scenario", result.scenario_name);
  group.set_attribute("seed", result.seed);
  group.set_attribute("status", result.status);
  group.set_attribute("sim_time_ns", result.sim_time_ns);
  group.set_attribute("events", static_cast<std::uint64_t>(result.events));
  group.set_attribute("wall_s", result.wall_s);
  group.set_attribute("percentiles", percentiles_json(result.percentiles).dump());
  if (!result.strategy.empty()) group.set_attribute("strategy", result.strategy);
}

void write_root_attributes(h5::Group& root, const RunResult& result) {
  root.set_attribute("gpumux_version", gpumux_version());
  root.set_attribute("schema_version", kSchemaVersion);
  root.set_attribute("scenario_yaml", result.scenario_yaml);
  Json calibration = Json::object();
  for (const auto& [profile, hash] : result.calibration) calibration[profile] = hash;
  root.set_attribute("calibration", calibration.dump());
  write_run_attributes(root, result);
}

// RECORDS_STREAMED: /requests and /kernels were written during the run (StreamedResultFile,
// StreamedCompareFile).
void write_run(h5::Group& group, const RunResult& result, bool with_summary,
               bool records_streamed) {
  if (with_summary) group.write_string("summary", summary_json(result).dump());
  if (!records_streamed) {
    write_records<RequestTable>(group, "requests", result.requests);
  }
  write_metric_table(group, "tenants", tenant_metrics(), result.tenants);
  write_tenant_names(group, result.tenants);
  write_metric_table(group, "devices", device_metrics(), result.devices);
  write_slos(group, result);
  write_events(group, result.events_log);
  write_timeseries(group, result);
  if (!records_streamed && !result.kernels.empty()) {
    write_records<KernelTable>(group, "kernels", result.kernels);
  }
}

// Writes through TARGET.tmp.PID beside the target, fsyncs and renames (replace_file_atomically),
// so PATH is either absent, the old file, or complete; the target is checked first.
template <class Body>
void write_atomically(const std::string& path, Body&& body) {
  replace_file_atomically(path, [&](const std::string& temp) {
    h5::File file = h5::File::create(temp);
    {
      h5::Group root = file.root();
      body(root);
    }
    file.close();
  });
}

}  // namespace result_h5

using namespace result_h5;

void write_result_h5(const std::string& path, const RunResult& result) {
  write_atomically(path, [&](h5::Group& root) {
    write_root_attributes(root, result);
    write_run(root, result, true);
  });
}

void write_results_h5(const std::string& path, const std::vector<RunResult>& results) {
  if (results.empty()) throw std::runtime_error(fmt::format("cannot write {}: no results", path));
  const bool kernels = std::any_of(results.begin(), results.end(),
                                   [](const RunResult& r) { return !r.kernels.empty(); });
  StreamedCompareFile file(path, kernels);
  for (const RunResult& result : results) {
    file.begin_run(result.strategy);
    for (const RequestRecord& r : result.requests) file.on_request_record(r);
    for (const KernelRecord& k : result.kernels) file.on_kernel_completed(k);
    file.end_run(result);
  }
  file.finish(results);
}

const char* gpumux_version() {
#ifdef GPUMUX_VERSION
  return GPUMUX_VERSION;
#else
  return "0.1.0";
#endif
}

}  // namespace gpumux