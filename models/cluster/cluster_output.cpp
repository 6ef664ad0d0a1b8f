#include "models/cluster/cluster_output.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "models/cluster/pod_slo.hpp"
#include "models/output/result_io.hpp"
#include "models/output/slo_tally.hpp"
#include "models/output/text_format.hpp"
#include "sim/io/hdf5_file.hpp"
#include "sim/io/output_target.hpp"

namespace gpumux::cluster {
namespace {

using Json = nlohmann::ordered_json;

Json stats_json(const PendingStats& s) {
  Json j;
  j["class"] = s.pod_class;
  j["pods"] = s.pods;
  j["started"] = s.started;
  j["waited"] = s.waited;
  j["never_started"] = s.never_started;
  j["censored"] = s.censored;
  j["pending_p50_s"] = s.p50_s;
  j["pending_p90_s"] = s.p90_s;
  j["pending_p99_s"] = s.p99_s;
  j["pending_max_s"] = s.max_s;
  // true: the value is a lower bound (censored pods, docs/metrics.md "Cluster metrics").
  j["pending_p50_censored"] = s.p50_censored;
  j["pending_p90_censored"] = s.p90_censored;
  j["pending_p99_censored"] = s.p99_censored;
  j["pending_max_censored"] = s.max_censored;
  j["gpu_hours"] = s.gpu_hours;
  j["cost_allocated"] = s.cost_allocated;
  j["cost_used"] = s.cost_used;
  return j;
}

std::string money(double v, const std::string& currency) {
  return fmt::format("{:.2f} {}", v, currency);
}

std::size_t longest(std::size_t n, const std::function<std::size_t(std::size_t)>& len) {
  std::size_t m = 1;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, len(i));
  return m;
}

void units(h5::Dataset& d, const Json& u, const std::string& description) {
  d.set_attribute("units", u.dump());
  d.set_attribute("description", description);
}

}  // namespace

