#pragma once
// HeapQueue: pending events in a 4-ary min-heap of 24-byte keys (time, order, slot) over a slot
// table of 32-byte targets (event, generation).
//
// Costs: push O(log4 n), pop O(log4 n) amortised, cancel O(1) (the slot is marked dead and its
// key is discarded when it reaches the top). Memory: ~56 B per pending or dead-but-unpopped
// event. Best when the queue is small (it stays in L1/L2); at 10^5+ events each operation walks
// ~log4 n cache lines. Used through EventQueue, which assigns the order keys.
#include <cstdint>
#include <vector>

#include "sim/core/queue_types.hpp"

namespace gpumux {

class HeapQueue {
 public:
  /// The event's parts travel in registers (a 24-byte struct would go through memory).
  EventId push(Nanos time, EventOrder order, Event::Function function, void* object,
               Event::Argument argument);
  EventId push(Nanos time, EventOrder order, const Event& event) {
    return push(time, order, event.function(), event.object(), event.argument());
  }
  /// O(1). True when the event was pending and is now cancelled; `cancelled` then holds it.
  bool cancel(EventId id, PoppedEvent& cancelled);
  /// Time of the earliest live event; kNever when none. Discards dead keys on the way.
  Nanos next_time() {
    if (!heap_.empty() && generation_live(slots_[heap_.front().slot].generation)) {
      return heap_.front().time;  // the usual case, inline: a live top
    }
    return next_time_slow();
  }
  /// Removes the earliest live event. Precondition: a live event is pending.
  PoppedEvent pop();
  /// pop() without the liveness check. Precondition: next_time() returned a time (so the top is
  /// live) and nothing was pushed or cancelled since.
  PoppedEvent pop_live_top();

 private:
  struct Key {
    Nanos time;
    EventOrder order;
    std::uint32_t slot;
  };
  struct Slot {
    Event event;
    std::uint32_t generation = 0;
  };

  static bool before(const Key& a, const Key& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  void sift_up(const Key& key);    // adds `key` at the end and moves it up
  void sift_down(const Key& key);  // fills the root's hole with `key`, moving it down
  void pop_top();
  void discard_dead_top();
  Nanos next_time_slow();

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace gpumux
