#include "models/scenario/work_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/util/units.hpp"

namespace gpumux {
namespace {

struct TenantWork {
  double requests = 0;
  double launches_per_request = 0;
  double solo_ns = 0;                    // mean time of one request alone (no contention)
  std::string driver;                    // key path that sets the request count
  std::size_t longest_kernel = 0;        // index of the kernel with the largest share of solo_ns
  std::string longest_key = "duration";  // its term that dominates: a key under kernels.N, or
                                         // "host_gap" (workload.request.host_gap)
  double drain_ns = 0;  // after `duration`: the backlog of an overloaded tenant, or one request
  double backlog = 0;   // requests still queued at `duration` (served alone, concurrency at once)
};

double token_mean(const WorkloadSpec& w, TokenCount which) {
  if (!w.has_tokens) return 1.0;
  return which == TokenCount::input ? w.input_tokens.mean() : w.output_tokens.mean();
}

// The key the user wrote that sets a tenant's kernels: `request.kernels` for kernels written
// out, else the card, catalog model or trace they are built from (an `llm:` tenant's launches
// per request follow its `tokens:`).
std::string kernels_key(const TenantSpec& tenant) {
  const WorkloadSpec& w = tenant.workload;
  const std::string path = tenant.where.key_path + ".workload.";
  if (w.llm) return path + "tokens";
  if (w.catalog) return path + "model";
  if (w.kernel_trace) return path + "request.kernel_trace";
  return path + "request.kernels";
}

// The key that makes a tenant's requests long: the user's host_gap, the kernel's term that
// dominates (kernels.N.duration, .per_sequence, .per_context_token), or what built the kernels.
std::string drain_key(const TenantSpec& tenant, const TenantWork& work) {
  if (work.longest_key == "host_gap" && tenant.workload.host_gap_origin == ParamOrigin::user) {
    return tenant.where.key_path + ".workload.request.host_gap";
  }
  const std::string kernels = kernels_key(tenant);
  if (!kernels.ends_with(".request.kernels")) return kernels;
  const std::string term = work.longest_key == "host_gap" ? "duration" : work.longest_key;
  return kernels + "." + std::to_string(work.longest_kernel) + "." + term;
}

std::string sci(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GiB", bytes / (1 << 30));
  return text;
}

TenantWork tenant_work(const Scenario& scenario, std::size_t t, const TraceSummary& trace) {
  const TenantSpec& tenant = scenario.tenants[t];
  const WorkloadSpec& w = tenant.workload;
  const std::string path = tenant.where.key_path + ".workload";
  TenantWork out;
  double longest = -1;
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const KernelSpec& kernel = w.kernels[k];
    const double launches = kernel.repeat_per_token == TokenCount::none
                                ? kernel.repeat
                                : token_mean(w, kernel.repeat_per_token);
    const double scale = kernel.duration_per_token == TokenCount::none
                             ? 1.0
                             : token_mean(w, kernel.duration_per_token);
    const double base = kernel.duration.mean() * scale;
    const double gap = static_cast<double>(w.host_gap);
    // A batched launch serves at least its own request's sequence and reads its context.
    const double sequence = static_cast<double>(kernel.per_sequence);
    const double context = kernel.per_context_token *
                           (token_mean(w, TokenCount::input) + token_mean(w, TokenCount::output));
    const double ns = launches * (base + gap + sequence + context);
    out.launches_per_request += launches;
    out.solo_ns += ns;
    if (ns > longest) {
      longest = ns;
      out.longest_kernel = k;
      const double top = std::max({base, gap, sequence, context});
      out.longest_key = top == base       ? "duration"
                        : top == gap      ? "host_gap"
                        : top == sequence ? "per_sequence"
                                          : "per_context_token";
    }
  }
  const double duration_s = static_cast<double>(scenario.duration) * 1e-9;
  const ArrivalSpec& a = w.arrivals;
  switch (a.process) {
    case ArrivalProcess::poisson:
    case ArrivalProcess::constant:
      out.requests = a.rate_per_s * duration_s;
      out.driver = path + ".arrivals.rate";
      break;
    case ArrivalProcess::trace:
      out.requests = static_cast<double>(trace.rows);
      out.driver = path + ".arrivals.file";
      break;
    case ArrivalProcess::closed:
      out.requests =
          a.concurrency * static_cast<double>(scenario.duration) /
          std::max(1000.0, static_cast<double>(a.think) + out.solo_ns +
                               (a.session_cells > 0 ? a.away.mean() / a.session_cells : 0.0));
      out.driver = path + ".arrivals.concurrency";
      break;
  }
  // Served alone, max_in_flight at a time: what is left at `duration` drains afterwards.
  const double busy = out.requests * out.solo_ns / std::max(1, w.max_in_flight);
  out.drain_ns = std::max(out.solo_ns, busy - static_cast<double>(scenario.duration));
  // Queued at `duration`: arrivals beyond what `concurrency` servers of solo_ns each finish
  // (a batched server at most max_batch at once). A closed loop never queues beyond its clients.
  const double concurrency = std::max({1, w.max_in_flight, w.max_batch});
  if (a.process != ArrivalProcess::closed && out.solo_ns > 0) {
    const double served = concurrency * static_cast<double>(scenario.duration) / out.solo_ns;
    out.backlog = std::max(0.0, out.requests - served);
  }
  return out;
}

// Exact percentile samples held for one series of N samples under METHOD.
double held_samples(PercentileMethod method, double n) {
  switch (method) {
    case PercentileMethod::exact:
      return n;
    case PercentileMethod::sketch:
      return 0;
    case PercentileMethod::automatic:
      break;
  }
  return std::min(n, static_cast<double>(Percentiles::kDefaultExactCap));
}

}  // namespace

