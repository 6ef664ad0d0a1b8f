#include "models/run/slo.hpp"

#include <algorithm>

#include "models/scenario/scenario.hpp"

namespace gpumux {

namespace {

constexpr const char* kQuantiles[] = {"p50", "p90", "p99", "p999"};

struct Measure {
  const char* prefix;  // key prefix: "", "ttft_", "tpot_"
  const char* label;   // label prefix: "", "TTFT ", "TPOT "
  LatencySummary TenantResult::*summary;
};

constexpr Measure kMeasures[] = {
    {"", "", &TenantResult::latency},
    {"ttft_", "TTFT ", &TenantResult::time_to_first_token},
    {"tpot_", "TPOT ", &TenantResult::time_per_output_token},
};

std::int64_t quantile(const LatencySummary& s, int q) {
  switch (q) {
    case 0:
      return s.p50;
    case 1:
      return s.p90;
    case 2:
      return s.p99;
    default:
      return s.p999;
  }
}

void add_targets(const SloQuantiles& q, const char* prefix,
                 std::map<std::string, std::int64_t>& out) {
  const std::optional<Nanos>* values[] = {&q.p50, &q.p90, &q.p99, &q.p999};
  for (int i = 0; i < 4; ++i) {
    if (*values[i]) out[std::string(prefix) + kQuantiles[i]] = **values[i];
  }
}

TenantSlo evaluate_with(const TenantResult& t, const std::map<std::string, std::int64_t>& targets) {
  TenantSlo out;
  out.tenant = t.name;
  for (const Measure& m : kMeasures) {
    const LatencySummary& summary = t.*(m.summary);
    for (int q = 0; q < 4; ++q) {
      const std::string key = std::string(m.prefix) + kQuantiles[q];
      const auto target = targets.find(key);
      if (target == targets.end()) continue;
      SloCheck check;
      check.key = key;
      check.label = slo_label(key);
      check.target_ns = target->second;
      check.samples = summary.count;
      if (summary.count > 0) {
        check.value_ns = quantile(summary, q);
        const QuantileInterval& ci = summary.intervals[static_cast<std::size_t>(q)];
        if (ci.has_low) check.low_ns = ci.low;
        if (ci.has_high) check.high_ns = ci.high;
        check.dependence = ci.dependence;
      }
      check.verdict = judge_quantile(check.target_ns, check.value_ns, check.low_ns, check.high_ns);
      out.checks.push_back(std::move(check));
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& slo_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Measure& m : kMeasures) {
      for (const char* q : kQuantiles) k.push_back(std::string(m.prefix) + q);
    }
    return k;
  }();
  return keys;
}

std::map<std::string, std::int64_t> slo_targets(const SloSpec& slo) {
  std::map<std::string, std::int64_t> out;
  add_targets(slo, "", out);
  add_targets(slo.ttft, "ttft_", out);
  add_targets(slo.tpot, "tpot_", out);
  return out;
}

std::string slo_label(const std::string& key) {
  std::string out;
  std::string q = key;
  for (const Measure& m : kMeasures) {
    const std::string prefix = m.prefix;
    if (!prefix.empty() && key.rfind(prefix, 0) == 0) {
      out = m.label;
      q = key.substr(prefix.size());
    }
  }
  return out + (q == "p999" ? std::string("p99.9") : q);
}

SloVerdict judge_quantile(std::int64_t target, const std::optional<std::int64_t>& value,
                          const std::optional<std::int64_t>& low,
                          const std::optional<std::int64_t>& high) {
  if (!value) return SloVerdict::missed;
  if (high && *high <= target) return SloVerdict::met;
  if (low && *low > target) return SloVerdict::missed;
  return SloVerdict::inconclusive;
}

SloVerdict TenantSlo::verdict() const {
  SloVerdict out = SloVerdict::met;
  for (const SloCheck& c : checks) {
    if (c.verdict == SloVerdict::missed) return SloVerdict::missed;
    if (c.verdict == SloVerdict::inconclusive) out = SloVerdict::inconclusive;
  }
  return out;
}

TenantSlo evaluate_slo(const TenantResult& tenant) { return evaluate_with(tenant, tenant.slo_ns); }

std::vector<TenantSlo> evaluate_slos(const RunResult& result) {
  std::vector<TenantSlo> out;
  out.reserve(result.tenants.size());
  for (const TenantResult& t : result.tenants) out.push_back(evaluate_slo(t));
  return out;
}

std::vector<TenantSlo> evaluate_slos(const RunResult& result, const Scenario& scenario) {
  std::vector<TenantSlo> out;
  out.reserve(result.tenants.size());
  for (const TenantResult& t : result.tenants) {
    const auto spec = std::find_if(scenario.tenants.begin(), scenario.tenants.end(),
                                   [&](const TenantSpec& s) { return s.name == t.name; });
    out.push_back(spec == scenario.tenants.end() ? evaluate_slo(t)
                                                 : evaluate_with(t, slo_targets(spec->slo)));
  }
  return out;
}

}  // namespace gpumux
