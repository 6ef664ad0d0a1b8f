#pragma once
// Simulator: the clock and the pending-event set. Not a global: models hold a reference.
//
//   Simulator sim;
//   sim.schedule_in(5 * kMillisecond, make_event<&Tenant::on_arrival>(tenant));  // at t=5ms
//   sim.schedule_in(1 * kMillisecond, make_event<&Run::on_fault>(run, 3));  // run.on_fault(3)
//   sim.run_until(10 * kSecond);
//
// Zero-delay work also goes through the queue (schedule_in(0, ...)), so the order of same-time
// events is always (time, priority class, sequence of scheduling), whatever the queue kind.
// Costs as EventQueue: with the default heap, schedule and each event O(log n); with the calendar
// or ladder queue O(1) expected; cancel O(1). (The runner picks the calendar queue for scenarios
// that keep many events pending: models/run/run.cpp, choose_queue.)
#include <algorithm>
#include <cstdint>
#include <functional>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// Priority classes used by gpumux models (lower runs first at equal time). Completions run
/// before new arrivals at the same instant, so a device freed at t can serve an arrival at t.
enum EventPriority : EventQueue::Priority {
  kPriorityCompletion = 10,
  kPriorityControl = 20,
  kPriorityArrival = 30,
  kPriorityDefault = 50,
  kPrioritySampling = 200,
};

class Simulator {
 public:
  /// `kind` picks the pending-event set; every kind runs events in the same order.
  explicit Simulator(QueueKind kind = kDefaultQueueKind) : queue_(kind) {}

  Nanos now() const { return now_; }
  QueueKind queue_kind() const { return queue_.kind(); }

  /// Runs `event` at `time` (>= now(); throws std::logic_error otherwise). No allocation.
  EventId schedule_at(Nanos time, const Event& event,
                      EventQueue::Priority priority = kPriorityDefault) {
    if (time < now_) throw_past();
    return queue_.push(time, priority, event);  // inline: the event's parts stay in registers
  }
  EventId schedule_in(Nanos delay, const Event& event,
                      EventQueue::Priority priority = kPriorityDefault) {
    return schedule_at(now_ + delay, event, priority);
  }
  /// Convenience form with a closure (allocates when the closure is large).
  EventId schedule_at(Nanos time, std::function<void()> action,
                      EventQueue::Priority priority = kPriorityDefault);
  EventId schedule_in(Nanos delay, std::function<void()> action,
                      EventQueue::Priority priority = kPriorityDefault) {
    return schedule_at(now_ + delay, std::move(action), priority);
  }

  /// O(1); false when the event already ran or was cancelled.
  bool cancel(EventId id) { return queue_.cancel(id); }

  /// Runs events until none is left or stop() is called.
  void run() { run_until(kNever); }
  /// Runs every event with time <= horizon, then sets now() to horizon (unless stopped or the
  /// horizon is kNever and the queue ran dry, in which case now() is the last event's time).
  void run_until(Nanos horizon);
  /// Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

  /// Calls `poll` every `every_events` events (e.g. to check for SIGINT or draw progress).
  void set_poll(std::function<void()> poll, std::uint64_t every_events);

  /// An observer of the clock, not an event: calls `tick(t)` for t = first, first + every, ...
  /// once every event with time <= t has run and before the first later one runs, so it sees
  /// the state as of t. It must schedule nothing. Ticks stop when the queue runs dry (run()
  /// returns without ticking past the last event), so a ticker never extends a run, and ticks
  /// are not counted in events_processed(): observing changes no result. O(1) per tick.
  /// Returns the next tick not yet delivered (kNever when no ticker is set).
  void set_ticker(std::function<void(Nanos)> tick, Nanos first, Nanos every);
  Nanos next_tick() const { return tick_ ? next_tick_ : kNever; }
  /// No further ticks (callable from the ticker itself): the observer has seen the end.
  void stop_ticker() { next_tick_ = kNever; }
  /// The next tick at `next`, then every `every` (> 0; callable from the ticker itself): a
  /// sampler that halves its resolution also halves the ticks it is sent.
  void retime_ticker(Nanos next, Nanos every) {
    next_tick_ = next;
    tick_every_ = every;
  }

