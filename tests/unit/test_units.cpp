// Unit parsing and formatting for scenario files (sim/util/units.hpp; docs/reference/scenarios.md).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "sim/util/units.hpp"

namespace gpumux::units {
namespace {

std::string error_of(std::int64_t (*parse)(const std::string&), const std::string& text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

std::string rate_error(const std::string& text) {
  try {
    parse_rate_per_s(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Units, EveryDurationUnit) {
  EXPECT_EQ(parse_duration_ns("250ns"), 250);
  EXPECT_EQ(parse_duration_ns("10us"), 10'000);
  EXPECT_EQ(parse_duration_ns("1024us"), 1'024'000);
  EXPECT_EQ(parse_duration_ns("3µs"), 3'000);  // micro sign U+00B5
  EXPECT_EQ(parse_duration_ns("3μs"), 3'000);  // Greek small mu U+03BC
  EXPECT_EQ(parse_duration_ns("2ms"), 2'000'000);
  EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration_ns("2m"), 120'000'000'000);
  EXPECT_EQ(parse_duration_ns("2min"), 120'000'000'000);
  EXPECT_EQ(parse_duration_ns("1h"), 3'600'000'000'000);
  EXPECT_EQ(parse_duration_ns("0s"), 0);
  EXPECT_EQ(parse_duration_ns(" 5 ms "), 5'000'000);  // spaces around and between are fine
}

TEST(Units, DurationsRoundToTheNearestNanosecond) {
  EXPECT_EQ(parse_duration_ns("1.4ns"), 1);
  EXPECT_EQ(parse_duration_ns("1.6ns"), 2);
  EXPECT_EQ(parse_duration_ns("0.1s"), 100'000'000);       // 0.1 is inexact in binary
  EXPECT_EQ(parse_duration_ns("1.0000005ms"), 1'000'001);  // 1000000.5 rounds half away
  EXPECT_EQ(parse_duration_ns("0.0001us"), 0);
}

TEST(Units, DurationErrors) {
  EXPECT_NE(error_of(parse_duration_ns, "5").find("missing unit, e.g. 2ms"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "5 parsecs").find("unknown duration unit 'parsecs'"),
            std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "5 parsecs").find("ns us"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "-2ms").find("must not be negative"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "ms").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "inf s").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "nan s").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "0x10ms").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "2MS").find("unknown duration unit"), std::string::npos);
  EXPECT_NE(error_of(parse_duration_ns, "1e30h").find("too large"), std::string::npos);
}

TEST(Units, EverySizeUnit) {
  EXPECT_EQ(parse_size_bytes("4096B"), 4096);
  EXPECT_EQ(parse_size_bytes("2KB"), 2'000);
  EXPECT_EQ(parse_size_bytes("3MB"), 3'000'000);
  EXPECT_EQ(parse_size_bytes("80GB"), 80'000'000'000);
  EXPECT_EQ(parse_size_bytes("1.5TB"), 1'500'000'000'000);
  EXPECT_EQ(parse_size_bytes("2KiB"), 2'048);
  EXPECT_EQ(parse_size_bytes("512MiB"), 512LL << 20);
  EXPECT_EQ(parse_size_bytes("10GiB"), 10LL << 30);
  EXPECT_EQ(parse_size_bytes("1TiB"), 1LL << 40);
  EXPECT_EQ(parse_size_bytes("0.5KiB"), 512);
  EXPECT_EQ(parse_size_bytes("1.0001B"), 1);  // rounded to whole bytes
}

TEST(Units, KubernetesQuantities) {
  EXPECT_EQ(parse_size_bytes("30Gi"), 30LL << 30);
  EXPECT_EQ(parse_size_bytes("500Mi"), 500LL << 20);
  EXPECT_EQ(parse_size_bytes("1Ki"), 1024);
  EXPECT_EQ(parse_size_bytes("1Ti"), 1LL << 40);
  EXPECT_EQ(parse_size_bytes("2Pi"), 2LL << 50);
  EXPECT_EQ(parse_size_bytes("1.5Gi"), 3LL << 29);
  EXPECT_EQ(parse_size_bytes("2k"), 2'000);
  EXPECT_EQ(parse_size_bytes("500M"), 500'000'000);
  EXPECT_EQ(parse_size_bytes("80G"), 80'000'000'000);
  EXPECT_EQ(parse_size_bytes("1T"), 1'000'000'000'000);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("2Ti/s"), 2.0 * (1LL << 40));
  EXPECT_NE(error_of(parse_size_bytes, "1500m").find("milli"), std::string::npos);
  EXPECT_NE(error_of(parse_size_bytes, "1K").find("unknown size unit 'K'"), std::string::npos);
  EXPECT_NE(error_of(parse_size_bytes, "1gi").find("unknown size unit 'gi'"), std::string::npos);
}

TEST(Units, SizeErrors) {
  EXPECT_NE(error_of(parse_size_bytes, "1024").find("missing unit, e.g. 10GiB"), std::string::npos);
  EXPECT_NE(error_of(parse_size_bytes, "10gb").find("unknown size unit 'gb'"), std::string::npos);
  EXPECT_NE(error_of(parse_size_bytes, "-1GiB").find("must not be negative"), std::string::npos);
}

TEST(Units, Bandwidth) {
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("3.35TB/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("900GB/s"), 900e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_s("512GiB/s"), 512.0 * (1LL << 30));
  EXPECT_THROW(parse_bandwidth_bytes_per_s("900GB"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth_bytes_per_s("900"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth_bytes_per_s("900Gb/s"), std::invalid_argument);
}

TEST(Units, EveryRateUnit) {
  EXPECT_DOUBLE_EQ(parse_rate_per_s("50/s"), 50.0);
  EXPECT_DOUBLE_EQ(parse_rate_per_s("2/ms"), 2'000.0);
  EXPECT_DOUBLE_EQ(parse_rate_per_s("1/us"), 1e6);
  EXPECT_DOUBLE_EQ(parse_rate_per_s("1/ns"), 1e9);
  EXPECT_DOUBLE_EQ(parse_rate_per_s("10/h"), 10.0 / 3600);
  // Per-minute and per-hour rates are divided, so they are the nearest double to the quotient.
  EXPECT_EQ(parse_rate_per_s("3000/min"), 50.0);
  EXPECT_EQ(parse_rate_per_s("23/min"), 23.0 / 60);
  // Per-day rates (batch jobs, cluster arrivals): 86,400 s a day, divided likewise.
  EXPECT_EQ(parse_rate_per_s("86400/day"), 1.0);
  EXPECT_EQ(parse_rate_per_s("7/day"), 7.0 / 86400);
  EXPECT_EQ(parse_rate_per_s("24/day"), parse_rate_per_s("1/h"));
}

TEST(Units, RateErrors) {
  EXPECT_NE(rate_error("50").find("missing unit, e.g. 50/s"), std::string::npos);
  EXPECT_NE(rate_error("0/s").find("greater than zero"), std::string::npos);
  // Issue 13: the mean gap 1/rate must fit integer nanoseconds: at least one per 100 years.
  EXPECT_NE(rate_error("1e-9/h").find("rate too small"), std::string::npos);
  EXPECT_NE(rate_error("5e-324/s").find("rate too small"), std::string::npos);
  EXPECT_EQ(rate_error("1/min"), "no error");
  EXPECT_EQ(rate_error("4e-10/s"), "no error");
  EXPECT_NE(rate_error("-5/s").find("must not be negative"), std::string::npos);
  EXPECT_NE(rate_error("5/week").find("unknown rate unit '/week'"), std::string::npos);
  EXPECT_NE(rate_error("5 per s").find("unknown rate unit"), std::string::npos);
}

TEST(Units, FormatDurationPicksTheLargestExactUnit) {
  EXPECT_EQ(format_duration(0), "0ns");
  EXPECT_EQ(format_duration(250), "250ns");
  EXPECT_EQ(format_duration(1'024'000), "1024us");
  EXPECT_EQ(format_duration(2'000'000), "2ms");
  EXPECT_EQ(format_duration(1'500'000'000), "1500ms");
  EXPECT_EQ(format_duration(120'000'000'000), "2m");
  EXPECT_EQ(format_duration(3'600'000'000'000), "1h");
  EXPECT_EQ(format_duration(1'000'000'001), "1000000001ns");
}

TEST(Units, FormatSize) {
  EXPECT_EQ(format_size(0), "0B");
  EXPECT_EQ(format_size(10LL << 30), "10GiB");
  EXPECT_EQ(format_size(512LL << 20), "512MiB");
  EXPECT_EQ(format_size(80'000'000'000), "80GB");
  EXPECT_EQ(format_size(4096), "4KiB");
  EXPECT_EQ(format_size(123), "123B");
}

TEST(Units, FormattedValuesParseBackExactly) {
  for (const std::int64_t ns :
       {0LL, 1LL, 999LL, 1'024'000LL, 1'500'000'000LL, 7'200'000'000'000LL, 123'456'789'012LL}) {
    EXPECT_EQ(parse_duration_ns(format_duration(ns)), ns) << format_duration(ns);
  }
  for (const std::int64_t bytes : {0LL, 1LL, 1000LL, 4096LL, 80'000'000'000LL, 10LL << 30,
                                   (1LL << 40) + 1, 1'500'000'000'000LL}) {
    EXPECT_EQ(parse_size_bytes(format_size(bytes)), bytes) << format_size(bytes);
  }
}

TEST(Units, ComputeThroughputInFlopsAndOps) {
  EXPECT_DOUBLE_EQ(parse_flops("989.4TFLOPS"), 989.4e12);
  EXPECT_DOUBLE_EQ(parse_flops("66.9GFLOPS"), 66.9e9);
  EXPECT_DOUBLE_EQ(parse_flops("2PFLOPS"), 2e15);
  EXPECT_EQ(parse_flops("0TFLOPS"), 0.0);  // a profile's "not supported"
  EXPECT_DOUBLE_EQ(parse_ops("1978.9TOPS"), 1978.9e12);
  EXPECT_DOUBLE_EQ(parse_ops("500GOPS"), 500e9);
  EXPECT_DOUBLE_EQ(parse_ops("1POPS"), 1e15);
}

TEST(Units, ComputeThroughputErrorsNameTheUnits) {
  const auto flops_error = [](const std::string& text) {
    try {
      parse_flops(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto ops_error = [](const std::string& text) {
    try {
      parse_ops(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(flops_error("989").find("missing unit, e.g. 989.4TFLOPS"), std::string::npos);
  EXPECT_NE(flops_error("624TOPS").find("unknown floating-point throughput unit 'TOPS'"),
            std::string::npos);
  EXPECT_NE(flops_error("3.35TB/s").find("GFLOPS TFLOPS PFLOPS"), std::string::npos);
  EXPECT_NE(flops_error("-1TFLOPS").find("must not be negative"), std::string::npos);
  EXPECT_NE(ops_error("624TFLOPS").find("unknown integer throughput unit 'TFLOPS'"),
            std::string::npos);
  EXPECT_NE(ops_error("624").find("missing unit, e.g. 1978.9TOPS"), std::string::npos);
}

}  // namespace
}  // namespace gpumux::units
