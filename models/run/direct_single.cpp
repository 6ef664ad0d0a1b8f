// The direct path's single-launch loop (Tenant::run_direct_single): a tenant alone on its device
// whose request is one kernel launched once runs its requests as a handful of numbers. When and
// why it is exact: direct.cpp; the pending events: direct_events.hpp.
#include <algorithm>

#include "models/gpu/device_solo.hpp"
#include "models/run/direct_events.hpp"
#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "sim/core/inline_scope.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

// The single-launch loop: one kernel per request, so a request's whole state is a handful of
// numbers. The same changes as the handlers above, for that case:
//  - start (begin_request): work = kernel_work(single_launch_duration(draw)), solo latency =
//    stream_time() of one kernel = max(0, stream_step(0, kernel 0) + work), issued at max(now +
//    host_before, now), ready L later; submitted at once when ready <= now;
//  - submit: start_running() + recompute(): the solo grant and bound
//    (Device::SoloSession::lone_rate), the finish at now + ceil(work / rate), the integrals
//    (SoloSession::lone_started); inside a completion the recompute happens at its end, as queued;
//  - completion: advance(), the tolerance test, work_completed_, the kernel and request records,
//    the next waiting request started, then the device's recompute (the next kernel, or idle).
bool Tenant::run_direct_single() {
  Simulator& sim = sim_;
  // The sampler's ticks do not end this loop: it delivers them itself, before the first event
  // after each, as the run loop would (the ticker reads the device's integrals and memory, set at
  // every event below, and idle(), kept by direct_busy_).
  Simulator::InlineScope scope(sim, Simulator::InlineScope::Ticks::deliver);
  const Nanos horizon = scope.horizon();
  Nanos next_tick = scope.next_tick();
  Device& device = *devices_.front();
  Device::SoloSession session(device);
  const KernelSpec& spec = *single_launch_;
  KernelRun probe;  // the kernel's fields as prepare_kernel() sets them
  probe.tenant = index_;
  probe.sm_fraction = spec.sm_fraction;
  probe.memory_bound = spec.memory_bound;
  probe.busy_share = spec.busy_share;
  probe.waves = spec.waves;
  probe.working_set = static_cast<double>(spec.working_set);
  probe.grid = spec.grid();
  probe.blocks = spec.blocks;
  probe.throughput_share = spec.sm_throughput_share;
  probe.priority = -spec_.workload.priority;
  const double rate = session.lone_rate(probe);
  if (!(rate > 0)) return false;
  const Nanos host_before = spec.host_before;
  const Nanos launch = launch_overhead_of(spec);
  // stream_time()'s one step from finish 0 for kernel 0, less the work (+ 0.0 changes nothing).
  const double solo_base = stream_step(0.0, spec, spec, 0, 0.0);

  // A fixed duration draws nothing: every request's work is the same number.
  const bool fixed_duration = spec.duration.kind == DurationDistribution::Kind::fixed;
  const double fixed_work =
      fixed_duration
          ? kernel_work(single_launch_duration(spec, static_cast<double>(spec.duration.value), 1.0))
          : 0.0;

  // The request in flight, if any. (The handlers below are inlined into the loop: one call per
  // event less.)
  bool busy = false;
  DirectArrival current;
  Nanos start = 0;
  double work = 0, remaining = 0, solo_latency = 0;
  Nanos first_start = -1;
  bool on_device = false, launching = false, deferred = false;
  Nanos arrival_at = kNever, ready_at = kNever, completion_at = kNever;

  auto finish_time = [&](Nanos now) __attribute__((always_inline)) {
    const Nanos wait = checked::ceil_nanos_saturating(remaining / rate);
    return wait < kNever - now ? now + wait : kNever;
  };
  auto kernel_started = [&](Nanos now) __attribute__((always_inline)) {
    session.lone_started(now);
    completion_at = finish_time(now);
  };
  auto submit = [&](Nanos now, bool in_completion) __attribute__((always_inline)) {
    first_start = now;
    remaining = work;
    on_device = true;
    if (in_completion) {
      deferred = true;  // the completion's recompute starts it
      return;
    }
    kernel_started(now);
  };
  // The request in `current` starts.
  auto begin = [&](Nanos now, bool in_completion) __attribute__((always_inline)) {
    start = now;
    work = fixed_duration
               ? fixed_work
               : kernel_work(single_launch_duration(spec, draw(kernels_rng_, spec.duration), 1.0));
    solo_latency = std::max(0.0, solo_base + work);
    const Nanos issue = std::max(now + host_before, now);
    const Nanos ready = issue + launch;
    if (ready <= now) {
      submit(now, in_completion);
    } else {
      ready_at = ready;
      launching = issue <= now;
    }
  };
  // The arrival's row is filled where it stays (a row built on the stack and copied is read
  // back with wider loads than its fields were stored with: a store-forwarding stall per
  // arrival, 9 % of the loop's samples at rho 0.95). direct_arrival() writes nothing when it
  // returns false.
  auto arrive = [&](Nanos now) __attribute__((always_inline)) {
    if (busy) {
      if (!direct_arrival(now, direct_waiting_.emplace_back())) direct_waiting_.pop_back();
    } else if (direct_arrival(now, current)) {
      busy = true;
      direct_busy_ = true;
      begin(now, false);
    }
  };
  auto complete = [&](Nanos now) __attribute__((always_inline)) {
    completion_at = kNever;
    remaining = session.lone_advance(now, remaining);
    if (remaining > completion_tolerance(work)) {
      // Runs on (not reached: the wait is rounded up): recomputed as it is.
      kernel_started(now);
      return;
    }
    session.lone_finished(work, remaining);
    on_device = false;
    if (run_.wants_kernels()) {
      run_.record_kernel(KernelRecord{static_cast<std::uint32_t>(index_), current.id, 0,
                                      device.index(), first_start, now});
    }
    run_.record_request(
        RequestOutcome{RequestRecord{static_cast<std::uint32_t>(index_), current.id,
                                     current.arrival, start, now, RequestStatus::completed},
                       current.measured, -1, current.output_tokens, solo_latency});
    if (direct_head_ < direct_waiting_.size()) {
      current = direct_waiting_[direct_head_++];
      begin(now, true);
      if (direct_head_ * 2 > direct_waiting_.size() && direct_head_ > 64) {
        direct_waiting_.erase(direct_waiting_.begin(),
                              direct_waiting_.begin() + static_cast<std::ptrdiff_t>(direct_head_));
        direct_head_ = 0;
      }
    } else {
      direct_waiting_.clear();
      direct_head_ = 0;
      busy = false;
      direct_busy_ = false;
    }
    if (deferred) {  // the recompute with the kernel submitted meanwhile
      deferred = false;
      kernel_started(now);
    } else {
      session.lone_idle(now);
    }
  };

  arrive(sim.now());  // the queued arrival event now
  arrival_at = next_open_arrival(sim.now());
  bool running = scope.end_queued_event();
  // The inline events are counted in bulk: `ran` of them since the last count, at most `budget`
  // (the count that makes the poll due).
  std::uint64_t budget = scope.events_before_poll(), ran = 0;
  while (running) {
    // The earliest pending event in queue order: time, then class.
    Nanos t = completion_at;
    int which = 0;
    if (ready_at < t) {
      t = ready_at;
      which = 1;
    }
    if (arrival_at < t) {
      t = arrival_at;
      which = 2;
    }
    if (t >= horizon) break;
    if (t > next_tick) next_tick = scope.deliver_ticks_before(t);
    scope.begin_event(t);
    if (which == 0) {
      complete(t);
    } else if (which == 1) {
      ready_at = kNever;
      launching = false;
      submit(t, false);
    } else {
      arrive(t);
      arrival_at = next_open_arrival(sim.now());
    }
    if (++ran == budget) {  // interrupted: stops after this event, as queued
      running = scope.end_events(ran);
      ran = 0;
      budget = scope.events_before_poll();
    }
  }
  scope.end_events(ran);  // (no poll due: ran < budget)

  // Back to the queue: the request in flight as the Request the handlers would have built.
  direct_busy_ = false;
  Stream* stream = nullptr;
  if (busy) {
    in_flight_list_.push_back(acquire_request());
    ++in_flight_;
    Request& r = *in_flight_list_.back();
    take_arrival(r, current);
    r.start = start;
    r.memory = 0;
    r.durations.push_back(work);
    r.specs.push_back(&spec);
    r.solo_latency = solo_latency;
    stream = &one_stream(r);
    stream->launching = launching;
    if (on_device) {
      KernelRun& k = prepare_kernel(*stream);  // submit_kernel(), then what the device set
      k.remaining = remaining;
      k.first_start = first_start;
      session.lone_adopt(k, completion_at);
    }
  }
  DirectEvents pending;
  pending.arrival = arrival_at;
  pending.ready = ready_at;
  pending.ready_stream = stream;
  queue_pending(pending);
  return true;  // (the session queues the completion)
}

}  // namespace gpumux::run
