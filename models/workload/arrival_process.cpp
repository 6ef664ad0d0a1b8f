// Arrival processes and token counts (arrival_process.hpp states the processes).
#include "models/workload/arrival_process.hpp"

#include <algorithm>
#include <cmath>

namespace gpumux {

double draw(RandomStream& rng, const DurationDistribution& d) {
  switch (d.kind) {
    case DurationDistribution::Kind::fixed:
      return static_cast<double>(d.value);
    case DurationDistribution::Kind::exponential:
      return rng.exponential(static_cast<double>(d.value));
    case DurationDistribution::Kind::lognormal:
      return rng.lognormal(static_cast<double>(d.value), d.sigma);
    case DurationDistribution::Kind::uniform:
      // min = max is that value (boost's uniform_real_distribution never returns its upper
      // bound, so it would draw forever).
      if (d.upper <= d.value) return static_cast<double>(d.value);
      return rng.uniform(static_cast<double>(d.value), static_cast<double>(d.upper));
    case DurationDistribution::Kind::empirical: {
      const double u = rng.uniform01();
      const auto at = std::upper_bound(d.cumulative.begin(), d.cumulative.end(), u);
      const auto i = std::min<std::size_t>(static_cast<std::size_t>(at - d.cumulative.begin()),
                                           d.points.size() - 1);
      return static_cast<double>(d.points[i]);
    }
  }
  return 0;
}

Nanos think_after_finish(RandomStream& rng, const ArrivalSpec& a, std::int64_t& finished) {
  // The think time (drawn when it is a distribution), plus the away time after every
  // session_cells-th request (a notebook's on/off sessions).
  Nanos think = a.think;
  if (a.think_dist.kind != DurationDistribution::Kind::fixed) {
    think = checked::nanos_saturating(draw(rng, a.think_dist));
  }
  if (a.session_cells > 0 && ++finished % a.session_cells == 0) {
    think = checked::nanos_saturating(static_cast<double>(think) + draw(rng, a.away));
  }
  return think;
}

std::int64_t draw_sequence_length(RandomStream& rng, const DurationDistribution& d,
                                  const std::vector<std::int64_t>& lengths) {
  const double v = draw(rng, d);
  return std::llround(std::clamp(std::isnan(v) ? 0.0 : v, static_cast<double>(lengths.front()),
                                 static_cast<double>(lengths.back())));
}

std::int64_t draw_token_count(RandomStream& rng, const DurationDistribution& d) {
  const double v = draw(rng, d);
  return v > 0 ? std::llround(std::min(v, static_cast<double>(kMaxTokens))) : 0;
}

void draw_request_tokens(RandomStream& rng, const WorkloadSpec& w, std::int64_t& input,
                         std::int64_t& output) {
  if (!w.length_values.empty()) {
    input = draw_sequence_length(rng, w.catalog->seq_len_distribution, w.length_values);
    output = 0;
  } else if (w.has_tokens) {
    input = draw_token_count(rng, w.input_tokens);
    output = draw_token_count(rng, w.output_tokens);
  } else {
    input = output = 0;
  }
}

}  // namespace gpumux
