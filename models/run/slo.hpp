#pragma once
// SLO verdicts: did a tenant meet the targets of its `slo:` block? One function used by the
// run and compare tables, --json, HDF5 (/slos, /tenants.slo_met), Python, --fail-on-slo and
// `gpumux plan`. Definitions: docs/metrics.md ("SLO verdicts").
//
// A target is a quantile of one per-request measure over the tenant's completed measured
// requests: `p99` (latency), `ttft_p99` (time to first token), `tpot_p99` (time per output
// token, (latency - ttft) / (output_tokens - 1) per request). The verdict compares the target
// with the quantile's confidence interval (LatencySummary::intervals, at output.confidence):
//   met           the interval's upper bound is at most the target (so an upper bound exists:
//                 a p99 needs at least 368 independent samples at 95 %, more when dependent);
//   missed        its lower bound is above the target, or the measure has no samples (nothing
//                 completed, or a TTFT/TPOT target on a tenant without output tokens): an SLO
//                 cannot be shown to hold on no data;
//   inconclusive  otherwise: the interval straddles the target (or has no upper bound); a
//                 longer window decides it.
// `value_ns` is the point estimate (nearest rank) the tables print beside the interval.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/run/result.hpp"

namespace gpumux {

struct Scenario;
struct SloSpec;

/// The SLO keys in their order in every output: p50 p90 p99 p999, ttft_p50 .. ttft_p999,
/// tpot_p50 .. tpot_p999.
const std::vector<std::string>& slo_keys();

/// How tables and messages name a key: "p99" -> "p99", "p999" -> "p99.9", "ttft_p99" ->
/// "TTFT p99", "tpot_p50" -> "TPOT p50".
std::string slo_label(const std::string& key);

/// The targets of an `slo:` block by key ("p99" -> ns, "ttft_p99" -> ns); empty = no SLO.
std::map<std::string, std::int64_t> slo_targets(const SloSpec& slo);

enum class SloVerdict : std::uint8_t { met = 0, missed = 1, inconclusive = 2 };
/// The names of SloVerdict values, indexed by value ("met", "missed", "inconclusive").
inline constexpr std::array<const char*, 3> kSloVerdictNames = {"met", "missed", "inconclusive"};
inline const char* verdict_name(SloVerdict v) { return kSloVerdictNames[static_cast<int>(v)]; }

struct SloCheck {
  std::string key;    ///< "p99", "ttft_p99", "tpot_p50"
  std::string label;  ///< for messages and tables: "p99", "TTFT p99", "TPOT p50"
  std::int64_t target_ns = 0;
  std::optional<std::int64_t> value_ns;  ///< the measured quantile; unset = no samples
  std::int64_t samples = 0;              ///< samples behind it (the measure's count)
  /// The quantile's confidence interval; unset bound = the samples do not bound it that side.
  std::optional<std::int64_t> low_ns, high_ns;
  double dependence = 1;  ///< the samples' autocorrelation time (samples / it: effective ones)
  SloVerdict verdict = SloVerdict::missed;
  bool met() const { return verdict == SloVerdict::met; }
};

/// The verdict of a quantile VALUE with interval [LOW, HIGH] against TARGET (rules above); no
/// value = no samples = missed.
SloVerdict judge_quantile(std::int64_t target, const std::optional<std::int64_t>& value,
                          const std::optional<std::int64_t>& low,
                          const std::optional<std::int64_t>& high);

struct TenantSlo {
  std::string tenant;
  std::vector<SloCheck> checks;  ///< in slo_keys() order; empty = no SLO
  bool has_slo() const { return !checks.empty(); }
  /// missed when a check is missed, else inconclusive when one is, else met (met without an
  /// SLO).
  SloVerdict verdict() const;
  bool met() const { return verdict() == SloVerdict::met; }
};

/// The verdicts of one tenant, from the targets it carries (TenantResult::slo_ns).
TenantSlo evaluate_slo(const TenantResult& tenant);

/// One entry per tenant of the result, in its order, from the targets the result carries.
std::vector<TenantSlo> evaluate_slos(const RunResult& result);

/// The same with the targets taken from SCENARIO's tenants (matched by name; a tenant of the
/// result not in the scenario keeps its own targets), e.g. to judge one run against other SLOs.
std::vector<TenantSlo> evaluate_slos(const RunResult& result, const Scenario& scenario);

}  // namespace gpumux