WorkEstimate estimate_work(const Scenario& scenario, const std::vector<TraceSummary>& traces,
                           const KeptRecords& kept) {
  WorkEstimate total;
  double drain = 0;
  double backlog = 0;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    static const TraceSummary kNone;
    const TenantWork w = tenant_work(scenario, t, t < traces.size() ? traces[t] : kNone);
    backlog += w.backlog;
    const double copies = std::max<std::size_t>(1, scenario.tenants[t].devices.size());
    total.requests += w.requests;
    total.launches += w.requests * w.launches_per_request * copies;
    drain = std::max(drain, w.drain_ns);
    // Latency and queueing; LLM tenants also TTFT and TPOT.
    const double series = scenario.tenants[t].workload.has_tokens ? 4 : 2;
    total.statistics_memory +=
        series * kBytesPerPercentileSample * held_samples(scenario.output.percentiles, w.requests);
  }
  const double series = static_cast<double>(scenario.gpus.size() + scenario.tenants.size());
  total.samples = series * (static_cast<double>(scenario.duration) + drain) /
                  static_cast<double>(std::max<Nanos>(1, scenario.output.sample));
  const double results = std::max(1.0, kept.results);
  total.request_memory = kept.requests ? results * total.requests * kBytesPerRequestRecord : 0;
  total.kernel_record_memory = kept.kernels && scenario.output.kernels
                                   ? results * total.launches * kBytesPerKernelRecord
                                   : 0;
  // Only devices keep a series (kept samples are capped per series by decimation).
  const double devices = static_cast<double>(std::max<std::size_t>(1, scenario.gpus.size()));
  total.timeseries_memory =
      results * devices *
      std::min(total.samples / std::max(1.0, series), static_cast<double>(kMaxSamplesPerSeries)) *
      kBytesPerSample;
  total.backlog_memory = results * backlog * kBytesPerQueuedRequest;
  total.memory = total.statistics_memory + total.request_memory + total.kernel_record_memory +
                 total.timeseries_memory + total.backlog_memory;
  return total;
}

