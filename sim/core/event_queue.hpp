#pragma once
// EventQueue: the pending-event set of the simulator.
//
// Order: events are totally ordered by (time, priority class, sequence number), where the
// sequence number is the order of scheduling. Two runs that schedule the same events in the
// same order therefore pop them in the same order — the basis of determinism. All
// implementations break ties by the same key, so they pop identical sequences.
//
// Implementations (chosen at construction, dispatched by a predictable branch, not virtually):
//  - QueueKind::heap: 4-ary min-heap (HeapQueue). O(log n) push/pop; fastest for small queues.
//  - QueueKind::calendar: calendar queue with adaptive bucket width (CalendarQueue). O(1)
//    expected push/pop; fastest from ~10^4 pending events up.
//  - QueueKind::ladder: ladder of radix rungs (LadderQueue). O(1) amortised push/pop with
//    streamed (not random) table access; the fastest at 10^5+ pending events.
// All cancel in O(1) (lazily: the event is marked dead and dropped when met) and reuse storage.
// An event is a typed binding (Event, made by make_event: function, object, argument) stored
// in the queue's slot; closure events keep their std::function in a side pool and are bound to
// EventQueue::run_closure, so the hot tables stay small and running any event is one indirect
// call.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/calendar_queue.hpp"
#include "sim/core/heap_queue.hpp"
#include "sim/core/ladder_queue.hpp"
#include "sim/core/queue_types.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

enum class QueueKind : std::uint8_t { heap, calendar, ladder };

/// The kind Simulator uses unless told otherwise. Scenario runs keep few events pending (a few
/// per tenant and device) with time scales from ns launch gaps to 100 ms samples, where the
/// heap is fastest (the calendar's bucket width cannot suit both); the calendar queue is 2-3x
/// faster from ~10^3 pending events up (bench/bench_engine.cpp, docs/performance.md).
inline constexpr QueueKind kDefaultQueueKind = QueueKind::heap;

/// "heap", "calendar" or "ladder".
const char* to_string(QueueKind kind);

class EventQueue {
 public:
  /// Priority class: at equal time, a lower class runs first. 0..255.
  using Priority = std::uint8_t;

  explicit EventQueue(QueueKind kind = kDefaultQueueKind) : kind_(kind) {}

  QueueKind kind() const { return kind_; }

  EventId push(Nanos time, Priority priority, const Event& event) {
    return push_event(time, priority, event.function(), event.object(), event.argument());
  }
  /// A closure event: the action is kept in a side pool until it runs or is cancelled.
  EventId push(Nanos time, Priority priority, std::function<void()> action);

  /// O(1). Returns true when the event was pending and is now cancelled.
  bool cancel(EventId id) {
    PoppedEvent event{};
    const bool cancelled = kind_ == QueueKind::heap       ? heap_.cancel(id, event)
                           : kind_ == QueueKind::calendar ? calendar_.cancel(id, event)
                                                          : ladder_.cancel(id, event);
    if (!cancelled) return false;
    --live_;
    if (event.event.function() == &run_closure) release_closure(event.event.argument().value);
    return true;
  }

  /// True when no live event is pending.
  bool empty() const { return live_ == 0; }
  /// Number of live (not cancelled) pending events.
  std::size_t size() const { return live_; }

  /// Time of the earliest live event; kNever when empty.
  Nanos next_time() {
    if (live_ == 0) return kNever;
    return kind_ == QueueKind::heap       ? heap_.next_time()
           : kind_ == QueueKind::calendar ? calendar_.next_time()
                                          : ladder_.next_time();
  }

  /// Removes the earliest live event, sets `clock` to its time and runs it.
  /// Precondition: !empty(). Returns the event's time.
  Nanos pop_and_run(Nanos& clock) {
    return run(kind_ == QueueKind::heap       ? heap_.pop()
               : kind_ == QueueKind::calendar ? calendar_.pop()
                                              : ladder_.pop(),
               clock);
  }
  /// pop_and_run() right after next_time() returned a time, with nothing pushed or cancelled
  /// in between (the run loop): the heap then skips its second liveness check of the top.
  Nanos pop_and_run_after_next_time(Nanos& clock) {
    return run(kind_ == QueueKind::heap       ? heap_.pop_live_top()
               : kind_ == QueueKind::calendar ? calendar_.pop()
                                              : ladder_.pop(),
               clock);
  }

 private:
  /// Sets `clock` to a popped event's time and runs it (inline: once per event).
  Nanos run(const PoppedEvent& event, Nanos& clock) {
    --live_;
    clock = event.time;
    event.event.run();
    return event.time;
  }
  EventId push_event(Nanos time, Priority priority, Event::Function function, void* object,
                     Event::Argument argument);
  /// A closure event's function: runs (and frees) closures_[argument] of the EventQueue object.
  static void run_closure(void* queue, Event::Argument argument);
  void release_closure(std::uint64_t index);

  QueueKind kind_;
  HeapQueue heap_;
  CalendarQueue calendar_;
  LadderQueue ladder_;
  std::uint64_t next_sequence_ = 0;
  std::size_t live_ = 0;
  std::vector<std::function<void()>> closures_;  // closure events' actions, by argument
  std::vector<std::uint32_t> free_closures_;
};

}  // namespace gpumux
