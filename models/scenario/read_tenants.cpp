// Reads `tenants:` entries (device names, SLOs), `faults:` and `output:`.
#include "models/scenario/loader_parts.hpp"

#include <algorithm>
#include <cctype>

#include "models/scenario/pod_workload.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;

namespace {

void slo_quantiles_of(Context& ctx, const MapReader& map, SloQuantiles& q) {
  if (const auto f = map.get("p50")) q.p50 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p90")) q.p90 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p99")) q.p99 = positive_duration_of(ctx, *f);
  if (const auto f = map.get("p999")) q.p999 = positive_duration_of(ctx, *f);
}

// Whether the tenant's requests have output tokens, so a time to first token and per output
// token (models/run/tenant_stats.hpp): an `llm:` card, continuous batching, or a kernel repeated
// per output token. A catalog model or a kernel trace has none.
bool produces_output_tokens(const WorkloadSpec& w) {
  return w.llm.has_value() || w.max_batch > 0 ||
         std::any_of(w.kernels.begin(), w.kernels.end(),
                     [](const KernelSpec& k) { return k.repeat_per_token == TokenCount::output; });
}

// The tenant's `slo:` for its workload W: a TTFT or TPOT target of a tenant without output
// tokens has no sample to meet it (the run said MISSED, plan "no setup meets every SLO", exit 1),
// so it is refused here.
SloSpec slo_of(Context& ctx, const Field& field, const WorkloadSpec& w) {
  const MapReader map(ctx, field, {"p50", "p90", "p99", "p999", "ttft", "tpot"});
  SloSpec slo;
  slo_quantiles_of(ctx, map, slo);
  for (const char* key : {"ttft", "tpot"}) {
    const auto f = map.get(key);
    if (!f) continue;
    if (!produces_output_tokens(w)) {
      ctx.fail(*f, std::string("the workload produces no output tokens (no `llm:` card, "
                               "`batching:` or kernel with `repeat: output_tokens`), so it has no "
                               "time ") +
                       (key == std::string("ttft") ? "to first token" : "per output token") +
                       " to meet this target; use p50..p999 of the request latency");
    }
    slo_quantiles_of(ctx, MapReader(ctx, *f, {"p50", "p90", "p99", "p999"}),
                     key == std::string("ttft") ? slo.ttft : slo.tpot);
  }
  return slo;
}

// Checks the form "GPU" or "GPU/INDEX" and that GPU names one device of the expanded list (a
// written name with count > 1 is a group, which a tenant cannot run on as a whole).
void check_device(Context& ctx, const Field& field, const std::string& device,
                  const std::vector<GpuSpec>& written, const std::vector<std::string>& expanded) {
  const auto slash = device.find('/');
  const std::string gpu = device.substr(0, slash);
  if (slash != std::string::npos) {
    const std::string index = device.substr(slash + 1);
    if (index.empty() ||
        !std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c); })) {
      ctx.fail(field, "expected GPU or GPU/INSTANCE (MIG instance index, e.g. gpu0/1), got '" +
                          device + "'");
    }
  }
  if (std::find(expanded.begin(), expanded.end(), gpu) != expanded.end()) return;
  for (const GpuSpec& g : written) {
    if (g.name == gpu) {
      ctx.fail(field, "gpu '" + gpu + "' has count " + std::to_string(g.count) +
                          "; name one of its devices (" + gpu + "-0 .. " + gpu + "-" +
                          std::to_string(g.count - 1) + ")");
    }
  }
  ctx.fail(field, "no gpu named '" + gpu + "'" + hint(gpu, expanded) + "; gpus: " + join(expanded));
}

IsolationSpec isolation_of(Context& ctx, const Field& field) {
  IsolationSpec out;
  std::vector<Field> items;
  if (field.node.IsSequence()) {
    items = list_of(ctx, field, false);
  } else {
    items.push_back(field);
  }
  for (const Field& item : items) {
    const std::string kind = choice_of<std::string>(
        ctx, item, {{"memory", "memory"}, {"fault", "fault"}, {"none", "none"}},
        {"memory", "fault", "none"}, "isolation");
    if (kind == "memory") out.memory = true;
    if (kind == "fault") out.fault = true;
  }
  return out;
}

