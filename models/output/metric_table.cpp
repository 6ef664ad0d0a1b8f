// The metric table (see metric_table.hpp). Order matters: it is the order of the JSON keys, the
// HDF5 columns, the text-table columns and the CSV columns.
#include "models/output/metric_table.hpp"

#include <map>

#include "models/run/slo.hpp"

namespace gpumux {

namespace {

using Json = nlohmann::ordered_json;

// The position of STAT ("p50" .. "p999") in LatencySummary::intervals; -1 for the others.
int interval_index(const std::string& stat) {
  if (stat == "p50") return 0;
  if (stat == "p90") return 1;
  if (stat == "p99") return 2;
  if (stat == "p999") return 3;
  return -1;
}

std::int64_t quantile_of(const LatencySummary& s, const std::string& stat) {
  if (stat == "count") return s.count;
  if (stat == "p50") return s.p50;
  if (stat == "p90") return s.p90;
  if (stat == "p99") return s.p99;
  if (stat == "p999") return s.p999;
  return s.max;
}

// A LatencySummary as columns PREFIX_count, PREFIX_mean_ns, PREFIX_p50_ns .. PREFIX_max_ns, and
// as the JSON object JSON_KEY {mean, p50, ...} holding the stats in `in_json` (written only
// when `when_counted` is false or count > 0). `headers` / `compare`: stat -> label.
struct SummarySpec {
  std::string prefix, json_key, what;
  LatencySummary TenantResult::*field;
  std::vector<std::string> in_json;
  bool when_counted = false;
  TextTableId table = TextTableId::none;
  std::map<std::string, std::string> headers, compare;
  std::vector<std::string> csv;
  /// Stats whose confidence interval the text table shows, stat -> header ("p99" -> "p99 CI").
  std::map<std::string, std::string> interval_headers;
};

// The confidence bounds of each percentile: PREFIX_STAT_low_ns / _high_ns (HDF5 -1 and JSON
// null when the samples give no bound; JSON JSON_KEY.STAT_low / _high beside the percentile),
// and the text-table column of the interval where the spec asks for one.
void add_intervals(std::vector<TenantMetric>& out, const SummarySpec& spec) {
  const auto field = spec.field;
  for (const std::string stat : {"p50", "p90", "p99", "p999"}) {
    const int index = interval_index(stat);
    const bool in_json =
        std::find(spec.in_json.begin(), spec.in_json.end(), stat) != spec.in_json.end();
    for (const bool high : {false, true}) {
      TenantMetric m;
      const std::string side = high ? "high" : "low";
      m.column = spec.prefix + "_" + stat + "_" + side + "_ns";
      m.json = in_json ? spec.json_key + "." + stat + "_" + side : "";
      m.unit = "ns";
      m.description = std::string(high ? "upper" : "lower") + " confidence bound of the " +
                      spec.what + " " + stat +
                      " (percentiles.confidence; -1 / null: the samples give none)";
      m.type = MetricType::i64;
      m.format = MetricFormat::duration;
      m.h5_none = -1;
      if (std::find(spec.csv.begin(), spec.csv.end(), stat) != spec.csv.end()) m.csv = m.column;
      m.get = [field, index, high](const TenantResult& t) -> MetricValue {
        const QuantileInterval& ci = (t.*field).intervals[static_cast<std::size_t>(index)];
        if ((t.*field).count == 0 || !(high ? ci.has_high : ci.has_low)) return MetricValue{};
        return high ? ci.high : ci.low;
      };
      if (spec.when_counted) {
        m.in_summary = [field](const TenantResult& t) { return (t.*field).count > 0; };
      }
      out.push_back(std::move(m));
    }
  }
}

// The text-table columns of the intervals the spec shows (not stored: read from the bounds).
void add_interval_columns(std::vector<TenantMetric>& out, const SummarySpec& spec) {
  for (const auto& [stat, header] : spec.interval_headers) {
    TenantMetric m;
    m.column = spec.prefix + "_" + stat + "_interval";
    m.interval_of = spec.json_key + "." + stat;
    m.description = spec.what + " " + stat + " confidence interval (text tables)";
    m.type = MetricType::text;
    m.format = MetricFormat::interval;
    m.table = spec.table;
    m.header = header;
    m.h5 = false;
    m.get = [](const TenantResult&) -> MetricValue { return MetricValue{}; };
    out.push_back(std::move(m));
  }
}

void add_summary(std::vector<TenantMetric>& out, const SummarySpec& spec) {
  const auto field = spec.field;
  for (const std::string stat : {"count", "mean", "p50", "p90", "p99", "p999", "max"}) {
    TenantMetric m;
    const bool count = stat == "count";
    m.column = spec.prefix + "_" + stat + (count ? "" : "_ns");
    const bool in_json =
        std::find(spec.in_json.begin(), spec.in_json.end(), stat) != spec.in_json.end();
    m.json = in_json ? spec.json_key + "." + stat : "";
    m.unit = count ? "count" : "ns";
    m.description = count ? std::string("requests in the ") + spec.what +
                                " statistics; 0: the others do not apply"
                          : spec.what + " " + stat + " over completed requests";
    m.type = count ? MetricType::i64 : stat == "mean" ? MetricType::f64 : MetricType::i64;
    m.format = count ? MetricFormat::count : MetricFormat::duration;
    if (const auto h = spec.headers.find(stat); h != spec.headers.end()) {
      m.table = spec.table;
      m.header = h->second;
    }
    if (const auto c = spec.compare.find(stat); c != spec.compare.end()) m.compare = c->second;
    if (std::find(spec.csv.begin(), spec.csv.end(), stat) != spec.csv.end()) m.csv = m.column;
    if (stat == "mean") {
      m.get = [field](const TenantResult& t) -> MetricValue { return (t.*field).mean; };
    } else {
      m.get = [field, stat](const TenantResult& t) -> MetricValue {
        return quantile_of(t.*field, stat);
      };
    }
    if (spec.when_counted) {
      m.in_summary = [field](const TenantResult& t) { return (t.*field).count > 0; };
    }
    out.push_back(std::move(m));
    if (stat == "p99") add_interval_columns(out, spec);  // the table shows it beside p99
  }
  add_intervals(out, spec);
}

template <class Row>
Metric<Row> metric(std::string column, std::string json, std::string unit, std::string description,
                   MetricType type, MetricFormat format,
                   std::function<MetricValue(const Row&)> get) {
  Metric<Row> m;
  m.column = std::move(column);
  m.json = std::move(json);
  m.unit = std::move(unit);
  m.description = std::move(description);
  m.type = type;
  m.format = format;
  m.get = std::move(get);
  return m;
}

template <class Row>
Metric<Row> shown(Metric<Row> m, TextTableId table, std::string header, std::string compare = "",
                  std::string csv = "") {
  m.table = table;
  m.header = std::move(header);
  m.compare = std::move(compare);
  m.csv = std::move(csv);
  return m;
}

// The SLO entries of one key: target (slo_ns.KEY, as before verdicts existed) and the verdict
// slo.KEY.{target_ns, value_ns, met}; JSON and CSV only (HDF5 has them as /slos rows).
void add_slo_targets(std::vector<TenantMetric>& out) {
  for (const std::string& key : slo_keys()) {
    TenantMetric m = metric<TenantResult>(
        std::string("slo_") + key + "_target_ns", std::string("slo_ns.") + key, "ns",
        std::string("SLO target ") + key, MetricType::i64, MetricFormat::duration,
        [key](const TenantResult& t) -> MetricValue {
          const auto it = t.slo_ns.find(key);
          return it == t.slo_ns.end() ? MetricValue{} : MetricValue{it->second};
        });
    m.h5 = false;
    m.csv = m.column;
    m.in_summary = [key](const TenantResult& t) { return t.slo_ns.count(key) > 0; };
    out.push_back(std::move(m));
  }
}

void add_slo_verdicts(std::vector<TenantMetric>& out) {
  for (const std::string& key : slo_keys()) {
    auto check = [key](const TenantResult& t) -> std::optional<SloCheck> {
      for (SloCheck& c : evaluate_slo(t).checks) {
        if (c.key == key) return std::move(c);
      }
      return std::nullopt;
    };
    auto optional_ns = [](const std::optional<std::int64_t>& v) {
      return v ? MetricValue{*v} : MetricValue{};
    };
    const std::string slo = std::string("slo.") + key + ".";
    const std::string column = std::string("slo_") + key + "_";
    TenantMetric value = metric<TenantResult>(
        column + "value_ns", slo + "value_ns", "ns",
        std::string("measured ") + key + " for the SLO verdict; null: no samples", MetricType::i64,
        MetricFormat::duration, [check, optional_ns](const TenantResult& t) -> MetricValue {
          const auto c = check(t);
          return c ? optional_ns(c->value_ns) : MetricValue{};
        });
    TenantMetric target = value;
    target.column = column + "target";  // not a column: JSON only
    target.json = slo + "target_ns";
    target.description = std::string("SLO target ") + key;
    target.get = [key](const TenantResult& t) -> MetricValue {
      const auto it = t.slo_ns.find(key);
      return it == t.slo_ns.end() ? MetricValue{} : MetricValue{it->second};
    };
    TenantMetric samples =
        metric<TenantResult>(column + "samples", slo + "samples", "count",
                             std::string("samples behind the measured ") + key, MetricType::i64,
                             MetricFormat::count, [check](const TenantResult& t) -> MetricValue {
                               const auto c = check(t);
                               return c ? MetricValue{c->samples} : MetricValue{};
                             });
    samples.csv = samples.column;
    TenantMetric low = value;
    low.column = column + "low_ns";
    low.json = slo + "low_ns";
    low.description = std::string("lower confidence bound of the measured ") + key;
    low.get = [check, optional_ns](const TenantResult& t) -> MetricValue {
      const auto c = check(t);
      return c ? optional_ns(c->low_ns) : MetricValue{};
    };
    low.csv = low.column;
    TenantMetric high = low;
    high.column = column + "high_ns";
    high.json = slo + "high_ns";
    high.description = std::string("upper confidence bound of the measured ") + key +
                       "; null: too few samples to bound it";
    high.get = [check, optional_ns](const TenantResult& t) -> MetricValue {
      const auto c = check(t);
      return c ? optional_ns(c->high_ns) : MetricValue{};
    };
    high.csv = high.column;
    TenantMetric verdict = metric<TenantResult>(
        column + "verdict", slo + "verdict", "",
        std::string("SLO ") + key + " verdict: met, missed or inconclusive", MetricType::text,
        MetricFormat::verdict, [check](const TenantResult& t) -> MetricValue {
          const auto c = check(t);
          return c ? MetricValue{std::string(verdict_name(c->verdict))} : MetricValue{};
        });
    verdict.csv = verdict.column;
    TenantMetric met = metric<TenantResult>(
        column + "met", slo + "met", "", std::string("SLO ") + key + " met (shown to hold)",
        MetricType::flag, MetricFormat::verdict, [check](const TenantResult& t) -> MetricValue {
          const auto c = check(t);
          return c ? std::int64_t{c->met() ? 1 : 0} : std::int64_t{-1};
        });
    met.csv = met.column;
    for (TenantMetric* m : {&target, &value, &samples, &low, &high, &verdict, &met}) {
      m->h5 = false;
      m->in_summary = [key](const TenantResult& t) { return t.slo_ns.count(key) > 0; };
      out.push_back(*m);
    }
  }
}

std::vector<TenantMetric> build_tenant_metrics() {
  using T = TenantResult;
  using F = MetricFormat;
  using Ty = MetricType;
  constexpr auto main = TextTableId::main;
  std::vector<TenantMetric> m;
  TenantMetric name = metric<T>("name", "", "", "tenant name", Ty::text, F::text,
                                [](const T& t) -> MetricValue { return t.name; });
  m.push_back(shown(name, main, "tenant"));
  m.push_back(shown(metric<T>("device", "device", "", "device name (gpu0, gpu0/1)", Ty::text,
                              F::text, [](const T& t) -> MetricValue { return t.device; }),
                    main, "device", "device", "device"));
  m.push_back(
      shown(metric<T>("requests", "requests", "count", "requests that arrived after warmup",
                      Ty::i64, F::count, [](const T& t) -> MetricValue { return t.requests; }),
            main, "requests", "", "requests"));
  m.push_back(shown(metric<T>("completed", "completed", "count", "requests completed", Ty::i64,
                              F::count, [](const T& t) -> MetricValue { return t.completed; }),
                    main, "completed", "", "completed"));
  m.push_back(
      shown(metric<T>("failed", "failed", "count", "requests failed (OOM, fault, rejected)",
                      Ty::i64, F::count, [](const T& t) -> MetricValue { return t.failed; }),
            main, "failed", "failed", "failed"));
  add_summary(m, {"latency",
                  "latency_ns",
                  "latency",
                  &T::latency,
                  {"mean", "p50", "p90", "p99", "p999", "max"},
                  false,
                  main,
                  {{"p50", "p50"}, {"p99", "p99"}, {"p999", "p99.9"}, {"max", "max"}},
                  {{"p50", "p50"}, {"p99", "p99"}},
                  {"mean", "p50", "p90", "p99", "p999", "max"},
                  {{"p99", "p99 CI"}}});
  add_summary(m, {"queueing",
                  "queueing_ns",
                  "queueing",
                  &T::queueing,
                  {"mean", "p99"},
                  false,
                  TextTableId::none,
                  {},
                  {},
                  {"mean", "p99"},
                  {}});
  add_summary(m, {"ttft",
                  "ttft_ns",
                  "time to first token",
                  &T::time_to_first_token,
                  {"mean", "p50", "p90", "p99", "p999", "max"},
                  true,
                  TextTableId::llm,
                  {{"p50", "TTFT p50"}, {"p99", "TTFT p99"}, {"max", "TTFT max"}},
                  {},
                  {},
                  {{"p99", "TTFT p99 CI"}}});
  add_summary(m, {"tpot",
                  "tpot_ns",
                  "time per output token",
                  &T::time_per_output_token,
                  {"mean", "p50", "p90", "p99", "p999", "max"},
                  true,
                  TextTableId::llm,
                  {{"p50", "TPOT p50"}, {"p99", "TPOT p99"}},
                  {},
                  {},
                  {}});
  m.push_back(shown(metric<T>("slowdown_mean", "slowdown_mean", "1",
                              "mean latency / latency alone on a dedicated whole GPU", Ty::f64,
                              F::factor, [](const T& t) -> MetricValue { return t.slowdown_mean; }),
                    main, "slowdown", "slowdown", "slowdown_mean_x"));
  m.push_back(
      shown(metric<T>("throughput_per_s", "throughput_per_s", "1/s",
                      "completed requests per second of the measured window", Ty::f64, F::rate,
                      [](const T& t) -> MetricValue { return t.throughput_per_s; }),
            main, "throughput", "throughput", "throughput_per_s"));
  TenantMetric tokens =
      metric<T>("output_tokens_per_s", "output_tokens_per_s", "1/s",
                "output tokens of completed requests per second of the measured window", Ty::f64,
                F::rate, [](const T& t) -> MetricValue { return t.output_tokens_per_s; });
  tokens.in_summary = [](const T& t) { return t.output_tokens_per_s > 0; };
  m.push_back(shown(tokens, TextTableId::llm, "tokens/s", "", "output_tokens_per_s"));
  m.push_back(shown(metric<T>("slo_violations", "slo_violations", "count",
                              "completed requests over an SLO target", Ty::i64, F::count,
                              [](const T& t) -> MetricValue { return t.slo_violations; }),
                    main, "SLO viol.", "", "slo_violations_count"));
  add_slo_targets(m);
  add_slo_verdicts(m);
  TenantMetric slo_met =
      metric<T>("slo_met", "slo_met", "", "every SLO target met (1), one missed (0), no SLO (-1)",
                Ty::flag, F::verdict, [](const T& t) -> MetricValue {
                  const TenantSlo slo = evaluate_slo(t);
                  return std::int64_t{!slo.has_slo() ? -1 : slo.met() ? 1 : 0};
                });
  slo_met.in_summary = [](const T& t) { return !t.slo_ns.empty(); };
  m.push_back(shown(slo_met, TextTableId::none, "", "", "slo_met"));
  TenantMetric slo_verdict = metric<T>(
      "slo_verdict", "slo_verdict", "",
      "met (every target shown met), missed (one missed) or inconclusive; '' without an SLO",
      Ty::text, F::verdict, [](const T& t) -> MetricValue {
        const TenantSlo slo = evaluate_slo(t);
        return std::string(slo.has_slo() ? verdict_name(slo.verdict()) : "");
      });
  slo_verdict.in_summary = [](const T& t) { return !t.slo_ns.empty(); };
  m.push_back(shown(slo_verdict, main, "SLO", "SLO", "slo_verdict"));
  m.push_back(shown(metric<T>("oom_events", "oom_events", "count",
                              "allocations refused for lack of device memory", Ty::i64, F::count,
                              [](const T& t) -> MetricValue { return t.oom_events; }),
                    main, "OOMs", "OOMs", "oom_events_count"));
  m.push_back(
      shown(metric<T>("gpu_seconds", "gpu_seconds", "s", "occupancy-weighted GPU time", Ty::f64,
                      F::count, [](const T& t) -> MetricValue { return t.gpu_seconds; }),
            TextTableId::none, "", "", "gpu_seconds_s"));
  m.push_back(shown(metric<T>("cost", "cost", "USD",
                              "the tenant's share of its GPU's cost_per_hour ($/h) over the "
                              "measured window",
                              Ty::f64, F::count, [](const T& t) -> MetricValue { return t.cost; }),
                    TextTableId::none, "", "", "cost_usd"));
  return m;
}

std::vector<DeviceMetric> build_device_metrics() {
  using D = DeviceResult;
  using F = MetricFormat;
  using Ty = MetricType;
  constexpr auto main = TextTableId::main;
  std::vector<DeviceMetric> m;
  m.push_back(shown(metric<D>("name", "", "", "device name (gpu0, gpu0/1)", Ty::text, F::text,
                              [](const D& d) -> MetricValue { return d.name; }),
                    main, "device"));
  m.push_back(shown(metric<D>("profile", "profile", "", "device profile or MIG profile", Ty::text,
                              F::text, [](const D& d) -> MetricValue { return d.profile; }),
                    main, "profile", "profile"));
  m.push_back(shown(metric<D>("sharing", "sharing", "", "sharing mode", Ty::text, F::text,
                              [](const D& d) -> MetricValue { return d.sharing; }),
                    main, "sharing", "sharing"));
  m.push_back(
      shown(metric<D>("sms", "sms", "count", "streaming multiprocessors of the device", Ty::i32,
                      F::count, [](const D& d) -> MetricValue { return std::int64_t{d.sms}; }),
            main, "SMs"));
  m.push_back(shown(metric<D>("memory_bytes", "memory_bytes", "bytes", "device memory", Ty::i64,
                              F::bytes, [](const D& d) -> MetricValue { return d.memory_bytes; }),
                    main, "memory"));
  m.push_back(shown(metric<D>("sm_busy", "sm_busy", "1", "fraction of SM time busy", Ty::f64,
                              F::percent, [](const D& d) -> MetricValue { return d.sm_busy; }),
                    main, "SM busy", "SM busy", "sm_busy_fraction"));
  m.push_back(
      shown(metric<D>("useful_fraction", "useful_fraction", "1",
                      "fraction of SM time doing tenant work (not switching)", Ty::f64, F::percent,
                      [](const D& d) -> MetricValue { return d.useful_fraction; }),
            main, "useful", "useful"));
  m.push_back(
      shown(metric<D>("dram_busy", "dram_busy", "1", "fraction of HBM bandwidth in use", Ty::f64,
                      F::percent, [](const D& d) -> MetricValue { return d.dram_busy; }),
            main, "DRAM busy", "DRAM busy", "dram_busy_fraction"));
  m.push_back(shown(
      metric<D>("memory_peak_bytes", "memory_peak_bytes", "bytes", "peak allocated device memory",
                Ty::i64, F::bytes, [](const D& d) -> MetricValue { return d.memory_peak_bytes; }),
      main, "peak memory"));
  m.push_back(shown(
      metric<D>("context_switches", "context_switches", "count", "time-slice context switches",
                Ty::i64, F::count, [](const D& d) -> MetricValue { return d.context_switches; }),
      main, "ctx switches", "ctx switches"));
  m.push_back(shown(metric<D>("switch_overhead_ns", "switch_overhead_ns", "ns",
                              "time spent switching contexts", Ty::i64, F::duration,
                              [](const D& d) -> MetricValue { return d.switch_overhead_ns; }),
                    main, "switch overhead"));
  // Power and clocks (models/gpu/power.hpp): JSON and CSV only, where the board's power is
  // modelled (the HDF5 device table keeps its columns).
  for (const bool clock : {true, false}) {
    DeviceMetric power =
        clock ? metric<D>("clock_mhz", "clock_mhz", "MHz", "SM clock of the device's board",
                          Ty::f64, F::number, [](const D& d) -> MetricValue { return d.clock_mhz; })
              : metric<D>("board_power_w", "board_power_w", "W",
                          "mean draw of the device's board (all its MIG instances)", Ty::f64,
                          F::number, [](const D& d) -> MetricValue { return d.board_power_w; });
    power.h5 = false;
    power.csv = power.column;
    power.in_summary = [](const D& d) { return d.clock_mhz > 0; };
    m.push_back(std::move(power));
  }
  return m;
}

// Columns of the record tables (not metrics: one row per request, event, kernel, sample).
const std::map<std::string, std::pair<std::string, std::string>>& record_columns() {
  static const std::map<std::string, std::pair<std::string, std::string>> known = {
      {"tenant", {"index", "tenant index: element of /tenant_names, row of /tenants; -1: none"}},
      {"device", {"", "index into /devices rows, -1: none"}},
      {"request_id", {"", "request number within its tenant, in arrival order"}},
      {"kernel_index", {"", "kernel position within its request"}},
      {"arrival_ns", {"ns", "simulated time the request arrived"}},
      {"start_ns", {"ns", "simulated time its first kernel started; -1: never started"}},
      {"finish_ns", {"ns", "simulated time it completed or failed; -1: never"}},
      {"time_ns", {"ns", "simulated time"}},
      {"status", {"", "enum completed / failed / unfinished"}},
      {"kind", {"", "enum oom / kill / fault / reject / restart / preempt"}},
      {"detail", {"", "free text"}},
      {"memory_used_bytes", {"bytes", "allocated device memory"}},
      {"key", {"", "SLO key: p99 (latency), ttft_p99, tpot_p99, ..."}},
      {"target_ns", {"ns", "SLO target"}},
      {"value_ns", {"ns", "measured quantile; -1: no samples"}},
      {"samples", {"count", "samples behind the measured quantile"}},
      {"low_ns", {"ns", "lower confidence bound of the quantile; -1: none"}},
      {"high_ns", {"ns", "upper confidence bound of the quantile; -1: too few samples"}},
      {"verdict", {"", "enum met / missed / inconclusive"}},
      {"met", {"", "1: verdict met (high_ns <= target_ns), 0: missed or inconclusive"}},
  };
  return known;
}

}  // namespace

const std::vector<TenantMetric>& tenant_metrics() {
  static const std::vector<TenantMetric> table = build_tenant_metrics();
  return table;
}

const std::vector<DeviceMetric>& device_metrics() {
  static const std::vector<DeviceMetric> table = build_device_metrics();
  return table;
}

nlohmann::ordered_json metric_table_json() {
  static constexpr const char* kTypes[] = {"text", "i32", "i64", "f64", "flag"};
  static constexpr const char* kFormats[] = {"text",   "count",   "number", "duration", "rate",
                                             "factor", "percent", "bytes",  "verdict",  "interval"};
  static constexpr const char* kTables[] = {"", "main", "llm"};
  Json out = Json::array();
  auto add = [&](const char* scope, const auto& m) {
    Json row = Json::object();
    row["scope"] = scope;
    row["column"] = m.column;
    row["json"] = m.json;
    row["unit"] = m.unit;
    row["description"] = m.description;
    row["type"] = kTypes[static_cast<int>(m.type)];
    row["h5"] = m.h5;
    // How the text tables show it (Python's report and frames use the same choices).
    row["format"] = kFormats[static_cast<int>(m.format)];
    row["table"] = kTables[static_cast<int>(m.table)];
    row["header"] = m.header;
    row["compare"] = m.compare;
    row["csv"] = m.csv;
    row["interval_of"] = m.interval_of;
    out.push_back(std::move(row));
  };
  for (const TenantMetric& m : tenant_metrics()) add("tenant", m);
  for (const DeviceMetric& m : device_metrics()) add("device", m);
  return out;
}

std::pair<std::string, std::string> column_meta(const std::string& table,
                                                const std::string& column) {
  if (table == "tenants") {
    for (const TenantMetric& m : tenant_metrics()) {
      if (m.column == column) return {m.unit, m.description};
    }
  }
  if (table == "devices") {
    for (const DeviceMetric& m : device_metrics()) {
      if (m.column == column) return {m.unit, m.description};
    }
  }
  if (const auto it = record_columns().find(column); it != record_columns().end()) {
    return it->second;
  }
  for (const DeviceMetric& m : device_metrics()) {  // timeseries: sm_busy, dram_busy
    if (m.column == column) return {m.unit, m.description};
  }
  return {"", ""};
}

const nlohmann::ordered_json* json_at(const nlohmann::ordered_json& object,
                                      const std::string& path) {
  const Json* at = &object;
  std::size_t begin = 0;
  while (true) {
    if (!at->is_object()) return nullptr;
    const std::size_t dot = path.find('.', begin);
    const auto it = at->find(path.substr(begin, dot == std::string::npos ? dot : dot - begin));
    if (it == at->end()) return nullptr;
    at = &*it;
    if (dot == std::string::npos) return at;
    begin = dot + 1;
  }
}

}  // namespace gpumux
