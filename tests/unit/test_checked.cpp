// Checked arithmetic (sim/util/checked.hpp, issue 13 item 3): conversions into integer
// nanoseconds, bytes and counts, and int64 products and sums, at the edges of int64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "sim/util/checked.hpp"

namespace gpumux::checked {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const RangeError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checked, RangeErrorIsAUserError) { EXPECT_THROW(to_nanos(kNaN), UserError); }

TEST(Checked, NanosRoundToNearest) {
  EXPECT_EQ(to_nanos(0.0), 0);
  EXPECT_EQ(to_nanos(1.4), 1);
  EXPECT_EQ(to_nanos(1.5), 2);
  EXPECT_EQ(to_nanos(-2.5), -3);
  EXPECT_EQ(to_nanos(5e-324), 0);  // the smallest subnormal
  EXPECT_EQ(to_nanos(-5e-324), 0);
  EXPECT_EQ(to_nanos(3.6e17), 360'000'000'000'000'000);  // 100000h
}

TEST(Checked, NanosAtTheEdgesOfInt64) {
  // The largest double below 2^63 converts; 2^63 itself (what INT64_MAX rounds to) does not.
  EXPECT_EQ(to_nanos(std::nextafter(9223372036854775808.0, 0.0)), kMax - 1023);
  EXPECT_NE(error_of([] { to_nanos(static_cast<double>(kMax)); }), "no error");
  EXPECT_EQ(to_nanos(-9223372036854775808.0), kMin);
  EXPECT_NE(error_of([] { to_nanos(std::nextafter(-9223372036854775808.0, -kInf)); }), "no error");
}

TEST(Checked, NanosRefuseNaNAndInfinity) {
  const double from_text = std::strtod("1e400", nullptr);  // overflows to inf
  EXPECT_TRUE(std::isinf(from_text));
  for (const double bad : {kNaN, kInf, -kInf, from_text, 1e300, 1e10 * 1e10}) {
    const std::string message = error_of([bad] { to_nanos(bad); });
    EXPECT_NE(message.find("out of range"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("292 years"), std::string::npos) << message;
  }
}

TEST(Checked, BytesAndCountsMustNotBeNegative) {
  EXPECT_EQ(to_bytes(0.0), 0);
  EXPECT_EQ(to_bytes(80e9), 80'000'000'000);
  EXPECT_EQ(to_count(5e-324), 0);
  EXPECT_EQ(to_count(1e9), 1'000'000'000);
  EXPECT_EQ(error_of([] { to_bytes(-1.0); }), "a size of -1 bytes is negative");
  EXPECT_EQ(error_of([] { to_count(-0.6); }), "a count of -0.6 is negative");
  EXPECT_NE(error_of([] { to_bytes(kInf); }).find("bytes is out of range"), std::string::npos);
  EXPECT_NE(error_of([] { to_count(kNaN); }), "no error");
  EXPECT_NE(error_of([] { to_count(1e19); }), "no error");
}

TEST(Checked, ProductsAndSums) {
  EXPECT_EQ(mul(3'000'000'000, 3'000'000'000, "x"), 9'000'000'000'000'000'000);
  EXPECT_EQ(mul(kMax, 1, "x"), kMax);
  EXPECT_EQ(mul(kMin, 1, "x"), kMin);
  EXPECT_EQ(error_of([] { mul(kMax, 2, "memory_per_token x tokens"); }),
            "memory_per_token x tokens overflows: 9223372036854775807 x 2 is beyond 9.22e+18");
  EXPECT_NE(error_of([] { mul(kMin, -1, "x"); }), "no error");
  EXPECT_NE(error_of([] { mul(4'000'000'000, 4'000'000'000, "x"); }), "no error");
  EXPECT_EQ(add(kMax - 1, 1, "x"), kMax);
  EXPECT_NE(error_of([] { add(kMax, 1, "x"); }), "no error");
  EXPECT_NE(error_of([] { add(kMin, -1, "x"); }), "no error");
  EXPECT_EQ(sub(0, kMax, "x"), -kMax);
  EXPECT_NE(error_of([] { sub(kMin, 1, "x"); }), "no error");
  EXPECT_NE(error_of([] { sub(kMax, -1, "time - origin"); }), "no error");
}

TEST(Checked, SaturatingForms) {
  EXPECT_EQ(mul_saturating(1 << 20, 1 << 20), std::int64_t{1} << 40);
  EXPECT_EQ(mul_saturating(kMax, 2), kMax);
  EXPECT_EQ(mul_saturating(1'000'000'000'000, 2'000'000'000), kMax);
  EXPECT_EQ(nanos_saturating(1.5), 2);
  EXPECT_EQ(nanos_saturating(-3.0), 0);
  EXPECT_EQ(nanos_saturating(kInf), kMax);
  EXPECT_EQ(nanos_saturating(kNaN), kMax);
  EXPECT_EQ(nanos_saturating(1e300), kMax);
  EXPECT_EQ(nanos_saturating(static_cast<double>(kMax)), kMax);
}

// nanos_saturating is std::llround on (0, 2^63) (clamped outside): on random magnitudes from
// 1e-3 to 2^63, on exact halves and their neighbours, and across 2^52 where doubles become
// integers.
TEST(Checked, NanosSaturatingIsLlroundOnRandomValues) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> exponent(-3.0, 18.9);
  auto expect_llround = [](double x) {
    const std::int64_t want = x <= 0 ? 0 : std::llround(x);
    ASSERT_EQ(nanos_saturating(x), want) << std::hexfloat << x;
  };
  for (int i = 0; i < 200000; ++i) {
    const double x = std::pow(10.0, exponent(rng));
    if (x < 9.2e18) expect_llround(x);
    const double half = std::floor(x) + 0.5;
    if (half < 4503599627370496.0) {
      expect_llround(half);
      expect_llround(std::nextafter(half, 0.0));
      expect_llround(std::nextafter(half, 1e300));
    }
  }
  for (int k = -16; k <= 16; ++k) expect_llround(4503599627370496.0 + 0.5 * k);  // 2^52 +- 8
  expect_llround(0.49999999999999994);  // the largest double below 0.5
  expect_llround(5e-324);
}

}  // namespace
}  // namespace gpumux::checked
