#pragma once
// HeapQueue: pending events in a 4-ary min-heap of 24-byte keys (time, order, slot) over a slot
// table of 32-byte targets (event, generation), with the earliest key held apart when it was
// pushed as the new earliest (the front).
//
// The front: a push whose key is before every pending key (live or dead) goes to a one-key slot
// beside the heap instead of into it (the one there before, if any, moves into the heap), and
// the pops take it first. A chain of events that each schedule the next as the earliest (a
// kernel's completion, then its successor's launch, then its completion, while the other
// tenants' arrivals wait milliseconds away) then costs O(1) per event instead of a sift up and
// a sift down. The keys are the same and the earliest is still popped first, so the order of
// events is exactly the heap's (the sequence number breaks every tie).
//
// Costs: push O(log4 n) (O(1) when it is the new earliest and the front is free or later), pop
// O(log4 n) amortised (O(1) from the front), cancel O(1) (the slot is marked dead and its
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
    if (has_front_) {
      if (generation_live(slots_[front_.slot].generation)) return front_.time;
    } else if (!heap_.empty() && generation_live(slots_[heap_.front().slot].generation)) {
      return heap_.front().time;  // the usual case, inline: a live top
    }
    return next_time_slow();
  }
  /// Removes the earliest live event. Precondition: a live event is pending.
  PoppedEvent pop();
  /// pop() without the liveness check. Precondition: next_time() returned a time (so the top is
  /// live) and nothing was pushed or cancelled since.
  PoppedEvent pop_live_top();
  /// Keys in the heap proper, live or dead (not the front), for tests. O(1).
  std::size_t heap_keys() const { return heap_.size(); }
  /// Whether the earliest key is held apart (the front), for tests. O(1).
  bool has_front() const { return has_front_; }

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
  void discard_dead_top();  // (a dead front first)
  Nanos next_time_slow();

  // The front: while has_front_, a key before every key in heap_ (the earliest pending).
  Key front_{};
  bool has_front_ = false;
  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace gpumux
