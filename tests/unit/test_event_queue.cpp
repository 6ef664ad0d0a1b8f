// Pending-event set tests: one suite, run against every QueueKind (TEST_P). Each kind must pop
// events in the total order (time, priority class, sequence of scheduling), cancel in O(1) with
// stale ids ignored, and produce exactly the same sequence as every other kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/calendar_queue.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/ladder_queue.hpp"
#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"

namespace gpumux {
namespace {

constexpr QueueKind kAllKinds[] = {QueueKind::heap, QueueKind::calendar, QueueKind::ladder};

struct Recorder {
  std::vector<std::uint64_t> tags;
  std::vector<Nanos> times;
  Simulator* sim = nullptr;
  void on_event(std::uint64_t tag) {
    tags.push_back(tag);
    times.push_back(sim != nullptr ? sim->now() : 0);
  }
};

/// The typed event that records `tag` in `rec` (make_event binding Recorder::on_event).
Event tagged(Recorder& rec, std::uint64_t tag) { return make_event<&Recorder::on_event>(rec, tag); }

class QueueKindTest : public testing::TestWithParam<QueueKind> {};

TEST_P(QueueKindTest, TimeThenPriorityThenSequence) {
  Simulator sim(GetParam());
  EXPECT_EQ(sim.queue_kind(), GetParam());
  Recorder rec;
  rec.sim = &sim;
  sim.schedule_at(20, tagged(rec, 1));
  sim.schedule_at(10, tagged(rec, 2), kPriorityArrival);
  sim.schedule_at(10, tagged(rec, 3), kPriorityCompletion);  // same time, lower class: first
  sim.schedule_at(10, tagged(rec, 4), kPriorityArrival);     // same time and class: after 2
  sim.schedule_at(5, tagged(rec, 5));
  sim.schedule_at(10, tagged(rec, 6), 0);  // class 0 beats every other class at t=10
  sim.schedule_at(10, tagged(rec, 7), 255);
  sim.run();
  EXPECT_EQ(rec.tags, (std::vector<std::uint64_t>{5, 6, 3, 2, 4, 7, 1}));
  EXPECT_EQ(rec.times, (std::vector<Nanos>{5, 10, 10, 10, 10, 10, 20}));
}

TEST_P(QueueKindTest, ZeroDelayEventsRunAfterCurrentInSchedulingOrder) {
  Simulator sim(GetParam());
  std::vector<int> order;
  sim.schedule_at(7, [&] {
    order.push_back(1);
    sim.schedule_in(0, [&] { order.push_back(3); });
    sim.schedule_in(
        0, [&] { order.push_back(5); }, kPriorityCompletion);  // lower class: first
    order.push_back(2);
  });
  sim.schedule_at(7, [&] { order.push_back(4); });
  sim.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 5, 4, 3}));
  EXPECT_EQ(sim.now(), 7);
}

TEST_P(QueueKindTest, CancelIgnoresStaleIdsAfterSlotReuse) {
  Simulator sim(GetParam());
  Recorder rec;
  rec.sim = &sim;
  const EventId a = sim.schedule_at(10, tagged(rec, 1));
  sim.schedule_at(20, tagged(rec, 2));
  EXPECT_TRUE(sim.cancel(a));
  EXPECT_FALSE(sim.cancel(a));
  EXPECT_EQ(sim.pending(), 1u);
  sim.run_until(12);  // discards the cancelled event, so its slot is free again
  const EventId b = sim.schedule_at(15, tagged(rec, 3));
  EXPECT_FALSE(sim.cancel(a));
  sim.run();
  EXPECT_EQ(rec.tags, (std::vector<std::uint64_t>{3, 2}));
  EXPECT_FALSE(sim.cancel(b));  // already ran
  EXPECT_FALSE(sim.cancel(EventId{}));
  EXPECT_FALSE(sim.cancel(EventId{123456, 1}));
}

TEST_P(QueueKindTest, CancelTheHeadAndThenEverything) {
  Simulator sim(GetParam());
  Recorder rec;
  rec.sim = &sim;
  std::vector<EventId> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(sim.schedule_at(100 + i % 37, tagged(rec, i)));
  EXPECT_EQ(sim.queue_kind(), GetParam());
  // The head: the first event scheduled at the earliest time, 100.
  EXPECT_TRUE(sim.cancel(ids[0]));
  sim.run_until(100);
  EXPECT_EQ(rec.tags.front(), 37u);
  EXPECT_EQ(rec.tags.size(), 27u);  // i = 37, 74, ..., 999
  for (const EventId id : ids) sim.cancel(id);
  EXPECT_EQ(sim.pending(), 0u);
  const std::size_t ran = rec.tags.size();
  sim.run();
  EXPECT_EQ(rec.tags.size(), ran);
  EXPECT_EQ(sim.now(), 100);
  // The queue keeps working after being emptied by cancellation.
  sim.schedule_at(300, tagged(rec, 7));
  sim.schedule_at(200, tagged(rec, 8));
  sim.run();
  EXPECT_EQ(rec.tags.back(), 7u);
  EXPECT_EQ(sim.now(), 300);
}

