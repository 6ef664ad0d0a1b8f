#include "sim/core/queue_memory.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gpumux {
namespace {

constexpr std::size_t kHugePage = kHugePageBytes;

}  // namespace

void* allocate_queue_memory(std::size_t bytes, std::size_t huge_from) {
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
  if (bytes < huge_from || bytes == 0) {
    ::operator delete(block);
  } else {
    std::free(block);
  }
}

}  // namespace gpumux
