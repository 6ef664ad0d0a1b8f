#include "sim/core/heap_queue.hpp"

#include <cassert>

namespace gpumux {

EventId HeapQueue::push(Nanos time, EventOrder order, Event::Function function, void* object,
                        Event::Argument argument) {
  const std::uint32_t slot = acquire_slot(slots_, free_slots_);
  Slot& s = slots_[slot];
  s.event = Event(function, object, argument);
  ++s.generation;
  heap_.push_back(Key{time, order, slot});
  sift_up(heap_.size() - 1);
  return EventId{slot, s.generation};
}

bool HeapQueue::cancel(EventId id, PoppedEvent& cancelled) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || !generation_live(s.generation)) return false;
  // The key stays in the heap; the slot is freed when the key reaches the top.
  ++s.generation;
  cancelled = PoppedEvent{kNever, s.event};
  return true;
}

void HeapQueue::sift_up(std::size_t index) {
  const Key key = heap_[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / 4;
    if (!before(key, heap_[parent])) break;
    heap_[index] = heap_[parent];
    index = parent;
  }
  heap_[index] = key;
}

void HeapQueue::sift_down(std::size_t index) {
  const std::size_t n = heap_.size();
  const Key key = heap_[index];
  for (;;) {
    const std::size_t first = 4 * index + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < last; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], key)) break;
    heap_[index] = heap_[best];
    index = best;
  }
  heap_[index] = key;
}

void HeapQueue::pop_top() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void HeapQueue::discard_dead_top() {
  while (!heap_.empty() && !generation_live(slots_[heap_.front().slot].generation)) {
    free_slots_.push_back(heap_.front().slot);
    pop_top();
  }
}

Nanos HeapQueue::next_time() {
  discard_dead_top();
  return heap_.empty() ? kNever : heap_.front().time;
}

PoppedEvent HeapQueue::pop() {
  discard_dead_top();
  assert(!heap_.empty());
  const Key top = heap_.front();
  pop_top();
  Slot& s = slots_[top.slot];
  ++s.generation;
  free_slots_.push_back(top.slot);
  return PoppedEvent{top.time, s.event};
}

}  // namespace gpumux