Json cluster_summary_json(const ClusterResult& r, const ClusterMetrics& m, bool interrupted) {
  Json j;
  j["kind"] = "cluster";
  j["status"] = interrupted ? "interrupted" : "complete";
  j["policy"] = r.policy;
  j["ignore_deletions"] = r.ignore_deletions;
  j["end_time_s"] = to_seconds(r.end_time);
  j["events"] = r.events;
  j["pods"] = m.all.pods;
  j["failed_on_arrival"] = m.failed;
  j["failed_at_admission"] = m.admission_failed;
  j["never_started"] = m.all.never_started;
  j["preemptions"] = r.preemptions;
  j["pending"] = stats_json(m.all);
  Json classes = Json::array();
  for (const PendingStats& s : m.classes) classes.push_back(stats_json(s));
  j["classes"] = classes;
  Json alloc;
  alloc["gpu_milli_final"] = m.allocation_final;
  alloc["gpu_milli_mean"] = m.allocation_mean;
  alloc["gpus_final"] = m.gpu_allocation_final;
  alloc["gpus_mean"] = m.gpu_allocation_mean;
  alloc["utilization_mean"] = m.utilization_mean;
  j["allocation"] = alloc;
  Json frag;
  frag["fgd_final_milli"] = m.fragmentation_final_milli;
  frag["fgd_mean_milli"] = m.fragmentation_mean_milli;
  frag["fgd_final_ratio"] = m.fragmentation_final_ratio;
  frag["unusable_final_milli"] = m.unusable_final_milli;
  frag["unusable_mean_milli"] = m.unusable_mean_milli;
  Json by = Json::object();
  for (const auto& [k, v] : m.fragmentation_final_by_resource) by[k] = v;
  frag["fgd_final_by_resource"] = by;
  Json un = Json::object();
  for (const auto& [k, v] : m.unusable_final_by_resource) un[k] = v;
  frag["unusable_final_by_resource"] = un;
  j["fragmentation"] = frag;
  Json cost;
  cost["currency"] = m.currency;
  cost["total"] = m.cost_total;
  cost["allocated"] = m.cost_allocated;
  cost["used"] = m.cost_used;
  cost["unallocated"] = m.cost_total - m.cost_allocated;
  Json pools = Json::array();
  for (const PoolRecord& p : r.pools) {
    Json pj;
    pj["pool"] = p.name;
    pj["gpu_model"] = p.gpu_model;
    pj["nodes_initial"] = p.nodes_initial;
    pj["nodes_peak"] = p.nodes_peak;
    pj["nodes_final"] = p.nodes_final;
    pj["scale_ups"] = p.scale_ups;
    pj["scale_downs"] = p.scale_downs;
    pj["node_hours"] = p.node_seconds / 3600.0;
    pj["cost"] = p.cost;
    pools.push_back(pj);
  }
  cost["pools"] = pools;
  Json vram;
  vram["gb_months_provisioned"] = m.vram_gb_months_provisioned;
  vram["gb_months_allocated"] = m.vram_gb_months_allocated;
  vram["gb_months_used"] = m.vram_gb_months_used;
  vram["per_gb_month_provisioned"] = m.usd_per_gb_month_provisioned;
  vram["per_gb_month_allocated"] = m.usd_per_gb_month_allocated;
  vram["per_gb_month_used"] = m.usd_per_gb_month_used;
  cost["vram"] = vram;
  j["cost"] = cost;
  Json reasons = Json::array();
  for (const auto& [why, n] : m.pending_reasons)
    reasons.push_back(Json{{"reason", why}, {"pods", n}});
  j["pending_reasons"] = reasons;
  Json admission = Json::array();
  for (const auto& [why, n] : m.admission_failures)
    admission.push_back(Json{{"reason", why}, {"pods", n}});
  j["admission_failures"] = admission;
  Json workload = Json::array();
  for (const PodRecord& p : r.pods) {
    if (p.workload_device.empty()) continue;
    Json entry{{"pod", p.name},
               {"device", p.workload_device},
               {"completed", p.workload_completed},
               {"latency_p50_ns", p.latency_p50_ns},
               {"latency_p90_ns", p.latency_p90_ns},
               {"latency_p99_ns", p.latency_p99_ns},
               {"latency_p999_ns", p.latency_p999_ns},
               {"latency_max_ns", p.latency_max_ns},
               {"latency_mean_ns", p.latency_mean_ns}};
    if (!p.workload_slo.empty()) {
      // As a run's tenant: per target its value, samples, interval and verdict; the pod's
      // verdict over them (missed, else inconclusive, else met).
      Json checks = Json::object();
      for (const SloCheck& c : p.workload_slo) {
        auto optional_ns = [](const std::optional<std::int64_t>& v) {
          return v ? Json(*v) : Json(nullptr);
        };
        checks[c.key] = Json{{"target_ns", c.target_ns},
                             {"value_ns", optional_ns(c.value_ns)},
                             {"samples", c.samples},
                             {"low_ns", optional_ns(c.low_ns)},
                             {"high_ns", optional_ns(c.high_ns)},
                             {"verdict", verdict_name(c.verdict)}};
      }
      entry["slo"] = checks;
      entry["slo_verdict"] = pod_verdict_text(p);
    }
    workload.push_back(entry);
  }
  if (!workload.empty()) {
    j["workload_pods"] = workload;
    const SloTally tally = tally_slos(pod_slos(r), kDefaultConfidence);
    if (tally.with_slo() > 0) {
      j["workload_slos"] = Json{{"met", tally.met},
                                {"missed", tally.missed},
                                {"inconclusive", tally.inconclusive},
                                {"summary", pod_slo_tally(r, kDefaultConfidence)}};
    }
  }
  return j;
}

