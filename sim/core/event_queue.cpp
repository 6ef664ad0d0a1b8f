#include "sim/core/event_queue.hpp"

#include <cassert>
#include <utility>

namespace gpumux {

std::uint32_t EventQueue::allocate_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  slots_.emplace_back();
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

void EventQueue::release_slot(std::uint32_t slot) {
  Slot& s = slots_[slot];
  s.handler = nullptr;
  s.action = nullptr;
  s.live = false;
  ++s.generation;
  free_slots_.push_back(slot);
}

EventId EventQueue::push_key(Nanos time, Priority priority, std::uint32_t slot) {
  assert(next_sequence_ < (std::uint64_t{1} << 56));
  const std::uint64_t order = (static_cast<std::uint64_t>(priority) << 56) | next_sequence_++;
  heap_.push_back(Key{time, order, slot});
  sift_up(heap_.size() - 1);
  slots_[slot].live = true;
  ++live_;
  return EventId{slot, slots_[slot].generation};
}

EventId EventQueue::push(Nanos time, Priority priority, EventHandler* handler, std::uint64_t tag) {
  const std::uint32_t slot = allocate_slot();
  slots_[slot].handler = handler;
  slots_[slot].tag = tag;
  return push_key(time, priority, slot);
}

EventId EventQueue::push(Nanos time, Priority priority, std::function<void()> action) {
  const std::uint32_t slot = allocate_slot();
  slots_[slot].action = std::move(action);
  return push_key(time, priority, slot);
}

bool EventQueue::cancel(EventId id) {
  if (!id.valid() || id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (!s.live || s.generation != id.generation) return false;
  // The key stays in the heap; it is discarded when it reaches the top. The slot is released
  // then too, so its generation changes only once.
  s.live = false;
  s.handler = nullptr;
  s.action = nullptr;
  --live_;
  return true;
}

void EventQueue::sift_up(std::size_t index) {
  const Key key = heap_[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / 4;
    if (!before(key, heap_[parent])) break;
    heap_[index] = heap_[parent];
    index = parent;
  }
  heap_[index] = key;
}

void EventQueue::sift_down(std::size_t index) {
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

void EventQueue::pop_top() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::discard_dead_top() {
  while (!heap_.empty() && !slots_[heap_.front().slot].live) {
    const std::uint32_t slot = heap_.front().slot;
    pop_top();
    release_slot(slot);
  }
}

Nanos EventQueue::next_time() {
  discard_dead_top();
  return heap_.empty() ? kNever : heap_.front().time;
}

Nanos EventQueue::pop_and_run(Nanos& clock) {
  discard_dead_top();
  assert(!heap_.empty());
  const Key top = heap_.front();
  pop_top();
  Slot& slot = slots_[top.slot];
  EventHandler* handler = slot.handler;
  const std::uint64_t tag = slot.tag;
  std::function<void()> action = std::move(slot.action);
  --live_;
  release_slot(top.slot);
  clock = top.time;
  if (handler != nullptr) {
    handler->on_event(tag);
  } else if (action) {
    action();
  }
  return top.time;
}

}  // namespace gpumux
