#pragma once
// Checked arithmetic: the one place where a double becomes integer nanoseconds, bytes or a
// count, and where int64 products and sums that come from user input are formed. Each function
// either returns the exact (rounded) result or throws RangeError, a UserError whose message
// says what overflowed ("1e+21ns is out of range ..."); callers that know the file, line and key
// catch it and rethrow with the location (InputError, or the trace reader's `fail`).
// Cost: a few comparisons; no allocation unless it throws.
#include <cmath>
#include <cstdint>
#include <string>

#include "sim/util/error.hpp"

namespace gpumux::checked {

/// A value that does not fit the integer it must become. One line; no location (the caller adds
/// it).
class RangeError : public UserError {
 public:
  using UserError::UserError;
};

/// The largest int64 value, and as nanoseconds about 292 years.
inline constexpr std::int64_t kMaxInt64 = INT64_MAX;

/// `value` rounded to the nearest integer as int64. Throws RangeError for NaN, infinities and
/// values outside [-2^63, 2^63). `what` names the quantity in the message ("nanoseconds").
std::int64_t to_int64(double value, const char* what);

/// Rounded nanoseconds (may be negative: a time difference). Throws RangeError beyond about
/// +-292 years, or for NaN / infinity.
std::int64_t to_nanos(double ns);
/// Rounded bytes, >= 0. Throws RangeError when negative, NaN, infinite or beyond 8 EiB.
std::int64_t to_bytes(double bytes);
/// Rounded count (tokens, requests), >= 0. Throws RangeError when negative, NaN, infinite or
/// beyond INT64_MAX.
std::int64_t to_count(double count);

/// a * b and a + b and a - b, throwing RangeError on int64 overflow. `what` names the result
/// ("memory_per_token x tokens").
std::int64_t mul(std::int64_t a, std::int64_t b, const char* what);
std::int64_t add(std::int64_t a, std::int64_t b, const char* what);
std::int64_t sub(std::int64_t a, std::int64_t b, const char* what);

/// a * b (a, b >= 0), INT64_MAX when it overflows: for quantities where "more than can be
/// represented" has the same consequence as "too large" (an allocation that cannot fit).
std::int64_t mul_saturating(std::int64_t a, std::int64_t b);

/// a + b, INT64_MAX (INT64_MIN) when it overflows upwards (downwards): for sizes read from a
/// file whose only use is a comparison against a limit.
std::int64_t add_saturating(std::int64_t a, std::int64_t b);

/// std::round(x) (nearest integer, halves away from zero), inline: the run loop rounds every
/// drawn duration and completion time, and libm's round is an out-of-line call. Exact: below
/// 2^52 the truncation and the fraction x - trunc(x) are exact doubles; from 2^52 on (and for
/// infinities and NaN) x is returned as it is, as std::round does.
inline double round_half_away(double x) {
  if (!(std::fabs(x) < 4503599627370496.0)) return x;  // 2^52: already an integer, or inf/NaN
  const double truncated = static_cast<double>(static_cast<std::int64_t>(x));
  const double fraction = x - truncated;
  const double rounded = fraction >= 0.5    ? truncated + 1.0
                         : fraction <= -0.5 ? truncated - 1.0
                                            : truncated;
  return rounded == 0.0 ? std::copysign(0.0, x) : rounded;  // round(-0.3) is -0.0
}

/// A double known to be a nanosecond offset, clamped into [0, INT64_MAX] (NaN -> INT64_MAX):
/// for random draws whose only use is "when", where beyond-the-horizon means never.
/// Inline (once or twice per event): the same value as std::llround on [0, 2^63).
inline std::int64_t nanos_saturating(double ns) {
  if (!(ns < 9223372036854775808.0)) return kMaxInt64;  // 2^63; also NaN
  if (ns <= 0) return 0;
  // round_half_away for ns in (0, 2^63), without its sign cases: the truncation plus one when
  // the (exact) fraction is at least a half; from 2^52 on ns is already an integer.
  auto t = static_cast<std::int64_t>(ns);
  if (ns < 4503599627370496.0) t += (ns - static_cast<double>(t)) >= 0.5 ? 1 : 0;
  return t;
}

/// nanos_saturating(std::ceil(q)), the same integer, without the two libm calls (the build
/// targets baseline x86-64, where ceil and round are calls): a wait rounded up to whole ns,
/// clamped into [0, INT64_MAX] (NaN -> INT64_MAX). Per running kernel per device recompute.
inline std::int64_t ceil_nanos_saturating(double q) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(q < kTwo63)) return kMaxInt64;  // also NaN
  if (q <= 0) return 0;
  // q in (0, 2^63): truncation is its floor (exact: q >= 2^52 is already an integer).
  auto t = static_cast<std::int64_t>(q);
  if (static_cast<double>(t) < q) ++t;
  return t;
}

}  // namespace gpumux::checked