TEST_P(QueueKindTest, CancelledClosureIsReleased) {
  Simulator sim(GetParam());
  auto token = std::make_shared<int>(1);
  const EventId id = sim.schedule_at(10, [token] {});
  EXPECT_EQ(token.use_count(), 2);
  EXPECT_TRUE(sim.cancel(id));
  EXPECT_EQ(token.use_count(), 1);
  sim.run();
  EXPECT_EQ(sim.events_processed(), 0u);
}

TEST_P(QueueKindTest, RunUntilAndStop) {
  Simulator sim(GetParam());
  Recorder rec;
  rec.sim = &sim;
  for (Nanos t : {5, 10, 15, 20}) sim.schedule_at(t, tagged(rec, static_cast<std::uint64_t>(t)));
  sim.run_until(12);
  EXPECT_EQ(rec.tags.size(), 2u);
  EXPECT_EQ(sim.now(), 12);
  // An event between now and the look-ahead the queue did for t=15.
  sim.schedule_at(13, tagged(rec, 13));
  sim.run_until(15);  // inclusive horizon
  EXPECT_EQ(rec.tags, (std::vector<std::uint64_t>{5, 10, 13, 15}));
  sim.schedule_at(16, [&] { sim.stop(); });
  sim.run();
  EXPECT_TRUE(sim.stopped());
  EXPECT_EQ(sim.now(), 16);
  EXPECT_EQ(sim.pending(), 1u);
  sim.run();
  EXPECT_EQ(rec.tags.back(), 20u);
  EXPECT_EQ(sim.now(), 20);
}

TEST_P(QueueKindTest, BurstsOfEqualTimesKeepSchedulingOrder) {
  Simulator sim(GetParam());
  Recorder rec;
  rec.sim = &sim;
  for (int i = 0; i < 20000; ++i) sim.schedule_at(i < 10000 ? 5 * kSecond : 1, tagged(rec, i));
  sim.run();
  ASSERT_EQ(rec.tags.size(), 20000u);
  for (std::size_t i = 0; i < 10000; ++i) EXPECT_EQ(rec.tags[i], i + 10000) << i;
  for (std::size_t i = 10000; i < 20000; ++i) EXPECT_EQ(rec.tags[i], i - 10000) << i;
}

// Random schedule driven against a reference std::set ordered by (time, priority, sequence).
// Pushes, cancels (of live, cancelled and already-run events) and pops are interleaved; every
// pop must match the reference. Returns the tags in the order they ran.
enum class Delays { ties, ns_to_hours, hold, chain };

Nanos draw_delay(RandomStream& rng, Delays delays) {
  switch (delays) {
    case Delays::ties:
      return static_cast<Nanos>(rng.next_u64() % 50);  // many equal times
    case Delays::ns_to_hours:                          // log-uniform from 1 ns to ~1 hour
      return static_cast<Nanos>(std::exp(rng.uniform(0.0, std::log(3600.0 * kSecond))));
    case Delays::hold:
      return 1 + static_cast<Nanos>(rng.exponential(1e6));
    case Delays::chain:  // mostly the next link of a chain (before everything else), some far
      return rng.next_u64() % 8 != 0 ? static_cast<Nanos>(rng.next_u64() % 3)
                                     : static_cast<Nanos>(rng.next_u64() % 100000);
  }
  return 0;
}

