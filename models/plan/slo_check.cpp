#include "models/plan/slo_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/normal.hpp>

#include <fmt/format.h>

namespace gpumux {
namespace {

std::string format_latency(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  return fmt::format("{:.3g} us", ns / 1e3);
}

std::string format_bound(const std::optional<double>& ns) {
  return ns ? format_latency(*ns) : std::string("-");
}

std::string evidence(const PlanSloTarget& t) {
  return fmt::format("{} samples, CI [{}, {}]", t.samples, format_bound(t.low_ns),
                     format_bound(t.high_ns));
}

}  // namespace

PlanSloVerdict check_plan_slo(const PlanSloInput& in) {
  PlanSloVerdict out;
  if (in.oom_events > 0) {
    out.met = false;
    out.reason = fmt::format("{} OOM-killed ({} event(s))", in.name, in.oom_events);
    return out;
  }
  if (in.failed > 0) {
    out.met = false;
    out.reason = fmt::format("{}: {} request(s) failed", in.name, in.failed);
    return out;
  }
  if (in.best_effort) return out;
  const double allowed = 1.0 - in.headroom;
  const std::string less =
      in.headroom > 0 ? fmt::format(" less {:.0f} % headroom", in.headroom * 100) : "";
  std::string inconclusive;  // the first inconclusive target, reported when nothing is missed
  for (const PlanSloTarget& t : in.targets) {
    if (!(t.target_ns > 0)) continue;
    if (!t.value_ns) {
      if (out.met || out.inconclusive) {
        out.met = false;
        out.inconclusive = false;
        out.reason = fmt::format("{} {}: no samples", in.name, t.label);
      }
      continue;
    }
    const double value = *t.value_ns;
    const double ratio = value / t.target_ns;
    out.worst_bound_ratio =
        std::max(out.worst_bound_ratio, t.high_ns.value_or(value) / t.target_ns);
    if (ratio >= out.worst_ratio) {
      out.worst_ratio = ratio;
      out.worst_samples = t.samples;
      out.worst = fmt::format("{} {} / {} ({})", t.label, format_latency(value),
                              format_latency(t.target_ns), evidence(t));
    }
    const double allowance = t.target_ns * allowed;
    if (t.high_ns && *t.high_ns <= allowance) continue;  // met
    if (t.low_ns && *t.low_ns > allowance) {             // missed
      if (out.met || out.inconclusive) {
        out.met = false;
        out.inconclusive = false;
        out.reason = fmt::format("{} {} {} > {}{} ({})", in.name, t.label, format_latency(value),
                                 format_latency(t.target_ns), less, evidence(t));
      }
      continue;
    }
    if (out.met) {  // inconclusive, unless a later target is missed
      out.met = false;
      out.inconclusive = true;
      out.reason =
          fmt::format("{} {} {} vs {}{}: inconclusive ({})", in.name, t.label,
                      format_latency(value), format_latency(t.target_ns), less, evidence(t));
    }
  }
  return out;
}

double plan_met_probability(std::span<const PlanSloInput> tenants, double confidence,
                            double measured_s, std::span<const double> later_measured_s,
                            double kappa) {
  if (!(measured_s > 0) || !(confidence > 0 && confidence < 1) || !(kappa > 0)) return 1;
  const boost::math::normal_distribution<double> normal;
  const double z = boost::math::quantile(normal, 1 - (1 - confidence) / 2);
  for (const PlanSloInput& in : tenants) {
    if (in.oom_events > 0 || in.failed > 0) return 1;
  }
  bool later = false;
  for (const double m : later_measured_s) later = later || m > measured_s;
  if (!later) return 0;
  double met_min = 1;
  for (const PlanSloInput& in : tenants) {
    if (in.best_effort) continue;
    for (const PlanSloTarget& t : in.targets) {
      if (!(t.target_ns > 0) || !t.value_ns || !t.low_ns || !t.high_ns) continue;
      const double allowance = t.target_ns * (1.0 - in.headroom);
      const double p = *t.value_ns, up = *t.high_ns - p, down = p - *t.low_ns;
      // Projected only above the allowance, with a lower side to scale the fall by.
      if (!(p > allowance) || !(up >= 0) || !(down > 0)) continue;
      const double s = kappa * down / z;
      double met = 0;
      for (const double m : later_measured_s) {
        if (!(m > measured_s)) continue;
        const double r = measured_s / m;
        met += boost::math::cdf(
            normal,
            std::clamp((allowance - p - up * std::sqrt(r)) / (s * std::sqrt(1 - r)), -40.0, 40.0));
      }
      met_min = std::min(met_min, met);
    }
  }
  return met_min;
}

}  // namespace gpumux
