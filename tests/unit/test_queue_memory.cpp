// HugePageAllocator's memory (sim/core/queue_memory.hpp): blocks below 128 KiB from operator new,
// 128 KiB up to the huge-page threshold mapped with their pages populated, larger ones 2 MiB
// aligned. Every kind is writable over its whole size, keeps what was written while other blocks
// come and go, and goes back by the route it came (a block freed the wrong way would crash or
// corrupt the heap): blocks of every size class, allocated and freed interleaved in random order,
// through a vector that grows across all three. The exact samples' blocks of 128 KiB-1 MiB come
// from the sample arena (huge-page chunks, carved in order, unmapped when empty).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "sim/core/queue_memory.hpp"
#include "sim/core/sample_arena.hpp"

namespace gpumux {
namespace {

struct Block {
  std::uint64_t* data;
  std::size_t words;
  std::size_t huge_from;
  std::uint64_t tag;
};

TEST(QueueMemory, EverySizeClassIsWritableKeepsItsContentsAndFreesByItsRoute) {
  std::mt19937_64 rng(3);
  const std::size_t sizes[] = {8,       4096,           128 << 10,  (128 << 10) + 8, 300 << 10,
                               1 << 20, (1 << 20) - 64, 1536 << 10, 3 << 20};
  std::vector<Block> live;
  for (int round = 0; round < 200; ++round) {
    if (!live.empty() && rng() % 3 == 0) {
      const std::size_t pick = rng() % live.size();
      const Block b = live[pick];
      for (std::size_t i = 0; i < b.words; i += 509) ASSERT_EQ(b.data[i], b.tag + i);
      ASSERT_EQ(b.data[b.words - 1], b.tag + b.words - 1);
      free_queue_memory(b.data, b.words * sizeof(std::uint64_t), b.huge_from);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
      continue;
    }
    const std::size_t bytes = sizes[rng() % std::size(sizes)];
    const std::size_t huge_from = rng() % 2 == 0 ? kHugePageBytes : std::size_t{1} << 20;
    Block b{static_cast<std::uint64_t*>(allocate_queue_memory(bytes, huge_from)),
            bytes / sizeof(std::uint64_t), huge_from, rng()};
    ASSERT_NE(b.data, nullptr);
    for (std::size_t i = 0; i < b.words; ++i) b.data[i] = b.tag + i;
    live.push_back(b);
  }
  for (const Block& b : live) {
    for (std::size_t i = 0; i < b.words; i += 509) ASSERT_EQ(b.data[i], b.tag + i);
    free_queue_memory(b.data, b.words * sizeof(std::uint64_t), b.huge_from);
  }
  // A vector growing through every class keeps its elements.
  std::vector<std::int64_t, HugePageAllocator<std::int64_t, std::size_t{1} << 20>> grown;
  for (std::int64_t i = 0; i < (std::int64_t{1} << 19); ++i) grown.push_back(i * 3);
  for (std::int64_t i = 0; i < (std::int64_t{1} << 19); i += 1021) {
    ASSERT_EQ(grown[static_cast<std::size_t>(i)], i * 3);
  }
}

// Random sample-class blocks (huge_from 1 MiB, 128 KiB up to 1 MiB): every one is in the arena,
// 4 KiB-aligned, right after the block before it unless that chunk was full (then a chunk more),
// never overlapping another live block; blocks of the other classes are not in it; contents
// survive random frees, and the chunks go back to the count before once every block is freed.
TEST(QueueMemory, SampleBlocksAreCarvedInOrderFromChunksThatGoBackWhenEmpty) {
  constexpr std::size_t kSampleHugeFrom = std::size_t{1} << 20;
  constexpr std::size_t kChunk = std::size_t{64} << 20;
  const std::size_t chunks_before = sample_arena_chunks();
  for (int trial = 0; trial < 4; ++trial) {
    std::mt19937_64 rng(100 + static_cast<std::uint64_t>(trial));
    std::vector<Block> live;
    std::uint64_t* previous = nullptr;
    std::size_t previous_rounded = 0;
    std::size_t carved = 0;  // bytes carved this trial, rounded to 4 KiB
    std::size_t chunks_seen = sample_arena_chunks();
    const int blocks = 100 + static_cast<int>(rng() % 400);
    for (int i = 0; i < blocks; ++i) {
      const std::size_t words =
          (std::size_t{128} << 7) + rng() % ((kSampleHugeFrom - (std::size_t{128} << 10)) / 8);
      const std::size_t bytes = words * sizeof(std::uint64_t);
      auto* data = static_cast<std::uint64_t*>(allocate_queue_memory(bytes, kSampleHugeFrom));
      ASSERT_TRUE(in_sample_arena(data)) << bytes;
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(data) % 4096, 0u);
      const std::size_t chunks_now = sample_arena_chunks();
      if (previous != nullptr && chunks_now == chunks_seen) {
        ASSERT_EQ(reinterpret_cast<char*>(data),
                  reinterpret_cast<char*>(previous) + previous_rounded);
      } else if (previous != nullptr) {
        ASSERT_EQ(chunks_now, chunks_seen + 1);  // the chunk before had no room left
      }
      chunks_seen = chunks_now;
      previous = data;
      previous_rounded = (bytes + 4095) / 4096 * 4096;
      carved += previous_rounded;
      const Block b{data, words, kSampleHugeFrom, rng()};
      for (std::size_t w = 0; w < b.words; ++w) b.data[w] = b.tag + w;
      live.push_back(b);
      // Other classes beside it: operator new, a mapping of its own, a 2 MiB-aligned block.
      for (const auto& [other, huge_from] : {std::pair{std::size_t{64} << 10, kSampleHugeFrom},
                                             std::pair{std::size_t{300} << 10, kHugePageBytes},
                                             std::pair{kSampleHugeFrom, kSampleHugeFrom}}) {
        void* block = allocate_queue_memory(other, huge_from);
        ASSERT_FALSE(in_sample_arena(block)) << other;
        free_queue_memory(block, other, huge_from);
      }
    }
    // No two live blocks overlap.
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
    for (const Block& b : live) {
      const auto from = reinterpret_cast<std::uintptr_t>(b.data);
      spans.emplace_back(from, from + b.words * sizeof(std::uint64_t));
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) ASSERT_LE(spans[i - 1].second, spans[i].first);
    // Chunks: no more than the carved bytes need (blocks under 1 MiB waste less than that).
    ASSERT_LE(sample_arena_chunks() - chunks_before, carved / (kChunk - kSampleHugeFrom) + 1);
    std::shuffle(live.begin(), live.end(), rng);
    while (!live.empty()) {
      const Block b = live.back();
      live.pop_back();
      ASSERT_EQ(b.data[0], b.tag);
      for (std::size_t w = 0; w < b.words; w += 97) ASSERT_EQ(b.data[w], b.tag + w);
      ASSERT_EQ(b.data[b.words - 1], b.tag + b.words - 1);
      free_queue_memory(b.data, b.words * sizeof(std::uint64_t), b.huge_from);
    }
    ASSERT_EQ(sample_arena_chunks(), chunks_before);
  }
}

}  // namespace
}  // namespace gpumux