// `active: {from: 10s, until: 50s}` (either may be left out): from >= 0, until > from.
void active_window_of(Context& ctx, const Field& field, TenantSpec& t) {
  const MapReader map(ctx, field, {"from", "until"});
  if (const auto f = map.get("from")) t.active_from = duration_of(ctx, *f);
  if (const auto f = map.get("until")) {
    t.active_until = positive_duration_of(ctx, *f);
    if (*t.active_until <= t.active_from) {
      ctx.fail(*f, "until (" + text_of(ctx, *f) + ") must be after from (" +
                       units::format_duration(t.active_from) + ")");
    }
  }
}

}  // namespace

TenantSpec tenant_of(Context& ctx, const Field& field, const std::vector<GpuSpec>& gpus,
                     const std::vector<std::string>& gpu_names, bool planning) {
  const MapReader map(
      ctx, field,
      {"name", "device", "replicas", "memory", "gpus", "workload", "slo", "isolation",
       "best_effort", "active"},
      {{"arrivals", "workload"}, {"request", "workload"}, {"kernels", "workload.request"}});
  TenantSpec t;
  t.where = ctx.at(field.path, field.mark);
  t.name = name_of(ctx, map.require("name"));
  if (const auto f = map.get("isolation")) t.isolation = isolation_of(ctx, *f);
  if (const auto f = map.get("best_effort")) t.best_effort = bool_of(ctx, *f);
  if (const auto f = map.get("active")) active_window_of(ctx, *f, t);
  const std::optional<Field> placed = map.get("device");
  if (!placed && planning) {
    // A tenant of a planning scenario: `gpumux plan` chooses its device.
    if (const auto f = map.get("replicas")) {
      t.replicas = int_of(ctx, *f, 1);
      if (t.replicas > kMaxTenantReplicas) {
        ctx.fail(*f, "at most " + std::to_string(kMaxTenantReplicas) +
                         " replicas of a tenant, got " + text_of(ctx, *f));
      }
    }
    if (const auto f = map.get("memory")) t.memory = size_of(ctx, *f);
    if (const auto f = map.get("gpus")) {
      t.gpus = int_of(ctx, *f, 1);
      if (t.gpus != 1) ctx.fail(*f, "gpumux plan places single-GPU tenants only (gpus: 1)");
    }
    t.workload = workload_of(ctx, map.require("workload"));
    if (const auto f = map.get("slo")) t.slo = slo_of(ctx, *f, t.workload);
    return t;
  }
  const Field device = placed ? *placed : map.require("device");
  if (device.node.IsSequence()) {
    for (const Field& item : list_of(ctx, device, true)) {
      const std::string name = non_empty_text(ctx, item);
      check_device(ctx, item, name, gpus, gpu_names);
      if (std::find(t.devices.begin(), t.devices.end(), name) != t.devices.end()) {
        ctx.fail(item, "device '" + name + "' listed twice");
      }
      t.devices.push_back(name);
    }
  } else {
    t.devices.push_back(non_empty_text(ctx, device));
    check_device(ctx, device, t.devices.front(), gpus, gpu_names);
  }
  t.device = t.devices.front();
  t.gpus = static_cast<int>(t.devices.size());
  if (const auto f = map.get("replicas")) {
    t.replicas = int_of(ctx, *f, 1);
    if (t.replicas > kMaxTenantReplicas) {
      ctx.fail(*f, "at most " + std::to_string(kMaxTenantReplicas) + " replicas of a tenant, got " +
                       text_of(ctx, *f));
    }
  }
  if (const auto f = map.get("memory")) t.memory = size_of(ctx, *f);
  if (const auto f = map.get("gpus")) {
    t.gpus = int_of(ctx, *f, 1);
    if (device.node.IsSequence() && t.gpus != static_cast<int>(t.devices.size())) {
      ctx.fail(*f, "gpus: " + std::to_string(t.gpus) + " but `device` lists " +
                       std::to_string(t.devices.size()) + " devices");
    }
  }
  t.workload = workload_of(ctx, map.require("workload"));
  if (const auto f = map.get("slo")) t.slo = slo_of(ctx, *f, t.workload);
  return t;
}

}  // namespace gpumux::scenario_detail

