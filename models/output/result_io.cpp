// Output layer. HDF5 layout (schema_version 1), all tables 1-D compound datasets, packed,
// chunked (<= 65536 rows), shuffle + deflate(4), maxdims unlimited (zero rows is valid):
//   root attributes: gpumux_version, schema_version (int64 1), scenario (name), scenario_yaml,
//     seed (uint64), calibration (JSON object profile -> hash), status, sim_time_ns (int64),
//     events (uint64), wall_s (double), strategy (only when set); compare files add
//     strategies (JSON array of labels).
//   /summary            scalar UTF-8 string: summary_json (compare file: JSON array of them)
//   /requests           tenant u32, request_id u64, arrival_ns i64, start_ns i64, finish_ns i64,
//                       status enum<u8>{completed, failed, unfinished}
//   /tenants            name str, device str, requests, completed, failed i64,
//                       latency_{count i64, mean_ns f64, p50_ns, p90_ns, p99_ns, p999_ns,
//                       max_ns i64}, queueing_{same}, slowdown_mean, throughput_per_s f64,
//                       slo_violations, oom_events i64, gpu_seconds, cost f64
//   /tenant_names       1-D variable-length UTF-8 string dataset, element i = the name of tenant
//                       index i (the `tenant` column of /requests, /events, /kernels; same
//                       order as /tenants rows), so h5dump -d /tenant_names maps indices to names
//   /devices            name, profile, sharing str, sms i32, memory_bytes i64, sm_busy,
//                       useful_fraction, dram_busy f64, memory_peak_bytes, context_switches,
//                       switch_overhead_ns i64
//   /events             time_ns i64, kind enum<u8>{oom, kill, fault, reject, restart},
//                       tenant i32, device i32 (-1 = none), detail str
//   /timeseries/<dev>   time_ns i64, sm_busy, dram_busy f64, memory_used_bytes i64; '/' in the device name
//                       becomes '_', the real name is the dataset's `device` attribute
//   /kernels            tenant u32, request_id u64, kernel_index u32, device i32, start_ns,
//                       finish_ns i64 (omitted when there are no kernel records)
// Strings are fixed-length (longest value), NUL-padded UTF-8.
#include "models/output/result_io.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "models/config/input_error.hpp"
#include "sim/io/hdf5_file.hpp"
#include "sim/io/output_target.hpp"

