#include "models/workload/kernel_spec.hpp"

#include <algorithm>
#include <cmath>

#include "models/workload/roofline.hpp"

namespace gpumux {

double DurationDistribution::mean() const {
  switch (kind) {
    case Kind::fixed:
    case Kind::exponential:
      return static_cast<double>(value);
    case Kind::lognormal:  // E[X] = median * exp(sigma^2 / 2)
      return static_cast<double>(value) * std::exp(sigma * sigma / 2.0);
    case Kind::uniform:
      return (static_cast<double>(value) + static_cast<double>(upper)) / 2.0;
    case Kind::empirical: {  // sum of point x its probability
      double sum = 0, below = 0;
      for (std::size_t i = 0; i < points.size(); ++i) {
        sum += static_cast<double>(points[i]) * (cumulative[i] - below);
        below = cumulative[i];
      }
      return sum;
    }
  }
  return static_cast<double>(value);
}

namespace {

// A KernelRoofline's compute and memory times for a launch over n tokens, s sequences and c
// context tokens, seconds (kernel_spec.hpp's F / flop_rate and B / byte_rate; 0 without a rate).
struct RooflineTimes {
  double compute = 0, memory = 0;
};
RooflineTimes roofline_times(const KernelRoofline& r, double n, double s, double c) {
  const double flops = r.flops_per_token * n + r.flops_per_sequence * s + r.flops_per_context * c;
  const double bytes =
      r.bytes_fixed + r.bytes_per_token * n + r.bytes_per_sequence * s + r.bytes_per_context * c;
  RooflineTimes t;
  t.compute = r.flop_rate > 0 ? flops / r.flop_rate : 0.0;
  t.memory = r.byte_rate > 0 ? bytes / r.byte_rate : 0.0;
  return t;
}

}  // namespace

double KernelRoofline::nanos(double n, double s, double c) const {
  if (!table_rows.empty()) {
    const double rows = rows_are_sequences ? s : n;
    // The segment [lo, hi] holding rows (the first or last one outside the table's range).
    const std::size_t size = table_rows.size();
    const auto above = std::lower_bound(table_rows.begin(), table_rows.end(), rows);
    const std::size_t i = std::clamp<std::size_t>(
        static_cast<std::size_t>(above - table_rows.begin()), 1, size > 1 ? size - 1 : 1);
    const std::size_t lo = size > 1 ? i - 1 : 0;
    const std::size_t hi = size > 1 ? i : 0;
    double t = table_ns[lo];
    if (hi != lo) {
      const double slope = (table_ns[hi] - table_ns[lo]) / (table_rows[hi] - table_rows[lo]);
      t = table_ns[lo] + slope * (rows - table_rows[lo]);
    }
    return std::max(std::max(0.0, t) + fixed_ns, floor_ns);
  }
  const RooflineTimes t = roofline_times(*this, n, s, c);
  return std::max(std::max(t.compute, t.memory) * 1e9 + fixed_ns, floor_ns);
}

void KernelRoofline::shape(double n, double s, double c, double& sm_fraction, double& waves,
                           double& memory_bound, double& busy_share) const {
  const RooflineTimes t = roofline_times(*this, n, s, c);
  const RooflinePhases split = roofline_phases(t.compute, t.memory);
  memory_bound = split.memory_bound;
  busy_share = split.busy_share;
  const double rows = rows_are_sequences ? s : n;
  const double blocks = std::ceil(std::max(1.0, rows) / tile_rows) * std::max(1.0, column_blocks);
  if (sms <= 0) {
    sm_fraction = waves = 1.0;
    return;
  }
  sm_fraction = std::min(1.0, blocks / sms);
  waves = std::max(1.0, blocks / (std::max(1.0, blocks_per_sm) * sms));
}

}  // namespace gpumux
