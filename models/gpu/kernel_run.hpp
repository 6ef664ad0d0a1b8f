#pragma once
// KernelRun: one launched kernel while it is on a device (queued, running, or preempted).
//
// Work model (docs/strategies.md): a kernel carries `work` = its solo duration on the
// whole GPU of its model, in ns. It progresses at `rate` (solo-ns of work per ns of time, 1.0 =
// as fast as alone on the whole GPU). Its roofline position m = memory_bound and grid width
// f = sm_fraction (share of the GPU's S_gpu SMs one wave of its grid occupies) set how fast it
// can go on the SMs it holds: models/gpu/contention_law.hpp has the laws (residency, the rate
// bound, L2, HBM sharing). On an H100 1g.10gb (16 of 132 SMs, 1 of 8 memory slices) a
// compute-bound kernel (m=0, f=1) takes 132/16 of its solo time and a memory-bound one (m=1) 8x.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/core/time.hpp"

namespace gpumux {

class KernelOwner;
struct KernelSpec;

/// The completion tolerance (solo-ns): a kernel of `work` solo-ns has finished once its remaining
/// work is at most 1e-9 work + 1e-3 (the rounding of r x dt over many steps, and a sub-ns
/// remainder a completion time rounded up to whole ns leaves). Every path that decides whether a
/// kernel finished asks this one function (Device's eager, lazy and inline paths, the direct
/// runner). O(1).
inline double completion_tolerance(double work) { return 1e-9 * work + 1e-3; }

/// The resources one thread block takes on an SM (contention law 1c, co-residency): threads,
/// registers per thread and shared memory (static + dynamic) per block. threads = 0: unknown, the
/// kernel's blocks hold whole SMs.
struct BlockFootprint {
  int threads = 0;
  int registers = 0;               ///< per thread (0: not limiting)
  std::int64_t shared_memory = 0;  ///< bytes per block, without the system's per-block reserve
  bool known() const { return threads > 0; }
  bool operator==(const BlockFootprint&) const = default;
};

struct KernelRun {
  KernelOwner* owner = nullptr;
  void* owner_data = nullptr;  ///< the owner's own context for this kernel (e.g. its request)
  int tenant = -1;             ///< tenant index (the client / context on the device)
  std::uint64_t request_id = 0;
  std::uint32_t kernel_index = 0;  ///< position in the request's launch sequence
  double work = 0;                 ///< solo ns on the whole GPU
  double remaining = 0;            ///< solo ns still to do
  double sm_fraction = 1.0;        ///< f
  double memory_bound = 0.0;       ///< m
  /// c: the share of its solo time its SMs are busy, when its SM and memory phases overlap (a
  /// roofline kernel, max(c, m) = 1; contention law 2); -1 = serial phases (busy 1 - m).
  double busy_share = -1.0;
  double waves = 1.0;      ///< W > 0: waves of its grid at full width f * S_gpu when alone
  double working_set = 0;  ///< bytes it re-reads through L2 (0 = streams, no reuse)
  /// G = blocks / resident blocks per SM when its grid is known (`blocks:`, traces): SM-loads of
  /// blocks, for discrete waves (contention law 2); 0 = unknown (the fluid sigma).
  double grid = 0;
  double blocks = 0;  ///< thread blocks of its grid (0 = unknown; law 1c's beta)
  /// tau: the per-block (SM-throughput) share of its SM phase alone (KernelSpec::
  /// sm_throughput_share; contention law 2, "Throughput-shared rounds"); 0 = rounds only.
  double throughput_share = 0;
  BlockFootprint footprint;  ///< per-block resources (law 1c); unknown = whole-SM residency
  int priority = 0;          ///< block-dispatch priority; higher first (stream/MPS priority)
  double rate = 0;           ///< current progress rate (set by the device)
  double rate_max = 0;       ///< bound on the SMs it holds now (set by the device)
  double occupancy = 0;      ///< SMs its resident blocks hold now (set by the device)
  double l2_factor = 1.0;    ///< HBM traffic per unit work relative to alone (set by the device)
  Nanos first_start = -1;    ///< when it first received SMs (-1: not yet)
  // Co-residency (contention_law.hpp, law 1c), set by the device: the kernel whose SMs it sits on
  // as a guest, how many of them, its blocks per such SM (L) and their SMs' worth of its own
  // residency (guest_sms L / beta); as a host, how many of its SMs carry a guest.
  KernelRun* host = nullptr;
  double guest_sms = 0;
  double guest_blocks = 0;
  double co_sms = 0;
  double hosted_sms = 0;
  // Block retirement (contention_law.hpp, law 1b), set by the device: progress (solo-ns of work
  // done) when its blocks last started a round on the SMs it holds, whether a more urgent kernel
  // waits for SMs it holds, and the time its resident round retires (kNever: not wanted).
  double wave_origin = 0;
  bool yield_wanted = false;
  bool leftover_wanted = false;  ///< law 1c: a guest waits for its last round (its leftover)
  Nanos retire_at = kNever;
  /// Law 1b, staggered retirement (a law with a spread, contention_law.hpp): the largest share of
  /// the SMs it holds that the waiting kernels want freed (x2 for an interleaved peer client),
  /// and the SMs of its last round whose blocks have retired and went to waiting kernels: they
  /// count as neither held nor free for it, and its rate bound is still that of its round's SMs
  /// (occupancy + retired_sms): its remaining blocks end when the round ends, as alone.
  double yield_share = 0;
  double retired_sms = 0;
  // The device's own caches (set by the device when the kernel starts running; exact: each is
  // the value the device would compute again from the same inputs).
  double sm_demand = -1;  ///< SMs it wants: min(f S_gpu, S_dev, its client's cap); -1: not yet
  double solo_bound_occupancy = -1;  ///< occupancy `solo_bound` was computed for (-1: none)
  double solo_bound = 0;             ///< rate_max on that occupancy with the lone l2_factor
  // Lazy advance (device.hpp, "Cost per event"), set and read only in the device's lazy state:
  // `remaining` is the work left at time `since`; the device brings it up to now only when it
  // needs it (the kernel finishes, or the lazy state ends).
  Nanos since = 0;            ///< time `remaining` refers to
  std::uint64_t run_seq = 0;  ///< order in which it joined the device's running set
};

/// Told when a kernel finishes. The device must not touch the KernelRun after this call.
class KernelOwner {
 public:
  virtual void on_kernel_finished(KernelRun& kernel, Nanos now) = 0;

