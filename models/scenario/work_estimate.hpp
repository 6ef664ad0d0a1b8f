#pragma once
// The work estimate (issue 13, bounded work): before anything is simulated, `validate` and `run`
// (both through resolve_scenario) estimate how many requests, kernel launches and timeseries
// samples the scenario asks for and the memory the run will hold, and refuse one beyond the
// budget below with one line naming the key that drives it, unless the scenario sets
// `allow_large: true`. Requests and launches are simulated work (time); memory counts only what
// the run keeps (KeptRecords: Python's run() keeps a record per request, the CLI none). Estimates
// are means (rate x duration, tokens at their mean), not bounds: a scenario near the budget may
// pass. Cost: O(tenants x kernels).
#include <cstdint>
#include <vector>

#include "sim/core/statistics.hpp"

#include "models/scenario/scenario.hpp"
#include "models/scenario/trace_reader.hpp"

namespace gpumux {

/// Kernel launches: simulated work. At 1.6-3.4 million launches per second (one tenant, the
/// quickstart's kernels, this project's 2-core machine) a billion is 5-10 minutes of simulation.
inline constexpr double kWorkBudgetLaunches = 1e9;
/// Requests: simulated work, like launches, and a guard against a rate or duration typo. At
/// 0.86-3.1 million requests per second measured on the same machine (the quickstart's 4-kernel
/// requests for 1 h: 0.83 s; a Poisson service with one 200 us kernel per request, 3.6M
/// requests: 1.15 s) a billion is 5-20 minutes. Not a memory guard: what requests hold is
/// counted in `memory` below, only where it is kept (KeptRecords). Before issue 12 this was 1e8,
/// when every request kept ~150 B until the run ended.
inline constexpr double kWorkBudgetRequests = 1e9;
/// Timeseries samples (per device and tenant, every output.sample over duration + the drain of
/// the longest request): each stores a row of the timeseries; 1e7 rows are about 1 GB.
inline constexpr double kWorkBudgetSamples = 1e7;

/// Cluster pods (summed over every `cluster.pods[]` entry, or the rows of an openb pod list):
/// each is held as a PodSpec from load to the end of the replay, with its PodRecord and queue
/// entries. Measured peak RSS per pod (docs/cluster.md, "Work budget"): about
/// kClusterBytesPerPod, so the budget is about 4.6 GB.
inline constexpr double kWorkBudgetClusterPods = 2e6;
/// Peak memory per cluster pod: 2,282 B measured (peak RSS of `gpumux run` on generated
/// scenarios of 200,000 and 400,000 one-GPU pods, the difference over the 200,000 between them;
/// docs/cluster.md "Work budget"), rounded up.
inline constexpr double kClusterBytesPerPod = 2300;

/// Memory the run holds at its peak (statistics, kept records, timeseries; not the scenario or
/// traces, already in memory when this is checked): 16 GiB.
inline constexpr double kWorkBudgetMemoryBytes = 16.0 * (1 << 30);
/// A RequestRecord (models/run/result.hpp) kept in memory: 48 B. Kept only by Python's run() and
/// compare() with record_requests=True (KeptRecords::requests); `gpumux run/compare -o`
/// streams them to the file, without -o they are not recorded.
inline constexpr double kBytesPerRequestRecord = 48;
/// An exact percentile sample: 8 B per request and series (latency and queueing; LLM tenants
/// also TTFT and TPOT). `output.percentiles: exact` keeps every one; `auto` (the default) at
/// most Percentiles::kDefaultExactCap per series (then a bounded sketch of at most 58 KiB,
/// not counted); `sketch` none.
inline constexpr double kBytesPerPercentileSample = 8;
/// A KernelRecord (output.kernels: true) kept in memory: 40 B (KeptRecords::kernels).
inline constexpr double kBytesPerKernelRecord = 40;
/// A request waiting in its tenant's FIFO queue: 640 B (kernels are drawn when it starts).
/// Measured: the peak RSS of `gpumux run` on tests/data/scenarios/saturated-catalog.yaml at 10 s
/// and 60 s (20,000 and 120,000 queued whisper-large-v3 requests: 28 MB and 90 MB), the
/// difference over the 100,000 between them, 630 B, rounded up; a one-kernel tenant measured
/// 283 B (the larger is counted).
inline constexpr double kBytesPerQueuedRequest = 640;
/// A timeseries sample: 32 B, plus the two 8 B integrals it is computed from.
inline constexpr double kBytesPerSample = 48;

/// Which records a run keeps in memory until it ends: the estimate counts them only where they
/// are kept. The default is the CLI's: `gpumux run/compare` keep none (-o streams them to the
/// file chunk by chunk; without -o nothing reads them, so nothing is recorded).
struct KeptRecords {
  /// A RequestRecord per request: Python's run() and compare(return_results=True), i.e.
  /// record_requests=True (RunControl::record_requests).
  bool requests = false;
  /// A KernelRecord per launch when output.kernels is on (RunControl::record_kernels).
  bool kernels = false;
  /// Results held at once (compare: one per strategy): kept records and timeseries count this
  /// many times; statistics once (they are summarised when each run ends).
  double results = 1;
};

struct WorkEstimate {
  double requests = 0;
  double launches = 0;
  double samples = 0;
  /// Bytes at the peak: statistics_memory + results x (request records + kernel records +
  /// timeseries); the parts below already include the results factor.
  double memory = 0;
  double statistics_memory = 0;     ///< exact percentile samples (output.percentiles)
  double request_memory = 0;        ///< request records, 0 unless KeptRecords::requests
  double kernel_record_memory = 0;  ///< kernel records, 0 unless kept and output.kernels
  double timeseries_memory = 0;     ///< samples kept, at most kMaxSamplesPerSeries per series
  /// Requests queued at `duration` by an overloaded tenant (more arrive than it can serve alone:
  /// requests - concurrency x duration / solo time), x kBytesPerQueuedRequest x results.
  double backlog_memory = 0;
};

/// The estimate; `traces` holds each tenant's checked trace (rows == 0 for other processes).
/// Closed forms: requests = sum over tenants of rate x duration (trace length, closed loops:
/// concurrency x duration / (think + solo time)); request_memory = requests x 48 B x results
/// when kept; statistics_memory = sum over tenants of series x 8 B x the samples held (exact:
/// requests; auto: min(requests, 2^20); sketch: 0), series = 2, or 4 with `tokens:`;
/// backlog_memory = sum over tenants of max(0, requests - concurrency x duration / solo) x 640 B
/// x results (concurrency: max_in_flight, or max_batch for batched serving).
WorkEstimate estimate_work(const Scenario& scenario, const std::vector<TraceSummary>& traces,
                           const KeptRecords& kept = {});

/// Throws InputError naming the driving key when an estimate exceeds its budget and the
/// scenario does not set allow_large. resolve_scenario checks with the CLI's KeptRecords (none);
/// a caller that keeps records checks again with them (models/app/application.hpp).
void check_work_budget(const Scenario& scenario, const std::vector<TraceSummary>& traces,
                       const KeptRecords& kept = {});

}  // namespace gpumux
