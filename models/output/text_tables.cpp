// Text output: the run table, the compare table and CSV, all read from summaries (so `gpumux
// report` prints a stored file the same way), columns from the metric table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/output/metric_table.hpp"
#include "models/output/result_io.hpp"
#include "models/output/slo_tally.hpp"
#include "models/output/text_format.hpp"
#include "models/run/slo.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

namespace {

using Json = nlohmann::ordered_json;

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

std::string strategy_label(const Json& summary, std::size_t index) {
  const std::string label = text(summary, "strategy", "");
  return label.empty() ? fmt::format("run{}", index + 1) : label;
}

// The columns of one of the run's text tables: the metrics shown there, in table order.
template <class Row>
std::vector<const Metric<Row>*> columns(const std::vector<Metric<Row>>& metrics,
                                        TextTableId table) {
  std::vector<const Metric<Row>*> out;
  for (const Metric<Row>& m : metrics) {
    if (m.table == table) out.push_back(&m);
  }
  return out;
}

// A table of summary objects (NAME -> object), one row each; the "name" column is the key.
template <class Row>
TextTable object_table(const std::vector<const Metric<Row>*>& cols) {
  std::vector<std::string> headers;
  std::size_t left = 0;
  for (const auto* m : cols) {
    headers.push_back(m->header);
    if (m->format == MetricFormat::text && left == headers.size() - 1) ++left;
  }
  return TextTable(std::move(headers), left);
}

// A statistic over completed requests (the latency percentiles, mean and max; the slowdown) of
// a tenant that completed none (OOM-killed at start, failed by a fault) does not apply: the
// summary keeps its 0 (the JSON's types do not change), the tables print "—", not "0 ns".
const char* const kNotApplicable = "—";

bool over_completed_requests(const std::string& json_key) {
  return json_key.rfind("latency_ns.", 0) == 0 || json_key == "slowdown_mean";
}

bool completed_none(const Json& tenant) {
  const Json* completed = field(tenant, "completed");
  return completed != nullptr && completed->is_number() && completed->get<double>() == 0;
}

std::string tenant_cell(MetricFormat format, const std::string& json_key, const Json& tenant) {
  if (completed_none(tenant) && over_completed_requests(json_key)) return kNotApplicable;
  return format_metric(format, json_at(tenant, json_key));
}

template <class Row>
std::vector<std::string> object_row(const std::vector<const Metric<Row>*>& cols,
                                    const std::string& name, const Json& object) {
  std::vector<std::string> row;
  for (const auto* m : cols) {
    if (m->format == MetricFormat::interval) {
      row.push_back(format_interval_ns(json_at(object, m->interval_of + "_low"),
                                       json_at(object, m->interval_of + "_high")));
      continue;
    }
    row.push_back(m->column == "name" ? name : tenant_cell(m->format, m->json, object));
  }
  return row;
}

// The SLO block: one row per target of every tenant with an `slo:`: the target, the measured
// percentile, its samples and confidence interval, and the verdict (files written before
// verdicts had intervals: the `met` flag).
std::string slo_table(const Json& tenants, const Json& percentiles) {
  const double confidence = number(percentiles, "confidence");
  TextTable table(
      {"tenant", "SLO", "target", "measured", "samples",
       std::isnan(confidence) ? std::string("CI") : fmt::format("{:g}% CI", 100 * confidence),
       "verdict"},
      2);
  bool any = false;
  for (const auto& [name, t] : tenants.items()) {
    for (const auto& [key, check] : child(t, "slo").items()) {
      const Json* verdict = field(check, "verdict");
      table.add_row({name, slo_label(key),
                     format_metric(MetricFormat::duration, field(check, "target_ns")),
                     format_metric(MetricFormat::duration, field(check, "value_ns")),
                     format_metric(MetricFormat::count, field(check, "samples")),
                     field(check, "samples") == nullptr
                         ? std::string("-")
                         : format_interval_ns(field(check, "low_ns"), field(check, "high_ns")),
                     format_metric(MetricFormat::verdict,
                                   verdict != nullptr ? verdict : field(check, "met"))});
      any = true;
    }
  }
  return any ? std::string("\n") + table.render() : std::string();
}

}  // namespace

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

  const Json& tenant_objects = child(summary, "tenants");
  const auto tenant_cols = columns(tenant_metrics(), TextTableId::main);
  TextTable tenants = object_table(tenant_cols);
  for (const auto& [name, t] : tenant_objects.items()) {
    tenants.add_row(object_row(tenant_cols, name, t));
  }
  out += '\n';
  out += tenants.render();
  out += slo_table(tenant_objects, child(summary, "percentiles"));
  // Inconclusive is neither met nor missed: say so, and what would decide it.
  const SloTally tally =
      tally_slos(slos_of_summary(summary), number(child(summary, "percentiles"), "confidence"));
  if (tally.inconclusive > 0) {
    out += "SLOs: " +
           slo_tally_text(tally, checked::nanos_saturating(number(summary, "duration_ns")),
                          checked::nanos_saturating(number(summary, "warmup_ns"))) +
           "\n";
  }

  // LLM tenants: time to first token, time per output token.
  auto llm_cols = columns(tenant_metrics(), TextTableId::llm);
  llm_cols.insert(llm_cols.begin(), &tenant_metrics().front());  // the name
  TextTable llm = object_table(llm_cols);
  bool any_llm = false;
  for (const auto& [name, t] : tenant_objects.items()) {
    if (field(t, "ttft_ns") == nullptr) continue;
    llm.add_row(object_row(llm_cols, name, t));
    any_llm = true;
  }
  if (any_llm) {
    out += '\n';
    out += llm.render();
  }

  const auto device_cols = columns(device_metrics(), TextTableId::main);
  TextTable devices = object_table(device_cols);
  for (const auto& [name, d] : child(summary, "devices").items()) {
    devices.add_row(object_row(device_cols, name, d));
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

namespace {

// One row of compare's overview: the bottom line of one strategy.
std::vector<std::string> overview_row(const std::string& label, const Json& summary, bool& any_slo,
                                      bool& any_best_effort) {
  std::vector<std::string> gpus;
  double busy = 0;
  int devices = 0;
  for (const auto& [name, d] : child(summary, "devices").items()) {
    const std::string gpu = name.substr(0, name.find('/'));
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
    busy += number(d, "sm_busy");
    ++devices;
  }
  // [0]: tenants with an `slo:` (summary key slo_ns), [1]: best-effort; NaN = none such.
  const double none = std::numeric_limits<double>::quiet_NaN();
  double throughput[2] = {none, none}, worst_p99[2] = {none, none};
  double failed = 0, violations = 0, cost = 0;
  int with_slo = 0, met = 0, inconclusive = 0;
  bool in_group[2] = {false, false};
  for (const auto& [name, t] : child(summary, "tenants").items()) {
    const int group = field(t, "slo_ns") != nullptr ? 0 : 1;
    (group == 0 ? any_slo : any_best_effort) = true;
    in_group[group] = true;
    throughput[group] =
        (std::isnan(throughput[group]) ? 0.0 : throughput[group]) + number(t, "throughput_per_s");
    if (!completed_none(t)) {  // a tenant that completed nothing has no p99 (not 0 ns)
      const double p99 = number(child(t, "latency_ns"), "p99");
      worst_p99[group] = std::isnan(worst_p99[group]) ? p99 : std::max(worst_p99[group], p99);
    }
    failed += number(t, "failed");
    violations += number(t, "slo_violations");
    if (group == 0) {
      ++with_slo;
      const Json* verdict = field(t, "slo_met");
      if (verdict != nullptr && verdict->is_boolean() && verdict->get<bool>()) ++met;
      const Json* tenant_verdict = field(t, "slo_verdict");
      if (tenant_verdict != nullptr && tenant_verdict->is_string() &&
          tenant_verdict->get<std::string>() == "inconclusive") {
        ++inconclusive;
      }
    }
  }
  if (const Json* c = field(summary, "gpu_cost"); c != nullptr) cost = c->get<double>();
  auto worst = [&](int group) {
    return in_group[group] && std::isnan(worst_p99[group]) ? std::string(kNotApplicable)
                                                           : format_duration_ns(worst_p99[group]);
  };
  return {label,
          format_count(static_cast<double>(gpus.size())),
          format_count(devices),
          format_rate(throughput[0]),
          worst(0),
          format_rate(throughput[1]),
          worst(1),
          format_count(failed),
          format_count(violations),
          with_slo == 0      ? std::string("-")
          : inconclusive > 0 ? fmt::format("{}/{} ({} inconcl.)", met, with_slo, inconclusive)
                             : fmt::format("{}/{}", met, with_slo),
          format_percent(devices > 0 ? busy / devices : 0.0),
          fmt::format("${:.4g}", cost)};
}

}  // namespace

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
  // must not hide, or stand in for, the latency-critical tenants'), the failures, SLO misses
  // and tenants meeting every SLO target, and the cost (0 without cost_per_hour).
  TextTable overview(
      {"strategy", "GPUs", "devices", "SLO thrpt", "SLO worst p99", "BE thrpt", "BE worst p99",
       "failed", "SLO viol.", "SLOs met", "mean SM busy", "GPU cost (USD)"},
      1);
  bool any_slo = false, any_best_effort = false;
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    overview.add_row(overview_row(labels[i], summaries[i], any_slo, any_best_effort));
  }
  out += '\n';
  out += overview.render();
  out += fmt::format(
      "SLO: tenants with an slo: block{}; BE: best-effort tenants, without one{}; SLOs met: "
      "tenants meeting every target / tenants with an SLO\n"
      "inconcl.: a confidence interval straddles a target: neither met nor missed\n",
      any_slo ? "" : " (none)", any_best_effort ? "" : " (none)");
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    const SloTally tally = tally_slos(slos_of_summary(summaries[i]),
                                      number(child(summaries[i], "percentiles"), "confidence"));
    if (tally.inconclusive == 0) continue;
    out += fmt::format(
        "SLOs {}: {}\n", labels[i],
        slo_tally_text(tally, checked::nanos_saturating(number(summaries[i], "duration_ns")),
                       checked::nanos_saturating(number(summaries[i], "warmup_ns"))));
  }

  // Tenants in order of first appearance; a tenant missing under a strategy shows "-".
  std::vector<std::string> tenant_names;
  for (const Json& s : summaries) {
    for (const auto& [name, t] : child(s, "tenants").items()) {
      if (std::find(tenant_names.begin(), tenant_names.end(), name) == tenant_names.end()) {
        tenant_names.push_back(name);
      }
    }
  }
  for (const std::string& tenant : tenant_names) {
    std::vector<std::string> headers = {"tenant " + tenant};
    headers.insert(headers.end(), labels.begin(), labels.end());
    TextTable table(headers, 1);
    for (const TenantMetric& m : tenant_metrics()) {
      if (m.compare.empty()) continue;
      std::vector<std::string> row = {std::string("  ") + m.compare};
      for (const Json& s : summaries) {
        const Json* t = field(child(s, "tenants"), tenant.c_str());
        row.push_back(t != nullptr ? tenant_cell(m.format, m.json, *t) : "-");
      }
      table.add_row(std::move(row));
    }
    out += '\n';
    out += table.render();
  }

  std::vector<std::string> headers = {"strategy", "device"};
  std::size_t left = 2;
  for (const DeviceMetric& m : device_metrics()) {
    if (m.compare.empty()) continue;
    headers.push_back(m.compare);
    if (m.format == MetricFormat::text && left == headers.size() - 1) ++left;
  }
  TextTable devices(headers, left);
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    for (const auto& [name, d] : child(summaries[i], "devices").items()) {
      std::vector<std::string> row = {labels[i], name};
      for (const DeviceMetric& m : device_metrics()) {
        if (!m.compare.empty()) row.push_back(format_metric(m.format, json_at(d, m.json)));
      }
      devices.add_row(std::move(row));
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

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

/// A JSON number or string as a CSV field; empty for null/absent.
std::string csv_value(const Json* value) {
  if (value == nullptr || value->is_null()) return "";
  if (value->is_string()) return csv_field(value->get<std::string>());
  if (value->is_number_float()) return fmt::format("{}", value->get<double>());
  return value->dump();
}

}  // namespace