namespace gpumux {

namespace {

using Json = nlohmann::ordered_json;

#ifdef GPUMUX_VERSION
constexpr const char* kVersion = GPUMUX_VERSION;
#else
constexpr const char* kVersion = "0.1.0";
#endif
constexpr std::int64_t kSchemaVersion = 1;

// ---------------------------------------------------------------------------------------------
// JSON

Json latency_json(const LatencySummary& s) {
  Json j = Json::object();
  j["mean"] = s.mean;
  j["p50"] = s.p50;
  j["p90"] = s.p90;
  j["p99"] = s.p99;
  j["p999"] = s.p999;
  j["max"] = s.max;
  return j;
}

Json tenant_json(const TenantResult& t) {
  Json j = Json::object();
  j["device"] = t.device;
  j["requests"] = t.requests;
  j["completed"] = t.completed;
  j["failed"] = t.failed;
  j["latency_ns"] = latency_json(t.latency);
  Json queueing = Json::object();
  queueing["mean"] = t.queueing.mean;
  queueing["p99"] = t.queueing.p99;
  j["queueing_ns"] = std::move(queueing);
  if (t.time_to_first_token.count > 0) j["ttft_ns"] = latency_json(t.time_to_first_token);
  j["slowdown_mean"] = t.slowdown_mean;
  j["throughput_per_s"] = t.throughput_per_s;
  j["slo_violations"] = t.slo_violations;
  if (!t.slo_ns.empty()) {
    Json slo = Json::object();
    for (const char* q : {"p50", "p90", "p99", "p999"}) {
      if (const auto it = t.slo_ns.find(q); it != t.slo_ns.end()) slo[q] = it->second;
    }
    j["slo_ns"] = std::move(slo);
  }
  j["oom_events"] = t.oom_events;
  j["gpu_seconds"] = t.gpu_seconds;
  j["cost"] = t.cost;
  return j;
}

Json device_json(const DeviceResult& d) {
  Json j = Json::object();
  j["profile"] = d.profile;
  j["sharing"] = d.sharing;
  j["sms"] = d.sms;
  j["memory_bytes"] = d.memory_bytes;
  j["sm_busy"] = d.sm_busy;
  j["useful_fraction"] = d.useful_fraction;
  j["dram_busy"] = d.dram_busy;
  j["memory_peak_bytes"] = d.memory_peak_bytes;
  j["context_switches"] = d.context_switches;
  j["switch_overhead_ns"] = d.switch_overhead_ns;
  return j;
}

// Readers of summaries tolerate missing keys and nulls (NaN is written as null) so an older or
// hand-edited file still prints; such values show as "-".
const Json* field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

double number(const Json& object, const char* key) {
  const Json* value = field(object, key);
  return value != nullptr && value->is_number() ? value->get<double>()
                                                : std::numeric_limits<double>::quiet_NaN();
}

std::string text(const Json& object, const char* key, const std::string& fallback = "-") {
  const Json* value = field(object, key);
  if (value == nullptr || value->is_null()) return fallback;
  return value->is_string() ? value->get<std::string>() : value->dump();
}

const Json& child(const Json& object, const char* key) {
  static const Json empty = Json::object();
  const Json* value = field(object, key);
  return value != nullptr ? *value : empty;
}

// ---------------------------------------------------------------------------------------------
// Text formatting: three significant digits with an adaptive unit ("1.23 ms", "80.0 GiB").

std::string three_digits(double value) {
  const double a = std::fabs(value);
  if (a > 0 && a < 0.9995) return fmt::format("{:.3g}", value);  // 0.083, not 0.08
  if (a < 9.995) return fmt::format("{:.2f}", value);
  if (a < 99.95) return fmt::format("{:.1f}", value);
  return fmt::format("{:.0f}", value);
}

std::string format_duration_ns(double ns) {
  if (!std::isfinite(ns)) return "-";
  const double a = std::fabs(ns);
  if (a < 999.5) return fmt::format("{:.0f} ns", ns);
  if (a < 999.5e3) return three_digits(ns / 1e3) + " us";
  if (a < 999.5e6) return three_digits(ns / 1e6) + " ms";
  return three_digits(ns / 1e9) + " s";
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (std::fabs(bytes) >= 1023.5 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : three_digits(bytes) + " " + kUnits[unit];
}

std::string format_si(double value) {
  if (!std::isfinite(value)) return "-";
  static constexpr const char* kSuffixes[] = {"", "k", "M", "G", "T"};
  std::size_t i = 0;
  while (std::fabs(value) >= 999.5 && i + 1 < std::size(kSuffixes)) {
    value /= 1000;
    ++i;
  }
  return three_digits(value) + kSuffixes[i];
}

std::string format_count(double value) {
  return std::isfinite(value) ? fmt::format("{:.0f}", value) : "-";
}

std::string format_rate(double per_s) {
  return std::isfinite(per_s) ? three_digits(per_s) + "/s" : "-";
}

std::string format_percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100 * fraction) : "-";
}

std::string format_factor(double factor) {
  return std::isfinite(factor) ? fmt::format("{:.2f}x", factor) : "-";
}

// Columns sized to their widest cell; the first `left_columns` are left-aligned (names), the
// rest right-aligned (numbers).
class TextTable {
 public:
  TextTable(std::vector<std::string> headers, std::size_t left_columns)
      : headers_(std::move(headers)), left_columns_(left_columns) {}

  void add_row(std::vector<std::string> row) {
    row.resize(headers_.size(), "");
    rows_.push_back(std::move(row));
  }

  std::string render(const std::string& indent = "") const {
    std::vector<std::size_t> widths(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) {
      std::string l = indent;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (c > 0) l += "  ";
        l += c < left_columns_ ? fmt::format("{:<{}}", cells[c], widths[c])
                               : fmt::format("{:>{}}", cells[c], widths[c]);
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    };
    line(headers_);
    std::vector<std::string> rule;
    for (std::size_t w : widths) rule.emplace_back(w, '-');
    line(rule);
    for (const auto& row : rows_) line(row);
    return out;
  }

