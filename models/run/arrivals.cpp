// Arrivals as events: when a tenant's requests arrive and with how many tokens. Open processes
// (poisson, constant rate without drift, a trace) schedule one arrival ahead; a closed loop keeps
// `concurrency` clients that each send the next request `think` after the last one finished
// (finish_request schedules it) or failed (arrive, in requests.cpp). Arrivals stop at
// `duration`. Token counts come from the trace, else from the workload's token distributions
// (their own random stream). The times, gaps and draws themselves are
// models/workload/arrival_process.hpp's.
#include "models/gpu/device_solo.hpp"
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

void Tenant::on_open_arrival() {
  recycle_graveyard();
  if (direct_ && !dead_ && idle() && !iteration_pending_ && !iteration_running_ &&
      Device::SoloSession::available(*devices_.front(), index_) && direct_memory_fits()) {
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
  const WorkloadSpec& w = spec_.workload;
  if (w.arrivals.process == ArrivalProcess::trace && trace_.position() > 0) {
    const TraceRequest& t = trace_request_;
    input = t.input_tokens;
    output = t.output_tokens;
    // A trace row without a prompt length leaves a catalog request's length to its distribution.
    if (input <= 0 && !w.length_values.empty()) {
      input = draw_sequence_length(tokens_rng_, w.catalog->seq_len_distribution, w.length_values);
    }
  } else {
    draw_request_tokens(tokens_rng_, w, input, output);
  }
}

}  // namespace gpumux::run
