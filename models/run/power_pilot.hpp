#pragma once
// The power cap's pilot run (simulate() in run.cpp; docs/strategies.md, "Power and clocks"):
// which boards may exceed their TDP at boost, and so need a pilot run to set their clock.
//
// The bound. A board's draw P(1) (models/gpu/power.hpp) grows with its busy SM fraction a, its
// HBM traffic b and its FP16/BF16 tensor FLOP rate R_t; the pilot measures a (sm_busy), b
// (dram_busy) and R_t = sum over tenants of tensor FLOPs per request x TenantResult::
// throughput_per_s (completed measured requests / (duration - warmup), on each device of the
// tenant). The bound takes a = 1, b = the devices' whole HBM bandwidth and, for R_t:
//   peak     every device with a tensor tenant at its share of the board's FP16 tensor peak;
//   offered  an open-loop tenant (poisson, constant rate, trace) completes at most the requests
//            that arrive in the measured window [warmup, min(duration, active.until)), so
//            throughput_per_s <= N / (duration - warmup) with N that count: replayed exactly for
//            poisson (the tenant's own arrival stream, "tenant/NAME/arrivals", from the
//            scenario's seed) and constant rate (arrival n at from + n / rate), the trace's rows
//            for a trace. Closed-loop tenants (and poisson / constant tenants with more than
//            kMaxReplayedArrivals arrivals) keep the peak. Per board, the smaller of this and
//            the peak bound.
// A board whose bound is below its TDP cannot cap: the run is made once, exactly as a board
// without a power model (where the pilot would have run, it would have found no cap and the
// run's result would have been the same).
//
// Cost: board_clock_bounds O(devices + tenants + replayed arrivals) (one exponential draw per
// replayed poisson arrival, ~10 ns); the simulate functions one run, or two with a pilot.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "models/run/result.hpp"
#include "models/run/runner.hpp"

namespace gpumux {

struct ResolvedScenario;

/// How board_clock_bounds bounds a board's FP16/BF16 tensor FLOP rate R_t (header comment).
enum class TensorRateBound {
  peak,     ///< every device with a tensor tenant at its FP16 tensor peak (before 2026-12-07)
  offered,  ///< open-loop tenants at most their arrivals in the measured window (default)
};

/// The most arrivals the offered bound replays for one tenant (beyond: the peak). A run with
/// that many requests takes far longer than the replay (~1 s).
inline constexpr double kMaxReplayedArrivals = 1e8;

/// An upper bound of tenant `tenant`'s TenantResult::throughput_per_s in any run of `r`, per
/// second: its arrivals in the measured window / (duration - warmup) for an open-loop tenant
/// (0 when the window is empty); nullopt for a closed loop or too many arrivals to replay.
std::optional<double> measured_throughput_bound(const ResolvedScenario& r, std::size_t tenant);

/// Per gpus[] entry: a lower bound of the clock ratio its power cap leaves (1: the board cannot
/// reach its TDP), with a = 1, the whole HBM bandwidth and R_t bounded as `bound` says.
std::vector<double> board_clock_bounds(const ResolvedScenario& r,
                                       TensorRateBound bound = TensorRateBound::offered);

/// simulate() with the pilot decided by `bounds` (one clock ratio bound per gpus[] entry, as
/// board_clock_bounds): a pilot run at boost when any is below 1, else one run. simulate() is
/// this with board_clock_bounds(r); tests force the pilot with bounds below 1.
RunResult simulate_with_clock_bounds(const ResolvedScenario& r, const RunOptions& options,
                                     const std::vector<double>& bounds);

}  // namespace gpumux
