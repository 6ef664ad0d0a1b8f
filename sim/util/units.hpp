#pragma once
// Unit parsing for scenario files (docs/reference/scenarios.md). Pure functions, no YAML.
// Each parser throws std::invalid_argument with a short reason ("missing unit, e.g. 2ms") that
// the loader wraps into an InputError with the location. Cost: O(length of text).
#include <cstdint>
#include <string>

namespace gpumux::units {

/// "250ns" "10us" "1024us" "2ms" "1.5s" "2m" "1h" (also "µs") -> integer nanoseconds (rounded
/// to nearest). Negative values and bare numbers are rejected.
std::int64_t parse_duration_ns(const std::string& text);
/// A duration in ns as a double, also in picoseconds ("12.5ps", "0.02ns", "1us"): for per-item
/// costs below a nanosecond (per cached token). Throws as parse_duration_ns.
double parse_fine_duration_ns(const std::string& text);

/// "512MiB" "10GiB" "80GB" "4096B" "1.5TB" (KB/MB/GB/TB = powers of 1000; KiB/MiB/GiB/TiB =
/// powers of 1024) -> bytes. Kubernetes quantities too: "30Gi" "500Mi" "1Ki" (powers of 1024),
/// "2k" "500M" "80G" (powers of 1000); "1500m" (milli) is refused with a reason.
std::int64_t parse_size_bytes(const std::string& text);

/// "3.35TB/s" "900GB/s" "512GiB/s" -> bytes per second.
double parse_bandwidth_bytes_per_s(const std::string& text);

/// Compute throughput: "989.4TFLOPS" "66.9GFLOPS" "2PFLOPS" -> floating-point operations per
/// second. Zero is allowed (a device profile's "not supported"); OPS units are refused.
double parse_flops(const std::string& text);

/// Integer throughput: "1978.9TOPS" "500GOPS" "1POPS" -> operations per second. Zero is allowed;
/// FLOPS units are refused (an integer rate is written in OPS).
double parse_ops(const std::string& text);

/// "50/s" "3000/min" "2/ms" "10/h" "7/day" -> events per second. Must be at least one per 100
/// years (3.17e-10/s): the mean gap must fit integer nanoseconds.
double parse_rate_per_s(const std::string& text);

/// Formats nanoseconds the way a scenario would write them ("1024us", "2ms", "1.5s").
std::string format_duration(std::int64_t ns);

/// Formats bytes ("10GiB", "512MiB", "80GB" when exact in decimal units, else "123B").
std::string format_size(std::int64_t bytes);

}  // namespace gpumux::units
