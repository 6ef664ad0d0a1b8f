#include "sim/core/queue_memory.hpp"

#include <cstdlib>
#include <mutex>
#include <unordered_set>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gpumux {
namespace {

constexpr std::size_t kHugePage = kHugePageBytes;
// Blocks from here to huge_from are mapped with their pages populated at once (Linux): malloc
// maps such blocks anyway, and then faults them in one 4 KiB page at a time, each fault an
// exception of several us under this project's hypervisor. At 512 tenants of 20k requests each
// the exact samples' 1,024 blocks of 160 KiB took 41k faults, 11 % of the run (perf,
// 2026-12-06); populated, the kernel fills each block in one call. A block so mapped is one a
// vector reserved or grew into, so its pages are written anyway. Each such block is a mapping of
// its own, and a process has at most vm.max_map_count (65,530 by default) of them: at most
// kPopulatedMax blocks are mapped so at once (a cluster replay's 33k pods could otherwise run
// out), and a failed mapping is not an error; the others come from operator new, as before.
constexpr std::size_t kPopulateFrom = std::size_t{128} << 10;
constexpr std::size_t kSmallPage = std::size_t{4} << 10;
constexpr std::size_t kPopulatedMax = 8192;

// The blocks mapped populated, live (free_queue_memory must know how a block was made).
struct PopulatedBlocks {
  std::mutex lock;
  std::unordered_set<void*> live;
};
PopulatedBlocks& populated_blocks() {
  static PopulatedBlocks* blocks = new PopulatedBlocks();  // never destroyed: frees at exit
  return *blocks;
}

bool populated(std::size_t bytes, std::size_t huge_from) {
#if defined(__linux__) && defined(MAP_POPULATE)
  return bytes >= kPopulateFrom && bytes < huge_from;
#else
  (void)bytes;
  (void)huge_from;
  return false;
#endif
}

std::size_t small_pages(std::size_t bytes) { return (bytes + kSmallPage - 1) & ~(kSmallPage - 1); }

}  // namespace

void* allocate_queue_memory(std::size_t bytes, std::size_t huge_from) {
#if defined(__linux__) && defined(MAP_POPULATE)
  if (populated(bytes, huge_from)) {
    PopulatedBlocks& blocks = populated_blocks();
    const std::lock_guard<std::mutex> hold(blocks.lock);
    if (blocks.live.size() < kPopulatedMax) {
      void* block = mmap(nullptr, small_pages(bytes), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (block != MAP_FAILED) {
        blocks.live.insert(block);
        return block;
      }
    }
  }
#endif
  if (bytes < huge_from || bytes == 0) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) & ~(kHugePage - 1);
  void* block = std::aligned_alloc(kHugePage, rounded);
  if (block == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  // Advice only: without THP support the block simply keeps small pages.
  madvise(block, rounded, MADV_HUGEPAGE);
#endif
  return block;
}

void free_queue_memory(void* block, std::size_t bytes, std::size_t huge_from) noexcept {
#if defined(__linux__) && defined(MAP_POPULATE)
  if (populated(bytes, huge_from)) {
    PopulatedBlocks& blocks = populated_blocks();
    const std::lock_guard<std::mutex> hold(blocks.lock);
    if (blocks.live.erase(block) != 0) {
      munmap(block, small_pages(bytes));
      return;
    }
  }
#endif
  if (bytes < huge_from || bytes == 0) {
    ::operator delete(block);
  } else {
    std::free(block);
  }
}

}  // namespace gpumux
