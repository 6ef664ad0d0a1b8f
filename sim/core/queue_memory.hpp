#pragma once
// HugePageAllocator: a std::allocator for the large tables of the event queues. Blocks of 2 MiB
// or more are 2 MiB-aligned and, on Linux, advised to use transparent huge pages: a queue of
// 10^6 events touches its tables at random, and with 4 KiB pages nearly every access would also
// miss the TLB. Smaller blocks come from operator new. Cost: at most 2 MiB of slack per block.
#include <cstddef>
#include <new>

namespace gpumux {

void* allocate_queue_memory(std::size_t bytes);
void free_queue_memory(void* block, std::size_t bytes) noexcept;

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_queue_memory(n * sizeof(T))); }
  void deallocate(T* block, std::size_t n) noexcept { free_queue_memory(block, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace gpumux
