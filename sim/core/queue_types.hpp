#pragma once
// Types shared by the pending-event set implementations (HeapQueue, CalendarQueue) and their
// facade EventQueue. Models see only EventHandler and EventId.
#include <cstdint>
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

/// An event taken out of a queue: its time and target. `handler == nullptr` marks a closure
/// event whose `tag` indexes EventQueue's closure pool.
struct PoppedEvent {
  Nanos time;
  EventHandler* handler;
  std::uint64_t tag;
};

/// Total order key of an event at equal time: priority class << 56 | sequence of scheduling.
/// Both queue kinds order by (time, order), so they pop identical sequences.
using EventOrder = std::uint64_t;

/// Slot generations: odd while the event is pending and live, even once it ran, was cancelled or
/// the slot is free. An EventId holds the odd generation of its push, so any later change makes
/// the id stale.
inline constexpr bool generation_live(std::uint32_t generation) { return (generation & 1u) != 0; }

/// A slot index for a new event: a freed one if any, else a new default slot at the end. O(1).
template <typename SlotVector>
std::uint32_t acquire_slot(SlotVector& slots, std::vector<std::uint32_t>& free_slots) {
  if (!free_slots.empty()) {
    const std::uint32_t slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  slots.emplace_back();
  return static_cast<std::uint32_t>(slots.size() - 1);
}

}  // namespace gpumux
