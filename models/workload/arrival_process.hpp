#pragma once
// Arrival processes and token counts: when a tenant's next request arrives and how many tokens
// it carries, as pure functions of the spec, a random stream and the time now. The run layer
// (models/run/arrivals.cpp) schedules the events; these say what the events' times and counts
// are. Each function that draws takes the stream it draws from, and draws in the order stated,
// so that a run is a pure function of its seed. Times are integer ns (Nanos, kNever = none),
// rates per second, token counts unitless.
//
//   poisson   inter-arrival gaps G ~ Exp(rate): mean 1e9 / rate ns, drawn one ahead
//             (next_poisson_arrival: one exponential draw per arrival).
//   constant  the n-th arrival (n = 0, 1, ...) at from + n x 1e9 / rate ns, computed from n (no
//             drift from summing gaps; constant_arrival, no draw).
//   trace     the trace row's time t at from + t (trace_arrival, no draw).
//   closed    `concurrency` clients, each sending its next request `think` after its last one
//             finished: think_after_finish (a draw from think_dist when it is not fixed, and
//             every session_cells-th request one more draw from `away`).
// Arrivals at or after the end of arrivals never come (the caller compares with it).
//
// Token counts (draw_request_tokens): a catalog tenant's sequence length is its input tokens,
// drawn from seq_len and rounded to the nearest integer, clamped to the lengths its kernels were
// built for; else `tokens: {input, output}` are drawn (input first), each rounded and clamped
// to [0, kMaxTokens]; else both are 0.
#include <cstdint>
#include <vector>

#include "models/workload/kernel_spec.hpp"
#include "models/workload/workload_spec.hpp"
#include "sim/core/random.hpp"
#include "sim/core/time.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

/// A sample of a duration distribution (ns; token distributions: a count): fixed = its value;
/// exponential with mean `value`; lognormal with median `value` and `sigma`; uniform on
/// [value, upper) (value when upper <= value); empirical: the first point whose cumulative
/// weight exceeds u ~ U[0, 1). One draw from RNG except fixed (none). O(1), empirical
/// O(log points).
double draw(RandomStream& rng, const DurationDistribution& d);

/// A Poisson process's rate per ns for `rate_per_s` arrivals per second, as 1.0 / (1e9 / rate):
/// exactly the parameter RandomStream::exponential(1e9 / rate) computes on every draw, so a
/// caller that keeps it draws the same gaps. O(1).
inline double poisson_rate_per_ns(double rate_per_s) { return 1.0 / (1e9 / rate_per_s); }

/// The next Poisson arrival after `now` (ns): now + G, G ~ Exp(rate_per_ns) rounded to whole ns
/// (one draw from RNG), kNever when it would pass the int64 horizon. Inline: one per request.
inline Nanos next_poisson_arrival(RandomStream& rng, double rate_per_ns, Nanos now) {
  const Nanos gap = checked::nanos_saturating(rng.exponential_of_rate(rate_per_ns));
  return gap > kNever - now ? kNever : now + gap;
}

/// The arrival of request number `n` (0, 1, ...) of a constant-rate process started at `from`:
/// from + n x 1e9 / rate_per_s ns, rounded, saturating. No draw. O(1).
inline Nanos constant_arrival(Nanos from, std::uint64_t n, double rate_per_s) {
  return checked::nanos_saturating(static_cast<double>(from) +
                                   static_cast<double>(n) * 1e9 / rate_per_s);
}

/// A trace row's arrival at `t` ns after the trace's start `from`: from + t, kNever when it
/// would pass the int64 horizon. O(1).
inline Nanos trace_arrival(Nanos from, Nanos t) { return t > kNever - from ? kNever : from + t; }

/// A closed-loop client's delay between a finished request and its next one (ns): `think`, or a
/// draw from think_dist when that is not fixed; with sessions (session_cells > 0), `finished`
/// (the tenant's count of finished requests) is incremented, and after every session_cells-th
/// request a draw from `away` is added. Draws: think_dist, then away. O(1).
Nanos think_after_finish(RandomStream& rng, const ArrivalSpec& a, std::int64_t& finished);

/// A catalog request's sequence length drawn from `d` (its seq_len distribution): the draw
/// rounded half away from zero, clamped to [lengths.front(), lengths.back()] (NaN counts as
/// 0). One draw. LENGTHS: ascending, non-empty.
std::int64_t draw_sequence_length(RandomStream& rng, const DurationDistribution& d,
                                  const std::vector<std::int64_t>& lengths);

/// A token count drawn from `d`: rounded, clamped to [0, kMaxTokens] (a lognormal tail may reach
/// infinity; NaN and negatives are 0). One draw.
std::int64_t draw_token_count(RandomStream& rng, const DurationDistribution& d);

/// The token counts of a request of `w` that no trace row gives: a catalog tenant with lengths
/// draws its input (its sequence length) and has no output; `tokens:` draws input then output;
/// otherwise both are 0 (no draw).
void draw_request_tokens(RandomStream& rng, const WorkloadSpec& w, std::int64_t& input,
                         std::int64_t& output);

}  // namespace gpumux
