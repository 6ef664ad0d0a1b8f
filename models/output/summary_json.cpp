// The JSON summary (SPEC §4): run fields, then one object per tenant and per device whose keys
// come from the metric table (metric_table.cpp).
#include <type_traits>

#include "models/output/metric_table.hpp"
#include "models/output/result_io.hpp"

namespace gpumux {

namespace {

using Json = nlohmann::ordered_json;

Json to_json(const MetricValue& value, MetricType type) {
  return std::visit(
      [type](const auto& v) -> Json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          if (type == MetricType::flag) return v < 0 ? Json(nullptr) : Json(v > 0);
          return v;
        } else {
          return v;
        }
      },
      value);
}

// Sets OBJECT[a][b]... for the dotted PATH "a.b", creating the objects on the way (in order).
void set_path(Json& object, const std::string& path, Json value) {
  Json* at = &object;
  std::size_t begin = 0;
  for (std::size_t dot; (dot = path.find('.', begin)) != std::string::npos; begin = dot + 1) {
    Json& next = (*at)[path.substr(begin, dot - begin)];
    if (!next.is_object()) next = Json::object();
    at = &next;
  }
  (*at)[path.substr(begin)] = std::move(value);
}

template <class Row>
Json row_json(const std::vector<Metric<Row>>& metrics, const Row& row) {
  Json j = Json::object();
  for (const Metric<Row>& m : metrics) {
    if (m.json.empty() || (m.in_summary && !m.in_summary(row))) continue;
    set_path(j, m.json, to_json(m.get(row), m.type));
  }
  return j;
}

}  // namespace

nlohmann::ordered_json percentiles_json(const PercentileProvenance& p) {
  Json j = Json::object();
  j["confidence"] = p.confidence;
  j["mode"] = p.mode;
  j["method"] = p.method;
  if (p.sketched_series > 0) {
    j["relative_error"] = p.relative_error;
    j["sketched_series"] = p.sketched_series;
    j["series"] = p.series;
  }
  return j;
}

nlohmann::ordered_json summary_json(const RunResult& result) {
  Json j = Json::object();
  j["scenario"] = result.scenario_name;
  if (!result.strategy.empty()) j["strategy"] = result.strategy;
  j["seed"] = result.seed;
  j["status"] = result.status;
  j["sim_time_ns"] = result.sim_time_ns;
  j["warmup_ns"] = result.warmup_ns;
  j["duration_ns"] = result.duration_ns;
  j["events"] = result.events;
  j["wall_s"] = result.wall_s;
  j["gpu_cost"] = result.gpu_cost;
  if (!result.notes.empty()) j["notes"] = result.notes;
  j["percentiles"] = percentiles_json(result.percentiles);
  // Appended, not inserted by key: an ordered_json object is a vector searched linearly on
  // every `obj[key]`, which made the summary quadratic in tenants and devices (issue 12). Names
  // are unique (the loader refuses duplicates), so nothing is lost.
  Json tenants = Json::object();
  auto& tenant_rows = tenants.get_ref<Json::object_t&>();
  tenant_rows.reserve(result.tenants.size());
  for (const TenantResult& t : result.tenants)
    tenant_rows.emplace_back(t.name, row_json(tenant_metrics(), t));
  j["tenants"] = std::move(tenants);
  Json devices = Json::object();
  auto& device_rows = devices.get_ref<Json::object_t&>();
  device_rows.reserve(result.devices.size());
  for (const DeviceResult& d : result.devices)
    device_rows.emplace_back(d.name, row_json(device_metrics(), d));
  j["devices"] = std::move(devices);
  return j;
}

}  // namespace gpumux
