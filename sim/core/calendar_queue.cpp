#include "sim/core/calendar_queue.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace gpumux {
namespace {

constexpr std::size_t kMinBuckets = 4;
constexpr unsigned kInitialShift = 10;  // 1.024 us until the first sample
// Buckets are sized to hold about this many gaps between consecutive events. Below 1, pops skip
// many empty buckets; above it, pushes walk longer lists. Measured on the hold model.
constexpr double kWidthInGaps = 2.0;
constexpr std::size_t kSampleSize = 64;  // earliest events whose gaps set the width
constexpr std::uint64_t kMaxWorkPerOperation = 4;

}  // namespace

CalendarQueue::CalendarQueue()
    : buckets_(kMinBuckets), mask_(kMinBuckets - 1), shift_(kInitialShift) {}

void CalendarQueue::release(std::uint32_t index) {
  nodes_[index].next = free_;
  free_ = index;
  --stored_;
}

void CalendarQueue::insert(std::uint32_t index) {
  Node& node = nodes_[index];
  Bucket& bucket = buckets_[bucket_of(node.key)];
  if (bucket.head == kNil) {
    node.next = kNil;
    bucket.head = bucket.tail = index;
    return;
  }
  // Later times are the common case (hold-like workloads, bursts of equal times): append.
  if (!before(node, nodes_[bucket.tail])) {
    node.next = kNil;
    nodes_[bucket.tail].next = index;
    bucket.tail = index;
    return;
  }
  // Walk from the head, unlinking cancelled nodes met on the way (a cancelled tail passes its
  // role to its predecessor).
  std::uint32_t prev = kNil;
  std::uint32_t at = bucket.head;
  while (at != kNil) {
    Node& other = nodes_[at];
    if (!generation_live(other.generation)) {
      const std::uint32_t next = other.next;
      if (prev == kNil) {
        bucket.head = next;
      } else {
        nodes_[prev].next = next;
      }
      if (bucket.tail == at) bucket.tail = prev;
      release(at);
      at = next;
      continue;
    }
    if (before(node, other)) break;
    ++work_;
    prev = at;
    at = other.next;
  }
  node.next = at;
  if (prev == kNil) {
    bucket.head = index;
  } else {
    nodes_[prev].next = index;
  }
  if (at == kNil) bucket.tail = index;
}

EventId CalendarQueue::push(Nanos time, EventOrder order, Event::Function function, void* object,
                            Event::Argument argument) {
  std::uint32_t index;
  if (free_ != kNil) {
    index = free_;
    free_ = nodes_[index].next;
  } else {
    index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{0, 0, kNil, 0, Event{}});
  }
  Node& node = nodes_[index];
  node.key = key_of(time);
  node.order = order;
  node.event = Event(function, object, argument);
  ++node.generation;
  const std::uint32_t generation = node.generation;
  if (node.key < current_start_) {
    // Earlier than the current window (possible after next_time() looked ahead): move back.
    current_start_ = node.key & ~((std::uint64_t{1} << shift_) - 1);
    current_ = bucket_of(node.key);
  }
  insert(index);
  ++stored_;
  ++live_;
  if (stored_ > 2 * buckets_.size()) {
    rebuild(2 * buckets_.size());
  } else {
    after_operation();
  }
  return EventId{index, generation};
}

bool CalendarQueue::cancel(EventId id, PoppedEvent& cancelled) {
  if (id.slot >= nodes_.size()) return false;
  Node& node = nodes_[id.slot];
  if (node.generation != id.generation || !generation_live(node.generation)) return false;
  ++node.generation;
  --live_;
  cancelled = PoppedEvent{time_of(node.key), node.event};
  return true;
}

std::uint32_t CalendarQueue::find_min() {
  assert(live_ > 0);
  const std::uint64_t width = std::uint64_t{1} << shift_;
  for (std::size_t step = 0; step < buckets_.size(); ++step) {
    Bucket& bucket = buckets_[current_];
    std::uint32_t head = bucket.head;
    while (head != kNil && !generation_live(nodes_[head].generation)) {
      bucket.head = nodes_[head].next;
      release(head);
      head = bucket.head;
    }
    // Unsigned difference: correct even when the window end would overflow.
    if (head != kNil && nodes_[head].key - current_start_ < width) {
      work_ += step;
      return head;
    }
    current_ = (current_ + 1) & mask_;
    current_start_ += width;
  }
  // A whole year without an event in its window: search the heads directly.
  work_ += 2 * buckets_.size();
  std::uint32_t best = kNil;
  for (Bucket& bucket : buckets_) {
    std::uint32_t head = bucket.head;
    while (head != kNil && !generation_live(nodes_[head].generation)) {
      bucket.head = nodes_[head].next;
      release(head);
      head = bucket.head;
    }
    if (head != kNil && (best == kNil || before(nodes_[head], nodes_[best]))) best = head;
  }
  assert(best != kNil);
  current_start_ = nodes_[best].key & ~(width - 1);
  current_ = bucket_of(nodes_[best].key);
  return best;
}

