// The direct path: a tenant alone on a device runs its own events inline, without the event
// queue, while nothing else can happen. This file: when, the handlers, the batched engine's loop;
// the single-launch loop is direct_single.cpp, the pending events direct_events.hpp.
//
// When. A tenant whose workload runs one request at a time on one GPU and one lane, from an
// open arrival process (poisson, constant, trace), with no per-token memory and no batching (a
// fixed memory_per_request, a catalog model's activations, when it fits the device at entry:
// each request allocates and frees it where begin_request and finish_request do),
// or a continuous-batching engine on one GPU and one lane from an open arrival process
// (direct_workload()), on a device of a strategy that submits every ready kernel at once
// (exclusive, MPS, a MIG instance) where it is the only client (Device::SoloSession::available),
// enters
// the direct path at an arrival that finds it idle (no iteration due or running) and the device
// empty. The batched engine's loop (run_direct_batched, at the end of this file) adds one class
// of pending event, the iteration due (kPriorityDefault), and runs the queued path's own
// handlers, so its state is theirs at every event and it delivers the sampler's ticks itself.
//
// What. Its pending events are then only its own: the next arrival (class kPriorityArrival), the
// end of the in-flight kernel's launch overhead (kPriorityControl) and the device's completion
// (kPriorityCompletion). The path runs them in queue order (time, then class; at most one of
// each class is pending, so the sequence number never decides between them) with the same
// handlers' state changes, in the same order, as the queued path: arrive/dispatch/begin_request,
// issue_next_kernel, on_stream_ready, complete_finished/on_kernel_finished (mirrored below, the
// device's part by its Device::SoloSession). It stops before the first event at or after
//     horizon = min(the earliest queued event, the next tick, the end of the window + 1)
// (Simulator::InlineScope, Ticks::stop; queue, ticks and window are the tenant's component's:
// run.hpp),
// so every other event, and every tick of the sampler, sees exactly the state the queued path
// would have shown it; then it queues what is pending. The single-launch loop (direct_single.cpp)
// does not stop at ticks: the sampler reads only the devices' integrals and memory, which that loop
// sets at each of its events as the queued path would, and the tenants' idle(), which it keeps
// (direct_busy_); so it delivers each tick itself before its first event after the tick
// (InlineScope::deliver_ticks_before), where the run loop would have, and stops only at
//     horizon = min(the earliest queued event, the end of the window + 1).
// Without that, a loaded tenant left the loop at every tick and ran its busy period through the
// queue (at rho 0.95 with 10 s ticks, 2.4 % of the requests and 11 % of the instructions). Queued
// then, those events take sequence numbers after every event already queued, as they would have
// (each was scheduled after the entry event began, and no other event ran meanwhile), so ties with
// later events break the same way. Inline events count in events_processed() and call the poll like
// queued ones. Consequence: the result is identical, bit for bit, event count included, with or
// without the direct path (RunOptions::direct_path, GPUMUX_DIRECT=0;
// tests/unit/test_direct_path.cpp checks it on random scenarios).
//
// Cost: the queued path's state changes less three queue operations per request (push, pop, the
// run loop's turn) and the generic dispatch around them; a batched engine's, less the queue
// operations of each iteration's events and the device's full recompute per kernel (the solo
// recompute, Device::inline_recompute_solo, with its table of the lone kernels' grants and
// bounds).
#include <optional>
#include <stdexcept>
#include <string>

#include "models/gpu/device_solo.hpp"
#include "models/run/direct_events.hpp"
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "sim/core/inline_scope.hpp"

