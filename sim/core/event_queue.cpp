#include "sim/core/event_queue.hpp"

#include <cassert>
#include <utility>

namespace gpumux {

const char* to_string(QueueKind kind) {
  switch (kind) {
    case QueueKind::heap:
      return "heap";
    case QueueKind::calendar:
      return "calendar";
    case QueueKind::ladder:
      return "ladder";
  }
  return "?";
}

EventId EventQueue::push_event(Nanos time, Priority priority, Event::Function function,
                               void* object, Event::Argument argument) {
  assert(next_sequence_ < (std::uint64_t{1} << 56));
  const EventOrder order = (static_cast<EventOrder>(priority) << 56) | next_sequence_++;
  ++live_;
  switch (kind_) {
    case QueueKind::heap:
      return heap_.push(time, order, function, object, argument);
    case QueueKind::calendar:
      return calendar_.push(time, order, function, object, argument);
    case QueueKind::ladder:
      break;
  }
  return ladder_.push(time, order, function, object, argument);
}

EventId EventQueue::push(Nanos time, Priority priority, std::function<void()> action) {
  std::uint32_t index;
  if (!free_closures_.empty()) {
    index = free_closures_.back();
    free_closures_.pop_back();
    closures_[index] = std::move(action);
  } else {
    index = static_cast<std::uint32_t>(closures_.size());
    closures_.push_back(std::move(action));
  }
  Event::Argument argument{};
  argument.value = index;
  return push_event(time, priority, &EventQueue::run_closure, this, argument);
}

void EventQueue::release_closure(std::uint64_t index) {
  closures_[index] = nullptr;
  free_closures_.push_back(static_cast<std::uint32_t>(index));
}

void EventQueue::run_closure(void* queue, Event::Argument argument) {
  EventQueue& self = *static_cast<EventQueue*>(queue);
  const std::uint64_t index = argument.value;
  // Move the action out first: it may schedule closures that reuse (or grow) the pool.
  std::function<void()> action = std::move(self.closures_[index]);
  self.closures_[index] = nullptr;
  self.free_closures_.push_back(static_cast<std::uint32_t>(index));
  if (action) action();
}

}  // namespace gpumux