 private:
  std::vector<std::string> headers_;
  std::size_t left_columns_;
  std::vector<std::vector<std::string>> rows_;
};

std::string strategy_label(const Json& summary, std::size_t index) {
  const std::string label = text(summary, "strategy", "");
  return label.empty() ? fmt::format("run{}", index + 1) : label;
}

// ---------------------------------------------------------------------------------------------
// HDF5

const std::vector<std::string>& request_status_names() {
  static const std::vector<std::string> names = {"completed", "failed", "unfinished"};
  return names;
}

const std::vector<std::string>& event_kind_names() {
  static const std::vector<std::string> names = {"oom", "kill", "fault", "reject", "restart"};
  return names;
}

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

// Units and a description of every column, as two attributes of each table: `units` and
// `description`, JSON objects {column: text} (json.loads(ds.attrs["units"])["latency_p99_ns"]).
std::pair<std::string, std::string> column_meta(const std::string& c) {
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return c.size() >= s.size() && c.compare(c.size() - s.size(), s.size(), s) == 0;
  };
  static const std::map<std::string, std::pair<std::string, std::string>> known = {
      {"name", {"", "tenant or device name"}},
      {"tenant", {"index", "tenant index: element of /tenant_names, row of /tenants; -1: none"}},
      {"device", {"", "device name (gpu0, gpu0/1); in /events and /kernels an index into /devices rows, -1: none"}},
      {"request_id", {"", "request number within its tenant, in arrival order"}},
      {"kernel_index", {"", "kernel position within its request"}},
      {"arrival_ns", {"ns", "simulated time the request arrived"}},
      {"start_ns", {"ns", "simulated time its first kernel started; -1: never started"}},
      {"finish_ns", {"ns", "simulated time it completed or failed; -1: never"}},
      {"time_ns", {"ns", "simulated time"}},
      {"status", {"", "enum completed / failed / unfinished"}},
      {"kind", {"", "enum oom / kill / fault / reject / restart"}},
      {"detail", {"", "free text"}},
      {"requests", {"count", "requests that arrived after warmup"}},
      {"completed", {"count", "requests completed"}},
      {"failed", {"count", "requests failed (OOM, fault, rejected)"}},
      {"slowdown_mean", {"1", "mean latency / latency alone on a dedicated whole GPU"}},
      {"throughput_per_s", {"1/s", "completed requests per second of the measured window"}},
      {"slo_violations", {"count", "completed requests over an SLO target"}},
      {"oom_events", {"count", "allocations refused for lack of device memory"}},
      {"gpu_seconds", {"s", "occupancy-weighted GPU time"}},
      {"cost", {"USD", "the tenant's share of its GPU's cost_per_hour ($/h) over the measured window"}},
      {"profile", {"", "device profile or MIG profile"}},
      {"sharing", {"", "sharing mode"}},
      {"sms", {"count", "streaming multiprocessors of the device"}},
      {"sm_busy", {"1", "fraction of SM time busy"}},
      {"useful_fraction", {"1", "fraction of SM time doing tenant work (not switching)"}},
      {"dram_busy", {"1", "fraction of HBM bandwidth in use"}},
      {"memory_bytes", {"bytes", "device memory"}},
      {"memory_peak_bytes", {"bytes", "peak allocated device memory"}},
      {"memory_used_bytes", {"bytes", "allocated device memory"}},
      {"context_switches", {"count", "time-slice context switches"}},
      {"switch_overhead_ns", {"ns", "time spent switching contexts"}},
  };
  if (const auto it = known.find(c); it != known.end()) return it->second;
  for (const char* metric : {"latency", "queueing", "ttft"}) {
    const std::string prefix = std::string(metric) + "_";
    if (c.rfind(prefix, 0) != 0) continue;
    const std::string what = std::string(metric) == "ttft" ? "time to first token" : metric;
    const std::string stat = c.substr(prefix.size());
    if (stat == "count") return {"count", "requests in the " + what + " statistics; 0: the others do not apply"};
    return {"ns", what + " " + stat.substr(0, stat.size() - 3) + " over completed requests"};
  }
  if (ends("_ns")) return {"ns", ""};
  if (ends("_bytes")) return {"bytes", ""};
  return {"", ""};
}

void annotate(h5::Dataset& dataset, const h5::CompoundType& type) {
  Json units = Json::object();
  Json description = Json::object();
  const int members = H5Tget_nmembers(type.id());
  for (int i = 0; i < members; ++i) {
    char* raw = H5Tget_member_name(type.id(), static_cast<unsigned>(i));
    if (raw == nullptr) continue;
    const std::string column(raw);
    H5free_memory(raw);
    const auto [unit, text] = column_meta(column);
    units[column] = unit;
    description[column] = text;
  }
  dataset.set_attribute("units", units.dump());
  dataset.set_attribute("description", description.dump());
}

