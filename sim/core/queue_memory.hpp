#pragma once
// HugePageAllocator: a std::allocator for the large tables of the event queues and the exact
// percentile samples (ExactQuantiles). Blocks of 2 MiB or more are 2 MiB-aligned and, on Linux,
// advised to use transparent huge pages: a queue of 10^6 events touches its tables at random,
// and with 4 KiB pages nearly every access would also miss the TLB; a series of 2^20 samples
// (8 MiB) filled front to back took 2,048 page faults, one per 4 KiB (each several us under this
// project's hypervisor: 11-14 % of a 2M-request M/D/1 run, perf, 2026-12-04), and takes 4.
// Smaller: from 128 KiB populated mappings, the exact samples' from a huge-page arena (.cpp),
// else operator new. Cost: at most 2 MiB of slack per block (a last, partly filled huge page).
// `kHugeFrom`: the smallest block so mapped (2 MiB; the exact samples from 1 MiB, see
// ExactQuantiles: a block of 1-2 MiB then takes a whole 2 MiB page).
#include <cstddef>
#include <new>

namespace gpumux {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

void* allocate_queue_memory(std::size_t bytes, std::size_t huge_from = kHugePageBytes);
void free_queue_memory(void* block, std::size_t bytes,
                       std::size_t huge_from = kHugePageBytes) noexcept;

template <class T, std::size_t kHugeFrom = kHugePageBytes>
struct HugePageAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = HugePageAllocator<U, kHugeFrom>;
  };
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U, kHugeFrom>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(allocate_queue_memory(n * sizeof(T), kHugeFrom));
  }
  void deallocate(T* block, std::size_t n) noexcept {
    free_queue_memory(block, n * sizeof(T), kHugeFrom);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U, kHugeFrom>&) const {
    return true;
  }
};

}  // namespace gpumux
