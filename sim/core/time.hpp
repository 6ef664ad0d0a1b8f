#pragma once
// Simulated time: signed 64-bit integer nanoseconds (about 292 years of range). Only the
// boundaries (scenario parsing, result writing) convert to or from other units.
#include <cstdint>

namespace gpumux {

using Nanos = std::int64_t;

inline constexpr Nanos kNanosecond = 1;
inline constexpr Nanos kMicrosecond = 1'000;
inline constexpr Nanos kMillisecond = 1'000'000;
inline constexpr Nanos kSecond = 1'000'000'000;
inline constexpr Nanos kNever = INT64_MAX;  ///< "no time": an event that never happens

inline constexpr double to_seconds(Nanos t) { return static_cast<double>(t) * 1e-9; }

}  // namespace gpumux
