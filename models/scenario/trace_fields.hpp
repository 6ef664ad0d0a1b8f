#pragma once
// Field-level parsing of request traces (internal to models/scenario/trace_reader.cpp): one
// field or one line at a time, each error an InputError naming the trace file and its line.
// Cost: O(length of the field).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <istream>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/time.hpp"

namespace gpumux::trace_fields {

// Raw times keep the trace's own origin (epoch, or its first timestamp) in ns; they are made
// relative and scaled only at the end so that sortedness is checked on the unscaled values.
struct RawRequest {
  Nanos time = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  int line = 0;
};

/// Throws the InputError "SOURCE:LINE: MESSAGE".
[[noreturn]] void fail(const std::string& source, int line, const std::string& message);

/// `text` in lower case (ASCII).
std::string lower(std::string_view text);

/// A trace line as read: its '\r' dropped, and on line 1 a UTF-8 byte-order mark.
void trim_trace_line(std::string& line, int number);

/// Reads lines, tracking the 1-based line number, trimmed by trim_trace_line.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    trim_trace_line(line, ++number_);
    return true;
  }
  int number() const { return number_; }

 private:
  std::istream& in_;
  int number_ = 0;
};

/// RFC 4180 fields (sim/util/csv.hpp); an unterminated quote is an InputError at the line.
std::vector<std::string> split_csv(const std::string& line, const std::string& source,
                                   int line_number);

/// A token count in 0..kMaxTokens; `what` names the column in the error.
std::int64_t parse_count(std::string_view text, const char* what, const std::string& source,
                         int line);

/// Plain decimal seconds ("12.3456789") -> ns, exact to the nanosecond; nullopt when the text
/// is not plain decimal (exponent notation, garbage).
std::optional<Nanos> decimal_seconds_to_ns(std::string_view text);

/// Seconds (plain or exponent notation, |s| <= 9e9) -> ns; `column` names the field in errors.
Nanos parse_seconds(std::string_view text, const char* column, const std::string& source, int line);

/// Days since 1970-01-01 of a proleptic Gregorian date.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

/// "YYYY-MM-DD HH:MM:SS[.fraction]" (or 'T' between date and time) -> ns since the epoch.
Nanos parse_calendar_time(std::string_view text, const std::string& source, int line);

/// The index of the first column whose name (case-insensitive) is in `names`, or -1.
int find_column(const std::vector<std::string>& header, std::initializer_list<const char*> names);

/// A non-negative integer token count `key` of a JSON object (at most kMaxTokens).
std::int64_t json_count(const nlohmann::json& object, const char* key, const std::string& source,
                        int line);

/// Throws unless `time_scale` is finite and > 0 (`source` names the trace).
void check_time_scale(const std::string& source, double time_scale);

/// The content hash of a trace file: 64-bit words mixed in order into `h` (not cryptographic:
/// it detects a file changed between validation and run, not an adversary). Blocks are fed
/// whole. O(size).
std::uint64_t hash_bytes(std::uint64_t h, const char* data, std::size_t size);

}  // namespace gpumux::trace_fields