void write_requests(h5::Group& group, const std::vector<RequestRecord>& requests) {
  h5::CompoundType type;
  const h5::Handle status_type = h5::u8_enum_type(request_status_names());
  const std::size_t tenant = type.add("tenant", H5T_NATIVE_UINT32);
  const std::size_t request_id = type.add("request_id", H5T_NATIVE_UINT64);
  const std::size_t arrival = type.add("arrival_ns", H5T_NATIVE_INT64);
  const std::size_t start = type.add("start_ns", H5T_NATIVE_INT64);
  const std::size_t finish = type.add("finish_ns", H5T_NATIVE_INT64);
  const std::size_t status = type.add("status", status_type.id());
  h5::Dataset dataset = group.write_table("requests", type, requests.size(), [&](std::byte* row, std::size_t i) {
    const RequestRecord& r = requests[i];
    h5::put(row, tenant, r.tenant);
    h5::put(row, request_id, r.request_id);
    h5::put(row, arrival, r.arrival_ns);
    h5::put(row, start, r.start_ns);
    h5::put(row, finish, r.finish_ns);
    h5::put(row, status, static_cast<std::uint8_t>(r.status));
  });
  annotate(dataset, type);
}

struct LatencyColumns {
  std::size_t count, mean, p50, p90, p99, p999, max;

  LatencyColumns(h5::CompoundType& type, const std::string& prefix)
      : count(type.add(prefix + "_count", H5T_NATIVE_INT64)),
        mean(type.add(prefix + "_mean_ns", H5T_NATIVE_DOUBLE)),
        p50(type.add(prefix + "_p50_ns", H5T_NATIVE_INT64)),
        p90(type.add(prefix + "_p90_ns", H5T_NATIVE_INT64)),
        p99(type.add(prefix + "_p99_ns", H5T_NATIVE_INT64)),
        p999(type.add(prefix + "_p999_ns", H5T_NATIVE_INT64)),
        max(type.add(prefix + "_max_ns", H5T_NATIVE_INT64)) {}

  void put(std::byte* row, const LatencySummary& s) const {
    h5::put(row, count, s.count);
    h5::put(row, mean, s.mean);
    h5::put(row, p50, s.p50);
    h5::put(row, p90, s.p90);
    h5::put(row, p99, s.p99);
    h5::put(row, p999, s.p999);
    h5::put(row, max, s.max);
  }
};

