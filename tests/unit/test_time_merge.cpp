// merge_in_time_order (sim/core/time_merge.hpp): the order of a stable k-way merge (by time,
// ties by source, then position), whatever path it takes (tournament tree below 16 sources, the
// radix sort from 16 on, the tree again when a source is out of order), checked against a plain
// reference merge on random sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/time_merge.hpp"

namespace gpumux {
namespace {

struct Item {
  Nanos time;
  std::size_t source, position;
};

using Sources = std::vector<std::vector<Item>>;

// The reference: repeatedly the source whose next element has the least time (the lowest
// source on a tie), one element at a time.
std::vector<std::pair<std::size_t, std::size_t>> reference_merge(const Sources& sources) {
  std::vector<std::size_t> at(sources.size(), 0);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (;;) {
    std::size_t best = sources.size();
    for (std::size_t s = 0; s < sources.size(); ++s) {
      if (at[s] == sources[s].size()) continue;
      if (best == sources.size() || sources[s][at[s]].time < sources[best][at[best]].time) best = s;
    }
    if (best == sources.size()) return out;
    out.emplace_back(best, at[best]);
    ++at[best];
  }
}

std::vector<std::pair<std::size_t, std::size_t>> merged(Sources sources) {
  std::vector<std::vector<Item>*> pointers;
  for (auto& s : sources) pointers.push_back(&s);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  merge_in_time_order(
      pointers, [](const Item& x) { return x.time; },
      [&](const Item& x) { out.emplace_back(x.source, x.position); });
  for (const auto& s : sources) EXPECT_TRUE(s.empty());
  return out;
}

enum class Spread { uniform, ties, bunched, wide, clustered };

// K sources of random lengths (some empty), each sorted unless SHUFFLE_ONE.
Sources random_sources(std::mt19937_64& rng, std::size_t k, Spread spread, bool shuffle_one) {
  Sources sources(k);
  for (std::size_t s = 0; s < k; ++s) {
    const std::size_t n = shuffle_one && s == k / 2 ? 100 : rng() % 7 == 0 ? 0 : rng() % 300;
    std::vector<Nanos> times(n);
    for (Nanos& t : times) {
      switch (spread) {
        case Spread::uniform:
          t = static_cast<Nanos>(rng() % 1'000'000'000);
          break;
        case Spread::ties:
          t = static_cast<Nanos>(rng() % 50) * 1000;
          break;
        case Spread::bunched:  // nearly all within 100 us of a span of 2^40 ns
          t = rng() % 500 == 0 ? static_cast<Nanos>(rng() % (std::uint64_t{1} << 40))
                               : 5'000'000 + static_cast<Nanos>(rng() % 100'000);
          break;
        case Spread::clustered:  // four clusters of 4096 ns, 2^30 ns apart: equal times across
                                 // sources, and runs of thousands below the radix passes' bits
          t = static_cast<Nanos>(rng() % 4) * (Nanos{1} << 30) + static_cast<Nanos>(rng() % 4096);
          break;
        case Spread::wide:  // negative to near the end of time
          t = static_cast<Nanos>(rng() >> 1) - (Nanos{1} << 61);
          break;
      }
    }
    std::sort(times.begin(), times.end());
    if (shuffle_one && s == k / 2 && n > 2) std::swap(times.front(), times.back());
    for (std::size_t i = 0; i < n; ++i) sources[s].push_back({times[i], s, i});
  }
  return sources;
}

TEST(TimeMerge, EqualsAStableMergeAtAnySourceCountAndSpread) {
  std::mt19937_64 rng(37);
  for (const std::size_t k : {1U, 2U, 3U, 15U, 16U, 17U, 64U, 512U}) {
    for (const Spread spread :
         {Spread::uniform, Spread::ties, Spread::bunched, Spread::wide, Spread::clustered}) {
      for (int round = 0; round < 3; ++round) {
        const Sources sources = random_sources(rng, k, spread, false);
        const auto expected = reference_merge(sources);
        const auto got = merged(sources);
        ASSERT_EQ(got, expected) << k << " sources, spread " << static_cast<int>(spread);
        // Sorted sources: the merge is also the stable sort of all elements taken source by
        // source, i.e. times ascending and, on equal times, (source, position) ascending.
        for (std::size_t i = 1; i < got.size(); ++i) {
          const Item& a = sources[got[i - 1].first][got[i - 1].second];
          const Item& b = sources[got[i].first][got[i].second];
          ASSERT_TRUE(a.time < b.time || (a.time == b.time && std::pair(a.source, a.position) <
                                                                  std::pair(b.source, b.position)));
        }
      }
    }
  }
}

TEST(TimeMerge, SortRunsOrdersWordsWhoseHighBitsAreAlreadyInOrder) {
  // Words sorted on their bits above SHIFT only (in any order within equal high bits, as the
  // radix passes leave them when they skip the low time bits): sort_runs gives std::sort's order.
  std::mt19937_64 rng(53);
  for (const int shift : {1, 8, 20, 40}) {
    for (const std::size_t n : {0U, 1U, 2U, 3U, 100U, 5000U}) {
      for (const std::uint64_t high_values :
           {std::uint64_t{1}, std::uint64_t{3}, n + 1, 10 * n + 7}) {
        std::vector<std::uint64_t> words(n);
        for (std::uint64_t& w : words) {
          w = ((rng() % high_values) << shift) | (rng() & ((std::uint64_t{1} << shift) - 1));
        }
        std::vector<std::uint64_t> expected = words;
        std::sort(expected.begin(), expected.end());
        // In order of the high bits, stable: the low bits stay scrambled within a run.
        std::stable_sort(words.begin(), words.end(), [&](std::uint64_t a, std::uint64_t b) {
          return (a >> shift) < (b >> shift);
        });
        time_merge_detail::sort_runs(words.data(), words.size(), shift);
        ASSERT_EQ(words, expected) << "shift " << shift << ", " << n << " words";
      }
    }
  }
}

TEST(TimeMerge, ASourceOutOfOrderIsMergedNotSorted) {
  std::mt19937_64 rng(41);
  for (const std::size_t k : {16U, 64U, 512U}) {
    Sources sources = random_sources(rng, k, Spread::uniform, true);
    ASSERT_GT(sources[k / 2].size(), 2U);
    // The radix sort refuses it, emitting nothing and keeping the sources.
    std::vector<std::vector<Item>*> pointers;
    for (auto& s : sources) {
      if (!s.empty()) pointers.push_back(&s);
    }
    std::size_t emitted = 0;
    EXPECT_FALSE(sort_in_time_order(
        pointers, [](const Item& x) { return x.time; }, [&](const Item&) { ++emitted; }));
    EXPECT_EQ(emitted, 0U);
    EXPECT_GT(sources[k / 2].size(), 2U);
    EXPECT_EQ(merged(sources), reference_merge(sources)) << k << " sources";
  }
}

TEST(TimeMerge, EqualsAStableMergeWhereTheSortsPackedWordStopsFitting) {
  // 16 sources of 2 elements: 4 bits of source and 1 of position below the time's bits; a
  // span of 2^58 ns (59 bits) fills the 64-bit word exactly, 2^59 (60 bits) does not, and the
  // 16-byte entries take over. Ties at both ends, so the low bits' order is what decides them.
  std::mt19937_64 rng(64);
  for (const int span_bits : {57, 58, 59, 60, 62}) {
    for (int round = 0; round < 20; ++round) {
      Sources sources(16);
      for (std::size_t s = 0; s < sources.size(); ++s) {
        std::vector<Nanos> times = {
            static_cast<Nanos>(rng() % 3),
            (Nanos{1} << (span_bits - 1)) - static_cast<Nanos>(rng() % 3) * (round % 2)};
        std::sort(times.begin(), times.end());
        for (std::size_t i = 0; i < times.size(); ++i) sources[s].push_back({times[i], s, i});
      }
      ASSERT_EQ(merged(sources), reference_merge(sources)) << "span bits " << span_bits;
    }
  }
}

}  // namespace
}  // namespace gpumux
