#include "models/plan/slo_check.hpp"

#include <algorithm>

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

}  // namespace gpumux
