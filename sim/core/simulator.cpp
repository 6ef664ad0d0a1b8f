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

void Simulator::Ticker::set(std::function<void(Nanos)> tick, Nanos first, Nanos every) {
  if (tick && every <= 0) throw std::logic_error("Simulator: ticker period must be > 0");
  tick_ = std::move(tick);
  next_ = first;
  every_ = every;
}

// The next tick is set before the callback runs, so the callback may stop the ticker; it
// saturates at kNever (no tick) rather than wrapping past the int64 horizon.
void Simulator::Ticker::advance() {
  const Nanos t = next_;
  next_ = t > kNever - every_ ? kNever : t + every_;
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
        while (ticker_.tick_ && ticker_.next_ <= horizon) ticker_.advance();
        now_ = std::max(now_, horizon);
      }
      until_ = kNever;
      return;
    }
    // Ticks strictly before the next event see every event at or before them.
    while (ticker_.tick_ && ticker_.next_ < next) ticker_.advance();
    queue_.pop_and_run_after_next_time(now_);  // ticks schedule and cancel nothing
    if (current_counted_) {
      current_counted_ = false;  // counted (and polled) by InlineScope::end_queued_event()
    } else {
      count_event();
    }
  }
  until_ = kNever;
}

}  // namespace gpumux
