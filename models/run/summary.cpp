// The measured window and its metrics: at the end of warm-up each device's busy, useful and DRAM
// integrals and each client's SM integral are taken as baselines; at the end, per tenant:
// request counts, latency / queueing / TTFT / TPOT summaries (ns, nearest-rank
// quantiles), mean slowdown, throughput over [warmup, duration], SLO targets and violations,
// OOM events; per device: time-average SM busy, useful and DRAM busy fractions over
// [warmup, end], memory peak, context switches. fill_results assembles the whole RunResult
// (provenance.cpp, cost.cpp add theirs).
#include <algorithm>

#include "models/run/run.hpp"
#include "models/run/slo.hpp"

namespace gpumux::run {
namespace {

LatencySummary summarize(const Percentiles& samples, double confidence) {
  // The statistics are finished: this is their last use (quantile() is not const).
  Percentiles& q = const_cast<Percentiles&>(samples);
  LatencySummary s;
  s.count = static_cast<std::int64_t>(q.count());
  s.mean = q.mean();
  const double* qs = kReportedQuantiles.data();
  std::int64_t values[4];
  q.quantiles(qs, 4, values);
  q.intervals(qs, 4, confidence, s.intervals.data(), values);  // (the points: no second pass)
  s.p50 = values[0];
  s.p90 = values[1];
  s.p99 = values[2];
  s.p999 = values[3];
  s.max = q.max();
  return s;
}

}  // namespace

void Run::on_warmup(std::size_t component) {
  Component& c = components_[component];
  if (!c.warmup_ran) ++warmups_ran_;
  c.warmup_ran = true;
  const Nanos now = c.sim->now();
  for (const std::size_t d : c.devices) {
    warm_busy_[d] = devices[d]->busy_integral(now);
    warm_useful_[d] = devices[d]->useful_integral(now);
    warm_dram_[d] = devices[d]->dram_integral(now);
    for (std::size_t c = 0; c < devices[d]->clients().size(); ++c) {
      warm_client_sm_[d][c] = devices[d]->client_sm_integral(devices[d]->clients()[c], now);
    }
  }
}

double Run::measured_window(Nanos end) const {
  return static_cast<double>(end - std::min(scenario.warmup, end));
}

void Run::fill_results(Nanos end) {
  fill_provenance(end);
  if (options_.latency_series != nullptr) {  // before the summary's selections reorder them
    std::vector<std::string>& series = *options_.latency_series;
    series.assign(tenants.size(), std::string());
    for (std::size_t i = 0; i < tenants.size(); ++i) tenants[i]->stats().latency.encode(series[i]);
  }
  for (auto& t : tenants) {
    TenantResult tr;
    fill_tenant_summary(*t, tr);
    fill_tenant_cost(*t, end, tr);
    result.tenants.push_back(tr);
  }
  fill_percentile_provenance();
  fill_gpu_cost(end);
  fill_device_results(end);
  if (result.status != "complete") {
    for (auto& t : tenants) t->record_unfinished();
  }
}

void Run::fill_tenant_summary(const Tenant& t, TenantResult& tr) const {
  const TenantStats& stats = t.stats();
  const double measured_s = to_seconds(scenario.duration - scenario.warmup);
  tr.name = t.spec().name;
  for (int d : resolved.tenant_devices[static_cast<std::size_t>(t.index())]) {
    tr.device += (tr.device.empty() ? "" : ",") +
                 resolved.devices[static_cast<std::size_t>(d)].geometry.name;
  }
  tr.requests = stats.requests;
  tr.completed = stats.completed;
  tr.failed = stats.failed;
  tr.latency = summarize(stats.latency, scenario.output.confidence);
  tr.queueing = summarize(stats.queueing, scenario.output.confidence);
  tr.time_to_first_token = summarize(stats.time_to_first_token, scenario.output.confidence);
  tr.time_per_output_token = summarize(stats.time_per_output_token, scenario.output.confidence);
  tr.slowdown_mean =
      stats.completed > 0 ? stats.slowdown_sum / static_cast<double>(stats.completed) : 0;
  tr.throughput_per_s = measured_s > 0 ? static_cast<double>(stats.completed) / measured_s : 0;
  tr.output_tokens_per_s =
      measured_s > 0 ? static_cast<double>(stats.output_tokens) / measured_s : 0;
  tr.slo_violations = stats.slo_violations;
  tr.slo_ns = slo_targets(t.spec().slo);
  tr.oom_events = stats.oom_events;
}

// Which series' percentiles came from a sketch, and the note saying so.
void Run::fill_percentile_provenance() {
  PercentileProvenance& p = result.percentiles;
  p.mode = percentile_method_name(scenario.output.percentiles);
  p.confidence = scenario.output.confidence;
  for (auto& t : tenants) {
    const TenantStats& s = t->stats();
    for (const Percentiles* series :
         {&s.latency, &s.queueing, &s.time_to_first_token, &s.time_per_output_token}) {
      ++p.series;
      if (!series->exact()) ++p.sketched_series;
    }
  }
  if (p.sketched_series == 0) return;
  static_assert(QuantileSketch::kRelativeError == 1.0 / 256, "the note below states 1/256");
  p.method = p.sketched_series == p.series ? "sketch" : "mixed";
  p.relative_error = QuantileSketch::kRelativeError;
  std::string note = "percentiles of " + std::to_string(p.sketched_series) + " of " +
                     std::to_string(p.series) +
                     " series (latency, queueing, TTFT, TPOT per tenant) are from a sketch, "
                     "within 0.39 % (1/256) of the exact values";
  if (scenario.output.percentiles == PercentileMethod::automatic) {
    note += " (output.percentiles: auto keeps a series exact up to " +
            std::to_string(Percentiles::kDefaultExactCap) + " samples)";
  }
  result.notes.push_back(note + "; output.percentiles: exact keeps every sample");
}

void Run::fill_device_results(Nanos end) {
  const double window = measured_window(end);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const Device& device = *devices[d];
    const ResolvedDevice& rd = resolved.devices[d];
    DeviceResult dr;
    dr.name = rd.geometry.name;
    dr.profile = rd.geometry.profile;
    dr.sharing = rd.sharing.mode_name();
    dr.sms = rd.geometry.sms;
    dr.memory_bytes = rd.geometry.memory;
    dr.sm_busy = window > 0 ? (device.busy_integral(end) - warm_busy_[d]) / window : 0;
    dr.useful_fraction = window > 0 ? (device.useful_integral(end) - warm_useful_[d]) / window : 0;
    dr.dram_busy = window > 0 ? (device.dram_integral(end) - warm_dram_[d]) / window : 0;
    dr.memory_peak_bytes = device.memory_peak();
    dr.context_switches = device.context_switches();
    dr.switch_overhead_ns = device.switch_overhead();
    result.devices.push_back(dr);
  }
}

}  // namespace gpumux::run