std::vector<std::uint64_t> run_against_reference(QueueKind kind, std::uint64_t seed, Delays delays,
                                                 int operations) {
  using Ref = std::tuple<Nanos, int, std::uint64_t, std::uint64_t>;  // time, class, seq, tag
  EventQueue queue(kind);
  Recorder rec;
  std::set<Ref> reference;
  std::vector<Ref> keys;  // by tag
  std::vector<EventId> ids;
  RandomStream rng(seed);
  Nanos now = 0;
  std::uint64_t sequence = 0;
  auto pop_one = [&] {
    EXPECT_EQ(queue.next_time(), std::get<0>(*reference.begin()));
    queue.pop_and_run(now);
    EXPECT_EQ(now, std::get<0>(*reference.begin()));
    EXPECT_EQ(rec.tags.back(), std::get<3>(*reference.begin()));
    reference.erase(reference.begin());
  };
  for (int op = 0; op < operations; ++op) {
    const std::uint64_t r = rng.next_u64() % 10;
    if (r < 5 || reference.empty()) {
      const Nanos time = now + draw_delay(rng, delays);
      const int priority = static_cast<int>(rng.next_u64() % 3) * 10;
      const std::uint64_t tag = keys.size();
      keys.emplace_back(time, priority, sequence++, tag);
      ids.push_back(
          queue.push(time, static_cast<EventQueue::Priority>(priority), tagged(rec, tag)));
      reference.insert(keys.back());
    } else if (r < 7) {
      const std::uint64_t tag = rng.next_u64() % keys.size();
      const bool pending = reference.erase(keys[tag]) > 0;
      EXPECT_EQ(queue.cancel(ids[tag]), pending) << tag;
    } else {
      pop_one();
    }
    EXPECT_EQ(queue.size(), reference.size());
    if (testing::Test::HasFailure()) return rec.tags;
  }
  while (!reference.empty() && !testing::Test::HasFailure()) pop_one();
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.next_time(), kNever);
  return rec.tags;
}

TEST_P(QueueKindTest, RandomScheduleWithTiesMatchesReference) {
  run_against_reference(GetParam(), 11, Delays::ties, 100000);
}

TEST_P(QueueKindTest, TimesFromNanosecondsToHoursMatchReference) {
  run_against_reference(GetParam(), 12, Delays::ns_to_hours, 100000);
}

TEST_P(QueueKindTest, HoldScheduleMatchesReference) {
  run_against_reference(GetParam(), 13, Delays::hold, 100000);
}

TEST_P(QueueKindTest, ChainsOfNewEarliestEventsMatchReference) {
  // The heap's front (a new earliest key held apart): pushes that come first, cancels of them,
  // ties at the same time with a later sequence.
  run_against_reference(GetParam(), 14, Delays::chain, 100000);
}

