#include "models/scenario/trace_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "sim/util/csv.hpp"
#include "sim/util/strings.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

// Raw times keep the trace's own origin (epoch, or its first timestamp) in ns; they are made
// relative and scaled only at the end so that sortedness is checked on the unscaled values.
struct RawRequest {
  Nanos time = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  int line = 0;
};

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

// Reads lines, tracking the 1-based line number, dropping '\r' and a UTF-8 byte-order mark.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    return true;
  }
  int number() const { return number_; }

 private:
  std::istream& in_;
  int number_ = 0;
};

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

void read_csv_like(LineReader& lines, const std::string& source, TraceFormat format,
                   std::vector<RawRequest>& out) {
  std::string line;
  while (lines.next(line) && strip_whitespace(line).empty()) {
  }
  if (strip_whitespace(line).empty()) fail(source, 0, "empty trace file (expected a header row)");
  const int header_line = lines.number();
  const std::vector<std::string> header = split_csv(line, source, header_line);

  enum class TimeKind { duration, seconds, calendar };
  TimeKind time_kind = TimeKind::seconds;
  int time_col = -1;
  int input_col = -1;
  int output_col = -1;
  if (format == TraceFormat::azure_llm) {
    time_col = find_column(header, {"timestamp"});
    input_col = find_column(header, {"contexttokens"});
    output_col = find_column(header, {"generatedtokens"});
    time_kind = TimeKind::calendar;
    if (time_col < 0 || input_col < 0 || output_col < 0) {
      fail(source, header_line,
           "azure-llm trace needs the columns TIMESTAMP,ContextTokens,GeneratedTokens; header "
           "is '" +
               join(header, ",") + "'");
    }
  } else {
    if ((time_col = find_column(header, {"arrival"})) >= 0) {
      time_kind = TimeKind::duration;
    } else {
      time_col = find_column(header, {"arrival_s", "timestamp"});
    }
    if (time_col < 0) {
      fail(source, header_line,
           "csv trace needs a header with a column 'arrival' (e.g. 1.5ms), 'arrival_s' or "
           "'timestamp' (seconds); header is '" +
               join(header, ",") + "'");
    }
    input_col = find_column(header, {"input_tokens"});
    output_col = find_column(header, {"output_tokens"});
  }

  while (lines.next(line)) {
    if (strip_whitespace(line).empty()) continue;
    const int number = lines.number();
    const std::vector<std::string> fields = split_csv(line, source, number);
    if (fields.size() != header.size()) {
      fail(source, number,
           "expected " + std::to_string(header.size()) + " fields (as in the header), got " +
               std::to_string(fields.size()));
    }
    RawRequest request;
    request.line = number;
    const std::string& time_text = fields[static_cast<std::size_t>(time_col)];
    switch (time_kind) {
      case TimeKind::duration:
        try {
          request.time = units::parse_duration_ns(time_text);
        } catch (const std::invalid_argument& e) {
          fail(source, number, "arrival: " + std::string(e.what()) + ", got '" + time_text + "'");
        }
        break;
      case TimeKind::seconds:
        request.time = parse_seconds(time_text, header[static_cast<std::size_t>(time_col)].c_str(),
                                     source, number);
        break;
      case TimeKind::calendar:
        request.time = parse_calendar_time(time_text, source, number);
        break;
    }
    if (input_col >= 0) {
      request.input_tokens =
          parse_count(fields[static_cast<std::size_t>(input_col)],
                      header[static_cast<std::size_t>(input_col)].c_str(), source, number);
    }
    if (output_col >= 0) {
      request.output_tokens =
          parse_count(fields[static_cast<std::size_t>(output_col)],
                      header[static_cast<std::size_t>(output_col)].c_str(), source, number);
    }
    out.push_back(request);
  }
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

void read_mooncake(LineReader& lines, const std::string& source, std::vector<RawRequest>& out) {
  std::string line;
  while (lines.next(line)) {
    if (strip_whitespace(line).empty()) continue;
    const int number = lines.number();
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::out_of_range& e) {
      // e.g. 1e400: a number beyond a double ("[json.exception.out_of_range.406] ...")
      fail(source, number, "a number out of range (beyond a double): " + std::string(e.what()));
    } catch (const nlohmann::json::exception& e) {
      fail(source, number, "not a JSON object: " + std::string(e.what()));
    }
    if (!object.is_object()) fail(source, number, "expected a JSON object per line");
    const auto stamp = object.find("timestamp");
    if (stamp == object.end()) fail(source, number, "missing field 'timestamp'");
    RawRequest request;
    request.line = number;
    if (stamp->is_number_integer()) {
      const auto ms = stamp->get<std::int64_t>();
      if (std::llabs(ms) > std::numeric_limits<Nanos>::max() / 2'000'000) {
        fail(source, number, "timestamp out of range");
      }
      request.time = ms * 1'000'000;
    } else if (stamp->is_number() && std::isfinite(stamp->get<double>()) &&
               std::fabs(stamp->get<double>()) < 9e12) {
      request.time = checked::to_nanos(stamp->get<double>() * 1e6);  // |ms| < 9e12: in range
    } else {
      fail(source, number, "timestamp: expected milliseconds, got " + stamp->dump());
    }
    request.input_tokens = json_count(object, "input_length", source, number);
    request.output_tokens = json_count(object, "output_length", source, number);
    out.push_back(request);
  }
}

}  // namespace

