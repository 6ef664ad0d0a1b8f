// gpumux._gpumux: thin pybind11 bindings over the front door the CLI uses
// (models/app/application.hpp: load -> overrides -> resolve -> simulate / compare / validate)
// and the result writers (summary_json, write_result_h5).
//
// The pure-Python package (python/gpumux/) builds the user API (Result, DataFrames, compare,
// sweep) on top of this module. Everything crosses as str, dict, list or NumPy arrays (copied
// out of the RunResult vectors). The scenario loading, resolution and simulation run with the
// GIL released; a progress hook re-acquires it briefly every 4096 events to deliver
// Ctrl-C (KeyboardInterrupt) and to call an optional Python progress callback.
// UserError (InputError, OutputError) is translated to gpumux._gpumux.ScenarioError (a
// ValueError subclass) whose message is the one-line "FILE:LINE:COLUMN: KEY.PATH: message".
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/app/application.hpp"
#include "models/app/calibrate.hpp"
#include "models/app/microbench_fit.hpp"
#include "models/config/profile_loader.hpp"
#include "sim/util/strings.hpp"
#include "bindings_cluster.hpp"
#include "bindings_result.hpp"
#include "models/cluster/cluster_output.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/node_state.hpp"
#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "models/plan/planner.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "models/output/metric_table.hpp"
#include "models/run/slo.hpp"
#include "models/strategies/registry.hpp"

#ifndef GPUMUX_VERSION
#define GPUMUX_VERSION "0.0.0"
#endif

namespace py = pybind11;

namespace gpumux {

namespace {

/// Runs a simulation with the GIL released. Called with the GIL held.
/// Ctrl-C (on the main thread) stops the run and raises KeyboardInterrupt; an exception from the
/// Python `progress` callback stops the run and is re-raised.
class GuardedRun {
 public:
  explicit GuardedRun(py::object progress) : progress_(std::move(progress)) {}

  RunControl control() {
    RunControl o;
    o.interrupt = &stop_;
    o.progress = [this](Nanos now, Nanos horizon, std::uint64_t events) {
      if (stop_.load()) return;
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        error_ = std::make_exception_ptr(py::error_already_set());
        stop_.store(true);
        return;
      }
      if (!progress_.is_none()) {
        try {
          progress_(now, horizon, events);
        } catch (...) {
          error_ = std::current_exception();
          stop_.store(true);
        }
      }
    };
    return o;
  }

  bool stopped() const { return stop_.load(); }

