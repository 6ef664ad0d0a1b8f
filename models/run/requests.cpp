// Request lifecycle: a request arrives (fails at once on a dead tenant; a dead closed-loop client
// retries after max(think, 1 ms)), is acquired (recycled storage), queued FIFO, dispatched while
// fewer than `max_in_flight` run (batched serving admits in batching.cpp instead), started
// (launch.cpp: memory, kernels drawn, solo latency, streams), and completed or failed once:
// finish_request for one that ran, fail_waiting for one that never did. Requests finished inside
// a device callback wait in the graveyard until the tenant's next event, so a device never sees
// a kernel of a recycled request.
#include <algorithm>
#include <cmath>

#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

void Tenant::arrive() {
  const Nanos now = sim_.now();
  if (now >= arrivals_end_) return;
  std::unique_ptr<Request> request = acquire_request();
  request->id = next_id_++;
  request->arrival = now;
  request->measured = now >= run_.scenario.warmup;
  assign_tokens(*request);
  run_.record_arrival(index_, *request);
  if (dead_) {
    fail_waiting(std::move(request));
    if (spec_.workload.arrivals.process == ArrivalProcess::closed) {
      // A dead closed-loop client retries after its think time (at least 1 ms, to avoid a storm).
      const Nanos delay = std::max<Nanos>(spec_.workload.arrivals.think, kMillisecond);
      if (now + delay < arrivals_end_) schedule_closed_arrival(now + delay);
    }
    return;
  }
  queue_.push_back(std::move(request));
  dispatch();
}

std::unique_ptr<Request> Tenant::acquire_request() {
  if (free_requests_.empty()) return std::make_unique<Request>();
  std::unique_ptr<Request> r = std::move(free_requests_.back());
  free_requests_.pop_back();
  reset_request(*r);
  return r;
}

void Tenant::reset_request(Request& r) {
  r.start = r.finish = -1;
  r.status = RequestStatus::unfinished;
  r.measured = r.dead = false;
  r.solo_latency = 0;
  r.durations.clear();
  r.specs.clear();
  r.shapes.clear();
  r.memory = 0;
  r.tokens_done = 0;
  r.first_token = -1;
  r.prefill_goal = r.prefilled = r.kv_tokens = r.chunk = 0;
  r.decoding = false;
  r.preemptions = 0;
  r.streams_done = 0;
  r.at_barrier = 0;
  r.collective_done = 0;
}

void Tenant::dispatch() {
  if (spec_.workload.max_batch > 0) {
    // The next iteration starts after every event of this instant (so requests arriving
    // together are batched together).
    if (!dead_ && !iteration_running_ && !iteration_pending_) {
      iteration_pending_ = true;
      if (direct_pending_ != nullptr) {
        direct_iteration_due();  // the batched inline loop runs it (direct.cpp)
      } else {
        sim_.schedule_at(sim_.now(), make_event<&Tenant::on_iteration_due>(*this),
                         kPriorityDefault);
      }
    }
    return;
  }
  while (!dead_ && in_flight_ < spec_.workload.max_in_flight && !queue_.empty()) {
    std::unique_ptr<Request> request = std::move(queue_.front());
    queue_.pop_front();
    Request& r = *request;
    in_flight_list_.push_back(std::move(request));
    ++in_flight_;
    if (!begin_request(r)) return;  // the tenant was killed
  }
}

void Tenant::sequence_done(LaunchSequence& sequence) {
  if (sequence.request == nullptr) {
    end_iteration();
    return;
  }
  finish_request(*sequence.request, RequestStatus::completed);
  dispatch();
}

void Tenant::finish_request(Request& r, RequestStatus status) {
  const Nanos now = sim_.now();
  r.finish = now;
  r.status = status;
  r.dead = true;
  release(r.memory);
  r.memory = 0;
  run_.record_request(index_, r);
  --in_flight_;
  const auto it = std::find_if(in_flight_list_.begin(), in_flight_list_.end(),
                               [&](const auto& p) { return p.get() == &r; });
  if (it != in_flight_list_.end()) {
    graveyard_.push_back(std::move(*it));
    in_flight_list_.erase(it);
  }
  const ArrivalSpec& a = spec_.workload.arrivals;
  if (a.process == ArrivalProcess::closed) {
    // The think time, plus the away time after every session_cells-th request.
    const Nanos think = think_after_finish(arrivals_rng_, a, closed_finished_);
    if (now + think < arrivals_end_) schedule_closed_arrival(now + think);
  }
}

void Tenant::fail_waiting(std::unique_ptr<Request> request) {
  Request& r = *request;
  r.start = -1;
  r.finish = sim_.now();
  r.status = RequestStatus::failed;
  run_.record_request(index_, r);
  graveyard_.push_back(std::move(request));
}

}  // namespace gpumux::run
