// gpumux._gpumux, the cluster part (bound from bindings.cpp): the cluster replay as one call
// (run_cluster), and the same replay split for Dask (python/gpumux/_dask_cluster.py): the
// replay once (cluster_replay), then its workload pods' device simulation by node groups
// (simulate_cluster_nodes, a pure function of the scenario, the placement as bytes and the
// group's nodes: what a Dask task carries), the groups' numbers gathered back as bytes
// (ClusterReplay.apply) into one result bit-identical to the single-process run.
#include "bindings_cluster.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "models/app/application.hpp"
#include "models/cluster/cluster_metrics.hpp"
#include "models/cluster/cluster_output.hpp"
#include "models/cluster/cluster_run.hpp"
#include "models/cluster/workload_pods.hpp"

namespace gpumux {
namespace {

/// {'summary': JSON text, 'pods': columns, 'timeseries': columns} of a replay.
py::dict cluster_run_dict(const cluster::ClusterResult& r, const cluster::ClusterMetrics& metrics) {
  py::dict pods;
  auto col = [&](const char* name, auto get) {
    py::list l;
    for (const cluster::PodRecord& p : r.pods) l.append(get(p));
    pods[name] = l;
  };
  col("name", [](const cluster::PodRecord& p) { return p.name; });
  col("class", [](const cluster::PodRecord& p) { return p.pod_class; });
  col("pool", [](const cluster::PodRecord& p) { return p.pool; });
  col("node", [](const cluster::PodRecord& p) { return p.node_name; });
  col("gpus", [](const cluster::PodRecord& p) { return p.gpus; });
  col("priority", [](const cluster::PodRecord& p) { return p.priority; });
  col("arrival_ns", [](const cluster::PodRecord& p) { return p.arrival; });
  col("start_ns", [](const cluster::PodRecord& p) { return p.start; });
  col("end_ns", [](const cluster::PodRecord& p) { return p.end; });
  col("failed_at_ns", [](const cluster::PodRecord& p) { return p.failed_at; });
  col("gpu_milli", [](const cluster::PodRecord& p) { return p.gpu_milli; });
  col("vram_allocated_bytes", [](const cluster::PodRecord& p) { return p.vram_allocated_bytes; });
  col("evictions", [](const cluster::PodRecord& p) { return p.evictions; });
  col("spans_nodes", [](const cluster::PodRecord& p) { return p.spans_nodes; });
  col("allreduce_step_ns", [](const cluster::PodRecord& p) { return p.allreduce_step_ns; });
  col("pending_reason", [](const cluster::PodRecord& p) { return p.pending_reason; });
  col("workload_device", [](const cluster::PodRecord& p) { return p.workload_device; });
  col("workload_completed", [](const cluster::PodRecord& p) { return p.workload_completed; });
  col("latency_p50_ns", [](const cluster::PodRecord& p) { return p.latency_p50_ns; });
  col("latency_p90_ns", [](const cluster::PodRecord& p) { return p.latency_p90_ns; });
  col("latency_p99_ns", [](const cluster::PodRecord& p) { return p.latency_p99_ns; });
  col("latency_p999_ns", [](const cluster::PodRecord& p) { return p.latency_p999_ns; });
  col("latency_max_ns", [](const cluster::PodRecord& p) { return p.latency_max_ns; });
  col("latency_mean_ns", [](const cluster::PodRecord& p) { return p.latency_mean_ns; });
  py::list series;  // per pod: its latency series as bytes (b"": no workload)
  for (const cluster::PodRecord& p : r.pods) series.append(py::bytes(p.latency_series));
  py::dict ts;
  auto tcol = [&](const char* name, auto get) {
    py::list l;
    for (const cluster::ClusterSample& x : r.samples) l.append(get(x));
    ts[name] = l;
  };
  tcol("time_ns", [](const cluster::ClusterSample& x) { return x.time; });
  tcol("gpu_milli_total", [](const cluster::ClusterSample& x) { return x.gpu_milli_total; });
  tcol("gpu_milli_allocated",
       [](const cluster::ClusterSample& x) { return x.gpu_milli_allocated; });
  tcol("gpus_allocated", [](const cluster::ClusterSample& x) { return x.gpus_allocated; });
  tcol("fragmentation_milli",
       [](const cluster::ClusterSample& x) { return x.fragmentation_milli; });
  tcol("unusable_milli", [](const cluster::ClusterSample& x) { return x.unusable_milli; });
  tcol("pending", [](const cluster::ClusterSample& x) { return x.pending; });
  tcol("running", [](const cluster::ClusterSample& x) { return x.running; });
  tcol("active_nodes", [](const cluster::ClusterSample& x) { return x.active_nodes; });
  py::dict out;
  out["summary"] = cluster::cluster_summary_json(r, metrics).dump();
  out["pods"] = pods;
  out["timeseries"] = ts;
  out["latency_series"] = series;
  return out;
}

/// A replay whose workload pods are simulated elsewhere (Dask tasks), then gathered here.
struct ClusterReplay {
  cluster::ClusterSpec spec;
  cluster::ClusterResult result;
  double replay_s = 0;  ///< wall time of load + replay
};

}  // namespace

ScenarioRequest make_request(const std::string& scenario, bool is_path,
                             const std::vector<std::string>& overrides,
                             const std::optional<std::uint64_t>& seed,
                             const std::string& source_name) {
  ScenarioRequest request;
  request.scenario = scenario;
  request.is_path = is_path;
  request.source_name = source_name;
  request.overrides = overrides;
  request.seed = seed;  // as the CLI's --seed: a last override of the master seed
  return request;
}

void bind_cluster(py::module_& m) {
  m.def(
      "run_cluster",
      [](const std::string& scenario, bool is_path, const std::vector<std::string>& overrides,
         const std::string& source_name) {
        const ScenarioRequest request =
            make_request(scenario, is_path, overrides, std::nullopt, source_name);
        ClusterRun run;
        {
          py::gil_scoped_release release;
          run = simulate_cluster_request(request);
        }
        return cluster_run_dict(run.result, run.metrics);
      },
      py::arg("scenario"), py::arg("is_path"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("source_name") = std::string("<text>"),
      "Replays a cluster scenario and simulates its workload pods (GIL released): {'summary': "
      "JSON text, 'pods': columns, 'timeseries': columns}.");

  py::class_<ClusterReplay>(m, "ClusterReplay",
                            "A cluster replay whose workload pods' device simulation is run "
                            "by node groups elsewhere (python/gpumux/_dask_cluster.py).")
      .def_readonly("replay_s", &ClusterReplay::replay_s, "wall seconds of load + replay")
      .def(
          "placement",
          [](const ClusterReplay& r) {
            std::string bytes;
            {
              py::gil_scoped_release release;
              bytes = cluster::encode_workload_placement(r.spec, r.result);
            }
            return py::bytes(bytes);
          },
          "The workload pods' placement as bytes (what simulate_cluster_nodes needs).")
      .def(
          "plan",
          [](ClusterReplay& r, int shards) {
            cluster::WorkloadShardPlan plan;
            {
              py::gil_scoped_release release;
              plan = cluster::plan_workload_shards(r.spec, r.result, shards);
              cluster::apply_workload_window(plan, r.result);  // the SLO tally's window
            }
            py::dict out;
            out["nodes"] = plan.nodes;
            out["launches"] = plan.launches;
            out["pods"] = plan.pods;
            return out;
          },
          py::arg("shards"),
          "Node groups balanced by estimated launches (models/cluster/workload_pods.hpp "
          "WorkloadShardPlan): {'nodes': [[node, ...], ...], 'launches': [...], 'pods': [...]}; "
          "no group when no pod has a workload. Also sets the result's simulated window (what "
          "the SLO tally's 'run longer' hint reads), as the single-process run does.")
      .def(
          "apply",
          [](ClusterReplay& r, const py::bytes& stats) {
            const std::string bytes = stats;
            const std::vector<cluster::PodWorkloadStats> decoded =
                cluster::decode_workload_stats(bytes);
            cluster::apply_workload_stats(decoded, r.result);
            return decoded.size();
          },
          py::arg("stats"),
          "Writes a group's pod numbers (simulate_cluster_nodes' bytes) into the result; "
          "returns how many pods.")
      .def(
          "finish",
          [](const ClusterReplay& r) {
            cluster::ClusterMetrics metrics;
            {
              py::gil_scoped_release release;
              metrics = cluster::cluster_metrics(r.result);
            }
            return cluster_run_dict(r.result, metrics);
          },
          "The metrics, then the same dict as run_cluster.");

  m.def(
      "cluster_replay",
      [](const std::string& scenario, bool is_path, const std::vector<std::string>& overrides,
         const std::string& source_name) {
        const ScenarioRequest request =
            make_request(scenario, is_path, overrides, std::nullopt, source_name);
        auto replay = std::make_unique<ClusterReplay>();
        {
          py::gil_scoped_release release;
          const auto begin = std::chrono::steady_clock::now();
          replay->spec = load_cluster_request(request);
          replay->result = cluster::run_cluster(replay->spec);
          replay->replay_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        }
        return replay;
      },
      py::arg("scenario"), py::arg("is_path"), py::arg("overrides") = std::vector<std::string>{},
      py::arg("source_name") = std::string("<text>"),
      "Loads and replays a cluster scenario, its workload pods not yet simulated (GIL "
      "released).");
  m.def(
      "simulate_cluster_nodes",
      [](const std::string& scenario, bool is_path, const std::vector<std::string>& overrides,
         const std::string& source_name, const py::bytes& placement,
         const std::vector<int>& nodes) {
        const ScenarioRequest request =
            make_request(scenario, is_path, overrides, std::nullopt, source_name);
        const std::string placed_bytes = placement;
        std::string out;
        {
          py::gil_scoped_release release;
          const cluster::ClusterSpec spec = load_cluster_request(request);
          const cluster::ClusterResult placed = cluster::decode_workload_placement(placed_bytes);
          out =
              cluster::encode_workload_stats(cluster::simulate_workload_nodes(spec, placed, nodes));
        }
        return py::bytes(out);
      },
      py::arg("scenario"), py::arg("is_path"), py::arg("overrides"), py::arg("source_name"),
      py::arg("placement"), py::arg("nodes"),
      "The workload pods on NODES simulated alone (GIL released), their numbers as bytes for "
      "ClusterReplay.apply: a pure function of its arguments (a Dask task).");
  m.def(
      "latency_series_quantiles",
      [](const std::vector<py::bytes>& series, const std::vector<double>& qs) {
        for (const double q : qs) {
          if (!(q >= 0 && q <= 1)) throw py::value_error("quantiles must be in [0, 1]");
        }
        const std::vector<std::string> bytes(series.begin(), series.end());
        Percentiles merged = cluster::merge_latency_series(bytes);
        py::dict out;
        std::vector<std::int64_t> values(qs.size(), 0);
        merged.quantiles(qs.data(), qs.size(), values.data());
        out["count"] = merged.count();
        out["exact"] = merged.exact();
        out["quantiles"] = values;
        return out;
      },
      py::arg("series"), py::arg("quantiles"),
      "The latency series (PodRecord::latency_series bytes) merged in order (Percentiles::merge), "
      "and their nearest-rank quantiles: {'count', 'exact' (False: within 1/256), "
      "'quantiles': [ns, ...]}. ValueError for a q outside [0, 1]; RuntimeError for a corrupt "
      "series.");
}

}  // namespace gpumux
