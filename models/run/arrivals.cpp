// Arrivals: when a tenant's requests arrive and with how many tokens. Open processes (poisson,
// constant rate without drift, a trace) schedule one arrival ahead; a closed loop keeps
// `concurrency` clients that each send the next request `think` after the last one finished
// (finish_request schedules it) or failed (arrive, in requests.cpp). Arrivals stop at
// `duration`. Token counts come from the trace, else from the workload's token distributions
// (their own random stream).
#include <algorithm>
#include <cmath>

#include "models/gpu/device_solo.hpp"
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

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

void Tenant::on_open_arrival() {
  recycle_graveyard();
  if (direct_ && !dead_ && idle() && !iteration_pending_ && !iteration_running_ &&
      Device::SoloSession::available(*devices_.front(), index_)) {
    run_direct();  // this arrival and what follows it, inline (direct.cpp)
    return;
  }
  arrive();
  schedule_next_open_arrival();
}

void Tenant::on_closed_arrival() {
  recycle_graveyard();
  arrive();
}

void Tenant::schedule_closed_arrival(Nanos at) {
  sim_.schedule_at(at, make_event<&Tenant::on_closed_arrival>(*this), kPriorityArrival);
}

void Tenant::schedule_next_open_arrival() {
  const Nanos next = next_open_arrival(sim_.now());
  if (next != kNever) {
    sim_.schedule_at(next, make_event<&Tenant::on_open_arrival>(*this), kPriorityArrival);
  }
}

void Tenant::assign_tokens(Request& r) { draw_tokens(r.input_tokens, r.output_tokens); }

void Tenant::read_or_draw_tokens(std::int64_t& input, std::int64_t& output) {
  // A catalog request's sequence length (its input tokens, with a seq_len distribution): the
  // draw rounded, clamped to the lengths its kernels were built for.
  const auto draw_length = [this]() -> std::int64_t {
    const std::vector<std::int64_t>& lengths = spec_.workload.length_values;
    const double v = draw(tokens_rng_, spec_.workload.catalog->seq_len_distribution);
    return std::llround(std::clamp(std::isnan(v) ? 0.0 : v, static_cast<double>(lengths.front()),
                                   static_cast<double>(lengths.back())));
  };
  if (spec_.workload.arrivals.process == ArrivalProcess::trace && trace_.position() > 0) {
    const TraceRequest& t = trace_request_;
    input = t.input_tokens;
    output = t.output_tokens;
    // A trace row without a prompt length leaves a catalog request's length to its distribution.
    if (input <= 0 && !spec_.workload.length_values.empty()) input = draw_length();
  } else if (!spec_.workload.length_values.empty()) {
    input = draw_length();
    output = 0;
  } else if (spec_.workload.has_tokens) {
    // A draw is clamped to [0, kMaxTokens] (a lognormal tail may reach infinity).
    const auto tokens = [this](const DurationDistribution& d) {
      const double v = draw(tokens_rng_, d);
      return v > 0 ? std::llround(std::min(v, static_cast<double>(kMaxTokens))) : 0;
    };
    input = tokens(spec_.workload.input_tokens);
    output = tokens(spec_.workload.output_tokens);
  } else {
    input = output = 0;
  }
}

}  // namespace gpumux::run