namespace gpumux::run {

namespace {

// An open arrival process (its arrivals do not wait for the tenant's requests).
bool open_arrivals(ArrivalProcess p) {
  return p == ArrivalProcess::poisson || p == ArrivalProcess::constant ||
         p == ArrivalProcess::trace;
}

}  // namespace

bool Tenant::direct_workload() const {
  const WorkloadSpec& w = spec_.workload;
  if (w.max_batch > 0) return direct_batched_workload();
  return open_arrivals(w.arrivals.process) && devices_.size() == 1 && lanes_ == 1 &&
         w.max_in_flight == 1 && w.memory_per_token == 0;
}

bool Tenant::holder_workload() const { return spec_.workload.max_batch == 0 && direct_workload(); }

bool Tenant::direct() const {
  return direct_ && Device::SoloSession::available(*devices_.front(), index_);
}

bool Tenant::direct_memory_fits() const {
  const std::int64_t bytes = spec_.workload.memory_per_request;
  if (bytes <= 0 || spec_.workload.max_batch > 0) return true;  // (batched: its own admission)
  return devices_.front()->refusal(index_, bytes) == Device::MemoryRefusal::none;
}

bool Tenant::direct_batched_workload() const {
  const WorkloadSpec& w = spec_.workload;
  return open_arrivals(w.arrivals.process) && devices_.size() == 1 && lanes_ == 1 &&
         w.max_batch > 0;
}

void Tenant::run_direct() {
  Simulator& sim = sim_;
  if (spec_.workload.max_batch > 0) {
    run_direct_batched();
    return;
  }
  // None of this tenant's events is queued now (it is idle, its device empty, this arrival was
  // its one pending event), so the earliest queued event is somebody else's (in its component:
  // run.hpp), else a tick or the end of the component's window (components.cpp).
  // (The single-launch loop keeps no per-request memory.)
  if (single_launch_ != nullptr && spec_.workload.memory_per_request == 0 && run_direct_single()) {
    return;
  }
  Simulator::InlineScope scope(sim, Simulator::InlineScope::Ticks::stop);
  const Nanos horizon = scope.horizon();
  Device::SoloSession session(*devices_.front());
  DirectEvents pending;
  pending.session = &session;
  direct_arrive(pending);  // the queued arrival event now
  pending.arrival = next_open_arrival(sim.now());
  // Counted now, as the run loop would count it after this handler returns.
  bool running = scope.end_queued_event();
  while (running) {
    Nanos t = kNever;
    const int which = pending.earliest(t);  // (no iteration is due outside a batched engine)
    if (t >= horizon) break;                // (kNever: nothing pending)
    scope.begin_event(t);
    if (which == 0) {
      direct_completion(pending);
    } else if (which == 1) {
      direct_ready(pending);
    } else {
      direct_arrive(pending);
      pending.arrival = next_open_arrival(sim.now());
    }
    running = scope.end_event();  // interrupted: stops after this event, as queued
  }
  queue_pending(pending);
}  // (the session queues the completion)

// Back to the queue: the waiting rows become queued Requests, what is pending queued events (of
// distinct classes, so their order of scheduling does not matter; the device's completion is
// queued by its SoloSession when it closes, right after these).
void Tenant::queue_pending(const DirectEvents& pending) {
  Simulator& sim = sim_;
  for (std::size_t i = direct_head_; i < direct_waiting_.size(); ++i) {
    const DirectArrival& a = direct_waiting_[i];
    std::unique_ptr<Request> request = acquire_request();
    take_arrival(*request, a);
    queue_.push_back(std::move(request));
  }
  direct_waiting_.clear();
  direct_head_ = 0;
  if (pending.arrival != kNever) {
    sim.schedule_at(pending.arrival, make_event<&Tenant::on_open_arrival>(*this), kPriorityArrival);
  }
  if (pending.ready != kNever) {
    Stream& stream = *pending.ready_stream;
    stream.ready_event = sim.schedule_at(
        pending.ready, make_event<&Tenant::on_stream_ready>(*this, stream), kPriorityControl);
  }
  if (pending.iteration != kNever) {
    sim.schedule_at(pending.iteration, make_event<&Tenant::on_iteration_due>(*this),
                    kPriorityDefault);
  }
}

void Tenant::take_arrival(Request& r, const DirectArrival& a) {
  r.id = a.id;
  r.arrival = a.arrival;
  r.measured = a.measured;
  r.input_tokens = a.input_tokens;
  r.output_tokens = a.output_tokens;
}

Stream& Tenant::one_stream(Request& r) {
  r.streams.resize(1);
  r.streams_done = 0;
  r.at_barrier = 0;
  r.collective_done = 0;
  Stream& stream = r.streams.front();
  stream.sequence = &r;
  stream.device = 0;
  stream.lane = 0;
  stream.next_kernel = 0;
  stream.ready_event = EventId{};
  stream.launching = false;
  return stream;
}

// arrive() and dispatch(), for a live tenant: the request starts now when none is in flight,
// else waits.
void Tenant::direct_arrive(DirectEvents& pending) {
  DirectArrival a;
  if (!direct_arrival(sim_.now(), a)) return;
  if (pending.serving != nullptr) {
    direct_waiting_.push_back(a);
    return;
  }
  in_flight_list_.push_back(acquire_request());
  ++in_flight_;
  pending.serving = in_flight_list_.back().get();
  if (!direct_start(a, pending)) direct_next(pending);  // completed at once
}

// The request in flight (`pending.serving`'s storage) becomes the arrival `a`, and starts: true
// when it runs, false when it completed at once (no kernels).
bool Tenant::direct_start(const DirectArrival& a, DirectEvents& pending) {
  Request& r = *pending.serving;
  take_arrival(r, a);
  // begin_request(): its memory fits (direct_memory_fits() at entry, and only this request
  // allocates on the device).
  r.start = sim_.now();
  const std::int64_t bytes = spec_.workload.memory_per_request;
  std::string why;
  if (bytes > 0 && devices_.front()->allocate(index_, bytes, why)) {
    r.memory = bytes;
  } else if (bytes > 0) {
    throw std::logic_error("direct path: a per-request allocation failed: " + why);
  } else {
    r.memory = 0;
  }
  expand_kernels(r, alone_scaling(r));
  if (r.durations.empty()) {
    r.solo_latency = 0;
    direct_finish(r);
    return false;
  }
  r.solo_latency = stream_time(r.durations, r.specs);
  // start_streams() for one GPU and one lane.
  Stream& stream = one_stream(r);
  direct_issue(stream, pending);
  return true;
}

// finish_request(r, completed) for the request in flight: recorded; its storage stays with the
// inline run (direct_next) instead of the graveyard.
void Tenant::direct_finish(Request& r) {
  r.finish = sim_.now();
  r.status = RequestStatus::completed;
  r.dead = true;
  release(r.memory);
  r.memory = 0;
  run_.record_request(index_, r);
}

// The request in flight finished: the next waiting one starts in its storage (dispatch()), or
// the storage is recycled and nothing is in flight.
void Tenant::direct_next(DirectEvents& pending) {
  while (direct_head_ < direct_waiting_.size()) {
    const DirectArrival a = direct_waiting_[direct_head_++];
    reset_request(*pending.serving);
    if (direct_start(a, pending)) {
      // Drop the rows already served once they are most of the buffer (amortised O(1)).
      if (direct_head_ * 2 > direct_waiting_.size() && direct_head_ > 64) {
        direct_waiting_.erase(direct_waiting_.begin(),
                              direct_waiting_.begin() + static_cast<std::ptrdiff_t>(direct_head_));
        direct_head_ = 0;
      }
      return;
    }
  }
  direct_waiting_.clear();
  direct_head_ = 0;
  if (free_requests_.size() < kMaxFreeRequests) {
    free_requests_.push_back(std::move(in_flight_list_.back()));
  }
  in_flight_list_.pop_back();
  --in_flight_;
  pending.serving = nullptr;
}

// issue_next_kernel().
void Tenant::direct_issue(Stream& stream, DirectEvents& pending) {
  const Nanos now = sim_.now();
  const LaunchSequence& sequence = *stream.sequence;
  const Nanos issue = issue_time(sequence, stream.next_kernel, now);
  const Nanos ready = issue + launch_time(sequence, stream.next_kernel);
  if (ready <= now) {
    direct_submit(stream, pending);
    return;
  }
  if (pending.holder && issue > now) {
    // The holder's loop: a kernel not issued yet leaves its context without work (the device may
    // switch or go idle in this completion, scheduling its own event after this one), so its
    // launch end is queued now, as issue_next_kernel() queues it, and the loop ends.
    stream.ready_event = sim_.schedule_at(
        ready, make_event<&Tenant::on_stream_ready>(*this, stream), kPriorityControl);
    return;
  }
  pending.ready = ready;
  pending.ready_stream = &stream;
  if (issue <= now) {
    stream.launching = true;
    devices_.front()->kernel_launching(index_, true);
  }
}

// submit_kernel(): inside a completion the device recomputes once at its end.
void Tenant::direct_submit(Stream& stream, DirectEvents& pending) {
  KernelRun& kernel = prepare_kernel(stream);
  Device::SoloSession& session = *pending.session;
  if (pending.holder) {
    if (direct_in_completion_) {
      session.holder_submit_deferred(kernel);
    } else {
      pending.completion = session.holder_submit(kernel);
    }
    return;
  }
  if (direct_in_completion_) {
    session.submit_deferred(kernel);
  } else {
    pending.completion = session.submit(kernel);
  }
}

// on_stream_ready().
void Tenant::direct_ready(DirectEvents& pending) {
  Stream& stream = *pending.ready_stream;
  pending.ready = kNever;
  pending.ready_stream = nullptr;
  stream.ready_event = EventId{};
  if (stream.launching) {
    stream.launching = false;
    devices_.front()->kernel_launching(index_, false);
  }
  direct_submit(stream, pending);
}

// Device::on_completion() with on_kernel_finished() and advance_stream() for the one request in
// flight.
void Tenant::direct_completion(DirectEvents& pending) {
  Device::SoloSession& session = *pending.session;
  const Nanos now = sim_.now();
  Request& r = *pending.serving;
  Stream& stream = r.streams.front();
  KernelRun& kernel = stream.kernel;
  pending.completion = kNever;
  if (!session.complete(kernel, pending.completion)) return;  // runs on
  direct_in_completion_ = true;
  if (run_.wants_kernels()) {
    run_.record_kernel(KernelRecord{static_cast<std::uint32_t>(index_), r.id, kernel.kernel_index,
                                    devices_.front()->index(), kernel.first_start, now});
  }
  if (output_token_kernels_ && r.first_token < 0 &&
      r.specs[stream.next_kernel]->repeat_per_token == TokenCount::output) {
    r.first_token = now;
  }
  ++stream.next_kernel;
  if (stream.next_kernel == r.durations.size()) {
    ++r.streams_done;  // sequence_done()
    direct_finish(r);
    direct_next(pending);
  } else {
    direct_issue(stream, pending);
  }
  direct_in_completion_ = false;
  pending.completion = session.end_completions();
}

// The batched loop. A batched engine's state is the queued path's own (queue_, in_flight_list_,
// the iteration and its stream, memory): the handlers run as queued, and only where they would
// queue an event do they record it in `pending` instead (dispatch(): the iteration due at now;
// issue_next_kernel(): direct_issue(), the launch end or the submission through the device's
// SoloSession). At most one event of each class is pending (one arrival ahead, one
// iteration due while iteration_pending_, one stream, one running kernel), so queue order is
// (time, class): completion, control (launch end), arrival, default (iteration due). The state
// the sampler reads (the device's integrals and memory, idle(): queue_ and in_flight_) is the
// queued path's after every event, so the loop delivers the ticks itself before its first event
// after each (as the single-launch loop does) and stops only at
//     horizon = min(the earliest queued event, the end of the window + 1).
void Tenant::run_direct_batched() {
  Simulator& sim = sim_;
  Simulator::InlineScope scope(sim, Simulator::InlineScope::Ticks::deliver);
  const Nanos horizon = scope.horizon();
  Nanos next_tick = scope.next_tick();
  Device::SoloSession session(*devices_.front());
  DirectEvents pending;
  pending.session = &session;
  direct_pending_ = &pending;
  arrive();  // the queued arrival event now (dispatch() sets pending.iteration)
  pending.arrival = next_open_arrival(sim.now());
  bool running = scope.end_queued_event();
  while (running) {
    Nanos t = kNever;
    const int which = pending.earliest(t);
    if (t >= horizon) break;  // (kNever: nothing pending)
    if (t > next_tick) next_tick = scope.deliver_ticks_before(t);
    scope.begin_event(t);
    switch (which) {
      case 0:
        direct_batched_completion(pending);
        break;
      case 1:
        recycle_graveyard();  // on_stream_ready()
        direct_ready(pending);
        break;
      case 2:
        recycle_graveyard();  // on_open_arrival()
        arrive();
        pending.arrival = next_open_arrival(sim.now());
        break;
      default:
        pending.iteration = kNever;
        on_iteration_due();
        break;
    }
    running = scope.end_event();  // interrupted: stops after this event, as queued
  }
  direct_pending_ = nullptr;
  queue_pending(pending);
}  // (the session queues the completion)

// The holder's loop. While a context runs its slice on a time-sliced device
// (TimeSlicingDevice::holds_device), its tenant's kernels alone run there, and the device
// schedules nothing of its own for them: a submission joins the running set, a completion tells
// the owner and recomputes; the slice's end, if another context waits, is an event already
// queued; only a holder left without work (nothing running, waiting or issued) makes the device
// switch or go idle, scheduling its own event. So the holder's kernel events (the device's
// completion, kPriorityCompletion; the next kernel's launch end, kPriorityControl; at most one of
// them pending: one request in flight, one stream) run inline, each with the queued path's own
// code: the device's submit() and completion handler in the session's holder mode, the tenant's
// on_kernel_finished() with its issue (and a next request's dispatch and begin_request) handing
// the launch end to `pending` (direct_pending_). A kernel that is not issued yet (its host time
// is still running) leaves the context without work: direct_issue() queues its launch end at
// once, as issue_next_kernel() does, before the device's own event of the same completion, and
// the loop ends there. The next request's memory is the finished one's (a fixed
// memory_per_request, no per-token memory; only this tenant's events run), so it fits again and
// nothing is OOM-killed inline. Arrivals stay queued events, so the loop stops before the first
// event of anything else (an arrival of any tenant, another context's launch end, the slice's
// end, a fault, the warm-up mark, the end of the window + 1, a tick). What is pending is queued
// then, after everything queued before the loop began, as the queued path would have scheduled
// it (no other event ran meanwhile, and the device scheduled nothing but in the loop's last
// event). The same argument as the loops above: every result is the queued path's, bit for bit,
// event count included (DirectPath.TimeSlicedHolders...).
void Tenant::run_holder(Stream& stream) {
  Simulator& sim = sim_;
  Simulator::InlineScope scope(sim, Simulator::InlineScope::Ticks::stop);
  const Nanos horizon = scope.horizon();
  Device::SoloSession session(*devices_.front());
  DirectEvents pending;
  pending.session = &session;
  pending.holder = true;
  direct_pending_ = &pending;
  pending.completion = session.holder_submit(prepare_kernel(stream));  // submit_kernel()
  bool running = scope.end_queued_event();
  while (running) {
    Nanos t = kNever;
    const int which = pending.earliest(t);  // (no arrival, no iteration: 0 or 1)
    if (t >= horizon) break;                // (kNever: nothing pending)
    if (which == 1 && !session.held(index_)) break;
    scope.begin_event(t);
    if (which == 0) {
      direct_in_completion_ = true;  // (a submission inside it waits for its recompute)
      pending.completion = session.holder_complete();
      direct_in_completion_ = false;
    } else {
      recycle_graveyard();  // on_stream_ready()
      direct_ready(pending);
    }
    running = scope.end_event();  // interrupted: stops after this event, as queued
  }
  direct_pending_ = nullptr;
  queue_pending(pending);
}  // (the session queues the completion)

void Tenant::direct_iteration_due() { direct_pending_->iteration = sim_.now(); }

// Device::on_completion() for the iteration's running kernel: the tenant's on_kernel_finished()
// between SoloSession::complete() and end_completions(), as deliver_finished() calls it.
void Tenant::direct_batched_completion(DirectEvents& pending) {
  Device::SoloSession& session = *pending.session;
  KernelRun& kernel = iteration_.streams.front().kernel;
  pending.completion = kNever;
  if (!session.complete(kernel, pending.completion)) return;  // runs on
  direct_in_completion_ = true;
  on_kernel_finished(kernel, sim_.now());
  direct_in_completion_ = false;
  pending.completion = session.end_completions();
}

}  // namespace gpumux::run