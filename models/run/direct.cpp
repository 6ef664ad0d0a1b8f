// The direct path: a tenant alone on a device runs its own events inline, without the event
// queue, while nothing else can happen.
//
// When. A tenant whose workload runs one request at a time on one GPU and one lane, from an
// open arrival process (poisson, constant, trace), with no per-request memory and no batching
// (direct_workload()), on a device of a strategy that submits every ready kernel at once
// (exclusive, MPS, a MIG instance) where it is the only client (Device::inline_ready_for), enters
// the direct path at an arrival that finds it idle and the device empty.
//
// What. Its pending events are then only its own: the next arrival (class kPriorityArrival), the
// end of the in-flight kernel's launch overhead (kPriorityControl) and the device's completion
// (kPriorityCompletion). The path runs them in queue order (time, then class; at most one of
// each class is pending, so the sequence number never decides between them) with the same
// handlers' state changes, in the same order, as the queued path: arrive/dispatch/begin_request,
// issue_next_kernel, on_stream_ready, complete_finished/on_kernel_finished (mirrored below, the
// device's part by Device::inline_*). It stops before the first event at or after
//     horizon = min(the earliest queued event, the next tick),
// so every other event, and every tick of the sampler, sees exactly the state the queued path
// would have shown it; then it queues what is pending. Queued then, those events take sequence
// numbers after every event already queued, as they would have (each was scheduled after the
// entry event began, and no other event ran meanwhile), so ties with later events break the same
// way. Inline events count in events_processed() and call the poll like queued ones.
// Consequence: the result is identical, bit for bit, event count included, with or without the
// direct path (RunOptions::direct_path, GPUMUX_DIRECT=0; tests/unit/test_direct_path.cpp checks
// it on random scenarios).
//
// Cost: the queued path's state changes less three queue operations per request (push, pop, the
// run loop's turn) and the generic dispatch around them.
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"