void write_tenants(h5::Group& group, const std::vector<TenantResult>& tenants) {
  const std::size_t name_length = longest(tenants, [](const auto& t) { return t.name; });
  const std::size_t device_length = longest(tenants, [](const auto& t) { return t.device; });
  h5::CompoundType type;
  const std::size_t name = type.add_fixed_string("name", name_length);
  const std::size_t device = type.add_fixed_string("device", device_length);
  const std::size_t requests = type.add("requests", H5T_NATIVE_INT64);
  const std::size_t completed = type.add("completed", H5T_NATIVE_INT64);
  const std::size_t failed = type.add("failed", H5T_NATIVE_INT64);
  const LatencyColumns latency(type, "latency");
  const LatencyColumns queueing(type, "queueing");
  const LatencyColumns ttft(type, "ttft");
  const std::size_t slowdown = type.add("slowdown_mean", H5T_NATIVE_DOUBLE);
  const std::size_t throughput = type.add("throughput_per_s", H5T_NATIVE_DOUBLE);
  const std::size_t slo = type.add("slo_violations", H5T_NATIVE_INT64);
  const std::size_t oom = type.add("oom_events", H5T_NATIVE_INT64);
  const std::size_t gpu_seconds = type.add("gpu_seconds", H5T_NATIVE_DOUBLE);
  const std::size_t cost = type.add("cost", H5T_NATIVE_DOUBLE);
  h5::Dataset dataset = group.write_table("tenants", type, tenants.size(), [&](std::byte* row, std::size_t i) {
    const TenantResult& t = tenants[i];
    h5::put_string(row, name, name_length, t.name);
    h5::put_string(row, device, device_length, t.device);
    h5::put(row, requests, t.requests);
    h5::put(row, completed, t.completed);
    h5::put(row, failed, t.failed);
    latency.put(row, t.latency);
    queueing.put(row, t.queueing);
    ttft.put(row, t.time_to_first_token);
    h5::put(row, slowdown, t.slowdown_mean);
    h5::put(row, throughput, t.throughput_per_s);
    h5::put(row, slo, t.slo_violations);
    h5::put(row, oom, t.oom_events);
    h5::put(row, gpu_seconds, t.gpu_seconds);
    h5::put(row, cost, t.cost);
  });
  annotate(dataset, type);
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

void write_devices(h5::Group& group, const std::vector<DeviceResult>& devices) {
  const std::size_t name_length = longest(devices, [](const auto& d) { return d.name; });
  const std::size_t profile_length = longest(devices, [](const auto& d) { return d.profile; });
  const std::size_t sharing_length = longest(devices, [](const auto& d) { return d.sharing; });
  h5::CompoundType type;
  const std::size_t name = type.add_fixed_string("name", name_length);
  const std::size_t profile = type.add_fixed_string("profile", profile_length);
  const std::size_t sharing = type.add_fixed_string("sharing", sharing_length);
  const std::size_t sms = type.add("sms", H5T_NATIVE_INT32);
  const std::size_t memory = type.add("memory_bytes", H5T_NATIVE_INT64);
  const std::size_t sm_busy = type.add("sm_busy", H5T_NATIVE_DOUBLE);
  const std::size_t useful = type.add("useful_fraction", H5T_NATIVE_DOUBLE);
  const std::size_t dram_busy = type.add("dram_busy", H5T_NATIVE_DOUBLE);
  const std::size_t peak = type.add("memory_peak_bytes", H5T_NATIVE_INT64);
  const std::size_t switches = type.add("context_switches", H5T_NATIVE_INT64);
  const std::size_t overhead = type.add("switch_overhead_ns", H5T_NATIVE_INT64);
  h5::Dataset dataset = group.write_table("devices", type, devices.size(), [&](std::byte* row, std::size_t i) {
    const DeviceResult& d = devices[i];
    h5::put_string(row, name, name_length, d.name);
    h5::put_string(row, profile, profile_length, d.profile);
    h5::put_string(row, sharing, sharing_length, d.sharing);
    h5::put(row, sms, static_cast<std::int32_t>(d.sms));
    h5::put(row, memory, d.memory_bytes);
    h5::put(row, sm_busy, d.sm_busy);
    h5::put(row, useful, d.useful_fraction);
    h5::put(row, dram_busy, d.dram_busy);
    h5::put(row, peak, d.memory_peak_bytes);
    h5::put(row, switches, d.context_switches);
    h5::put(row, overhead, d.switch_overhead_ns);
  });
  annotate(dataset, type);
}

void write_events(h5::Group& group, const std::vector<EventRecord>& events) {
  const std::size_t detail_length = longest(events, [](const auto& e) { return e.detail; });
  const h5::Handle kind_type = h5::u8_enum_type(event_kind_names());
  h5::CompoundType type;
  const std::size_t time = type.add("time_ns", H5T_NATIVE_INT64);
  const std::size_t kind = type.add("kind", kind_type.id());
  const std::size_t tenant = type.add("tenant", H5T_NATIVE_INT32);
  const std::size_t device = type.add("device", H5T_NATIVE_INT32);
  const std::size_t detail = type.add_fixed_string("detail", detail_length);
  h5::Dataset dataset = group.write_table("events", type, events.size(), [&](std::byte* row, std::size_t i) {
    const EventRecord& e = events[i];
    h5::put(row, time, e.time_ns);
    h5::put(row, kind, static_cast<std::uint8_t>(e.kind));
    h5::put(row, tenant, e.tenant);
    h5::put(row, device, e.device);
    h5::put_string(row, detail, detail_length, e.detail);
  });
  annotate(dataset, type);
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
    annotate(dataset, type);
  }
}

void write_kernels(h5::Group& group, const std::vector<KernelRecord>& kernels) {
  h5::CompoundType type;
  const std::size_t tenant = type.add("tenant", H5T_NATIVE_UINT32);
  const std::size_t request_id = type.add("request_id", H5T_NATIVE_UINT64);
  const std::size_t index = type.add("kernel_index", H5T_NATIVE_UINT32);
  const std::size_t device = type.add("device", H5T_NATIVE_INT32);
  const std::size_t start = type.add("start_ns", H5T_NATIVE_INT64);
  const std::size_t finish = type.add("finish_ns", H5T_NATIVE_INT64);
  h5::Dataset dataset = group.write_table("kernels", type, kernels.size(), [&](std::byte* row, std::size_t i) {
    const KernelRecord& k = kernels[i];
    h5::put(row, tenant, k.tenant);
    h5::put(row, request_id, k.request_id);
    h5::put(row, index, k.kernel_index);
    h5::put(row, device, k.device);
    h5::put(row, start, k.start_ns);
    h5::put(row, finish, k.finish_ns);
  });
  annotate(dataset, type);
}

// What a reader needs to interpret one run without its summary string.
void write_run_attributes(h5::Group& group, const RunResult& result) {
  group.set_attribute("scenario", result.scenario_name);
  group.set_attribute("seed", result.seed);
  group.set_attribute("status", result.status);
  group.set_attribute("sim_time_ns", result.sim_time_ns);
  group.set_attribute("events", static_cast<std::uint64_t>(result.events));
  group.set_attribute("wall_s", result.wall_s);
  if (!result.strategy.empty()) group.set_attribute("strategy", result.strategy);
}

