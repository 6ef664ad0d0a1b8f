#include "sim/util/checked.hpp"

#include <cmath>
#include <sstream>

namespace gpumux::checked {
namespace {

// 2^63 exactly; every double in [-2^63, 2^63) converts to int64 without overflow.
constexpr double kTwo63 = 9223372036854775808.0;

std::string number_text(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

}  // namespace

std::int64_t to_int64(double value, const char* what) {
  const double rounded = std::round(value);
  if (!(rounded >= -kTwo63 && rounded < kTwo63)) {
    throw RangeError(number_text(value) + " " + what +
                     " is out of range (a 64-bit integer holds at most 9.22e+18)");
  }
  return static_cast<std::int64_t>(rounded);
}

std::int64_t to_nanos(double ns) {
  const double rounded = std::round(ns);
  if (!(rounded >= -kTwo63 && rounded < kTwo63)) {
    throw RangeError(number_text(ns) +
                     "ns is out of range (gpumux times are 64-bit nanoseconds: at most about 292 "
                     "years)");
  }
  return static_cast<std::int64_t>(rounded);
}

std::int64_t to_bytes(double bytes) {
  if (bytes < 0) throw RangeError("a size of " + number_text(bytes) + " bytes is negative");
  return to_int64(bytes, "bytes");
}

std::int64_t to_count(double count) {
  if (count < 0) throw RangeError("a count of " + number_text(count) + " is negative");
  return to_int64(count, "(a count)");
}

std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    throw RangeError(std::string(what) + " overflows: " + std::to_string(a) + " x " +
                     std::to_string(b) + " is beyond 9.22e+18");
  }
  return out;
}

std::int64_t add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    throw RangeError(std::string(what) + " overflows: " + std::to_string(a) + " + " +
                     std::to_string(b) + " is beyond 9.22e+18");
  }
  return out;
}

std::int64_t sub(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) {
    throw RangeError(std::string(what) + " overflows: " + std::to_string(a) + " - " +
                     std::to_string(b) + " is beyond 9.22e+18");
  }
  return out;
}

std::int64_t mul_saturating(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return kMaxInt64;
  return out;
}

std::int64_t add_saturating(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return a > 0 ? kMaxInt64 : INT64_MIN;
  return out;
}

}  // namespace gpumux::checked
