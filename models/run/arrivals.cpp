// Arrivals: when a tenant's requests arrive and with how many tokens. Open processes (poisson,
// constant rate without drift, a trace) schedule one arrival ahead; a closed loop keeps
// `concurrency` clients that each send the next request `think` after the last one finished
// (finish_request schedules it) or failed (arrive, in requests.cpp). Arrivals stop at
// `duration`. Token counts come from the trace, else from the workload's token distributions
// (their own random stream).
#include <algorithm>
#include <cmath>

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
      return rng.uniform(static_cast<double>(d.value), static_cast<double>(d.upper));
  }
  return 0;
}

void Tenant::on_open_arrival() {
  recycle_graveyard();
  arrive();
  schedule_next_open_arrival();
}

void Tenant::on_closed_arrival() {
  recycle_graveyard();
  arrive();
}

void Tenant::schedule_closed_arrival(Nanos at) {
  run_.sim.schedule_at(at, make_event<&Tenant::on_closed_arrival>(*this), kPriorityArrival);
}

void Tenant::schedule_next_open_arrival() {
  const ArrivalSpec& a = spec_.workload.arrivals;
  const Nanos now = run_.sim.now();
  Nanos next = kNever;
  switch (a.process) {
    case ArrivalProcess::poisson: {
      // Saturating: a gap beyond the int64 horizon is an arrival that never comes.
      const Nanos gap = checked::nanos_saturating(arrivals_rng_.exponential(1e9 / a.rate_per_s));
      next = gap > kNever - now ? kNever : now + gap;
    } break;
    case ArrivalProcess::constant:
      // Arrivals at 0, 1/rate, 2/rate, ... computed from the count (no drift).
      // Shifted to start at active.from.
      next = checked::nanos_saturating(static_cast<double>(spec_.active_from) +
                                       static_cast<double>(next_id_) * 1e9 / a.rate_per_s);
      break;
    case ArrivalProcess::trace:
      if (trace_.next(trace_request_)) {
        const Nanos t = trace_request_.arrival;
        next = t > kNever - spec_.active_from ? kNever : spec_.active_from + t;
      }
      break;
    case ArrivalProcess::closed:
      return;
  }
  if (next < arrivals_end_) {
    run_.sim.schedule_at(next, make_event<&Tenant::on_open_arrival>(*this), kPriorityArrival);
  }
}

void Tenant::assign_tokens(Request& r) {
  if (spec_.workload.arrivals.process == ArrivalProcess::trace && trace_.position() > 0) {
    const TraceRequest& t = trace_request_;
    r.input_tokens = t.input_tokens;
    r.output_tokens = t.output_tokens;
  } else if (spec_.workload.has_tokens) {
    // A draw is clamped to [0, kMaxTokens] (a lognormal tail may reach infinity).
    const auto tokens = [this](const DurationDistribution& d) {
      const double v = draw(tokens_rng_, d);
      return v > 0 ? std::llround(std::min(v, static_cast<double>(kMaxTokens))) : 0;
    };
    r.input_tokens = tokens(spec_.workload.input_tokens);
    r.output_tokens = tokens(spec_.workload.output_tokens);
  } else {
    r.input_tokens = r.output_tokens = 0;
  }
}

}  // namespace gpumux::run
