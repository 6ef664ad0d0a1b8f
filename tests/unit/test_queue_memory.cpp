// HugePageAllocator's memory (sim/core/queue_memory.hpp): blocks below 128 KiB from operator new,
// 128 KiB up to the huge-page threshold mapped with their pages populated, larger ones 2 MiB
// aligned. Every kind is writable over its whole size, keeps what was written while other blocks
// come and go, and goes back by the route it came (a block freed the wrong way would crash or
// corrupt the heap): blocks of every size class, allocated and freed interleaved in random order,
// through a vector that grows across all three.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/core/queue_memory.hpp"

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

}  // namespace
}  // namespace gpumux
