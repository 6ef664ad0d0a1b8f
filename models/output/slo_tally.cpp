#include "models/output/slo_tally.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/util/checked.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

// The quantile a key asks for: "p99" -> 0.99, "ttft_p999" -> 0.999, "tpot_p50" -> 0.5.
double quantile_of(const std::string& key) {
  const std::string digits = key.substr(key.rfind('p') + 1);
  return std::stod("0." + digits);
}

}  // namespace

double window_factor_to_decide(const SloCheck& check, double confidence) {
  if (check.verdict != SloVerdict::inconclusive) return 1;
  constexpr double kLeast = 2;
  if (!check.value_ns || !check.high_ns || check.samples <= 0) {
    const double q = quantile_of(check.key);
    const double needed = std::log((1 - confidence) / 2) / std::log(q);
    const double have = static_cast<double>(std::max<std::int64_t>(check.samples, 1)) /
                        std::max(check.dependence, 1.0);
    return std::max(kLeast, needed / have);
  }
  const double value = static_cast<double>(*check.value_ns);
  const double target = static_cast<double>(check.target_ns);
  const double side = value <= target ? static_cast<double>(*check.high_ns) - value
                                      : value - static_cast<double>(check.low_ns.value_or(0));
  const double gap = std::abs(target - value);
  if (!(gap > 0)) return kLeast * kLeast * kLeast;  // on the target: no window decides it surely
  const double ratio = side / gap;
  return std::max(kLeast, ratio * ratio);
}

SloTally tally_slos(const std::vector<TenantSlo>& slos, double confidence) {
  SloTally tally;
  for (const TenantSlo& tenant : slos) {
    if (!tenant.has_slo()) continue;
    switch (tenant.verdict()) {
      case SloVerdict::met:
        ++tally.met;
        break;
      case SloVerdict::missed:
        ++tally.missed;
        break;
      case SloVerdict::inconclusive:
        ++tally.inconclusive;
        for (const SloCheck& c : tenant.checks) {
          tally.window_factor =
              std::max(tally.window_factor, window_factor_to_decide(c, confidence));
        }
        break;
    }
  }
  return tally;
}

std::string slo_tally_text(const SloTally& tally, Nanos duration, Nanos warmup,
                           const std::string& duration_key) {
  if (tally.with_slo() == 0) return "";
  std::string out = fmt::format("{} met, {} missed, {} inconclusive", tally.met, tally.missed,
                                tally.inconclusive);
  if (tally.inconclusive > 0) {
    const double window = static_cast<double>(std::max<Nanos>(duration - warmup, 0));
    constexpr double second = 1e9;
    const double longer =
        std::ceil((static_cast<double>(warmup) + window * tally.window_factor) / second) * second;
    out += fmt::format(" (run longer: --set {}={})", duration_key,
                       units::format_duration(checked::nanos_saturating(longer)));
  }
  return out;
}

std::vector<TenantSlo> slos_of_summary(const nlohmann::ordered_json& summary) {
  std::vector<TenantSlo> out;
  const auto tenants = summary.find("tenants");
  if (tenants == summary.end() || !tenants->is_object()) return out;
  auto optional_ns = [](const nlohmann::ordered_json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::optional<std::int64_t>();
    // A result file is read back as written, but a damaged one may hold any double here:
    // clamp it rather than convert out of range.
    return std::optional<std::int64_t>(it->is_number_float()
                                           ? checked::nanos_saturating(it->get<double>())
                                           : it->get<std::int64_t>());
  };
  for (const auto& [name, t] : tenants->items()) {
    TenantSlo tenant;
    tenant.tenant = name;
    const auto slo = t.find("slo");
    if (slo != t.end() && slo->is_object()) {
      for (const auto& [key, c] : slo->items()) {
        SloCheck check;
        check.key = key;
        check.label = slo_label(key);
        check.target_ns = optional_ns(c, "target_ns").value_or(0);
        check.value_ns = optional_ns(c, "value_ns");
        check.samples = optional_ns(c, "samples").value_or(0);
        check.low_ns = optional_ns(c, "low_ns");
        check.high_ns = optional_ns(c, "high_ns");
        const auto verdict = c.find("verdict");
        const std::string v = verdict != c.end() && verdict->is_string()
                                  ? verdict->get<std::string>()
                              : c.value("met", false) ? "met"
                                                      : "missed";
        check.verdict = v == "met"            ? SloVerdict::met
                        : v == "inconclusive" ? SloVerdict::inconclusive
                                              : SloVerdict::missed;
        tenant.checks.push_back(check);
      }
    }
    out.push_back(tenant);
  }
  return out;
}

}  // namespace gpumux
