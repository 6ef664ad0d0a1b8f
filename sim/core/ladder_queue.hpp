#pragma once
// LadderQueue: pending events in a ladder of radix rungs — a multi-level bucket queue in the
// spirit of the ladder queue (Tang, Goh, Thng, ACM TOMACS 2005), with the rungs fixed by the
// digits of the time instead of spawned with sampled widths.
//
// Layout: `last` is the time of the earliest bucket taken so far (it only grows). An event at
// time t >= last whose highest bit differing from last lies in digit L (8-bit digits, L = 0..7)
// is appended, unsorted, to bucket (L, digit L of t) of rung L. Every event of rung L is later
// than every event of rung L-1, and inside a rung the buckets are in digit order, so the
// earliest event is in the first non-empty bucket of the lowest non-empty rung (found with bit
// masks). Taking that bucket sets last to its minimum and re-files its events into lower rungs
// (like spawning a rung in the ladder queue); the events at time == last go to the Bottom: a
// small min-heap by order key, so ties break by (priority, sequence) exactly as in HeapQueue.
// Events pushed before last (possible after next_time() looked ahead) go to a side heap by
// (time, order) that is always served first: they are all earlier than anything else.
//
// Costs: push O(1) (an append); pop O(1) amortised: an event is re-filed at most once per rung
// (<= 8 times, ~3-4 for times spread over seconds), each time by a sequential read and an append
// to one of a few hundred active buckets, so the tables are streamed rather than hit at random.
// The only random access per event is its slot (event, generation; a huge-page
// table), prefetched when the event nears the Bottom. k events at one time cost O(log k) each
// in the Bottom heap; pushes before `last` O(log e) in the side heap (rare). Cancel O(1): the
// slot's generation is bumped and the slot reused at once; the stale entry is dropped when it
// reaches the Bottom, or by a compaction once dead entries outnumber live ones by 4096
// (amortised O(1)). Memory: 24 B per stored entry (live or dead) + 32 B per slot + bucket
// slack (a drained bucket keeps <= 64 KiB); 48 KiB of bucket headers from the first push.
// Used through EventQueue, which assigns the order keys.
#include <cstdint>
#include <vector>

#include "sim/core/queue_memory.hpp"
#include "sim/core/queue_types.hpp"

namespace gpumux {

class LadderQueue {
 public:
  /// The event's parts travel in registers (a 24-byte struct would go through memory).
  EventId push(Nanos time, EventOrder order, Event::Function function, void* object,
               Event::Argument argument);
  EventId push(Nanos time, EventOrder order, const Event& event) {
    return push(time, order, event.function(), event.object(), event.argument());
  }
  /// O(1). True when the event was pending and is now cancelled; `cancelled` then holds its
  /// target (time kNever, as in HeapQueue).
  bool cancel(EventId id, PoppedEvent& cancelled);
  /// Time of the earliest live event; kNever when none. May take buckets (moves `last` ahead).
  Nanos next_time();
  /// Removes the earliest live event. Precondition: a live event is pending.
  PoppedEvent pop();

  /// Introspection for tests and benchmarks: entries held (live or cancelled-not-yet-dropped),
  /// and compactions run so far.
  std::size_t stored() const { return stored_; }
  std::uint64_t compactions() const { return compactions_; }

 private:
  static constexpr unsigned kDigitBits = 8;
  static constexpr unsigned kDigits = 1u << kDigitBits;
  static constexpr unsigned kRungs = 64 / kDigitBits;
  static constexpr unsigned kMaskWords = kDigits / 64;

  struct Entry {
    std::uint64_t key;  // time with the sign bit flipped: unsigned order = signed time order
    EventOrder order;   // carried here, so the Bottom never reads the slot to order ties
    std::uint32_t slot;
    std::uint32_t generation;  // the slot's generation at push; the entry is live while equal
  };
  struct Ready {  // an entry in the Bottom (time == last)
    EventOrder order;
    std::uint32_t slot;
    std::uint32_t generation;
  };
  struct Early {  // an entry pushed before last
    std::uint64_t key;
    EventOrder order;
    std::uint32_t slot;
    std::uint32_t generation;
  };
  struct Slot {  // 32 B: two per cache line
    Event event;
    std::uint32_t generation = 0;
  };
  static_assert(sizeof(Slot) == 32);

  static std::uint64_t key_of(Nanos time) {
    return static_cast<std::uint64_t>(time) ^ (std::uint64_t{1} << 63);
  }
  static Nanos time_of(std::uint64_t key) {
    return static_cast<Nanos>(key ^ (std::uint64_t{1} << 63));
  }
  bool live(std::uint32_t slot, std::uint32_t generation) const {
    return slots_[slot].generation == generation;
  }
  void file(const Entry& entry);
  void push_ready(const Entry& entry);
  void settle();
  void take_bucket();
  void compact();

  std::vector<std::vector<Entry>> buckets_;       // kRungs * kDigits, rung-major; at 1st push
  std::uint64_t masks_[kRungs][kMaskWords] = {};  // non-empty buckets per rung
  std::uint32_t rung_mask_ = 0;                   // non-empty rungs
  std::uint64_t last_ = 0;                        // key of the Bottom's time
  std::vector<Ready> ready_;                      // the Bottom: min-heap by order
  std::vector<Early> early_;                      // min-heap by (key, order)
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t stored_ = 0;  // entries in buckets, Bottom and early heap, live or dead
  std::size_t live_ = 0;
  std::uint64_t compactions_ = 0;
};

}  // namespace gpumux