TEST_P(QueueKindTest, GrowsAndShrinksThroughPhases) {
  // Phase 1: 50k events an hour apart from each other; phase 2: ns-spaced bursts on top; then
  // drain. Exercises resizing both ways and re-sampling of the bucket width.
  Simulator sim(GetParam());
  Recorder rec;
  rec.sim = &sim;
  RandomStream rng(5);
  std::vector<std::tuple<Nanos, std::uint64_t>> expected;
  for (std::uint64_t i = 0; i < 50000; ++i) {
    const Nanos t = static_cast<Nanos>(rng.next_u64() % (50000 * 3600 * kSecond));
    sim.schedule_at(t, tagged(rec, i));
    expected.emplace_back(t, i);
  }
  for (std::uint64_t i = 50000; i < 100000; ++i) {
    const Nanos t = static_cast<Nanos>(rng.next_u64() % 1000);
    sim.schedule_at(t, tagged(rec, i));
    expected.emplace_back(t, i);
  }
  std::sort(expected.begin(), expected.end());
  sim.run();
  ASSERT_EQ(rec.tags.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(rec.tags[i], std::get<1>(expected[i])) << i;
    ASSERT_EQ(rec.times[i], std::get<0>(expected[i])) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, QueueKindTest, testing::ValuesIn(kAllKinds),
                         [](const testing::TestParamInfo<QueueKind>& info) {
                           return std::string(to_string(info.param));
                         });

TEST(QueueKinds, AllKindsRunIdenticalSequences) {
  for (const Delays delays : {Delays::ties, Delays::ns_to_hours, Delays::hold}) {
    const auto heap = run_against_reference(QueueKind::heap, 21, delays, 50000);
    for (const QueueKind kind : kAllKinds) {
      EXPECT_EQ(run_against_reference(kind, 21, delays, 50000), heap) << to_string(kind);
    }
  }
}

TEST(HeapQueue, AChainOfEarliestEventsBypassesTheHeap) {
  // 100 events far away, then a chain: each event, when it runs, schedules the next one before
  // them all (a kernel's completion, its successor's launch, ...). The chain's keys go to the
  // front and never into the heap; the far events keep their order after it.
  HeapQueue queue;
  Recorder rec;
  for (std::uint64_t i = 0; i < 100; ++i) {
    queue.push(kSecond + static_cast<Nanos>(i), EventOrder{i}, tagged(rec, 1000 + i));
  }
  EXPECT_TRUE(queue.has_front());  // the first push found the queue empty
  EXPECT_EQ(queue.heap_keys(), 99u);
  EventOrder order = 100;
  for (std::uint64_t link = 0; link < 1000; ++link) {
    queue.push(static_cast<Nanos>(link), order++, tagged(rec, link));
    EXPECT_TRUE(queue.has_front());
    EXPECT_EQ(queue.heap_keys(), 100u);
    ASSERT_EQ(queue.next_time(), static_cast<Nanos>(link));
    queue.pop_live_top().event.run();
    EXPECT_FALSE(queue.has_front());
  }
  // A new earliest while the front is taken: the front moves into the heap, the newer one
  // takes its place; a cancelled front is dropped at the next look.
  queue.push(5000, order++, tagged(rec, 2000));
  const EventId earlier = queue.push(4000, order++, tagged(rec, 2001));
  EXPECT_EQ(queue.heap_keys(), 101u);
  PoppedEvent cancelled{};
  EXPECT_TRUE(queue.cancel(earlier, cancelled));
  EXPECT_EQ(queue.next_time(), 5000);
  EXPECT_FALSE(queue.has_front());
  while (queue.next_time() != kNever) queue.pop_live_top().event.run();
  ASSERT_EQ(rec.tags.size(), 1101u);
  for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(rec.tags[i], i);
  EXPECT_EQ(rec.tags[1000], 2000u);
  for (std::uint64_t i = 0; i < 100; ++i) EXPECT_EQ(rec.tags[1001 + i], 1000 + i);
}

TEST(CalendarQueue, AdaptsBucketWidthToTheEventSpacing) {
  CalendarQueue queue;
  Recorder rec;
  std::uint64_t order = 0;
  for (int i = 0; i < 4096; ++i) queue.push(i * kMillisecond, order++, tagged(rec, 0));
  EXPECT_GE(queue.bucket_width(), kMillisecond / 2);
  EXPECT_LE(queue.bucket_width(), 8 * kMillisecond);
  EXPECT_GE(queue.bucket_count(), 1024u);
  while (queue.next_time() != kNever) queue.pop();
  EXPECT_LE(queue.bucket_count(), 16u);
  // A hold model at constant size whose spacing jumps from 100 ns to an hour: the width follows
  // through the work check (a whole-year scan per pop), not through a resize.
  for (int i = 0; i < 64; ++i) queue.push(5 * kSecond + i * 100, order++, tagged(rec, 0));
  for (int round = 0; round < 2000; ++round) {
    const PoppedEvent event = queue.pop();
    queue.push(event.time + 64 * 100, order++, tagged(rec, 0));
  }
  EXPECT_LE(queue.bucket_width(), 1024);
  const std::uint64_t rebuilds = queue.rebuilds();
  const std::size_t buckets = queue.bucket_count();
  for (int round = 0; round < 2000; ++round) {
    const PoppedEvent event = queue.pop();
    const Nanos hours = 1 + (round * 7919) % 128;
    queue.push(event.time + hours * 3600 * kSecond, order++, tagged(rec, 0));
  }
  EXPECT_GT(queue.rebuilds(), rebuilds);
  EXPECT_EQ(queue.bucket_count(), buckets);
  EXPECT_GE(queue.bucket_width(), 1800 * kSecond);
}

TEST(LadderQueue, CancelledTimeoutsAreCompactedAway) {
  // Far-future timeouts that are always cancelled (a retry timer pattern) must not pile up
  // until their time comes: stored entries stay within a bound of the live ones.
  LadderQueue queue;
  Recorder rec;
  std::uint64_t order = 0;
  for (int i = 0; i < 100; ++i) queue.push(i, order++, tagged(rec, 0));
  Nanos now = 0;
  for (int round = 0; round < 100000; ++round) {
    const EventId timeout = queue.push(now + 3600 * kSecond + round, order++, tagged(rec, 1));
    PoppedEvent cancelled{};
    ASSERT_TRUE(queue.cancel(timeout, cancelled));
    EXPECT_EQ(cancelled.event.argument().value, 1u);
    const PoppedEvent event = queue.pop();
    ASSERT_GE(event.time, now);
    now = event.time;
    queue.push(now + 100, order++, tagged(rec, 0));
  }
  EXPECT_GT(queue.compactions(), 0u);
  EXPECT_LE(queue.stored(), 100u + 2 * 4096u + 1);
  // Events pushed between the current time and a looked-ahead next_time() come first.
  const Nanos ahead = queue.next_time();
  queue.push(ahead - 1, order++, tagged(rec, 2));
  queue.push(ahead - 1, order++, tagged(rec, 3));
  EXPECT_EQ(queue.next_time(), ahead - 1);
  EXPECT_EQ(queue.pop().event.argument().value, 2u);
  EXPECT_EQ(queue.pop().event.argument().value, 3u);
  EXPECT_EQ(queue.pop().time, ahead);
}

}  // namespace
}  // namespace gpumux
