#pragma once
// How many tenants met, missed or could not decide their SLOs, and what decides the undecided:
// the one line every table with verdicts prints (run, compare, the cluster replay, plan), e.g.
// "0 met, 0 missed, 12 inconclusive (run longer: --set duration=80s)". Verdicts:
// models/run/slo.hpp. Cost: linear in the checks.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/run/slo.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// By how much the measured window must grow for an inconclusive CHECK to be decided, if the
/// quantile and the rate of samples stay as measured. A quantile's confidence interval narrows
/// as 1 / sqrt(samples) (its asymptotic normal law), so the side facing the target (value to
/// high bound when the value is under the target, low bound to value when over) must shrink to
/// the gap between value and target: factor (side / gap)^2. Without an upper bound, the samples
/// a distribution-free bound of quantile q needs at CONFIDENCE, n = ln((1 - confidence) / 2) /
/// ln(q) (368 for a p99 at 95 %), over those measured, times the samples' dependence. At least
/// 2 (one doubling); 1 for a decided check. An estimate: a longer run may move the quantile.
double window_factor_to_decide(const SloCheck& check, double confidence);

struct SloTally {
  int met = 0, missed = 0, inconclusive = 0;  ///< tenants by TenantSlo::verdict(), with an SLO
  double window_factor = 1;  ///< the largest window_factor_to_decide of the inconclusive ones
  int with_slo() const { return met + missed + inconclusive; }
};

SloTally tally_slos(const std::vector<TenantSlo>& slos, double confidence);

/// "3 met, 0 missed, 1 inconclusive (run longer: --set duration=80s)": the duration that would
/// decide the inconclusive ones, warmup + (duration - warmup) x window_factor rounded up to whole
/// seconds, written as `--set KEY=...` (KEY: "duration", or "cluster.duration" for a cluster).
/// "" when no tenant has an SLO.
std::string slo_tally_text(const SloTally& tally, Nanos duration, Nanos warmup,
                           const std::string& duration_key = "duration");

/// The verdicts of a run's summary JSON (summary_json: each tenant's `slo` block).
std::vector<TenantSlo> slos_of_summary(const nlohmann::ordered_json& summary);

}  // namespace gpumux
