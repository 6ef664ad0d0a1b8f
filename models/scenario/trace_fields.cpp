#include "models/scenario/trace_fields.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/units.hpp"
#include "sim/util/utf8.hpp"

#include "models/scenario/trace_reader.hpp"

namespace gpumux::trace_fields {
[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
  SourceLocation where;
  where.file = source;
  where.line = line;
  throw InputError(where, message);
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A trace line as read: its '\r' dropped, and on line 1 a UTF-8 byte-order mark.
void trim_trace_line(std::string& line, int number) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
}

// RFC 4180 fields (sim/util/csv.hpp); an unterminated quote is an InputError at the line.
std::vector<std::string> split_csv(const std::string& line, const std::string& source,
                                   int line_number) {
  try {
    return split_csv_line(line);
  } catch (const std::invalid_argument& e) {
    fail(source, line_number, e.what());
  }
}

std::int64_t parse_count(std::string_view text, const char* what, const std::string& source,
                         int line) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    fail(source, line,
         std::string(what) + ": expected a non-negative integer, got '" + std::string(text) + "'");
  }
  if (value > kMaxTokens) {
    fail(source, line,
         std::string(what) + ": " + std::string(text) +
             " is more than the most tokens a request may have (" + std::to_string(kMaxTokens) +
             ")");
  }
  return value;
}

// Plain decimal seconds ("12.3456789") -> ns, exact to the nanosecond without a detour through
// double (a double loses nanoseconds past ~104 days of epoch seconds). Exponent notation falls
// back to double.
std::optional<Nanos> decimal_seconds_to_ns(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  const auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  if (!all_digits(whole) || !all_digits(fraction)) return std::nullopt;
  if (whole.size() > 9) return std::nullopt;  // > 31 years in ns would near the int64 limit
  Nanos ns = 0;
  for (const char c : whole) ns = ns * 10 + (c - '0');
  ns *= 1'000'000'000;
  Nanos frac = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    frac = frac * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  }
  if (fraction.size() > 9 && fraction[9] >= '5') ++frac;  // round half up at the tenth digit
  ns += frac;
  return negative ? -ns : ns;
}

Nanos parse_seconds(std::string_view text, const char* column, const std::string& source,
                    int line) {
  if (const auto exact = decimal_seconds_to_ns(text)) return *exact;
  const std::string owned(text);
  char* end = nullptr;
  const double seconds = std::strtod(owned.c_str(), &end);
  if (owned.empty() || end != owned.c_str() + owned.size() || !std::isfinite(seconds) ||
      std::fabs(seconds) > 9e9) {
    fail(source, line,
         std::string(column) + ": expected plain seconds (e.g. 1.25), got '" + owned + "'");
  }
  return checked::to_nanos(seconds * 1e9);  // |seconds| <= 9e9: in range
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction]" (or 'T' between date and time) -> ns since the epoch.
Nanos parse_calendar_time(std::string_view text, const std::string& source, int line) {
  const auto bad = [&](const char* why) {
    fail(source, line,
         "TIMESTAMP: " + std::string(why) + " in '" + std::string(text) +
             "' (expected YYYY-MM-DD HH:MM:SS.fffffff)");
  };
  std::size_t pos = 0;
  const auto number = [&](std::size_t digits, char then) -> int {
    if (pos + digits > text.size()) bad("too short");
    int value = 0;
    for (std::size_t i = 0; i < digits; ++i) {
      const char c = text[pos + i];
      if (!std::isdigit(static_cast<unsigned char>(c))) bad("not a date and time");
      value = value * 10 + (c - '0');
    }
    pos += digits;
    if (then != '\0') {
      if (pos >= text.size()) bad("too short");
      if ((text[pos] != then && !(then == ' ' && text[pos] == 'T'))) {
        bad("not a date and time");
      }
      ++pos;
    }
    return value;
  };
  const int year = number(4, '-');
  const int month = number(2, '-');
  const int day = number(2, ' ');
  const int hour = number(2, ':');
  const int minute = number(2, ':');
  const int second = number(2, '\0');
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    bad("field out of range");
  }
  Nanos fraction_ns = 0;
  if (pos < text.size()) {
    if (text[pos] != '.') bad("unexpected text after the seconds");
    const std::string_view digits = text.substr(pos + 1);
    if (digits.empty()) bad("empty fraction");
    Nanos scale = 100'000'000;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(digits[i]))) bad("bad fraction of a second");
      if (i < 9) {
        fraction_ns += (digits[i] - '0') * scale;
        scale /= 10;
      } else if (i == 9 && digits[i] >= '5') {
        ++fraction_ns;
      }
    }
  }
  const std::int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t seconds = days * 86'400 + hour * 3'600 + minute * 60 + second;
  // Nanoseconds since 1970 in int64 reach from 1677 to 2262; a date outside is refused.
  try {
    return checked::add(checked::mul(seconds, 1'000'000'000, "the date in nanoseconds"),
                        fraction_ns, "the date in nanoseconds");
  } catch (const checked::RangeError&) {
    bad("date out of range (gpumux times reach from 1677 to 2262)");
  }
  return 0;  // unreachable: bad() throws
}

// Returns the index of the first column whose name (case-insensitive) is in `names`, or -1.
int find_column(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (lower(header[i]) == name) return static_cast<int>(i);
    }
  }
  return -1;
}

std::int64_t json_count(const nlohmann::json& object, const char* key, const std::string& source,
                        int line) {
  const auto it = object.find(key);
  if (it == object.end()) fail(source, line, std::string("missing field '") + key + "'");
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
    fail(source, line, std::string(key) + ": expected a non-negative integer, got " + it->dump());
  }
  if (it->get<std::int64_t>() > kMaxTokens) {
    fail(source, line,
         std::string(key) + ": " + it->dump() +
             " is more than the most tokens a request may have (" + std::to_string(kMaxTokens) +
             ")");
  }
  return it->get<std::int64_t>();
}

void check_time_scale(const std::string& source, double time_scale) {
  if (!(time_scale > 0) || !std::isfinite(time_scale)) {
    fail(source, 0, "time_scale must be a finite number > 0");
  }
}

// The content hash of a trace file: 64-bit words mixed in order (not cryptographic: it detects
// a file changed between validation and run, not an adversary). Blocks are fed whole.
std::uint64_t hash_bytes(std::uint64_t h, const char* data, std::size_t size) {
  const auto mix = [&h](std::uint64_t word) {
    h ^= word;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
  };
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data + i, 8);
    mix(word);
  }
  std::uint64_t tail = size - i;  // the length, so that trailing zero bytes count
  for (std::size_t k = 0; i + k < size; ++k) {
    tail |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[i + k])) << (8 * (k + 1));
  }
  mix(tail);
  return h;
}

}  // namespace gpumux::trace_fields
