#include "sim/core/heap_queue.hpp"

#include <cassert>

namespace gpumux {

EventId HeapQueue::push(Nanos time, EventOrder order, Event::Function function, void* object,
                        Event::Argument argument) {
  const std::uint32_t slot = acquire_slot(slots_, free_slots_);
  Slot& s = slots_[slot];
  s.event = Event(function, object, argument);
  ++s.generation;
  const Key key{time, order, slot};
  if (has_front_) {
    if (before(key, front_)) {  // the new earliest: the front moves into the heap
      sift_up(front_);
      front_ = key;
    } else {
      sift_up(key);
    }
  } else if (heap_.empty() || before(key, heap_.front())) {
    front_ = key;  // before every key of the heap, dead ones included
    has_front_ = true;
  } else {
    sift_up(key);
  }
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

void HeapQueue::sift_up(const Key& key) {
  // A hole moves up from the new last position and the key is stored once, where it belongs:
  // the key stays in registers (storing it at the end and loading it back stalls on store-to-
  // load forwarding of a 24-byte struct).
  std::size_t index = heap_.size();
  heap_.emplace_back();
  Key* heap = heap_.data();
  while (index > 0) {
    const std::size_t parent = (index - 1) / 4;
    if (!before(key, heap[parent])) break;
    heap[index] = heap[parent];
    index = parent;
  }
  heap[index] = key;
}

void HeapQueue::sift_down(const Key& key) {
  // A hole moves down from the root; `key` (the former last key) is stored once, at the end.
  const std::size_t n = heap_.size();
  Key* heap = heap_.data();
  std::size_t index = 0;
  for (;;) {
    const std::size_t first = 4 * index + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < last; ++c) {
      if (before(heap[c], heap[best])) best = c;
    }
    if (!before(heap[best], key)) break;
    heap[index] = heap[best];
    index = best;
  }
  heap[index] = key;
}

void HeapQueue::pop_top() {
  const Key last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(last);
}

void HeapQueue::discard_dead_top() {
  if (has_front_) {
    if (generation_live(slots_[front_.slot].generation)) return;
    free_slots_.push_back(front_.slot);
    has_front_ = false;
  }
  while (!heap_.empty() && !generation_live(slots_[heap_.front().slot].generation)) {
    free_slots_.push_back(heap_.front().slot);
    pop_top();
  }
}

Nanos HeapQueue::next_time_slow() {
  discard_dead_top();
  if (has_front_) return front_.time;
  return heap_.empty() ? kNever : heap_.front().time;
}

PoppedEvent HeapQueue::pop() {
  discard_dead_top();  // (nothing to do while the earliest key is live)
  return pop_live_top();
}

PoppedEvent HeapQueue::pop_live_top() {
  // The run loop's next_time() has checked the earliest key's liveness (one check per event).
  Key top;
  if (has_front_) {
    top = front_;
    has_front_ = false;
  } else {
    assert(!heap_.empty());
    top = heap_.front();
    pop_top();
  }
  assert(generation_live(slots_[top.slot].generation));
  Slot& s = slots_[top.slot];
  ++s.generation;
  free_slots_.push_back(top.slot);
  return PoppedEvent{top.time, s.event};
}

}  // namespace gpumux
