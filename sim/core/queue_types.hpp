#pragma once
// Types shared by the pending-event set implementations (HeapQueue, CalendarQueue) and their
// facade EventQueue. Models see only Event (made by make_event) and EventId.
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux {

/// What an event does when it runs: `function(object, argument)`, three words stored in the
/// queue's slot (no allocation). Build one with make_event (below), which binds a member function
/// (or a function taking the object first) at compile time, so the object's and the argument's
/// types are checked where the event is scheduled and restored by the binding, never by the
/// caller — ns-3's MakeEvent without its heap-allocated EventImpl.
class Event {
 public:
  /// The payload handed back to the function: a pointer or an integer, as bound.
  union Argument {
    void* pointer;
    std::uint64_t value;
  };
  using Function = void (*)(void* object, Argument argument);

  Event() = default;
  constexpr Event(Function function, void* object, Argument argument)
      : function_(function), object_(object), argument_(argument) {}

  /// Runs the event. Precondition: bound (a default Event does nothing useful).
  void run() const { function_(object_, argument_); }
  Function function() const { return function_; }
  void* object() const { return object_; }
  Argument argument() const { return argument_; }

 private:
  Function function_ = nullptr;
  void* object_ = nullptr;
  Argument argument_{nullptr};
};

/// `Method` on `object`: Method is `void (T::*)()` or a function `void f(T&)`.
///   sim.schedule_at(t, make_event<&Tenant::on_arrival>(tenant));
/// The object must outlive the event (or the event be cancelled first).
template <auto Method, class T>
requires std::is_invocable_v<decltype(Method), T&> Event make_event(T& object) {
  return Event([](void* o, Event::Argument) { std::invoke(Method, *static_cast<T*>(o)); },
               static_cast<void*>(std::addressof(object)), Event::Argument{nullptr});
}

/// `Method` on `object` with a reference to `argument` (an object of class type that must
/// outlive the event too): Method is `void (T::*)(A&)` or `void f(T&, A&)`.
///   sim.schedule_at(t, make_event<&Tenant::on_stream_ready>(tenant, stream));
template <auto Method, class T, class A>
requires std::is_class_v<A> && std::is_invocable_v<decltype(Method), T&, A&> Event
make_event(T& object, A& argument) {
  Event::Argument a{};
  a.pointer = static_cast<void*>(std::addressof(argument));
  return Event(
      [](void* o, Event::Argument p) {
        std::invoke(Method, *static_cast<T*>(o), *static_cast<A*>(p.pointer));
      },
      static_cast<void*>(std::addressof(object)), a);
}

/// `Method` on `object` with an integer (an index, a tag): Method is `void (T::*)(I)` or
/// `void f(T&, I)`, I an integral type of at most 64 bits.
///   sim.schedule_at(t, make_event<&Run::on_fault>(run, fault_index));
template <auto Method, class T, std::integral I>
requires std::is_invocable_v<decltype(Method), T&, I> Event make_event(T& object, I value) {
  static_assert(sizeof(I) <= sizeof(std::uint64_t));
  Event::Argument a{};
  a.value = static_cast<std::uint64_t>(value);
  return Event(
      [](void* o, Event::Argument p) {
        std::invoke(Method, *static_cast<T*>(o), static_cast<I>(p.value));
      },
      static_cast<void*>(std::addressof(object)), a);
}

/// Handle of a scheduled event, for cancel(). Stale handles (event already run or cancelled)
/// are detected by the generation counter and ignored.
struct EventId {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

/// An event taken out of a queue: its time and what it does.
struct PoppedEvent {
  Nanos time;
  Event event;
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
