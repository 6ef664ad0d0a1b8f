#include "models/cluster/quantity.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "sim/util/checked.hpp"
#include "sim/util/units.hpp"

namespace gpumux::cluster {
namespace {

// A quantity as an exact number: mantissa x 10^exp10 x 2^exp2.
struct ExactQuantity {
  unsigned __int128 mantissa = 0;  // at most kMaxDigits significant digits
  int exp10 = 0;
  int exp2 = 0;
  bool milli_suffix = false;  // the suffix was `m`
};

// 30 significant digits fit unsigned __int128 (< 3.4e38) with room; no quantity needs more.
constexpr int kMaxDigits = 30;
// A decimal exponent beyond this cannot give an int64 (>= 1e19) or a whole unit (< 1e-30 of it).
constexpr int kMaxExponent = 60;

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

ExactQuantity split(const std::string& original, const char* example) {
  std::string_view text = trim_blanks(original);
  if (text.empty())
    throw std::invalid_argument("empty quantity (e.g. " + std::string(example) + ")");
  if (text.front() == '-') throw std::invalid_argument("must not be negative");
  if (text.front() == '+') text.remove_prefix(1);
  ExactQuantity q;
  std::size_t i = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  bool any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (seen_point) throw std::invalid_argument("two decimal points");
      seen_point = true;
      continue;
    }
    if (!is_digit(c)) break;
    any_digit = true;
    if (seen_point) ++fraction_digits;
    if (q.mantissa == 0 && c == '0') continue;  // leading zeros carry no digits
    if (++digits > kMaxDigits) {
      throw std::invalid_argument("more than " + std::to_string(kMaxDigits) +
                                  " significant digits");
    }
    q.mantissa = q.mantissa * 10 + static_cast<unsigned>(c - '0');
  }
  if (!any_digit) {
    throw std::invalid_argument("expected a number with an optional suffix, e.g. " +
                                std::string(example));
  }
  q.exp10 = -fraction_digits;
  const std::string_view suffix = text.substr(i);
  struct Suffix {
    std::string_view name;
    int exp10;
    int exp2;
  };
  constexpr Suffix kSuffixes[] = {{"", 0, 0},    {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
                                  {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
                                  {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40},
                                  {"Pi", 0, 50}, {"Ei", 0, 60}};
  for (const Suffix& s : kSuffixes) {
    if (suffix == s.name) {
      q.exp10 += s.exp10;
      q.exp2 = s.exp2;
      q.milli_suffix = suffix == "m";
      return q;
    }
  }
  // A decimal exponent: e or E followed by a signed integer ("1e3", "5E-2").
  if ((suffix.front() == 'e' || suffix.front() == 'E') && suffix.size() >= 2) {
    std::string_view exponent = suffix.substr(1);
    bool negative = false;
    if (exponent.front() == '+' || exponent.front() == '-') {
      negative = exponent.front() == '-';
      exponent.remove_prefix(1);
    }
    if (!exponent.empty() && exponent.size() <= 4 &&
        std::all_of(exponent.begin(), exponent.end(), is_digit)) {
      const int value = std::atoi(std::string(exponent).c_str());
      if (value > kMaxExponent) throw checked::RangeError("exponent too large: " + original);
      q.exp10 += negative ? -value : value;
      return q;
    }
  }
  throw std::invalid_argument(
      "unknown suffix '" + std::string(suffix) +
      "' (use one of: m k M G T P E Ki Mi Gi Ti Pi Ei, or e3; e.g. " + example +
      (std::string(example) == "30Gi" ? "; or a size as tenants write it: B KB MB GB TB "
                                        "PB KiB MiB GiB TiB PiB, e.g. 80GB)"
                                      : ")"));
}

// mantissa x 10^(exp10 + shift10) x 2^exp2 as an exact int64, or a reason why not. `unit`
// names what one whole step is ("byte", "millicore", "unit") for the fraction message.
std::int64_t exact_value(const std::string& text, ExactQuantity q, int shift10, const char* what,
                         const char* fraction_reason) {
  int exp10 = q.exp10 + shift10;
  int exp2 = q.exp2;
  if (q.mantissa == 0) return 0;
  if (exp10 < -kMaxExponent) throw std::invalid_argument(fraction_reason);
  // Divide out 10^-exp10 exactly: by 10 from the mantissa, or by 5 from it and 2 from 2^exp2.
  while (exp10 < 0) {
    if (q.mantissa % 10 == 0) {
      q.mantissa /= 10;
    } else if (q.mantissa % 5 == 0 && exp2 > 0) {
      q.mantissa /= 5;
      --exp2;
    } else {
      throw std::invalid_argument(fraction_reason);
    }
    ++exp10;
  }
  const auto out_of_range = [&] {
    return checked::RangeError(std::string(what) + " out of range (at most 9.2e18): " + text);
  };
  if (q.mantissa > static_cast<unsigned __int128>(checked::kMaxInt64)) throw out_of_range();
  std::int64_t value = static_cast<std::int64_t>(q.mantissa);
  try {
    for (; exp10 > 0; --exp10) value = checked::mul(value, 10, what);
    for (; exp2 > 0; --exp2) value = checked::mul(value, 2, what);
  } catch (const checked::RangeError&) {
    throw out_of_range();
  }
  return value;
}

template <typename Parse>
std::int64_t located(yaml::Context& ctx, const yaml::Field& field, Parse parse) {
  const std::string text = yaml::text_of(ctx, field);
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    ctx.fail(field, std::string(e.what()) + " (got '" + text + "')");
  } catch (const checked::RangeError& e) {
    ctx.fail(field, e.what());
  }
}

}  // namespace

std::int64_t parse_memory_bytes(const std::string& text) {
  // The byte units of a scenario's tenant sizes (512MiB, 80GB, 4096B; sim/util/units.hpp) read
  // as the tenant section reads them: one grammar for sizes across the scenario.
  const std::string_view trimmed = trim_blanks(text);
  if (!trimmed.empty() && trimmed.back() == 'B') return units::parse_size_bytes(text);
  const ExactQuantity q = split(text, "30Gi");
  if (q.milli_suffix) {
    throw std::invalid_argument(
        "'m' is milli (thousandths of a byte, a CPU suffix); for mebibytes write Mi");
  }
  return exact_value(text, q, 0, "memory", "not a whole number of bytes (e.g. 1.5Gi, 512Mi, 1e3)");
}

std::int64_t parse_cpu_millicores(const std::string& text) {
  return exact_value(text, split(text, "1500m"), 3, "CPU",
                     "CPU finer than 1m (0.001 CPU) is not allowed (Kubernetes refuses it too)");
}

std::int64_t parse_resource_count(const std::string& text) {
  return exact_value(text, split(text, "1"), 0, "count",
                     "must be a whole number (extended resources such as nvidia.com/gpu are "
                     "counted in whole units)");
}

std::int64_t memory_bytes_of(yaml::Context& ctx, const yaml::Field& field) {
  return located(ctx, field, parse_memory_bytes);
}

std::int64_t cpu_millicores_of(yaml::Context& ctx, const yaml::Field& field) {
  return located(ctx, field, parse_cpu_millicores);
}

std::int64_t resource_count_of(yaml::Context& ctx, const yaml::Field& field) {
  return located(ctx, field, parse_resource_count);
}

}  // namespace gpumux::cluster
