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
  for (const PlanSloTarget& t : in.targets) {
    if (!(t.target_ns > 0)) continue;
    if (!t.value_ns) {
      if (out.met) {
        out.met = false;
        out.reason = fmt::format("{} {}: no samples", in.name, t.label);
      }
      continue;
    }
    const double value = *t.value_ns;
    const double ratio = value / t.target_ns;
    if (ratio >= out.worst_ratio) {
      out.worst_ratio = ratio;
      out.worst =
          fmt::format("{} {} / {}", t.label, format_latency(value), format_latency(t.target_ns));
    }
    if (value > t.target_ns * allowed && out.met) {
      out.met = false;
      out.reason = fmt::format("{} {} {} > {}", in.name, t.label, format_latency(value),
                               format_latency(t.target_ns));
      if (in.headroom > 0) out.reason += fmt::format(" less {:.0f} % headroom", in.headroom * 100);
    }
  }
  return out;
}

}  // namespace gpumux