 protected:
  ~KernelOwner() = default;
};

/// `k = KernelRun{}` (every field its default) as 16-byte moves: GCC compiles the assignment to
/// `rep movsq` from a constant, whose start-up cost was 6 % of an LLM server's cycles (two per
/// iteration, prepare_kernel). Cost: sizeof(KernelRun) / 16 loads and stores (SSE2; else the
/// assignment).
inline void reset_kernel_run(KernelRun& k) {
#if !defined(__SSE2__)
  k = KernelRun{};
#else
  static const KernelRun fresh{};
  static_assert(std::is_trivially_copyable_v<KernelRun> && sizeof(KernelRun) % 8 == 0);
  constexpr std::size_t kChunks = sizeof(KernelRun) / 16;
  auto* to = reinterpret_cast<unsigned char*>(&k);
  const auto* from = reinterpret_cast<const unsigned char*>(&fresh);
#pragma GCC unroll 32
  for (std::size_t i = 0; i < kChunks; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 16 * i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16 * i)));
  }
  if constexpr (sizeof(KernelRun) % 16 != 0) {
    std::uint64_t tail;
    std::memcpy(&tail, from + 16 * kChunks, 8);
    std::memcpy(to + 16 * kChunks, &tail, 8);
  }
#endif
}

}  // namespace gpumux
