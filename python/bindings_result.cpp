// gpumux._gpumux, the RunResult class (bound from bindings.cpp): one simulation's results as
// read-only fields, the summary (JSON text, text table), the tenant and device rows of the metric
// table (one dict per row, keys = the HDF5 columns), the request, kernel, event and timeseries
// records as NumPy arrays (copied out of the RunResult vectors), and save() (the HDF5 file).
#include "bindings_result.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "models/output/metric_table.hpp"
#include "models/output/result_io.hpp"
#include "models/run/slo.hpp"

namespace gpumux {

namespace {

/// A NumPy array copied from `n` values produced by `get(i)`.
template <class T, class Get>
py::array_t<T> make_array(std::size_t n, Get get) {
  py::array_t<T> out(static_cast<py::ssize_t>(n));
  T* data = out.mutable_data();
  for (std::size_t i = 0; i < n; ++i) data[i] = get(i);
  return out;
}

// One dict per row, keys = the HDF5 columns of the metric table (models/output/metric_table.hpp).
template <class Row>
py::list metric_rows(const std::vector<Metric<Row>>& metrics, const std::vector<Row>& rows) {
  py::list out;
  for (const Row& r : rows) {
    py::dict row;
    for (const Metric<Row>& m : metrics) {
      if (!m.h5) continue;
      const MetricValue value = m.get(r);
      py::object cell = py::none();
      if (const auto* i = std::get_if<std::int64_t>(&value)) cell = py::int_(*i);
      if (const auto* d = std::get_if<double>(&value)) cell = py::float_(*d);
      if (const auto* t = std::get_if<std::string>(&value)) cell = py::str(*t);
      row[m.column.c_str()] = cell;
    }
    out.append(row);
  }
  return out;
}

}  // namespace

void bind_run_result(py::module_& m) {
  py::class_<RunResult, ResultPtr>(m, "RunResult",
                                   "One simulation's results (C++ RunResult); see gpumux.Result")
      .def_readonly("scenario_name", &RunResult::scenario_name)
      .def_readonly("seed", &RunResult::seed)
      .def_readonly("status", &RunResult::status)
      .def_readonly("sim_time_ns", &RunResult::sim_time_ns)
      .def_readonly("event_count", &RunResult::events)
      .def_readonly("wall_s", &RunResult::wall_s)
      .def_readwrite("strategy", &RunResult::strategy)
      .def_readonly("scenario_yaml", &RunResult::scenario_yaml)
      .def_readonly("calibration", &RunResult::calibration)
      .def(
          "summary_json", [](const RunResult& r) { return summary_json(r).dump(); },
          "The summary (docs/metrics.md) as a JSON string (identical to `gpumux run --json`).")
      .def(
          "summary_table", [](const RunResult& r) { return summary_table(r); },
          "The text table `gpumux run` prints.")
      .def("tenant_names",
           [](const RunResult& r) {
             std::vector<std::string> names;
             for (const TenantResult& t : r.tenants) names.push_back(t.name);
             return names;
           })
      .def("device_names",
           [](const RunResult& r) {
             std::vector<std::string> names;
             for (const DeviceResult& d : r.devices) names.push_back(d.name);
             return names;
           })
      .def(
          "tenants", [](const RunResult& r) { return metric_rows(tenant_metrics(), r.tenants); },
          "One dict per tenant, keys = the HDF5 /tenants columns (the metric table).")
      .def(
          "devices", [](const RunResult& r) { return metric_rows(device_metrics(), r.devices); },
          "One dict per device, keys = the HDF5 /devices columns (the metric table).")
      .def(
          "slos",
          [](const RunResult& r) {
            // Columns of the HDF5 /slos table: one row per SLO target.
            py::dict out;
            py::list tenant, key, target, value, samples, low, high, verdict, met;
            const std::vector<TenantSlo> slos = evaluate_slos(r);
            for (std::size_t t = 0; t < slos.size(); ++t) {
              for (const SloCheck& c : slos[t].checks) {
                tenant.append(t);
                key.append(c.key);
                target.append(c.target_ns);
                value.append(c.value_ns.value_or(-1));
                samples.append(c.samples);
                low.append(c.low_ns.value_or(-1));
                high.append(c.high_ns.value_or(-1));
                verdict.append(static_cast<int>(c.verdict));
                met.append(c.met() ? 1 : 0);
              }
            }
            out["tenant"] = tenant;
            out["key"] = key;
            out["target_ns"] = target;
            out["value_ns"] = value;
            out["samples"] = samples;
            out["low_ns"] = low;
            out["high_ns"] = high;
            out["verdict"] = verdict;
            out["met"] = met;
            return out;
          },
          "dict of lists, the HDF5 /slos columns: tenant (index), key, target_ns, value_ns "
          "(-1: no samples), samples, low_ns and high_ns (the confidence interval; -1: no "
          "bound), verdict (index into SLO_VERDICTS), met (1: verdict met)")
      .def(
          "requests",
          [](const RunResult& r) {
            const auto& q = r.requests;
            py::dict out;
            out["tenant"] =
                make_array<std::uint32_t>(q.size(), [&](std::size_t i) { return q[i].tenant; });
            out["request_id"] =
                make_array<std::uint64_t>(q.size(), [&](std::size_t i) { return q[i].request_id; });
            out["arrival_ns"] =
                make_array<std::int64_t>(q.size(), [&](std::size_t i) { return q[i].arrival_ns; });
            out["start_ns"] =
                make_array<std::int64_t>(q.size(), [&](std::size_t i) { return q[i].start_ns; });
            out["finish_ns"] =
                make_array<std::int64_t>(q.size(), [&](std::size_t i) { return q[i].finish_ns; });
            out["status"] = make_array<std::uint8_t>(
                q.size(), [&](std::size_t i) { return static_cast<std::uint8_t>(q[i].status); });
            return out;
          },
          "dict of NumPy arrays: tenant (index into tenant_names()), request_id, arrival_ns, "
          "start_ns, finish_ns (-1 if never), status (0 completed, 1 failed, 2 unfinished)")
      .def(
          "events",
          [](const RunResult& r) {
            const auto& e = r.events_log;
            py::dict out;
            out["time_ns"] =
                make_array<std::int64_t>(e.size(), [&](std::size_t i) { return e[i].time_ns; });
            out["kind"] = make_array<std::uint8_t>(
                e.size(), [&](std::size_t i) { return static_cast<std::uint8_t>(e[i].kind); });
            out["tenant"] =
                make_array<std::int32_t>(e.size(), [&](std::size_t i) { return e[i].tenant; });
            out["device"] =
                make_array<std::int32_t>(e.size(), [&](std::size_t i) { return e[i].device; });
            py::list detail;
            for (const EventRecord& x : e) detail.append(x.detail);
            out["detail"] = detail;
            return out;
          },
          "dict: time_ns, kind (0 oom, 1 kill, 2 fault, 3 reject, 4 restart), tenant, device "
          "(indices, -1 = none) as NumPy arrays, detail as a list of str")
      .def("timeseries",
           [](const RunResult& r) {
             // Devices' order first (as the HDF5 writer), then any other sampled series.
             std::vector<std::string> names;
             for (const DeviceResult& d : r.devices) names.push_back(d.name);
             for (const auto& [name, samples] : r.timeseries) {
               if (std::find(names.begin(), names.end(), name) == names.end())
                 names.push_back(name);
             }
             static const std::vector<TimeseriesSample> kNone;
             py::dict out;
             for (const std::string& name : names) {
               const auto it = r.timeseries.find(name);
               const auto& s = it != r.timeseries.end() ? it->second : kNone;
               py::dict series;
               series["time_ns"] =
                   make_array<std::int64_t>(s.size(), [&](std::size_t i) { return s[i].time_ns; });
               series["sm_busy"] =
                   make_array<double>(s.size(), [&](std::size_t i) { return s[i].sm_busy; });
               series["dram_busy"] =
                   make_array<double>(s.size(), [&](std::size_t i) { return s[i].dram_busy; });
               series["memory_used_bytes"] = make_array<std::int64_t>(
                   s.size(), [&](std::size_t i) { return s[i].memory_used_bytes; });
               out[name.c_str()] = series;
             }
             return out;
           })
      .def("kernels",
           [](const RunResult& r) {
             const auto& k = r.kernels;
             py::dict out;
             out["tenant"] =
                 make_array<std::uint32_t>(k.size(), [&](std::size_t i) { return k[i].tenant; });
             out["request_id"] = make_array<std::uint64_t>(
                 k.size(), [&](std::size_t i) { return k[i].request_id; });
             out["kernel_index"] = make_array<std::uint32_t>(
                 k.size(), [&](std::size_t i) { return k[i].kernel_index; });
             out["device"] =
                 make_array<std::int32_t>(k.size(), [&](std::size_t i) { return k[i].device; });
             out["start_ns"] =
                 make_array<std::int64_t>(k.size(), [&](std::size_t i) { return k[i].start_ns; });
             out["finish_ns"] =
                 make_array<std::int64_t>(k.size(), [&](std::size_t i) { return k[i].finish_ns; });
             return out;
           })
      .def(
          "save",
          [](const RunResult& r, const std::string& path) {
            py::gil_scoped_release release;
            write_result_h5(path, r);
          },
          py::arg("path"), "Writes the HDF5 result file, exactly as `gpumux run -o PATH`.")
      .def("__repr__", [](const RunResult& r) {
        return "<gpumux._gpumux.RunResult " + r.scenario_name + " " + r.status + ", " +
               std::to_string(r.tenants.size()) + " tenant(s), " +
               std::to_string(r.requests.size()) + " request(s)>";
      });
}

}  // namespace gpumux