std::string summaries_csv(const std::vector<nlohmann::ordered_json>& summaries,
                          bool with_strategy) {
  std::string out = "scenario,";
  if (with_strategy) out += "strategy,";
  out += "tenant";
  for (const TenantMetric& m : tenant_metrics()) {
    if (!m.csv.empty()) out += ',' + m.csv;
  }
  for (const DeviceMetric& m : device_metrics()) {
    if (!m.csv.empty()) out += std::string(",device_") + m.csv;
  }
  out += "\n";
  for (const Json& summary : summaries) {
    const Json& tenants = child(summary, "tenants");
    for (const auto& [name, t] : tenants.items()) {
      out += csv_value(field(summary, "scenario"));
      out += ",";
      if (with_strategy) {
        const Json* strategy = field(summary, "strategy");
        out +=
            strategy == nullptr || strategy->is_null() ? std::string("as-is") : csv_value(strategy);
        out += ",";
      }
      out += csv_field(name);
      for (const TenantMetric& m : tenant_metrics()) {
        if (!m.csv.empty()) out += ',' + csv_value(json_at(t, m.json));
      }
      const Json* device_name = field(t, "device");
      const Json& device =
          child(child(summary, "devices"), device_name != nullptr && device_name->is_string()
                                               ? device_name->get_ref<const std::string&>().c_str()
                                               : "");
      for (const DeviceMetric& m : device_metrics()) {
        if (!m.csv.empty()) out += ',' + csv_value(json_at(device, m.json));
      }
      out += "\n";
    }
  }
  return out;
}

