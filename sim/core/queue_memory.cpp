#include "sim/core/queue_memory.hpp"

#include "sim/core/sample_arena.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
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

// The sample arena: the populated-size blocks of an allocator whose huge_from is under 2 MiB (the
// exact percentile samples, ExactQuantiles) are carved one after another out of 64 MiB chunks,
// 2 MiB-aligned and advised to use transparent huge pages, each block's pages populated when it
// is carved (MADV_POPULATE_WRITE). A 512-tenant run's 1,024 series of 160 KiB were 1,024
// mappings of 40 small pages each: 41k pages for the kernel to fill one by one and, while the
// run wrote them in turn, a TLB miss (a two-level walk under this project's hypervisor) almost
// every time a tenant's turn came; in the arena they are 80 huge pages (docs/performance.md,
// issue 37's fourth stop). A block is never moved or reused while its chunk lives; a chunk is
// unmapped when its last block is freed. The series grow by doubling and leave the arena at
// huge_from, so what a chunk holds dead is at most what the series it served hold live.
// Without THP the chunk simply has small pages, populated per block as before.
constexpr std::size_t kArenaChunk = std::size_t{64} << 20;

struct SampleArena {
  struct Chunk {
    std::size_t used = 0;  // bytes carved from the start
    std::size_t live = 0;  // blocks not yet freed
  };
  std::map<char*, Chunk> chunks;  // by start; each kArenaChunk bytes
  char* current = nullptr;        // the chunk carved from (nullptr: none)
};

SampleArena& sample_arena() {
  static SampleArena* arena = new SampleArena();  // never destroyed: frees at exit
  return *arena;
}

bool in_arena(std::size_t bytes, std::size_t huge_from) {
  return huge_from < kHugePage && populated(bytes, huge_from);
}

// A 2 MiB-aligned chunk of kArenaChunk bytes, advised to use huge pages; nullptr if refused.
char* map_chunk() {
#if defined(__linux__) && defined(MAP_POPULATE)
  const std::size_t span = kArenaChunk + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* const base = static_cast<char*>(raw);
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  char* const start = base + ((kHugePage - address % kHugePage) % kHugePage);
  if (start > base) munmap(base, static_cast<std::size_t>(start - base));
  char* const end = start + kArenaChunk;
  if (end < base + span) munmap(end, static_cast<std::size_t>(base + span - end));
#if defined(MADV_HUGEPAGE)
  madvise(start, kArenaChunk, MADV_HUGEPAGE);  // advice only
#endif
  return start;
#else
  return nullptr;
#endif
}

// A block of BYTES (under kArenaChunk) from the arena, its pages populated; nullptr if no chunk
// could be mapped. The caller holds populated_blocks().lock.
void* arena_allocate(std::size_t bytes) {
  SampleArena& arena = sample_arena();
  const std::size_t rounded = small_pages(bytes);
  if (arena.current == nullptr || arena.chunks[arena.current].used + rounded > kArenaChunk) {
    if (arena.current != nullptr && arena.chunks[arena.current].live == 0) {
      munmap(arena.current, kArenaChunk);
      arena.chunks.erase(arena.current);
    }
    arena.current = map_chunk();
    if (arena.current == nullptr) return nullptr;
    arena.chunks[arena.current] = SampleArena::Chunk{};
  }
  SampleArena::Chunk& chunk = arena.chunks[arena.current];
  char* const block = arena.current + chunk.used;
  chunk.used += rounded;
  ++chunk.live;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  // Fails harmlessly before Linux 5.14: the pages then fault in on first write.
  madvise(block, rounded, MADV_POPULATE_WRITE);
#endif
  return block;
}

// Frees BLOCK if the arena gave it (true); false otherwise. The caller holds the lock.
bool arena_free(void* block) {
  SampleArena& arena = sample_arena();
  char* const at = static_cast<char*>(block);
  auto it = arena.chunks.upper_bound(at);
  if (it == arena.chunks.begin()) return false;
  --it;
  if (at >= it->first + kArenaChunk) return false;
  if (--it->second.live == 0) {
    munmap(it->first, kArenaChunk);
    if (arena.current == it->first) arena.current = nullptr;
    arena.chunks.erase(it);
  }
  return true;
}

}  // namespace

void* allocate_queue_memory(std::size_t bytes, std::size_t huge_from) {
#if defined(__linux__) && defined(MAP_POPULATE)
  if (populated(bytes, huge_from)) {
    PopulatedBlocks& blocks = populated_blocks();
    const std::lock_guard<std::mutex> hold(blocks.lock);
    if (in_arena(bytes, huge_from)) {
      if (void* block = arena_allocate(bytes)) return block;
    }
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
    if (in_arena(bytes, huge_from) && arena_free(block)) return;
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

std::size_t sample_arena_chunks() {
  const std::lock_guard<std::mutex> hold(populated_blocks().lock);
  return sample_arena().chunks.size();
}

bool in_sample_arena(const void* block) {
  const std::lock_guard<std::mutex> hold(populated_blocks().lock);
  const SampleArena& arena = sample_arena();
  const char* const at = static_cast<const char*>(block);
  auto it = arena.chunks.upper_bound(const_cast<char*>(at));
  if (it == arena.chunks.begin()) return false;
  --it;
  return at < it->first + kArenaChunk;
}

}  // namespace gpumux