namespace gpumux {

TenantSpec read_pod_workload(yaml::Context& ctx, const yaml::Field& field,
                             const std::string& pod_name) {
  using namespace yaml;
  const std::pair<const char*, const char*> placement_keys[] = {
      {"device", "the cluster scheduler places the pod"},
      {"replicas", "use the pod's `count:`"},
      {"gpus", "the pod's requests (nvidia.com/gpu: N) say how many GPUs"}};
  if (field.node.IsMap()) {
    for (const auto& [key, why] : placement_keys) {
      if (const YAML::Node value = field.node[key]; value) {
        for (auto it = field.node.begin(); it != field.node.end(); ++it) {
          if (it->first.IsScalar() && it->first.Scalar() == key) {
            ctx.fail(Field{value, child_path(field.path, key), it->first.Mark()},
                     std::string("a pod's workload has no `") + key + "`: " + why);
          }
        }
      }
    }
  }
  const MapReader map(
      ctx, field, {"name", "memory", "workload", "slo", "isolation", "best_effort"},
      {{"arrivals", "workload"}, {"request", "workload"}, {"kernels", "workload.request"}});
  TenantSpec t;
  t.where = ctx.at(field.path, field.mark);
  t.name = pod_name;
  if (const auto f = map.get("name")) t.name = name_of(ctx, *f);
  if (const auto f = map.get("isolation")) t.isolation = scenario_detail::isolation_of(ctx, *f);
  if (const auto f = map.get("best_effort")) t.best_effort = bool_of(ctx, *f);
  if (const auto f = map.get("memory")) t.memory = size_of(ctx, *f);
  t.workload = scenario_detail::workload_of(ctx, map.require("workload"));
  if (const auto f = map.get("slo")) t.slo = scenario_detail::slo_of(ctx, *f, t.workload);
  return t;
}

}  // namespace gpumux

namespace gpumux::scenario_detail {

FaultSpec fault_of(Context& ctx, const Field& field, const std::vector<TenantSpec>& written,
                   const std::set<std::string>& expanded) {
  const MapReader map(ctx, field, {"tenant", "at", "kind", "recovery"});
  FaultSpec f;
  f.where = ctx.at(field.path, field.mark);
  const Field tenant = map.require("tenant");
  f.tenant = text_of(ctx, tenant);
  if (expanded.count(f.tenant) == 0) {
    for (const TenantSpec& t : written) {
      if (t.name == f.tenant) {
        ctx.fail(tenant, "tenant '" + f.tenant + "' has " + std::to_string(t.replicas) +
                             " replicas; name one of them (" + f.tenant + "-0 .. " + f.tenant +
                             "-" + std::to_string(t.replicas - 1) + ")");
      }
    }
    ctx.fail(tenant, "no tenant named '" + f.tenant + "'" +
                         hint(f.tenant, {expanded.begin(), expanded.end()}));
  }
  f.at = duration_of(ctx, map.require("at"));
  if (const auto kind = map.get("kind")) {
    f.kind =
        choice_of<FaultKind>(ctx, *kind, {{"fatal", FaultKind::fatal}}, {"fatal"}, "fault kind");
  }
  if (const auto recovery = map.get("recovery")) f.recovery = duration_of(ctx, *recovery);
  return f;
}

OutputSpec output_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field, {"sample", "kernels", "percentiles", "confidence"});
  OutputSpec out;
  if (const auto f = map.get("sample")) out.sample = positive_duration_of(ctx, *f);
  if (const auto f = map.get("kernels")) out.kernels = bool_of(ctx, *f);
  if (const auto f = map.get("percentiles")) {
    out.percentiles = choice_of<PercentileMethod>(ctx, *f,
                                                  {{"auto", PercentileMethod::automatic},
                                                   {"exact", PercentileMethod::exact},
                                                   {"sketch", PercentileMethod::sketch}},
                                                  {"auto", "exact", "sketch"}, "percentile method");
  }
  // A level below 0.5 would call an interval narrower than the point's own uncertainty
  // "confident"; 0.9999 keeps the binomial tails above double rounding.
  if (const auto f = map.get("confidence"))
    out.confidence = fraction_of(ctx, *f, 0.5, false, 0.9999);
  return out;
}

// Copies written entries into the expanded list: count/replicas N > 1 give NAME-0 .. NAME-(N-1).

}  // namespace gpumux::scenario_detail
