#include "sim/core/ladder_queue.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace gpumux {
namespace {

// A drained bucket keeps its storage up to this many entries; larger blocks are freed, so
// memory follows the queue's size rather than the largest bucket each digit ever held.
constexpr std::size_t kKeptCapacity = 4096;
// Entries filed within this distance of `last` (rungs 0 and 1) reach the Bottom within a few
// hundred events: their slots are prefetched when filed.
constexpr std::uint64_t kPrefetchDistance = std::uint64_t{1} << 16;
// Compaction runs once dead entries exceed the live ones by this margin.
constexpr std::size_t kCompactionSlack = 4096;

struct ReadyAfter {  // std heap comparator: a min-heap by order
  template <class R>
  bool operator()(const R& a, const R& b) const {
    return a.order > b.order;
  }
};
struct EarlyAfter {  // min-heap by (key, order)
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.key > b.key || (a.key == b.key && a.order > b.order);
  }
};

}  // namespace

void LadderQueue::push_ready(const Entry& entry) {
  ready_.push_back(Ready{entry.order, entry.slot, entry.generation});
  std::push_heap(ready_.begin(), ready_.end(), ReadyAfter{});
}

void LadderQueue::file(const Entry& entry) {
  const std::uint64_t diff = entry.key ^ last_;
  if (diff == 0) {
    push_ready(entry);
    return;
  }
  const unsigned rung = static_cast<unsigned>(std::bit_width(diff) - 1) / kDigitBits;
  const unsigned digit = static_cast<unsigned>(entry.key >> (rung * kDigitBits)) & (kDigits - 1);
  if (diff < kPrefetchDistance) __builtin_prefetch(&slots_[entry.slot]);
  buckets_[rung * kDigits + digit].push_back(entry);
  masks_[rung][digit / 64] |= std::uint64_t{1} << (digit % 64);
  rung_mask_ |= 1u << rung;
}

EventId LadderQueue::push(Nanos time, EventOrder order, Event::Function function, void* object,
                          Event::Argument argument) {
  const std::uint32_t slot = acquire_slot(slots_, free_slots_);
  Slot& s = slots_[slot];
  s.event = Event(function, object, argument);
  ++s.generation;
  const std::uint32_t generation = s.generation;
  const std::uint64_t key = key_of(time);
  if (stored_ == 0) {
    last_ = key;  // empty: restart the ladder at this time
    if (buckets_.empty()) buckets_.resize(kRungs * kDigits);  // on first use: 48 KiB
  }
  ++stored_;
  ++live_;
  if (key < last_) {
    early_.push_back(Early{key, order, slot, generation});
    std::push_heap(early_.begin(), early_.end(), EarlyAfter{});
  } else {
    file(Entry{key, order, slot, generation});
  }
  return EventId{slot, generation};
}

bool LadderQueue::cancel(EventId id, PoppedEvent& cancelled) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || !generation_live(s.generation)) return false;
  // The entry stays where it is; the bumped generation marks it dead and frees the slot now.
  ++s.generation;
  free_slots_.push_back(id.slot);
  --live_;
  cancelled = PoppedEvent{kNever, s.event};
  if (stored_ - live_ > live_ + kCompactionSlack) compact();
  return true;
}

void LadderQueue::take_bucket() {
  assert(rung_mask_ != 0);
  const auto rung = static_cast<unsigned>(std::countr_zero(rung_mask_));
  std::uint64_t* mask = masks_[rung];
  unsigned word = 0;
  while (mask[word] == 0) ++word;
  const unsigned digit = word * 64 + static_cast<unsigned>(std::countr_zero(mask[word]));
  mask[word] &= mask[word] - 1;
  if ((mask[0] | mask[1] | mask[2] | mask[3]) == 0) rung_mask_ &= ~(1u << rung);
  static_assert(kMaskWords == 4);

  std::vector<Entry>& bucket = buckets_[rung * kDigits + digit];
  // Rung 0 buckets hold one time each; elsewhere find the minimum first.
  std::uint64_t least = bucket.front().key;
  if (rung != 0) {
    for (const Entry& entry : bucket) least = std::min(least, entry.key);
  }
  last_ = least;
  // Every entry moves to a lower rung or the Bottom, never back into this bucket.
  for (const Entry& entry : bucket) file(entry);
  if (bucket.capacity() > kKeptCapacity) {
    std::vector<Entry>().swap(bucket);
  } else {
    bucket.clear();
  }
}

void LadderQueue::settle() {
  assert(live_ > 0);
  while (!early_.empty()) {
    const Early& top = early_.front();
    if (live(top.slot, top.generation)) return;
    std::pop_heap(early_.begin(), early_.end(), EarlyAfter{});
    early_.pop_back();
    --stored_;
  }
  for (;;) {
    while (!ready_.empty()) {
      const Ready& top = ready_.front();
      if (live(top.slot, top.generation)) return;
      std::pop_heap(ready_.begin(), ready_.end(), ReadyAfter{});
      ready_.pop_back();
      --stored_;
    }
    take_bucket();
  }
}

Nanos LadderQueue::next_time() {
  if (live_ == 0) return kNever;
  settle();
  return time_of(early_.empty() ? last_ : early_.front().key);
}

PoppedEvent LadderQueue::pop() {
  settle();
  std::uint32_t index;
  Nanos time;
  if (!early_.empty()) {
    index = early_.front().slot;
    time = time_of(early_.front().key);
    std::pop_heap(early_.begin(), early_.end(), EarlyAfter{});
    early_.pop_back();
  } else {
    index = ready_.front().slot;
    time = time_of(last_);
    if (ready_.size() > 1) std::pop_heap(ready_.begin(), ready_.end(), ReadyAfter{});
    ready_.pop_back();
  }
  Slot& s = slots_[index];
  ++s.generation;
  free_slots_.push_back(index);
  --stored_;
  --live_;
  return PoppedEvent{time, s.event};
}

void LadderQueue::compact() {
  ++compactions_;
  stored_ = 0;
  for (unsigned rung = 0; rung < kRungs; ++rung) {
    for (unsigned digit = 0; digit < kDigits; ++digit) {
      if ((masks_[rung][digit / 64] >> (digit % 64) & 1) == 0) continue;
      std::vector<Entry>& bucket = buckets_[rung * kDigits + digit];
      std::erase_if(bucket, [this](const Entry& e) { return !live(e.slot, e.generation); });
      stored_ += bucket.size();
      if (bucket.empty()) {
        masks_[rung][digit / 64] &= ~(std::uint64_t{1} << (digit % 64));
        std::vector<Entry>().swap(bucket);
      }
    }
    const std::uint64_t* mask = masks_[rung];
    if ((mask[0] | mask[1] | mask[2] | mask[3]) == 0) rung_mask_ &= ~(1u << rung);
  }
  std::erase_if(ready_, [this](const Ready& r) { return !live(r.slot, r.generation); });
  std::make_heap(ready_.begin(), ready_.end(), ReadyAfter{});
  std::erase_if(early_, [this](const Early& e) { return !live(e.slot, e.generation); });
  std::make_heap(early_.begin(), early_.end(), EarlyAfter{});
  stored_ += ready_.size() + early_.size();
}

}  // namespace gpumux