namespace gpumux::run {

struct Tenant::DirectEvents {
  Nanos arrival = kNever;          // the next open arrival
  Nanos ready = kNever;            // the in-flight kernel's launch overhead ends
  Stream* ready_stream = nullptr;  // whose
  Nanos completion = kNever;       // the device's running kernel finishes
};

bool Tenant::direct_workload() const {
  const WorkloadSpec& w = spec_.workload;
  const ArrivalProcess p = w.arrivals.process;
  const bool open =
      p == ArrivalProcess::poisson || p == ArrivalProcess::constant || p == ArrivalProcess::trace;
  return open && devices_.size() == 1 && lanes_ == 1 && w.max_batch <= 0 && w.max_in_flight == 1 &&
         w.memory_per_request == 0 && w.memory_per_token == 0;
}

void Tenant::run_direct() {
  Simulator& sim = run_.sim;
  // None of this tenant's events is queued now (it is idle, its device empty, this arrival was
  // its one pending event), so the earliest queued event is somebody else's.
  const Nanos horizon = std::min(sim.next_event_time(), sim.next_tick());
  DirectEvents pending;
  direct_arrive(pending);  // the queued arrival event now
  pending.arrival = next_open_arrival();
  // Counted now, as the run loop would count it after this handler returns.
  bool running = sim.end_queued_event_early();
  while (running) {
    // The earliest pending event in queue order: time, then class.
    Nanos t = pending.completion;
    int which = 0;
    if (pending.ready < t) {
      t = pending.ready;
      which = 1;
    }
    if (pending.arrival < t) {
      t = pending.arrival;
      which = 2;
    }
    if (t >= horizon) break;  // (kNever: nothing pending)
    sim.begin_inline_event(t);
    if (which == 0) {
      direct_completion(pending);
    } else if (which == 1) {
      direct_ready(pending);
    } else {
      recycle_graveyard();
      direct_arrive(pending);
      pending.arrival = next_open_arrival();
    }
    running = sim.end_inline_event();  // interrupted: stops after this event, as queued
  }
  // Back to the queue: what is pending becomes queued events (distinct classes).
  if (pending.arrival != kNever) {
    sim.schedule_at(pending.arrival, make_event<&Tenant::on_open_arrival>(*this), kPriorityArrival);
  }
  if (pending.ready != kNever) {
    Stream& stream = *pending.ready_stream;
    stream.ready_event = sim.schedule_at(
        pending.ready, make_event<&Tenant::on_stream_ready>(*this, stream), kPriorityControl);
  }
  devices_.front()->schedule_inline_completion(pending.completion);
}

// arrive(), for a live tenant.
void Tenant::direct_arrive(DirectEvents& pending) {
  const Nanos now = run_.sim.now();
  if (now >= arrivals_end_) return;
  std::unique_ptr<Request> request = acquire_request();
  request->id = next_id_++;
  request->arrival = now;
  request->measured = now >= run_.scenario.warmup;
  assign_tokens(*request);
  run_.record_arrival(index_, *request);
  queue_.push_back(std::move(request));
  direct_dispatch(pending);
}

// dispatch() without batching.
void Tenant::direct_dispatch(DirectEvents& pending) {
  while (in_flight_ < spec_.workload.max_in_flight && !queue_.empty()) {
    std::unique_ptr<Request> request = std::move(queue_.front());
    queue_.pop_front();
    Request& r = *request;
    in_flight_list_.push_back(std::move(request));
    ++in_flight_;
    direct_begin(r, pending);
  }
}

// begin_request() with no memory to allocate, then start_streams() for one GPU and one lane.
void Tenant::direct_begin(Request& r, DirectEvents& pending) {
  r.start = run_.sim.now();
  r.memory = 0;
  expand_kernels(r, KernelScaling{r.input_tokens, r.output_tokens, true, 1.0});
  if (r.durations.empty()) {
    r.solo_latency = 0;
    finish_request(r, RequestStatus::completed);
    return;
  }
  r.solo_latency = stream_time(r.durations, r.specs);
  r.streams.resize(1);
  r.streams_done = 0;
  r.at_barrier = 0;
  Stream& stream = r.streams.front();
  stream = Stream{};
  stream.sequence = &r;
  direct_issue(stream, pending);
}

// issue_next_kernel().
void Tenant::direct_issue(Stream& stream, DirectEvents& pending) {
  const Nanos now = run_.sim.now();
  const LaunchSequence& sequence = *stream.sequence;
  const Nanos issue = issue_time(sequence, stream.next_kernel, now);
  const Nanos ready = issue + launch_time(sequence, stream.next_kernel);
  if (ready <= now) {
    direct_submit(stream, pending);
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
  Device& device = *devices_.front();
  if (direct_in_completion_) {
    device.inline_submit_deferred(kernel);
  } else {
    pending.completion = device.inline_submit(kernel);
  }
}

// on_stream_ready().
void Tenant::direct_ready(DirectEvents& pending) {
  recycle_graveyard();
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
  Device& device = *devices_.front();
  const Nanos now = run_.sim.now();
  Request& r = *in_flight_list_.front();
  Stream& stream = r.streams.front();
  KernelRun& kernel = stream.kernel;
  pending.completion = kNever;
  if (!device.inline_complete(kernel, pending.completion)) return;  // runs on
  direct_in_completion_ = true;
  run_.record_kernel(KernelRecord{static_cast<std::uint32_t>(index_), r.id, kernel.kernel_index,
                                  device.index(), kernel.first_start, now});
  if (r.first_token < 0 && r.specs[stream.next_kernel]->repeat_per_token == TokenCount::output) {
    r.first_token = now;
  }
  ++stream.next_kernel;
  if (stream.next_kernel == r.durations.size()) {
    ++r.streams_done;  // sequence_done()
    finish_request(r, RequestStatus::completed);
    direct_dispatch(pending);
  } else {
    direct_issue(stream, pending);
  }
  direct_in_completion_ = false;
  pending.completion = device.inline_end_completions();
}

}  // namespace gpumux::run
