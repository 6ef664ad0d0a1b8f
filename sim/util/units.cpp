#include "sim/util/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace gpumux::units {
namespace {

struct Quantity {
  double number = 0;
  std::string unit;
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Splits "1.5 GiB" into 1.5 and "GiB". The number must be finite and non-negative.
Quantity split_quantity(const std::string& text, const char* example) {
  const std::string_view trimmed = trim(text);
  const std::string owned(trimmed);
  const char* begin = owned.c_str();
  // strtod also reads "inf", "nan" and hexadecimal ("0x10"); a scenario number is decimal.
  const std::size_t digits = owned.find_first_not_of("+-");
  const bool decimal =
      digits != std::string::npos &&
      (std::isdigit(static_cast<unsigned char>(owned[digits])) || owned[digits] == '.') &&
      owned.find_first_of("xX") == std::string::npos;
  char* end = nullptr;
  const double number = decimal ? std::strtod(begin, &end) : 0.0;
  if (!decimal || end == begin) {
    throw std::invalid_argument("expected a number with a unit, e.g. " + std::string(example));
  }
  if (!std::isfinite(number)) throw std::invalid_argument("number out of range");
  if (number < 0) throw std::invalid_argument("must not be negative");
  const std::string unit(trim(std::string_view(end)));
  if (unit.empty()) {
    throw std::invalid_argument("missing unit, e.g. " + std::string(example));
  }
  return {number, unit};
}

template <typename Table>
double factor_for(const std::string& unit, const Table& table, const char* kind) {
  for (const auto& [name, factor] : table) {
    if (unit == name) return factor;
  }
  std::string known;
  for (const auto& [name, factor] : table) {
    if (!known.empty()) known += " ";
    known += name;
  }
  throw std::invalid_argument("unknown " + std::string(kind) + " unit '" + unit +
                              "' (use one of: " + known + ")");
}

constexpr std::pair<const char*, double> kDurationUnits[] = {
    {"ns", 1.0}, {"us", 1e3}, {"µs", 1e3},   {"μs", 1e3},  {"ms", 1e6},
    {"s", 1e9},  {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};

constexpr std::pair<const char*, double> kSizeUnits[] = {
    {"B", 1.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
    {"PB", 1e15},
    {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
    // Kubernetes quantities (resource.Quantity): binary Ki Mi Gi Ti Pi, decimal k M G T P.
    {"Ki", 1024.0},
    {"Mi", 1024.0 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
    {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"k", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15}};

constexpr std::pair<const char*, double> kFlopsUnits[] = {
    {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}};
constexpr std::pair<const char*, double> kOpsUnits[] = {
    {"GOPS", 1e9}, {"TOPS", 1e12}, {"POPS", 1e15}};

// Events per unit -> per second. Negative entries are divisors, so that 23/min is the double
// nearest 23/60 (23 * (1.0/60) is one ulp off).
constexpr std::pair<const char*, double> kRateUnits[] = {
    {"/ns", 1e9},    {"/us", 1e6},    {"/ms", 1e3},      {"/s", 1.0},
    {"/min", -60.0}, {"/h", -3600.0}, {"/day", -86400.0}};

std::int64_t to_int64(double value) {
  const double rounded = std::round(value);
  if (rounded > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2)) {
    throw std::invalid_argument("value too large");
  }
  return static_cast<std::int64_t>(rounded);
}

}  // namespace

std::int64_t parse_duration_ns(const std::string& text) {
  const Quantity q = split_quantity(text, "2ms");
  return to_int64(q.number * factor_for(q.unit, kDurationUnits, "duration"));
}

double parse_fine_duration_ns(const std::string& text) {
  const Quantity q = split_quantity(text, "12ps");
  if (q.unit == "ps") return q.number * 1e-3;
  return q.number * factor_for(q.unit, kDurationUnits, "duration");
}

std::int64_t parse_size_bytes(const std::string& text) {
  const Quantity q = split_quantity(text, "10GiB");
  if (q.unit == "m") {
    throw std::invalid_argument(
        "'m' is milli (a Kubernetes CPU quantity), not a size; use Mi or MiB");
  }
  return to_int64(q.number * factor_for(q.unit, kSizeUnits, "size"));
}

double parse_bandwidth_bytes_per_s(const std::string& text) {
  const Quantity q = split_quantity(text, "900GB/s");
  const auto slash = q.unit.rfind("/s");
  if (slash == std::string::npos || slash + 2 != q.unit.size()) {
    throw std::invalid_argument("bandwidth needs a size per second, e.g. 900GB/s");
  }
  return q.number * factor_for(q.unit.substr(0, slash), kSizeUnits, "size");
}

double parse_flops(const std::string& text) {
  const Quantity q = split_quantity(text, "989.4TFLOPS");
  return q.number * factor_for(q.unit, kFlopsUnits, "floating-point throughput");
}

double parse_ops(const std::string& text) {
  const Quantity q = split_quantity(text, "1978.9TOPS");
  return q.number * factor_for(q.unit, kOpsUnits, "integer throughput");
}

double parse_rate_per_s(const std::string& text) {
  const Quantity q = split_quantity(text, "50/s");
  const double factor = factor_for(q.unit, kRateUnits, "rate");
  const double rate = factor < 0 ? q.number / -factor : q.number * factor;
  if (!(rate > 0)) throw std::invalid_argument("rate must be greater than zero");
  // The mean gap 1/rate becomes integer nanoseconds (at most ~292 years); a rate below one per
  // 100 years (3.17e-10/s) leaves no room for the exponential tail and is surely a typo.
  constexpr double kLeastRatePerS = 1.0 / (100 * 365.25 * 86400);
  if (rate < kLeastRatePerS) {
    throw std::invalid_argument(
        "rate too small: the least rate is one per 100 years (3.17e-10/s; gpumux times reach "
        "about 292 years)");
  }
  return rate;
}

std::string format_duration(std::int64_t ns) {
  struct Step {
    std::int64_t factor;
    const char* unit;
  };
  constexpr Step steps[] = {{3'600'000'000'000, "h"},
                            {60'000'000'000, "m"},
                            {1'000'000'000, "s"},
                            {1'000'000, "ms"},
                            {1'000, "us"}};
  if (ns == 0) return "0ns";
  for (const Step& step : steps) {
    if (ns % step.factor == 0) return std::to_string(ns / step.factor) + step.unit;
  }
  return std::to_string(ns) + "ns";
}

std::string format_size(std::int64_t bytes) {
  struct Step {
    std::int64_t factor;
    const char* unit;
  };
  constexpr Step steps[] = {{1LL << 40, "TiB"},        {1LL << 30, "GiB"},    {1LL << 20, "MiB"},
                            {1'000'000'000'000, "TB"}, {1'000'000'000, "GB"}, {1'000'000, "MB"},
                            {1LL << 10, "KiB"}};
  if (bytes == 0) return "0B";
  for (const Step& step : steps) {
    if (bytes % step.factor == 0) return std::to_string(bytes / step.factor) + step.unit;
  }
  return std::to_string(bytes) + "B";
}

}  // namespace gpumux::units