  // --- inline events ------------------------------------------------------------------------
  // A model may run some of its own events without the queue (models/run/direct.cpp: a tenant
  // alone on an exclusive device), as long as each runs exactly where the queue would have run
  // it: strictly before next_event_time() and next_tick(), nothing else scheduled meanwhile.
  // Such events count in events_processed() and poll like queued ones, so results (and the
  // event count) are the same as if they had been queued.

  /// The time of the earliest pending event (kNever when none). O(1) amortised.
  Nanos next_event_time() { return queue_.next_time(); }
  /// The first time an inline event may not run at: the earliest of the next queued event, the
  /// next tick and the end of the current run_until() call (an event at the horizon itself still
  /// belongs to that call). A model running events inline stops before it.
  Nanos inline_horizon() {
    const Nanos until = until_ < kNever ? until_ + 1 : kNever;
    return std::min(std::min(queue_.next_time(), next_tick()), until);
  }
  /// The queued event now running has done its work and the model goes on inline: it is counted
  /// (and the poll called when due) now, before the inline events, not when it returns. Returns
  /// false when the poll stopped the run.
  bool end_queued_event_early() {
    current_counted_ = true;
    return count_event();
  }
  /// The clock moves to `t` (>= now(); the caller keeps it below next_event_time() and
  /// next_tick()) for an event the model runs inline now.
  void begin_inline_event(Nanos t) { now_ = t; }
  /// That event has run: counted, and the poll called when due (it may stop the run; then the
  /// model stops running events inline and returns). Returns false when the run was stopped.
  bool end_inline_event() {
    ++events_inline_;
    return count_event();
  }
  /// For a model that counts its inline events in bulk: how many end_inline_event() calls
  /// from now on return true whatever happens (the poll is not due before the last of them);
  /// the largest count when no poll is set.
  std::uint64_t inline_events_before_poll() const {
    return poll_every_ != 0 ? until_poll_ : ~std::uint64_t{0};
  }
  /// `n` (<= inline_events_before_poll()) inline events have run: counted as n calls of
  /// end_inline_event() would count them, so the poll runs when the n-th makes it due. Returns
  /// false when it stopped the run. O(1).
  bool end_inline_events(std::uint64_t n) {
    events_ += n;
    events_inline_ += n;
    if (poll_every_ != 0 && (until_poll_ -= n) == 0) {
      until_poll_ = poll_every_;
      poll_();
    }
    return !stopped_;
  }

  std::uint64_t events_processed() const { return events_; }
  /// Of those, the events run inline.
  std::uint64_t events_inline() const { return events_inline_; }
  std::size_t pending() const { return queue_.size(); }

 private:
  [[noreturn]] static void throw_past();
  /// One more event processed; polls when due. False when the run was stopped.
  bool count_event() {
    ++events_;
    if (poll_every_ != 0 && --until_poll_ == 0) {
      until_poll_ = poll_every_;
      poll_();
    }
    return !stopped_;
  }
  void advance_tick();

  EventQueue queue_;
  Nanos now_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t events_inline_ = 0;
  bool current_counted_ = false;  // the running queued event was counted by the model
  Nanos until_ = kNever;          // the horizon of the run_until() call in progress
  bool stopped_ = false;
  std::function<void()> poll_;
  std::uint64_t poll_every_ = 0;
  std::uint64_t until_poll_ = 0;  // events until the next poll (run_until's countdown)
  std::function<void(Nanos)> tick_;
  Nanos next_tick_ = kNever;
  Nanos tick_every_ = 0;
};

}  // namespace gpumux