Nanos CalendarQueue::next_time() {
  if (live_ == 0) return kNever;
  return time_of(nodes_[find_min()].key);
}

PoppedEvent CalendarQueue::pop() {
  const std::uint32_t index = find_min();
  Node& node = nodes_[index];
  buckets_[current_].head = node.next;
  ++node.generation;
  --live_;
  const PoppedEvent event{time_of(node.key), node.event};
  // The next pop most likely takes this node's successor or the next bucket's head: start
  // loading it now, so the miss overlaps with running the event.
  const std::uint32_t successor =
      node.next != kNil ? node.next : buckets_[(current_ + 1) & mask_].head;
  if (successor != kNil) __builtin_prefetch(&nodes_[successor]);
  release(index);
  if (stored_ < buckets_.size() / 2 && buckets_.size() > kMinBuckets) {
    rebuild(buckets_.size() / 2);
  } else {
    after_operation();
  }
  return event;
}

void CalendarQueue::after_operation() {
  // Re-sample the width when operations cost more than a few steps on average. Checked once
  // per ~2 bucket counts of operations, or sooner once that much excess work is done (a badly
  // sized calendar can cost O(buckets) per pop), so the O(n) rebuild stays amortised.
  const std::uint64_t window = 2 * buckets_.size() + 64;
  if (++ops_ < window && work_ < kMaxWorkPerOperation * window) return;
  if (work_ > kMaxWorkPerOperation * ops_) {
    rebuild(buckets_.size());
  } else {
    ops_ = 0;
    work_ = 0;
  }
}

unsigned CalendarQueue::sample_shift(const std::vector<std::uint32_t>& items) const {
  if (items.empty()) return shift_;  // nothing to sample (a rebuild of an empty queue)
  std::vector<std::uint64_t> keys;
  keys.reserve(items.size());
  for (const std::uint32_t index : items) keys.push_back(nodes_[index].key);
  // The earliest distinct times: equal times share a bucket whatever the width, so their zero
  // gaps say nothing about it.
  const std::size_t take = std::min(keys.size(), 4 * kSampleSize);
  std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(take) - 1, keys.end());
  keys.resize(take);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() > kSampleSize) keys.resize(kSampleSize);
  if (keys.size() < 2) return shift_;
  // Brown: average gap, then the average of the gaps not above twice it (drops outliers).
  const double mean =
      static_cast<double>(keys.back() - keys.front()) / static_cast<double>(keys.size() - 1);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 1; i < keys.size(); ++i) {
    const auto gap = static_cast<double>(keys[i] - keys[i - 1]);
    if (gap <= 2 * mean) {
      sum += gap;
      ++count;
    }
  }
  const double width = kWidthInGaps * (count > 0 ? sum / static_cast<double>(count) : mean);
  if (width <= 1) return 0;
  if (width >= 0x1p62) return 62;
  return static_cast<unsigned>(std::bit_width(static_cast<std::uint64_t>(width) - 1));
}

void CalendarQueue::rebuild(std::size_t bucket_count) {
  ++rebuilds_;
  ops_ = 0;
  work_ = 0;
  // Collect the live nodes; cancelled ones are freed here.
  std::vector<std::uint32_t> items;
  items.reserve(live_);
  for (const Bucket& bucket : buckets_) {
    for (std::uint32_t at = bucket.head; at != kNil;) {
      const std::uint32_t next = nodes_[at].next;
      if (generation_live(nodes_[at].generation)) {
        items.push_back(at);
      } else {
        release(at);
      }
      at = next;
    }
  }
  shift_ = sample_shift(items);
  buckets_.assign(bucket_count, Bucket{});
  mask_ = bucket_count - 1;
  // Counting sort by new bucket, then each bucket's few nodes by (time, order).
  std::vector<std::uint32_t> start(bucket_count + 1, 0);
  for (const std::uint32_t index : items) ++start[bucket_of(nodes_[index].key) + 1];
  for (std::size_t b = 0; b < bucket_count; ++b) start[b + 1] += start[b];
  std::vector<std::uint32_t> sorted(items.size());
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (const std::uint32_t index : items) sorted[fill[bucket_of(nodes_[index].key)]++] = index;
  }
  std::uint64_t min_key = ~std::uint64_t{0};
  for (std::size_t b = 0; b < bucket_count; ++b) {
    const auto first = sorted.begin() + start[b];
    const auto last = sorted.begin() + start[b + 1];
    if (first == last) continue;
    std::sort(first, last,
              [this](std::uint32_t x, std::uint32_t y) { return before(nodes_[x], nodes_[y]); });
    for (auto it = first; it + 1 != last; ++it) nodes_[*it].next = *(it + 1);
    nodes_[*(last - 1)].next = kNil;
    buckets_[b] = Bucket{*first, *(last - 1)};
    min_key = std::min(min_key, nodes_[*first].key);
  }
  // Start at the earliest event, or keep the old position (aligned down) when empty.
  const std::uint64_t anchor = items.empty() ? current_start_ : min_key;
  current_start_ = anchor & ~((std::uint64_t{1} << shift_) - 1);
  current_ = bucket_of(anchor);
}

}  // namespace gpumux
