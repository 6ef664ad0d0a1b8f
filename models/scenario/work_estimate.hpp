#pragma once
// The work estimate (issue 13, bounded work): before anything is simulated, `validate` and `run`
// (both through resolve_scenario) estimate how many requests, kernel launches and timeseries
// samples the scenario asks for and the memory the run will hold, and refuse one beyond the
// budget below with one line naming the key that drives it, unless the scenario sets
// `allow_large: true`. Estimates are means
// (rate x duration, tokens at their mean), not bounds: a scenario near the budget may pass.
// Cost: O(tenants x kernels).
#include <cstdint>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "models/scenario/trace_reader.hpp"

namespace gpumux {

/// Kernel launches: at ~1.6 million launches per second (one tenant, measured on a 2-core
/// machine with quickstart-like kernels) a billion is about ten minutes of simulation.
inline constexpr double kWorkBudgetLaunches = 1e9;
/// Requests: a guard against a rate or duration typo (1e8 is ~28 h at 1000 requests/s). Set when
/// every request kept ~100 B of statistics until the run ended; since issue 12 the CLI keeps
/// none (`output.percentiles: auto` caps them, `-o` streams the records), but Python's run()
/// still holds a 48 B record per request, so the budget and kBytesPerRequest stay conservative
/// for the CLI (README "Honest limits").
inline constexpr double kWorkBudgetRequests = 1e8;
/// Timeseries samples (per device and tenant, every output.sample over duration + the drain of
/// the longest request): each stores a row of the timeseries; 1e7 rows are about 1 GB.
inline constexpr double kWorkBudgetSamples = 1e7;

/// Memory the run keeps until it ends (statistics, records, timeseries; not the scenario or
/// traces, already in memory when this is checked): 16 GiB. Every request the request budget
/// allows fits (1e8 x 150 B); what can exceed it is `output.kernels: true` (a record per launch)
/// and long timeseries on many devices.
inline constexpr double kWorkBudgetMemoryBytes = 16.0 * (1 << 30);
/// Memory per request, as an upper bound: its statistics (~100 B; capped per tenant under
/// `output.percentiles: auto`) and a 48 B RequestRecord (models/run/result.hpp; streamed to the
/// file by `gpumux run -o`, kept in memory by Python's run()).
inline constexpr double kBytesPerRequest = 150;
/// A KernelRecord (output.kernels: true): 40 B.
inline constexpr double kBytesPerKernelRecord = 40;
/// A timeseries sample: 32 B, plus the two 8 B integrals it is computed from.
inline constexpr double kBytesPerSample = 48;

struct WorkEstimate {
  double requests = 0;
  double launches = 0;
  double samples = 0;
  /// Bytes, the sum of the three parts below.
  double memory = 0;
  double request_memory = 0;
  double kernel_record_memory = 0;
  double timeseries_memory = 0;  ///< samples kept, at most kMaxSamplesPerSeries per series
};

/// The estimate; `traces` holds each tenant's checked trace (rows == 0 for other processes).
WorkEstimate estimate_work(const Scenario& scenario, const std::vector<TraceSummary>& traces);

/// Throws InputError naming the driving key when an estimate exceeds its budget and the
/// scenario does not set allow_large.
void check_work_budget(const Scenario& scenario, const std::vector<TraceSummary>& traces);

}  // namespace gpumux