void write_root_attributes(h5::Group& root, const RunResult& result) {
  root.set_attribute("gpumux_version", kVersion);
  root.set_attribute("schema_version", kSchemaVersion);
  root.set_attribute("scenario_yaml", result.scenario_yaml);
  Json calibration = Json::object();
  for (const auto& [profile, hash] : result.calibration) calibration[profile] = hash;
  root.set_attribute("calibration", calibration.dump());
  write_run_attributes(root, result);
}

void write_run(h5::Group& group, const RunResult& result, bool with_summary) {
  if (with_summary) group.write_string("summary", summary_json(result).dump());
  write_requests(group, result.requests);
  write_tenants(group, result.tenants);
  write_tenant_names(group, result.tenants);
  write_devices(group, result.devices);
  write_events(group, result.events_log);
  write_timeseries(group, result);
  if (!result.kernels.empty()) write_kernels(group, result.kernels);
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

}  // namespace

nlohmann::ordered_json summary_json(const RunResult& result) {
  Json j = Json::object();
  j["scenario"] = result.scenario_name;
  if (!result.strategy.empty()) j["strategy"] = result.strategy;
  j["seed"] = result.seed;
  j["status"] = result.status;
  j["sim_time_ns"] = result.sim_time_ns;
  j["events"] = result.events;
  j["wall_s"] = result.wall_s;
  j["gpu_cost"] = result.gpu_cost;
  if (!result.notes.empty()) j["notes"] = result.notes;
  Json tenants = Json::object();
  for (const TenantResult& t : result.tenants) tenants[t.name] = tenant_json(t);
  j["tenants"] = std::move(tenants);
  Json devices = Json::object();
  for (const DeviceResult& d : result.devices) devices[d.name] = device_json(d);
  j["devices"] = std::move(devices);
  return j;
}

std::string summary_table_from_json(const nlohmann::ordered_json& summary) {
  const double events = number(summary, "events");
  const double wall_s = number(summary, "wall_s");
  const double rate = wall_s > 0 ? events / wall_s : std::numeric_limits<double>::quiet_NaN();
  std::string out = fmt::format("scenario: {}", text(summary, "scenario"));
  if (field(summary, "strategy") != nullptr) out += "   strategy: " + text(summary, "strategy");
  if (const Json* c = field(summary, "gpu_cost"); c != nullptr && c->get<double>() > 0) {
    // cost_per_hour is in US dollars per hour; gpu_cost is that over the measured window.
    out += fmt::format("   GPU cost: ${:.4g} (USD for the measured window, at cost_per_hour $/h)",
                       c->get<double>());
  }
  out += fmt::format(
      "   seed: {}   status: {}   simulated: {}   events: {}   wall: {}   "
      "events/s: {}\n",
      text(summary, "seed"), text(summary, "status"),
      format_duration_ns(number(summary, "sim_time_ns")), format_count(events),
      format_duration_ns(wall_s * 1e9), format_si(rate));

  TextTable tenants({"tenant", "device", "requests", "completed", "failed", "p50", "p99", "p99.9",
                     "max", "throughput", "slowdown", "SLO viol.", "OOMs"},
                    2);
  for (const auto& [name, t] : child(summary, "tenants").items()) {
    const Json& latency = child(t, "latency_ns");
    tenants.add_row(
        {name, text(t, "device"), format_count(number(t, "requests")),
         format_count(number(t, "completed")), format_count(number(t, "failed")),
         format_duration_ns(number(latency, "p50")), format_duration_ns(number(latency, "p99")),
         format_duration_ns(number(latency, "p999")), format_duration_ns(number(latency, "max")),
         format_rate(number(t, "throughput_per_s")), format_factor(number(t, "slowdown_mean")),
         format_count(number(t, "slo_violations")), format_count(number(t, "oom_events"))});
  }
  out += '\n';
  out += tenants.render();

  // LLM tenants: time to first token.
  TextTable ttft({"tenant", "TTFT p50", "TTFT p99", "TTFT max"}, 1);
  bool any_ttft = false;
  for (const auto& [name, t] : child(summary, "tenants").items()) {
    if (field(t, "ttft_ns") == nullptr) continue;
    const Json& first = child(t, "ttft_ns");
    ttft.add_row({name, format_duration_ns(number(first, "p50")),
                  format_duration_ns(number(first, "p99")),
                  format_duration_ns(number(first, "max"))});
    any_ttft = true;
  }
  if (any_ttft) {
    out += '\n';
    out += ttft.render();
  }

  TextTable devices({"device", "profile", "sharing", "SMs", "memory", "SM busy", "useful",
                     "DRAM busy", "peak memory", "ctx switches", "switch overhead"},
                    3);
  for (const auto& [name, d] : child(summary, "devices").items()) {
    devices.add_row({name, text(d, "profile"), text(d, "sharing"), format_count(number(d, "sms")),
                     format_bytes(number(d, "memory_bytes")), format_percent(number(d, "sm_busy")),
                     format_percent(number(d, "useful_fraction")),
                     format_percent(number(d, "dram_busy")),
                     format_bytes(number(d, "memory_peak_bytes")),
                     format_count(number(d, "context_switches")),
                     format_duration_ns(number(d, "switch_overhead_ns"))});
  }
  out += '\n';
  out += devices.render();
  if (const Json* notes = field(summary, "notes"); notes != nullptr && notes->is_array()) {
    out += "\n";
    for (const Json& note : *notes) out += "note: " + note.get<std::string>() + "\n";
  }
  return out;
}

