#include "sim/core/simulator.hpp"

#include <stdexcept>
#include <utility>

namespace gpumux {

EventId Simulator::schedule_at(Nanos time, EventHandler& handler, std::uint64_t tag,
                               EventQueue::Priority priority) {
  if (time < now_) throw std::logic_error("Simulator: event scheduled in the past");
  return queue_.push(time, priority, &handler, tag);
}

EventId Simulator::schedule_at(Nanos time, std::function<void()> action,
                               EventQueue::Priority priority) {
  if (time < now_) throw std::logic_error("Simulator: event scheduled in the past");
  return queue_.push(time, priority, std::move(action));
}

void Simulator::set_poll(std::function<void()> poll, std::uint64_t every_events) {
  poll_ = std::move(poll);
  poll_every_ = every_events;
}

void Simulator::run_until(Nanos horizon) {
  stopped_ = false;
  std::uint64_t until_poll = poll_every_;
  while (!stopped_) {
    const Nanos next = queue_.next_time();
    if (next == kNever || next > horizon) {
      if (horizon != kNever) now_ = horizon;
      return;
    }
    queue_.pop_and_run(now_);
    ++events_;
    if (poll_every_ != 0 && --until_poll == 0) {
      until_poll = poll_every_;
      poll_();
    }
  }
}

}  // namespace gpumux