  /// Re-raises what stopped the run, if anything. GIL held.
  void check() {
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

  ~GuardedRun() {
    // error_ may hold Python references; drop them with the GIL held (callers hold it).
    error_ = nullptr;
  }

 private:
  py::object progress_;
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

ResultPtr run(const std::string& scenario, bool is_path, const std::vector<std::string>& overrides,
              std::optional<std::uint64_t> seed, const std::string& source_name,
              py::object progress, bool record_requests) {
  const ScenarioRequest request = make_request(scenario, is_path, overrides, seed, source_name);
  GuardedRun guard(std::move(progress));
  RunControl control = guard.control();
  control.record_requests = record_requests;
  control.record_kernels = record_requests;  // output.kernels' records: kept with the requests
  auto result = std::make_shared<RunResult>();
  {
    py::gil_scoped_release release;
    *result = simulate_resolved(resolve_request(request), control);
  }
  guard.check();
  return result;
}

std::vector<ResultPtr> compare(const std::string& scenario, bool is_path,
                               const std::vector<std::string>& strategies,
                               const std::vector<std::string>& overrides,
                               std::optional<std::uint64_t> seed, const std::string& source_name,
                               py::object progress, bool record_requests) {
  const ScenarioRequest request = make_request(scenario, is_path, overrides, seed, source_name);
  GuardedRun guard(std::move(progress));
  RunControl control = guard.control();
  control.record_requests = record_requests;
  control.record_kernels = record_requests;  // output.kernels' records: kept with the requests
  std::vector<ResultPtr> results;
  {
    py::gil_scoped_release release;
    // Every variant is resolved before any runs, so a bad strategy fails first (as the CLI).
    const std::vector<ResolvedScenario> variants = resolve_variants(request, strategies);
    for (RunResult& result : simulate_variants(variants, strategies, control)) {
      results.push_back(std::make_shared<RunResult>(std::move(result)));
    }
  }
  guard.check();
  return results;
}

// `gpumux inspect`: one dict per kernel class (models/scenario/inspect.hpp), the columns of
// gpumux.inspect()'s DataFrame.
py::list inspect(const std::string& scenario, bool is_path,
                 const std::vector<std::string>& overrides, const std::string& source_name) {
  std::optional<Inspection> inspection;
  {
    py::gil_scoped_release release;
    inspection.emplace(
        inspect_request(make_request(scenario, is_path, overrides, {}, source_name)));
  }
  py::list rows;
  for (const InspectRow& r : inspection->rows) {
    py::dict row;
    row["tenant"] = r.tenant;
    row["device"] = r.device;
    row["kernel"] = r.kernel;
    row["count"] = r.count;
    row["duration_ns"] = r.duration_ns;
    row["duration_origin"] = r.duration_origin;
    row["sm_fraction"] = r.sm_fraction;
    row["sm_fraction_origin"] = r.sm_fraction_origin;
    row["waves"] = r.waves;
    row["waves_origin"] = r.waves_origin;
    row["memory_bound"] = r.memory_bound;
    row["memory_bound_origin"] = r.memory_bound_origin;
    row["busy_share"] = r.busy_share;  // -1: serial phases
    row["busy_share_origin"] = r.busy_share_origin;
    row["working_set_bytes"] = r.working_set;
    row["working_set_origin"] = r.working_set_origin;
    row["repeat"] = r.repeat;
    row["repeat_origin"] = r.repeat_origin;
    row["launch"] = r.launch;
    row["launch_origin"] = r.launch_origin;
    row["memory_bytes"] = r.memory;
    row["memory_origin"] = r.memory_origin;
    row["memory_per_request_bytes"] = r.memory_per_request;
    row["memory_per_request_origin"] = r.memory_per_request_origin;
    row["blocks"] = r.blocks;
    row["blocks_per_sm"] = r.blocks_per_sm;
    row["implementation"] = r.implementation;
    row["runtime"] = r.runtime;
    row["runtime_origin"] = r.runtime_origin;
    row["lengths"] = r.lengths;
    row["host_gap_ns"] = r.host_gap_ns;
    row["host_gap_origin"] = r.host_gap_origin;
    rows.append(row);
  }
  return rows;
}

py::dict validate(const std::string& scenario, bool is_path,
                  const std::vector<std::string>& overrides, const std::string& source_name) {
  const ScenarioRequest request = make_request(scenario, is_path, overrides, {}, source_name);
  if (is_cluster_request(request)) {
    // A cluster scenario: `gpumux validate`'s checks and answer (its JSON), not a refusal as a
    // scenario without GPUs or tenants (issue 36).
    std::optional<cluster::ClusterSpec> spec;
    {
      py::gil_scoped_release release;
      spec.emplace(load_cluster_request(request));
    }
    py::dict out;
    out["status"] = "ok";
    out["kind"] = "cluster";
    out["pools"] = spec->pools.size();
    out["pods"] = spec->pods.size();
    out["policy"] = std::string(cluster::policy_name(spec->scheduler.policy));
    out["advertised"] = cluster::advertised_lines(*spec);
    return out;
  }
  std::optional<Validation> validation;
  {
    py::gil_scoped_release release;
    validation.emplace(validate_request(request));
  }
  const Scenario& s = validation->scenario;
  py::list devices;
  const std::vector<ResolvedDevice> none;
  for (const ResolvedDevice& d : validation->resolved ? validation->resolved->devices : none) {
    py::list tenants;
    for (int t : d.tenants) tenants.append(s.tenants[static_cast<std::size_t>(t)].name);
    py::dict device;
    device["name"] = d.geometry.name;
    device["profile"] = d.geometry.profile;
    device["sms"] = d.geometry.sms;
    device["sharing"] = std::string(d.sharing.mode_name());
    device["tenants"] = tenants;
    devices.append(device);
  }
  py::list tenants;
  for (const TenantSpec& t : s.tenants) tenants.append(t.name);
  py::dict out;
  out["name"] = s.name;
  out["seed"] = s.seed;
  out["duration_ns"] = s.duration;
  out["warmup_ns"] = s.warmup;
  out["gpus"] = s.gpus.size();
  out["devices"] = devices;
  out["tenants"] = tenants;
  out["planning"] = validation->planning;
  py::list warnings;
  for (const std::string& w : validation->warnings) warnings.append(w);
  out["warnings"] = warnings;
  return out;
}

std::vector<RunResult> unwrap(const std::vector<ResultPtr>& results) {
  std::vector<RunResult> out;
  out.reserve(results.size());
  for (const ResultPtr& r : results) {
    if (!r) throw std::invalid_argument("None in the list of results");
    out.push_back(*r);
  }
  return out;
}

const CalibrateOptionNames kPythonCalibrateNames{"output", "profile=", "profile='h100-sxm-80gb'"};

// `gpumux calibrate` on calibration/microbench's CSVs (models/app/microbench_fit.hpp): the CLI's
// --json "microbench" block, the report and, with `profile`, that profile with the fitted values
// (the files' own date, run-info.csv, when they carry one).
py::dict calibrate_microbench(const CalibrationInputs& data, const FitKeys& fit,
                              const std::string& given_profile, bool writing,
                              const std::string& date) {
  const MicrobenchFit bench = fit_microbench(data.microbench);
  const std::string profile =
      calibration_base_profile({}, bench.gpu, given_profile, writing, kPythonCalibrateNames);
  if (!profile.empty()) (void)load_device_profile(profile);
  py::dict out = py::module_::import("json").attr("loads")(microbench_json(bench).dump());
  out["report"] = microbench_report(bench);
  if (writing) {
    out["profile_text"] =
        with_microbench_values(device_profile_text(profile), bench, fit.microbench,
                               bench.date.empty() ? date : bench.date);
  }
  return out;
}

// `gpumux calibrate` (models/app/calibrate.hpp) on the data as the CLI reads it (folders
// expanded, each file classified, the fit keys checked): the fit, its cross-validation, the
// report and, when `writing`, the fitted profile's text.
py::dict calibrate_points(const std::vector<std::string>& given,
                          const std::vector<std::string>& fit_given, int iterations,
                          const std::string& given_profile, bool writing, const std::string& date) {
  if (iterations < 1 || iterations > 10) throw InputError("iterations: expected 1 to 10");
  const CalibrationInputs data = classify_calibration_inputs(given);
  const FitKeys fit = split_fit_keys(fit_given, data, "fit");
  refuse_mixed_calibration_inputs(data, "output=MY.yaml");
  if (!data.microbench.empty()) {
    return calibrate_microbench(data, fit, given_profile, writing, date);
  }
  const std::vector<std::string>& files = data.catalog;
  const std::vector<CalibrationPoint> points = read_calibration_points(files);
  const std::string profile =
      calibration_base_profile(points, "", given_profile, writing, kPythonCalibrateNames);
  // As the CLI: a point's unknown profile names its file and line, and a `profile=` that does
  // not load is refused even when nothing is written (it was ignored).
  for (const CalibrationPoint& p : points) {
    try {
      (void)load_device_profile(p.profile);
    } catch (const InputError& e) {
      point_error(p.file, p.line, "profile", e.what());
    }
  }
  if (!given_profile.empty()) {
    try {
      (void)load_device_profile(given_profile);
    } catch (const InputError& e) {
      throw InputError("profile: " + std::string(e.what()));
    }
  }
  CalibrationOptions options;
  options.fit = fit.catalog;
  options.iterations = iterations;
  CalibrationResult r;
  std::string report, text;
  {
    py::gil_scoped_release release;
    r = calibrate(points, options);
    report = calibration_report(r);
    if (writing) text = fitted_profile_text(profile, r, files, date);
  }
  py::dict parameters, errors;
  for (const CalibrationParameter& p : r.parameters) {
    py::dict d;
    d["before_ns"] = p.before_ns;
    d["fitted_ns"] = p.fitted_ns;
    d["fold_min_ns"] = p.fold_min_ns;
    d["fold_max_ns"] = p.fold_max_ns;
    d["points"] = p.informed_by;
    parameters[py::str(p.key)] = d;
  }
  for (const auto& e : r.errors) {
    py::dict d;
    d["points"] = e.points;
    d["before"] = e.before;
    d["in_sample"] = e.in_sample;
    d["out_of_sample"] = e.out_of_sample;
    errors[py::str(e.mechanism)] = d;
  }
  py::list rows;
  for (const CalibrationRow& row : r.rows) {
    py::dict d;
    d["id"] = row.point->id;
    d["source"] = row.point->source;
    d["measured_s"] = row.point->target_s;
    d["before_s"] = row.before_s;
    d["in_sample_s"] = row.in_sample_s;
    d["out_of_sample_s"] = row.out_of_sample_s;
    d["depends_on"] = row.depends_on;
    rows.append(d);
  }
  py::dict out;
  out["parameters"] = parameters;
  out["errors"] = errors;
  out["points"] = rows;
  out["sources"] = r.sources;
  out["simulations"] = r.simulations;
  out["report"] = report;
  if (writing) out["profile_text"] = text;
  return out;
}

}  // namespace
}  // namespace gpumux

PYBIND11_MODULE(_gpumux, m) {
  using namespace gpumux;
  m.doc() = "gpumux C++ core (use the `gpumux` package, not this module, directly)";

  py::register_exception<UserError>(m, "ScenarioError",
                                    PyExc_ValueError);  // InputError, OutputError

  bind_run_result(m);  // the RunResult class (bindings_result.cpp)

  m.def(
      "is_cluster",
      [](const std::string& scenario, bool is_path, const std::string& source_name) {
        return is_cluster_request(make_request(scenario, is_path, {}, std::nullopt, source_name));
      },
      py::arg("scenario"), py::arg("is_path"), py::arg("source_name") = std::string("<text>"),
      "Whether the scenario has a `cluster:` section (a cluster replay).");
  bind_cluster(m);  // run_cluster, cluster_replay, simulate_cluster_nodes (bindings_cluster.cpp)
  m.def("run", &run, py::arg("scenario"), py::arg("is_path"),
        py::arg("overrides") = std::vector<std::string>{}, py::arg("seed") = py::none(),
        py::arg("source_name") = std::string("<text>"), py::arg("progress") = py::none(),
        py::arg("record_requests") = true,
        "Loads (path or YAML text), resolves and simulates one scenario with the GIL released. "
        "overrides: list of 'KEY=VALUE'; seed: overrides the master seed (as --seed); "
        "progress: optional callable(now_ns, horizon_ns, events); record_requests: keep one "
        "record per request and, with output.kernels, per kernel (False: the summary and tables "
        "only, as gpumux run without -o); kept records count in the work budget's memory.");
  m.def("compare", &compare, py::arg("scenario"), py::arg("is_path"), py::arg("strategies"),
        py::arg("overrides") = std::vector<std::string>{}, py::arg("seed") = py::none(),
        py::arg("source_name") = std::string("<text>"), py::arg("progress") = py::none(),
        py::arg("record_requests") = true,
        "The same tenants under each strategy (as `gpumux compare`): a list of RunResult, "
        "strategy labels set; record_requests as run().");
  m.def("validate", &validate, py::arg("scenario"), py::arg("is_path"),
        py::arg("overrides") = std::vector<std::string>{},
        py::arg("source_name") = std::string("<text>"),
        "Loads and resolves without running (as `gpumux validate`): a dict describing devices.");
  m.def("inspect", &inspect, py::arg("scenario"), py::arg("is_path"),
        py::arg("overrides") = std::vector<std::string>{},
        py::arg("source_name") = std::string("<text>"),
        "Every kernel class and the origin of each parameter (as `gpumux inspect`): a list of "
        "dicts.");
  m.def("calibrate", &calibrate_points, py::arg("data"), py::arg("fit"), py::arg("iterations") = 3,
        py::arg("profile") = std::string(), py::arg("write") = false,
        py::arg("date") = std::string(),
        "Fits the time-alone parameters to calibration CSV files or folders (as `gpumux "
        "calibrate`); `write` adds the fitted profile's text.");
  m.def("parse_strategy_list", &parse_strategy_list, py::arg("text"));
  m.def(
      "strategies", [] { return compare_strategy_names(); },
      "Every strategy name compare() accepts, from the strategy registry.");
  m.def("sharing_modes", &strategy_names,
        "Every `sharing.mode` a scenario may name, from the strategy registry.");
  m.def(
      "save_compare",
      [](const std::string& path, const std::vector<ResultPtr>& results) {
        const std::vector<RunResult> copies = unwrap(results);
        py::gil_scoped_release release;
        write_results_h5(path, copies);
      },
      py::arg("path"), py::arg("results"),
      "Writes several results into one compare file (as `gpumux compare -o PATH`).");
  m.def(
      "compare_table",
      [](const std::vector<ResultPtr>& results) { return compare_table(unwrap(results)); },
      py::arg("results"));
  m.def(
      "summary_table_from_json",
      [](const std::string& json) {
        return summary_table_from_json(nlohmann::ordered_json::parse(json));
      },
      py::arg("summary_json"));
  m.def(
      "compare_table_from_json",
      [](const std::vector<std::string>& jsons) {
        std::vector<nlohmann::ordered_json> parsed;
        for (const std::string& j : jsons) parsed.push_back(nlohmann::ordered_json::parse(j));
        return compare_table_from_json(parsed);
      },
      py::arg("summary_jsons"));
  m.def(
      "plan",
      [](const std::string& scenario, bool is_path, const std::vector<std::string>& overrides,
         std::optional<std::uint64_t> seed, const std::string& source_name, int jobs,
         py::object batch_runner) {
        PlanOptions options;
        options.jobs = jobs;
        if (!batch_runner.is_none()) {
          // Called from the planner (GIL released): take the GIL for the Python runner (Dask).
          options.batch_runner = [batch_runner](const std::vector<std::string>& texts) {
            py::gil_scoped_acquire acquire;
            return batch_runner(texts).cast<std::vector<std::string>>();
          };
        }
        std::string json, table;
        {
          py::gil_scoped_release release;
          const PlanResult result =
              plan_request(make_request(scenario, is_path, overrides, seed, source_name), options);
          json = plan_json(result).dump();
          table = plan_table(result);
        }
        return py::make_tuple(json, table);
      },
      py::arg("scenario"), py::arg("is_path"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("seed") = py::none(), py::arg("source_name") = std::string("<text>"),
      py::arg("jobs") = 0, py::arg("batch_runner") = py::none(),
      "Plans a scenario with `plan:` (as `gpumux plan`): (JSON text, table text). "
      "batch_runner: optional callable(list of YAML texts) -> list of summary JSON texts "
      "(e.g. a Dask map); default: `jobs` worker processes forked from this one (threads where "
      "this process already has other threads).");
  m.def("version", [] { return std::string(GPUMUX_VERSION); });
  m.attr("__version__") = GPUMUX_VERSION;
  m.attr("REQUEST_STATUS") = py::tuple(
      py::cast(std::vector<std::string>(kRequestStatusNames.begin(), kRequestStatusNames.end())));
  m.attr("EVENT_KINDS") =
      py::tuple(py::cast(std::vector<std::string>(kEventKindNames.begin(), kEventKindNames.end())));
  m.attr("SLO_VERDICTS") = py::tuple(
      py::cast(std::vector<std::string>(kSloVerdictNames.begin(), kSloVerdictNames.end())));
  m.def(
      "metric_table", [] { return metric_table_json().dump(); },
      "The metric table as a JSON string: a list of {scope, column, json, unit, description, "
      "type, h5} (gpumux.metrics() gives it as a DataFrame).");
}