std::string summary_table(const RunResult& result) {
  return summary_table_from_json(summary_json(result));
}

std::string compare_table_from_json(const std::vector<nlohmann::ordered_json>& summaries) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < summaries.size(); ++i)
    labels.push_back(strategy_label(summaries[i], i));
  std::string out =
      fmt::format("scenario: {}   seed: {}   strategies: {}\n",
                  summaries.empty() ? "-" : text(summaries[0], "scenario"),
                  summaries.empty() ? "-" : text(summaries[0], "seed"), fmt::join(labels, ", "));

  // The bottom line per strategy: how many physical GPUs, how much work and the worst tail of
  // the tenants with an SLO and of the best-effort ones (separately: a batch job's long tail
  // must not hide, or stand in for, the latency-critical tenants'), the failures and SLO
  // misses, and the cost (0 without cost_per_hour in the scenario).
  TextTable overview({"strategy", "GPUs", "devices", "SLO thrpt", "SLO worst p99", "BE thrpt",
                      "BE worst p99", "failed", "SLO viol.", "mean SM busy", "GPU cost (USD)"},
                     1);
  bool any_slo = false, any_best_effort = false;
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    std::vector<std::string> gpus;
    double busy = 0;
    int devices = 0;
    for (const auto& [name, d] : child(summaries[i], "devices").items()) {
      const std::string gpu = name.substr(0, name.find('/'));
      if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
      busy += number(d, "sm_busy");
      ++devices;
    }
    // [0]: tenants with an `slo:` (summary key slo_ns), [1]: best-effort; NaN = none such.
    const double none = std::numeric_limits<double>::quiet_NaN();
    double throughput[2] = {none, none}, worst_p99[2] = {none, none};
    double failed = 0, violations = 0, cost = 0;  // cost: GPUs
    for (const auto& [name, t] : child(summaries[i], "tenants").items()) {
      const int group = field(t, "slo_ns") != nullptr ? 0 : 1;
      (group == 0 ? any_slo : any_best_effort) = true;
      const double p99 = number(child(t, "latency_ns"), "p99");
      throughput[group] = (std::isnan(throughput[group]) ? 0.0 : throughput[group]) +
                          number(t, "throughput_per_s");
      worst_p99[group] = std::isnan(worst_p99[group]) ? p99 : std::max(worst_p99[group], p99);
      failed += number(t, "failed");
      violations += number(t, "slo_violations");
    }
    if (const Json* c = field(summaries[i], "gpu_cost"); c != nullptr) cost = c->get<double>();
    overview.add_row({labels[i], format_count(static_cast<double>(gpus.size())),
                      format_count(devices), format_rate(throughput[0]),
                      format_duration_ns(worst_p99[0]), format_rate(throughput[1]),
                      format_duration_ns(worst_p99[1]), format_count(failed),
                      format_count(violations),
                      format_percent(devices > 0 ? busy / devices : 0.0),
                      fmt::format("${:.4g}", cost)});
  }
  out += '\n';
  out += overview.render();
  out += std::string("SLO: tenants with an slo: block") + (any_slo ? "" : " (none)") +
         "; BE: best-effort tenants, without one" + (any_best_effort ? "" : " (none)") + "\n";

  // Tenants in order of first appearance; a tenant missing under a strategy shows "-".
  std::vector<std::string> tenant_names;
  for (const Json& s : summaries) {
    for (const auto& [name, t] : child(s, "tenants").items()) {
      if (std::find(tenant_names.begin(), tenant_names.end(), name) == tenant_names.end()) {
        tenant_names.push_back(name);
      }
    }
  }
  using Metric = std::string (*)(const Json& tenant);
  static const std::vector<std::pair<std::string, Metric>> kMetrics = {
      {"device", [](const Json& t) { return text(t, "device"); }},
      {"p50",
       [](const Json& t) { return format_duration_ns(number(child(t, "latency_ns"), "p50")); }},
      {"p99",
       [](const Json& t) { return format_duration_ns(number(child(t, "latency_ns"), "p99")); }},
      {"throughput", [](const Json& t) { return format_rate(number(t, "throughput_per_s")); }},
      {"slowdown", [](const Json& t) { return format_factor(number(t, "slowdown_mean")); }},
      {"failed", [](const Json& t) { return format_count(number(t, "failed")); }},
      {"OOMs", [](const Json& t) { return format_count(number(t, "oom_events")); }},
  };
  for (const std::string& tenant : tenant_names) {
    std::vector<std::string> headers = {"tenant " + tenant};
    headers.insert(headers.end(), labels.begin(), labels.end());
    TextTable table(headers, 1);
    for (const auto& [metric, get] : kMetrics) {
      std::vector<std::string> row = {"  " + metric};
      for (const Json& s : summaries) {
        const Json* t = field(child(s, "tenants"), tenant.c_str());
        row.push_back(t != nullptr ? get(*t) : "-");
      }
      table.add_row(std::move(row));
    }
    out += '\n';
    out += table.render();
  }

  TextTable devices({"strategy", "device", "profile", "sharing", "SM busy", "useful",
                     "DRAM busy", "ctx switches"},
                    4);
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    for (const auto& [name, d] : child(summaries[i], "devices").items()) {
      devices.add_row({labels[i], name, text(d, "profile"), text(d, "sharing"),
                       format_percent(number(d, "sm_busy")),
                       format_percent(number(d, "useful_fraction")),
                       format_percent(number(d, "dram_busy")),
                       format_count(number(d, "context_switches"))});
    }
  }
  out += '\n';
  out += devices.render();
  return out;
}