std::vector<std::string> slo_miss_messages(const std::vector<TenantSlo>& slos,
                                           const std::string& prefix, double confidence) {
  std::vector<std::string> out;
  auto ns = [](std::int64_t v) { return format_duration_ns(static_cast<double>(v)); };
  auto bound = [&](const std::optional<std::int64_t>& v) { return v ? ns(*v) : std::string("-"); };
  for (const TenantSlo& tenant : slos) {
    for (const SloCheck& c : tenant.checks) {
      if (c.met()) continue;
      const std::string interval =
          fmt::format("{:g}% CI [{}, {}] from {} samples", 100 * confidence, bound(c.low_ns),
                      bound(c.high_ns), c.samples);
      if (!c.value_ns) {
        out.push_back(
            fmt::format("SLO missed: {}{} {}: no completed request measured it "
                        "(target {})",
                        prefix, tenant.tenant, c.label, ns(c.target_ns)));
      } else if (c.verdict == SloVerdict::missed) {
        out.push_back(fmt::format("SLO missed: {}{} {} {} > target {} ({})", prefix, tenant.tenant,
                                  c.label, ns(*c.value_ns), ns(c.target_ns), interval));
      } else {
        out.push_back(
            fmt::format("SLO inconclusive: {}{} {} {}, target {}: the {} {} (lengthen duration)",
                        prefix, tenant.tenant, c.label, ns(*c.value_ns), ns(c.target_ns), interval,
                        c.high_ns ? "straddles the target" : "has no upper bound"));
      }
    }
  }
  return out;
}

}  // namespace gpumux