std::vector<TraceRequest> parse_trace(std::istream& in, const std::string& source_name,
                                      TraceFormat format, double time_scale) {
  if (!(time_scale > 0) || !std::isfinite(time_scale)) {
    fail(source_name, 0, "time_scale must be a finite number > 0");
  }
  LineReader lines(in);
  std::vector<RawRequest> raw;
  if (format == TraceFormat::mooncake) {
    read_mooncake(lines, source_name, raw);
  } else {
    read_csv_like(lines, source_name, format, raw);
  }
  if (in.bad()) fail(source_name, lines.number(), "read error: " + std::string(strerror(errno)));
  if (raw.empty()) fail(source_name, 0, "trace has no requests");

  std::vector<TraceRequest> requests;
  requests.reserve(raw.size());
  const Nanos origin = raw.front().time;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && raw[i].time < raw[i - 1].time) {
      fail(source_name, raw[i].line,
           "arrival goes back in time (" + units::format_duration(raw[i - 1].time - raw[i].time) +
               " before the request on line " + std::to_string(raw[i - 1].line) +
               "); a trace must be sorted by time");
    }
    Nanos offset = 0;
    Nanos arrival = 0;
    try {
      offset = checked::sub(raw[i].time, origin, "the time since the first request");
      arrival =
          time_scale == 1.0 ? offset : checked::to_nanos(static_cast<double>(offset) * time_scale);
    } catch (const checked::RangeError& e) {
      std::ostringstream scale;
      scale << time_scale;
      fail(source_name, raw[i].line,
           (time_scale == 1.0
                ? "arrival out of range: "
                : "arrivals.time_scale " + scale.str() + " puts this arrival out of range: ") +
               std::string(e.what()));
    }
    requests.push_back({arrival, raw[i].input_tokens, raw[i].output_tokens});
  }
  return requests;
}

std::vector<TraceRequest> read_trace(const std::string& path, TraceFormat format,
                                     double time_scale) {
  std::string text;
  try {
    text = input_file::read(path, input_file::kMaxTraceBytes, "trace file");
  } catch (const input_file::FileError& e) {
    fail(path, 0, e.what());
  }
  std::istringstream in(std::move(text));
  return parse_trace(in, path, format, time_scale);
}

TraceFormat parse_trace_format(const std::string& name) {
  if (name == "csv") return TraceFormat::csv;
  if (name == "azure-llm" || name == "azure_llm" || name == "azure") return TraceFormat::azure_llm;
  if (name == "mooncake") return TraceFormat::mooncake;
  throw std::invalid_argument("unknown trace format '" + name +
                              "' (use one of: csv, azure-llm, mooncake)");
}

const char* trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::csv:
      return "csv";
    case TraceFormat::azure_llm:
      return "azure-llm";
    case TraceFormat::mooncake:
      return "mooncake";
  }
  return "csv";
}

}  // namespace gpumux