std::string compare_table(const std::vector<RunResult>& results) {
  std::vector<Json> summaries;
  summaries.reserve(results.size());
  for (const RunResult& r : results) summaries.push_back(summary_json(r));
  return compare_table_from_json(summaries);
}

void write_result_h5(const std::string& path, const RunResult& result) {
  write_atomically(path, [&](h5::Group& root) {
    write_root_attributes(root, result);
    write_run(root, result, true);
  });
}

void write_results_h5(const std::string& path, const std::vector<RunResult>& results) {
  if (results.empty()) throw std::runtime_error(fmt::format("cannot write {}: no results", path));
  write_atomically(path, [&](h5::Group& root) {
    write_root_attributes(root, results.front());
    Json summaries = Json::array();
    Json labels = Json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      Json summary = summary_json(results[i]);
      labels.push_back(strategy_label(summary, i));
      summaries.push_back(std::move(summary));
    }
    root.set_attribute("strategies", labels.dump());
    root.write_string("summary", summaries.dump());
    h5::Group strategies = root.create_group("strategies");
    std::set<std::string> used;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::string label = labels[i].get<std::string>();
      h5::Group group = strategies.create_group(encode_name(label, used));
      write_run_attributes(group, results[i]);
      group.set_attribute("strategy", label);
      write_run(group, results[i], true);
    }
  });
}

std::vector<nlohmann::ordered_json> read_summaries_h5(const std::string& path) {
  const auto not_a_result = [&](const std::string& why) {
    return InputError(SourceLocation{path, 0, 0, ""},
                      fmt::format("not a gpumux result file ({})", why));
  };
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw not_a_result("no such file");
  if (std::filesystem::is_directory(path, error)) throw not_a_result("a directory");
  h5::silence_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw not_a_result("not an HDF5 file");
  }
  std::string stored;
  try {
    h5::File file = h5::File::open_read_only(path);
    const h5::Group root = file.root();
    if (!root.exists("summary")) throw not_a_result("no /summary dataset");
    stored = root.read_string("summary");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw not_a_result(e.what());
  }
  Json parsed;
  try {
    parsed = Json::parse(stored);
  } catch (const Json::parse_error&) {
    throw not_a_result("/summary is not JSON");
  }
  std::vector<Json> summaries;
  if (parsed.is_object()) {
    summaries.push_back(std::move(parsed));
  } else if (parsed.is_array() && !parsed.empty() &&
             std::all_of(parsed.begin(), parsed.end(),
                         [](const Json& s) { return s.is_object(); })) {
    for (Json& s : parsed) summaries.push_back(std::move(s));
  } else {
    throw not_a_result("/summary is not a summary object or array");
  }
  return summaries;
}

}  // namespace gpumux
