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
//
// Around it, two helpers with their own type: the Ticker (ticker(): an observer of the clock,
// the utilization sampler) and the InlineScope (sim/core/inline_scope.hpp: a model running some
// of its own events without the queue, the direct path).
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

  /// The clock's observer (the utilization sampler): class Ticker below. One per simulator.
  class Ticker;
  Ticker& ticker() { return ticker_; }

  /// The time of the earliest pending event (kNever when none). O(1) amortised.
  Nanos next_event_time() { return queue_.next_time(); }

  /// A model that runs some of its own events without the queue (the direct path) does so
  /// inside an InlineScope (sim/core/inline_scope.hpp), which moves this clock and counts those
  /// events as the queue would have.
  class InlineScope;

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

 public:
  /// An observer of the clock, not an event: calls `tick(t)` for t = first, first + every, ...
  /// once every event with time <= t has run and before the first later one runs, so it sees
  /// the state as of t. It must schedule nothing. Ticks stop when the queue runs dry (run()
  /// returns without ticking past the last event), so a ticker never extends a run, and ticks
  /// are not counted in events_processed(): observing changes no result. O(1) per tick.
  class Ticker {
   public:
    /// Ticks `tick` from `first` every `every` (> 0; throws std::logic_error otherwise).
    void set(std::function<void(Nanos)> tick, Nanos first, Nanos every);
    /// The next tick not yet delivered (kNever when no ticker is set).
    Nanos next() const { return tick_ ? next_ : kNever; }
    /// No further ticks (callable from the ticker itself): the observer has seen the end.
    void stop() { next_ = kNever; }
    /// The next tick at `next`, then every `every` (> 0; callable from the ticker itself): a
    /// sampler that halves its resolution also halves the ticks it is sent.
    void retime(Nanos next, Nanos every) {
      next_ = next;
      every_ = every;
    }

   private:
    friend class Simulator;
    friend class Simulator::InlineScope;
    /// Delivers the tick due (next()) and moves to the one after.
    void advance();
    std::function<void(Nanos)> tick_;
    Nanos next_ = kNever;
    Nanos every_ = 0;
  };

 private:
  Ticker ticker_;
};

}  // namespace gpumux
