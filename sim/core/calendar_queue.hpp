#pragma once
// CalendarQueue: pending events in a calendar queue (R. Brown, "Calendar queues", CACM 1988).
//
// Time is cut into buckets of width 2^shift ns; bucket b holds, as a list sorted by
// (time, order), every event whose time maps to b modulo the bucket count (a "year" is
// bucket_count * width). Popping walks the buckets in time order from the current one and takes
// a list head that falls inside the current bucket's window; equal times always share a bucket,
// so ties are broken by `order` exactly as in HeapQueue.
//
// Resizing: the bucket count doubles when more than 2 events per bucket are stored and halves
// below 1/2; each resize re-derives the width from the gaps between the earliest distinct
// event times (Brown's sampling). The queue also re-samples when the measured work (empty
// buckets skipped plus list nodes walked) exceeds a few steps per operation, so it follows
// distributions that drift without changing size (ns-scale bursts, then hour-scale timers).
//
// Costs: push, pop O(1) expected for stationary distributions; cancel O(1) (the event is marked
// dead and unlinked when a later walk meets it); a resize O(n) amortised over n operations.
// Memory: 48 B per pending or dead-but-unlinked event plus 8 B per bucket (<= 16 B per event).
// Used through EventQueue, which assigns the order keys.
#include <cstdint>
#include <vector>

#include "sim/core/queue_memory.hpp"
#include "sim/core/queue_types.hpp"

namespace gpumux {

class CalendarQueue {
 public:
  CalendarQueue();

  /// The event's parts travel in registers (a 24-byte struct would go through memory).
  EventId push(Nanos time, EventOrder order, Event::Function function, void* object,
               Event::Argument argument);
  EventId push(Nanos time, EventOrder order, const Event& event) {
    return push(time, order, event.function(), event.object(), event.argument());
  }
  /// O(1). True when the event was pending and is now cancelled; `cancelled` then holds it.
  bool cancel(EventId id, PoppedEvent& cancelled);
  /// Time of the earliest live event; kNever when none. Moves the current bucket to it.
  Nanos next_time();
  /// Removes the earliest live event. Precondition: a live event is pending.
  PoppedEvent pop();

  /// Introspection for tests and benchmarks.
  std::size_t bucket_count() const { return buckets_.size(); }
  Nanos bucket_width() const { return Nanos{1} << shift_; }
  std::uint64_t rebuilds() const { return rebuilds_; }

 private:
  static constexpr std::uint32_t kNil = UINT32_MAX;
  struct Node {
    // The fields a bucket walk reads come first (24 bytes); the event is read once, at pop.
    std::uint64_t key;  // time with the sign bit flipped: unsigned order = signed time order
    EventOrder order;
    std::uint32_t next;  // next node in the bucket list, or in the free list
    std::uint32_t generation;
    Event event;
  };
  struct Bucket {
    std::uint32_t head = kNil;
    std::uint32_t tail = kNil;  // meaningful only when head != kNil
  };

  static std::uint64_t key_of(Nanos time) {
    return static_cast<std::uint64_t>(time) ^ (std::uint64_t{1} << 63);
  }
  static Nanos time_of(std::uint64_t key) {
    return static_cast<Nanos>(key ^ (std::uint64_t{1} << 63));
  }
  static bool before(const Node& a, const Node& b) {
    return a.key < b.key || (a.key == b.key && a.order < b.order);
  }
  std::uint64_t bucket_of(std::uint64_t key) const { return (key >> shift_) & mask_; }
  void release(std::uint32_t index);
  void insert(std::uint32_t index);
  std::uint32_t find_min();
  void after_operation();
  void rebuild(std::size_t bucket_count);
  unsigned sample_shift(const std::vector<std::uint32_t>& items) const;

  std::vector<Node, HugePageAllocator<Node>> nodes_;
  std::uint32_t free_ = kNil;
  std::vector<Bucket, HugePageAllocator<Bucket>> buckets_;
  std::uint64_t mask_ = 0;
  unsigned shift_ = 0;
  std::uint64_t current_ = 0;        // bucket holding the window that contains the earliest event
  std::uint64_t current_start_ = 0;  // key where that window starts; every stored key is >= it
  std::size_t stored_ = 0;           // nodes linked in buckets, live or cancelled
  std::size_t live_ = 0;
  std::uint64_t ops_ = 0;   // operations since the last work check
  std::uint64_t work_ = 0;  // buckets skipped and nodes walked since the last work check
  std::uint64_t rebuilds_ = 0;
};

}  // namespace gpumux
