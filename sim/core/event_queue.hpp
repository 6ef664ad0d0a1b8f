#pragma once
// EventQueue: the pending-event set of the simulator.
//
// Order: events are totally ordered by (time, priority class, sequence number), where the
// sequence number is the order of scheduling. Two runs that schedule the same events in the
// same order therefore pop them in the same order — the basis of determinism.
//
// Structure: a 4-ary min-heap of 24-byte keys (time, priority|sequence, slot) over a slot table
// that holds each event's target. Costs: push O(log4 n), pop O(log4 n) amortised, cancel O(1)
// (the slot is marked dead and its heap key is discarded when it reaches the top), memory
// ~24 B per key + one slot per live or dead-but-unpopped event. Slots are reused.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// Receives events. `tag` is the value given when scheduling (lets one object multiplex many
/// event kinds without allocating a closure per event).
class EventHandler {
 public:
  virtual void on_event(std::uint64_t tag) = 0;

 protected:
  ~EventHandler() = default;
};

/// Handle of a scheduled event, for cancel(). Stale handles (event already run or cancelled)
/// are detected by the generation counter and ignored.
struct EventId {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class EventQueue {
 public:
  /// Priority class: at equal time, a lower class runs first. 0..255.
  using Priority = std::uint8_t;

  EventId push(Nanos time, Priority priority, EventHandler* handler, std::uint64_t tag);
  EventId push(Nanos time, Priority priority, std::function<void()> action);

  /// O(1). Returns true when the event was pending and is now cancelled.
  bool cancel(EventId id);

  /// True when no live event is pending.
  bool empty() const { return live_ == 0; }
  /// Number of live (not cancelled) pending events.
  std::size_t size() const { return live_; }

  /// Time of the earliest live event; kNever when empty. Discards dead keys on the way.
  Nanos next_time();

  /// Removes the earliest live event and runs it. Precondition: !empty().
  /// Returns the event's time.
  Nanos pop_and_run(Nanos& clock);

 private:
  struct Key {
    Nanos time;
    std::uint64_t order;  // priority << 56 | sequence
    std::uint32_t slot;
  };
  struct Slot {
    EventHandler* handler = nullptr;
    std::uint64_t tag = 0;
    std::function<void()> action;
    std::uint32_t generation = 0;
    bool live = false;
  };

  static bool before(const Key& a, const Key& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  std::uint32_t allocate_slot();
  void release_slot(std::uint32_t slot);
  EventId push_key(Nanos time, Priority priority, std::uint32_t slot);
  void sift_up(std::size_t index);
  void sift_down(std::size_t index);
  void pop_top();
  void discard_dead_top();

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_sequence_ = 0;
  std::size_t live_ = 0;
};

}  // namespace gpumux
