#include "sim/core/simulator.hpp"

#include <stdexcept>
#include <utility>

namespace gpumux {

void Simulator::throw_past() { throw std::logic_error("Simulator: event scheduled in the past"); }

EventId Simulator::schedule_at(Nanos time, std::function<void()> action,
                               EventQueue::Priority priority) {
  if (time < now_) throw std::logic_error("Simulator: event scheduled in the past");
  return queue_.push(time, priority, std::move(action));
}

void Simulator::set_poll(std::function<void()> poll, std::uint64_t every_events) {
  poll_ = std::move(poll);
  poll_every_ = every_events;
}

void Simulator::set_ticker(std::function<void(Nanos)> tick, Nanos first, Nanos every) {
  if (tick && every <= 0) throw std::logic_error("Simulator: ticker period must be > 0");
  tick_ = std::move(tick);
  next_tick_ = first;
  tick_every_ = every;
}

// The next tick is set before the callback runs, so the callback may stop the ticker; it
// saturates at kNever (no tick) rather than wrapping past the int64 horizon.
void Simulator::advance_tick() {
  const Nanos t = next_tick_;
  next_tick_ = t > kNever - tick_every_ ? kNever : t + tick_every_;
  tick_(t);
}

void Simulator::run_until(Nanos horizon) {
  stopped_ = false;
  until_poll_ = poll_every_;
  until_ = horizon;
  while (!stopped_) {
    const Nanos next = queue_.next_time();
    if (next == kNever || next > horizon) {
      if (horizon != kNever) {
        // Ticks up to the horizon see the state after the last event before it.
        while (tick_ && next_tick_ <= horizon) advance_tick();
        now_ = std::max(now_, horizon);
      }
      until_ = kNever;
      return;
    }
    // Ticks strictly before the next event see every event at or before them.
    while (tick_ && next_tick_ < next) advance_tick();
    queue_.pop_and_run_after_next_time(now_);  // ticks schedule and cancel nothing
    if (current_counted_) {
      current_counted_ = false;  // counted (and polled) by end_queued_event_early()
    } else {
      count_event();
    }
  }
  until_ = kNever;
}

}  // namespace gpumux