std::string cluster_summary_table(const ClusterResult& r, const ClusterMetrics& m,
                                  bool interrupted) {
  std::string out = fmt::format("cluster replay: policy {}, {} pods, {} simulated{}\n", r.policy,
                                m.all.pods, format_duration_ns(static_cast<double>(r.end_time)),
                                r.ignore_deletions ? ", pods never deleted (FGD replay)" : "");
  if (interrupted) {
    out +=
        "status: interrupted (the workload pods' simulation stopped; their numbers cover the "
        "node groups finished before the signal)\n";
  }
  out += "\n";
  TextTable pending({"class", "pods", "started", "waited", "censored", "p50", "p90", "p99", "max",
                     "cost alloc", "cost used"},
                    1);
  // A censored quantile is a lower bound: ">=1h".
  auto wait = [](double seconds, bool censored) {
    return (censored ? ">=" : "") + format_duration_ns(seconds * 1e9);
  };
  auto row = [&](const PendingStats& s) {
    pending.add_row({s.pod_class, std::to_string(s.pods), std::to_string(s.started),
                     std::to_string(s.waited), std::to_string(s.censored),
                     wait(s.p50_s, s.p50_censored), wait(s.p90_s, s.p90_censored),
                     wait(s.p99_s, s.p99_censored), wait(s.max_s, s.max_censored),
                     money(s.cost_allocated, m.currency), money(s.cost_used, m.currency)});
  };
  for (const PendingStats& s : m.classes) row(s);
  if (m.classes.size() > 1) row(m.all);
  out += "pending time by pod class\n" + pending.render("  ");
  if (m.all.censored > 0) {
    out += fmt::format(
        "  {} pod(s) had not started by the end: their waits are censored at the end of the "
        "replay, and a quantile marked >= is a lower bound\n",
        m.all.censored);
  }
  out += "\n";
  out += fmt::format(
      "GPU allocation: {} of milli-GPUs at the end ({} time-weighted), {} of GPUs in use at the "
      "end; utilization {} (time-weighted)\n",
      format_percent(m.allocation_final), format_percent(m.allocation_mean),
      format_percent(m.gpu_allocation_final), format_percent(m.utilization_mean));
  out += fmt::format(
      "fragmentation (FGD, what occupancy strands): {} GPUs at the end ({} of the free "
      "capacity), {} GPUs "
      "time-weighted; free but unusable by any pending pod: {} GPUs at the end\n",
      format_si(m.fragmentation_final_milli / 1000.0), format_percent(m.fragmentation_final_ratio),
      format_si(m.fragmentation_mean_milli / 1000.0), format_si(m.unusable_final_milli / 1000.0));
  for (const auto& [res, v] : m.fragmentation_final_by_resource) {
    if (v > 0) out += fmt::format("  {}: {} GPUs fragmented\n", res, format_si(v / 1000.0));
  }
  out += "\n";
  TextTable pools({"pool", "gpu", "nodes", "peak", "final", "node-hours", "cost"}, 2);
  for (const PoolRecord& p : r.pools) {
    pools.add_row({p.name, p.gpu_model, std::to_string(p.nodes_initial),
                   std::to_string(p.nodes_peak), std::to_string(p.nodes_final),
                   format_si(p.node_seconds / 3600.0), money(p.cost, m.currency)});
  }
  out += "cost by pool\n" + pools.render("  ");
  out += fmt::format("cost: {} total, {} allocated to pods, {} by use, {} unallocated\n",
                     money(m.cost_total, m.currency), money(m.cost_allocated, m.currency),
                     money(m.cost_used, m.currency),
                     money(m.cost_total - m.cost_allocated, m.currency));
  if (m.vram_gb_months_provisioned > 0) {
    out += fmt::format(
        "VRAM: {:.4g} GB-months provisioned, {:.4g} allocated, {:.4g} used: {}/GB-month "
        "provisioned, {} allocated, {} used\n",
        m.vram_gb_months_provisioned, m.vram_gb_months_allocated, m.vram_gb_months_used,
        money(m.usd_per_gb_month_provisioned, m.currency),
        money(m.usd_per_gb_month_allocated, m.currency),
        money(m.usd_per_gb_month_used, m.currency));
  }
  TextTable work({"pod", "device", "completed", "p50", "p99", "SLO", "measured",
                  fmt::format("{:g}% CI", 100 * kDefaultConfidence), "verdict"},
                 2);
  bool any_work = false;
  for (const PodRecord& p : r.pods) {
    if (p.workload_device.empty()) continue;
    any_work = true;
    std::vector<std::string> row = {p.name, p.workload_device, std::to_string(p.workload_completed),
                                    format_duration_ns(static_cast<double>(p.latency_p50_ns)),
                                    format_duration_ns(static_cast<double>(p.latency_p99_ns))};
    if (p.workload_slo.empty()) {
      row.insert(row.end(), {"-", "-", "-", "-"});
      work.add_row(row);
      continue;
    }
    // One row per target (the first carries the pod's numbers), as a run's SLO table.
    for (std::size_t k = 0; k < p.workload_slo.size(); ++k) {
      const SloCheck& c = p.workload_slo[k];
      if (k > 0) row.assign(5, "");
      auto ns = [](const std::optional<std::int64_t>& v) {
        return v ? format_duration_ns(static_cast<double>(*v)) : std::string("-");
      };
      row.push_back(
          fmt::format("{} <= {}", c.label, format_duration_ns(static_cast<double>(c.target_ns))));
      row.push_back(ns(c.value_ns));
      row.push_back(fmt::format("[{}, {}]", ns(c.low_ns), ns(c.high_ns)));
      row.push_back(verdict_name(c.verdict));
      work.add_row(row);
    }
  }
  if (any_work) {
    out += "\nworkload pods on their placed GPUs\n" + work.render("  ");
    const std::string tally = pod_slo_tally(r, kDefaultConfidence);
    if (!tally.empty()) out += "  SLOs: " + tally + "\n";
  }
  if (!m.admission_failures.empty()) {
    out +=
        "\nfailed at admission (bound to a node, then failed by its kubelet: phase Failed, "
        "never started; recreate them with a request the node accepts)\n";
    for (const auto& [why, n] : m.admission_failures) {
      out += fmt::format("  {:>6} pods  {}\n", n, why);
    }
  }
  if (!m.pending_reasons.empty()) {
    out += "\ntop pending reasons\n";
    std::size_t shown = 0;
    for (const auto& [why, n] : m.pending_reasons) {
      if (shown++ == 5) break;
      out += fmt::format("  {:>6} pods  {}\n", n, why);
    }
  }
  return out;
}