void check_work_budget(const Scenario& scenario, const std::vector<TraceSummary>& traces,
                       const KeptRecords& kept) {
  if (scenario.allow_large) return;
  const WorkEstimate total = estimate_work(scenario, traces, kept);
  const std::string escape = "; set allow_large: true to run it anyway";
  if (total.requests <= kWorkBudgetRequests && total.launches <= kWorkBudgetLaunches &&
      total.samples <= kWorkBudgetSamples && total.memory <= kWorkBudgetMemoryBytes) {
    return;
  }
  // The tenant with the most launches (or requests) names the key that drives the estimate.
  std::size_t worst = 0;
  TenantWork worst_work;
  double worst_launches = -1;
  double drain = 0;
  std::size_t drain_tenant = 0;
  TenantWork drain_work;
  std::size_t backlog_tenant = 0;
  TenantWork backlog_work;
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    static const TraceSummary kNone;
    const TenantWork w = tenant_work(scenario, t, t < traces.size() ? traces[t] : kNone);
    const double launches = w.requests * std::max(1.0, w.launches_per_request);
    if (launches > worst_launches) {
      worst_launches = launches;
      worst = t;
      worst_work = w;
    }
    if (w.backlog > backlog_work.backlog) {
      backlog_tenant = t;
      backlog_work = w;
    }
    if (w.drain_ns > drain) {
      drain = w.drain_ns;
      drain_tenant = t;
      drain_work = w;
    }
  }
  if (total.requests > kWorkBudgetRequests || total.launches > kWorkBudgetLaunches) {
    const bool by_requests = total.requests > kWorkBudgetRequests;
    const std::string what =
        by_requests
            ? "about " + sci(total.requests) + " requests (budget " + sci(kWorkBudgetRequests) + ")"
            : "about " + sci(total.launches) + " kernel launches (budget " +
                  sci(kWorkBudgetLaunches) + ")";
    const double per_request = worst_work.launches_per_request;
    const bool by_kernels = !by_requests && per_request > worst_work.requests;
    const std::string key = by_kernels ? kernels_key(scenario.tenants[worst]) : worst_work.driver;
    throw InputError(scenario.locate(key), "the scenario asks for " + what + ": tenant '" +
                                               scenario.tenants[worst].name + "' " +
                                               sci(worst_work.requests) + " requests x " +
                                               sci(per_request) + " launches each over duration " +
                                               units::format_duration(scenario.duration) +
                                               "; shorten duration or lower the load" + escape);
  }
  if (total.samples <= kWorkBudgetSamples) {
    // Memory: name the largest part's key.
    std::string key;
    std::string part;
    const double largest =
        std::max({total.statistics_memory, total.request_memory, total.kernel_record_memory,
                  total.timeseries_memory, total.backlog_memory});
    const std::string held =
        kept.results > 1 ? " for each of the " + sci(kept.results) + " results held at once" : "";
    if (total.backlog_memory == largest) {
      const TenantSpec& tenant = scenario.tenants[backlog_tenant];
      key = backlog_work.driver;
      part = "the queue of tenant '" + tenant.name + "': about " + sci(backlog_work.backlog) +
             " requests waiting at the end of duration " +
             units::format_duration(scenario.duration) + " (it serves about " +
             sci(1e9 * std::max({1, tenant.workload.max_in_flight, tenant.workload.max_batch}) /
                 backlog_work.solo_ns) +
             "/s alone; lower the load or raise max_in_flight)";
    } else if (total.kernel_record_memory == largest) {
      key = "output.kernels";
      part = "a record of each of about " + sci(total.launches) +
             " kernel launches kept in memory" + held +
             " (output.kernels: true; turn it off, pass record_requests=False in Python, or "
             "stream them to a file with `gpumux run -o`)";
    } else if (total.request_memory == largest) {
      key = worst_work.driver;
      part = "a record of each of about " + sci(total.requests) + " requests kept in memory" +
             held +
             " (Python's record_requests=True: pass record_requests=False, or stream them to a "
             "file with `gpumux run -o`)";
    } else if (total.statistics_memory == largest) {
      const bool exact = scenario.output.percentiles == PercentileMethod::exact;
      key = exact ? "output.percentiles" : worst_work.driver;
      part = "the exact percentile samples of about " + sci(total.requests) + " requests (" +
             (exact ? "output.percentiles: exact; auto or sketch bound them)"
                    : "lower the load, shorten duration or use output.percentiles: sketch)");
    } else {
      key = scenario.output.sample < 100'000'000 ? "output.sample" : "duration";
      part = "the utilization timeseries of " + std::to_string(scenario.gpus.size()) + " GPUs" +
             held + " (sample less often)";
    }
    throw InputError(scenario.locate(key), "the run would hold about " + gib(total.memory) +
                                               " of memory (budget " + gib(kWorkBudgetMemoryBytes) +
                                               "), mostly " + part + escape);
  }
  // Samples: a long drain (a very long kernel) or a short sampling period.
  const bool by_drain = drain > static_cast<double>(scenario.duration);
  const std::string key =
      by_drain ? drain_key(scenario.tenants[drain_tenant], drain_work)
               : (scenario.output.sample < 100'000'000 ? "output.sample" : "duration");
  throw InputError(
      scenario.locate(key),
      "the run would record about " + sci(total.samples) + " timeseries samples (budget " +
          sci(kWorkBudgetSamples) + "): " +
          (by_drain ? "the requests of tenant '" + scenario.tenants[drain_tenant].name +
                          "' take about " + sci(drain * 1e-9) +
                          " s to drain after duration (a kernel duration typo for a shorter unit?)"
                    : "duration " + units::format_duration(scenario.duration) + " sampled every " +
                          units::format_duration(scenario.output.sample)) +
          escape);
}

}  // namespace gpumux
