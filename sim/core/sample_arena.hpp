#pragma once
// What the sample arena of allocate_queue_memory holds (sim/core/queue_memory.cpp): blocks of
// 128 KiB up to huge_from, for an allocator whose huge_from is under 2 MiB (the exact percentile
// samples, ExactQuantiles), carved one after another from 64 MiB chunks of transparent huge
// pages. For tests and diagnostics; each call takes the allocator's lock, O(log chunks).
#include <cstddef>

namespace gpumux {

/// The arena's chunks now mapped (a chunk is unmapped when its last block is freed).
std::size_t sample_arena_chunks();
/// True if BLOCK (a pointer allocate_queue_memory returned, not yet freed) lies in the arena.
bool in_sample_arena(const void* block);

}  // namespace gpumux