void write_cluster_h5(const std::string& path, const ClusterResult& r, const ClusterMetrics& m,
                      bool interrupted) {
  replace_file_atomically(path, [&](const std::string& temp) {
    h5::File file = h5::File::create(temp);
    {
      h5::Group root = file.root();
      root.set_attribute("gpumux_version", ::gpumux::gpumux_version());
      root.set_attribute("kind", "cluster");
      root.set_attribute("status", interrupted ? "interrupted" : "complete");
      root.set_attribute("policy", r.policy);
      root.set_attribute("ignore_deletions", static_cast<std::int64_t>(r.ignore_deletions));
      root.set_attribute("end_time_ns", static_cast<std::int64_t>(r.end_time));
      root.set_attribute("events", static_cast<std::uint64_t>(r.events));
      root.write_string("summary", cluster_summary_json(r, m, interrupted).dump());
      h5::Group g = root.create_group("cluster");

      // /cluster/pods
      {
        const auto& pods = r.pods;
        const std::size_t n = pods.size();
        auto len = [&](auto field) {
          return longest(n, [&](std::size_t i) { return field(pods[i]).size(); });
        };
        const std::size_t l_name =
            len([](const PodRecord& p) -> const std::string& { return p.name; });
        const std::size_t l_class =
            len([](const PodRecord& p) -> const std::string& { return p.pod_class; });
        const std::size_t l_pool =
            len([](const PodRecord& p) -> const std::string& { return p.pool; });
        const std::size_t l_node =
            len([](const PodRecord& p) -> const std::string& { return p.node_name; });
        const std::size_t l_gpus =
            len([](const PodRecord& p) -> const std::string& { return p.gpus; });
        const std::size_t l_reason =
            len([](const PodRecord& p) -> const std::string& { return p.pending_reason; });
        const std::size_t l_msg =
            len([](const PodRecord& p) -> const std::string& { return p.pending_message; });
        h5::CompoundType t;
        const auto o_name = t.add_fixed_string("name", l_name);
        const auto o_class = t.add_fixed_string("class", l_class);
        const auto o_pool = t.add_fixed_string("pool", l_pool);
        const auto o_node = t.add_fixed_string("node", l_node);
        const auto o_gpus = t.add_fixed_string("gpus", l_gpus);
        const auto o_prio = t.add("priority", H5T_NATIVE_INT32);
        const auto o_arr = t.add("arrival_ns", H5T_NATIVE_INT64);
        const auto o_start = t.add("start_ns", H5T_NATIVE_INT64);
        const auto o_end = t.add("end_ns", H5T_NATIVE_INT64);
        const auto o_fail = t.add("failed_at_ns", H5T_NATIVE_INT64);
        const auto o_milli = t.add("gpu_milli", H5T_NATIVE_INT32);
        const auto o_va = t.add("vram_allocated_bytes", H5T_NATIVE_INT64);
        const auto o_vu = t.add("vram_used_bytes", H5T_NATIVE_INT64);
        const auto o_util = t.add("gpu_utilization", H5T_NATIVE_DOUBLE);
        const auto o_ev = t.add("evictions", H5T_NATIVE_INT32);
        const auto o_span = t.add("spans_nodes", H5T_NATIVE_INT8);
        const auto o_ar = t.add("allreduce_step_ns", H5T_NATIVE_INT64);
        const auto o_reason = t.add_fixed_string("pending_reason", l_reason);
        const auto o_msg = t.add_fixed_string("pending_message", l_msg);
        h5::Dataset d = g.write_table("pods", t, n, [&](std::byte* row, std::size_t i) {
          const PodRecord& p = pods[i];
          h5::put_string(row, o_name, l_name, p.name);
          h5::put_string(row, o_class, l_class, p.pod_class);
          h5::put_string(row, o_pool, l_pool, p.pool);
          h5::put_string(row, o_node, l_node, p.node_name);
          h5::put_string(row, o_gpus, l_gpus, p.gpus);
          h5::put(row, o_prio, static_cast<std::int32_t>(p.priority));
          h5::put(row, o_arr, static_cast<std::int64_t>(p.arrival));
          h5::put(row, o_start, static_cast<std::int64_t>(p.start));
          h5::put(row, o_end, static_cast<std::int64_t>(p.end));
          h5::put(row, o_fail, static_cast<std::int64_t>(p.failed_at));
          h5::put(row, o_milli, static_cast<std::int32_t>(p.gpu_milli));
          h5::put(row, o_va, static_cast<std::int64_t>(p.vram_allocated_bytes));
          h5::put(row, o_vu, static_cast<std::int64_t>(p.vram_used_bytes));
          h5::put(row, o_util, p.gpu_utilization);
          h5::put(row, o_ev, static_cast<std::int32_t>(p.evictions));
          h5::put(row, o_span, static_cast<std::int8_t>(p.spans_nodes));
          h5::put(row, o_ar, static_cast<std::int64_t>(p.allreduce_step_ns));
          h5::put_string(row, o_reason, l_reason, p.pending_reason);
          h5::put_string(row, o_msg, l_msg, p.pending_message);
        });
        units(d,
              Json{{"arrival_ns", "ns"},
                   {"start_ns", "ns (-1: never started)"},
                   {"end_ns", "ns (-1: running at the end or never started)"},
                   {"failed_at_ns",
                    "ns: first time it did not fit, or when its kubelet failed "
                    "it at admission (pending_reason UnexpectedAdmissionError); "
                    "-1: neither"},
                   {"gpu_milli", "milli-GPU"},
                   {"vram_allocated_bytes", "bytes"},
                   {"vram_used_bytes", "bytes"},
                   {"gpu_utilization", "fraction"},
                   {"allreduce_step_ns", "ns"}},
              "one row per pod (gang member): placement, times, pending reason");
      }
      // /cluster/timeseries
      {
        const auto& s = r.samples;
        h5::CompoundType t;
        const auto o_t = t.add("time_ns", H5T_NATIVE_INT64);
        const auto o_tot = t.add("gpu_milli_total", H5T_NATIVE_INT64);
        const auto o_al = t.add("gpu_milli_allocated", H5T_NATIVE_INT64);
        const auto o_gt = t.add("gpus_total", H5T_NATIVE_INT32);
        const auto o_ga = t.add("gpus_allocated", H5T_NATIVE_INT32);
        const auto o_used = t.add("gpu_milli_used", H5T_NATIVE_DOUBLE);
        const auto o_frag = t.add("fragmentation_milli", H5T_NATIVE_DOUBLE);
        const auto o_un = t.add("unusable_milli", H5T_NATIVE_DOUBLE);
        const auto o_pend = t.add("pending", H5T_NATIVE_INT32);
        const auto o_run = t.add("running", H5T_NATIVE_INT32);
        const auto o_act = t.add("active_nodes", H5T_NATIVE_INT32);
        const auto o_arr = t.add("arrived_gpu_milli", H5T_NATIVE_DOUBLE);
        std::vector<std::size_t> o_fr, o_ur;
        for (const std::string& res : r.resources) {
          o_fr.push_back(t.add(fmt::format("frag_{}", res), H5T_NATIVE_DOUBLE));
          o_ur.push_back(t.add(fmt::format("unusable_{}", res), H5T_NATIVE_DOUBLE));
        }
        h5::Dataset d =
            g.write_table("timeseries", t, s.size(), [&](std::byte* row, std::size_t i) {
              const ClusterSample& x = s[i];
              h5::put(row, o_t, static_cast<std::int64_t>(x.time));
              h5::put(row, o_tot, x.gpu_milli_total);
              h5::put(row, o_al, x.gpu_milli_allocated);
              h5::put(row, o_gt, static_cast<std::int32_t>(x.gpus_total));
              h5::put(row, o_ga, static_cast<std::int32_t>(x.gpus_allocated));
              h5::put(row, o_used, x.gpu_milli_used);
              h5::put(row, o_frag, x.fragmentation_milli);
              h5::put(row, o_un, x.unusable_milli);
              h5::put(row, o_pend, static_cast<std::int32_t>(x.pending));
              h5::put(row, o_run, static_cast<std::int32_t>(x.running));
              h5::put(row, o_act, static_cast<std::int32_t>(x.active_nodes));
              h5::put(row, o_arr, x.arrived_gpu_milli);
              for (std::size_t k = 0; k < o_fr.size(); ++k) {
                h5::put(
                    row, o_fr[k],
                    k < x.fragmentation_by_resource.size() ? x.fragmentation_by_resource[k] : 0.0);
                h5::put(row, o_ur[k],
                        k < x.unusable_by_resource.size() ? x.unusable_by_resource[k] : 0.0);
              }
            });
        units(d, Json{{"time_ns", "ns"}, {"*_milli", "milli-GPU"}},
              "cluster state per sample: allocation, FGD fragmentation, unusable capacity");
      }
      // /cluster/pools
      {
        const auto& p = r.pools;
        const std::size_t l_name =
            longest(p.size(), [&](std::size_t i) { return p[i].name.size(); });
        const std::size_t l_model =
            longest(p.size(), [&](std::size_t i) { return p[i].gpu_model.size(); });
        h5::CompoundType t;
        const auto o_name = t.add_fixed_string("name", l_name);
        const auto o_model = t.add_fixed_string("gpu_model", l_model);
        const auto o_gpn = t.add("gpus_per_node", H5T_NATIVE_INT32);
        const auto o_ni = t.add("nodes_initial", H5T_NATIVE_INT32);
        const auto o_np = t.add("nodes_peak", H5T_NATIVE_INT32);
        const auto o_nf = t.add("nodes_final", H5T_NATIVE_INT32);
        const auto o_su = t.add("scale_ups", H5T_NATIVE_INT32);
        const auto o_sd = t.add("scale_downs", H5T_NATIVE_INT32);
        const auto o_ns = t.add("node_seconds", H5T_NATIVE_DOUBLE);
        const auto o_cph = t.add("cost_per_hour", H5T_NATIVE_DOUBLE);
        const auto o_cost = t.add("cost", H5T_NATIVE_DOUBLE);
        h5::Dataset d = g.write_table("pools", t, p.size(), [&](std::byte* row, std::size_t i) {
          h5::put_string(row, o_name, l_name, p[i].name);
          h5::put_string(row, o_model, l_model, p[i].gpu_model);
          h5::put(row, o_gpn, static_cast<std::int32_t>(p[i].gpus_per_node));
          h5::put(row, o_ni, static_cast<std::int32_t>(p[i].nodes_initial));
          h5::put(row, o_np, static_cast<std::int32_t>(p[i].nodes_peak));
          h5::put(row, o_nf, static_cast<std::int32_t>(p[i].nodes_final));
          h5::put(row, o_su, static_cast<std::int32_t>(p[i].scale_ups));
          h5::put(row, o_sd, static_cast<std::int32_t>(p[i].scale_downs));
          h5::put(row, o_ns, p[i].node_seconds);
          h5::put(row, o_cph, p[i].cost_per_hour);
          h5::put(row, o_cost, p[i].cost);
        });
        units(d, Json{{"node_seconds", "s"}, {"cost_per_hour", m.currency}, {"cost", m.currency}},
              "one row per node pool: nodes, node time and cost");
      }
      // /cluster/pod_gpu: one interval per started pod (constant allocation while it runs).
      {
        std::vector<std::size_t> started;
        for (std::size_t i = 0; i < r.pods.size(); ++i) {
          if (r.pods[i].start >= 0) started.push_back(i);
        }
        h5::CompoundType t;
        const auto o_pod = t.add("pod", H5T_NATIVE_UINT32);
        const auto o_s = t.add("start_ns", H5T_NATIVE_INT64);
        const auto o_e = t.add("end_ns", H5T_NATIVE_INT64);
        const auto o_m = t.add("gpu_milli", H5T_NATIVE_INT32);
        const auto o_u = t.add("gpu_util", H5T_NATIVE_DOUBLE);
        const auto o_fb = t.add("fb_used_bytes", H5T_NATIVE_INT64);
        h5::Dataset d =
            g.write_table("pod_gpu", t, started.size(), [&](std::byte* row, std::size_t k) {
              const PodRecord& p = r.pods[started[k]];
              h5::put(row, o_pod, static_cast<std::uint32_t>(started[k]));
              h5::put(row, o_s, static_cast<std::int64_t>(p.start));
              h5::put(row, o_e, static_cast<std::int64_t>(p.end >= 0 ? p.end : r.end_time));
              h5::put(row, o_m, static_cast<std::int32_t>(p.gpu_milli));
              h5::put(row, o_u, p.gpu_utilization);
              h5::put(row, o_fb, static_cast<std::int64_t>(p.vram_used_bytes));
            });
        units(d,
              Json{{"pod", "row of /cluster/pods"},
                   {"start_ns", "ns"},
                   {"end_ns", "ns"},
                   {"gpu_milli", "milli-GPU"},
                   {"gpu_util", "fraction (DCGM_FI_PROF_GR_ENGINE_ACTIVE analogue)"},
                   {"fb_used_bytes", "bytes (DCGM_FI_DEV_FB_USED analogue)"}},
              "per-pod GPU metrics over time, one constant interval per run of a pod");
      }
    }
    file.close();
  });
}

}  // namespace gpumux::cluster
