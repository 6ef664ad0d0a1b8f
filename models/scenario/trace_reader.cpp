#include "models/scenario/trace_reader.hpp"

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

// A trace line as read: its '\r' dropped, and on line 1 a UTF-8 byte-order mark.
void trim_trace_line(std::string& line, int number) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
}

// Reads lines, tracking the 1-based line number, trimmed by trim_trace_line.
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

// One line of a trace -> one request (or nothing: a blank line, the csv header). The same parser
// serves the in-memory reader, the resolver's validation pass and the run's cursor, so the three
// accept the same files with the same messages.
class RowParser {
 public:
  RowParser(const std::string& source, TraceFormat format) : source_(source), format_(format) {}

  /// Parses line `number`; true when it is a request (then `out` is filled).
  bool parse(const std::string& line, int number, RawRequest& out) {
    if (const auto bad = find_invalid_utf8(line)) fail(source_, number, bad->message());
    if (strip_whitespace(line).empty()) return false;
    if (format_ == TraceFormat::mooncake) {
      out = mooncake_row(line, number);
      return true;
    }
    if (header_line_ == 0) {
      read_header(line, number);
      return false;
    }
    out = csv_row(line, number);
    return true;
  }

  /// At the end of the file: a csv trace without a header row is an error.
  void finish() const {
    if (format_ != TraceFormat::mooncake && header_line_ == 0) {
      fail(source_, 0, "empty trace file (expected a header row)");
    }
  }

 private:
  enum class TimeKind { duration, seconds, calendar };

  void read_header(const std::string& line, int number) {
    header_line_ = number;
    header_ = split_csv(line, source_, number);
    if (format_ == TraceFormat::azure_llm) {
      time_col_ = find_column(header_, {"timestamp"});
      input_col_ = find_column(header_, {"contexttokens"});
      output_col_ = find_column(header_, {"generatedtokens"});
      time_kind_ = TimeKind::calendar;
      if (time_col_ < 0 || input_col_ < 0 || output_col_ < 0) {
        fail(source_, number,
             "azure-llm trace needs the columns TIMESTAMP,ContextTokens,GeneratedTokens; header "
             "is '" +
                 join(header_, ",") + "'");
      }
      return;
    }
    if ((time_col_ = find_column(header_, {"arrival"})) >= 0) {
      time_kind_ = TimeKind::duration;
    } else {
      time_col_ = find_column(header_, {"arrival_s", "timestamp"});
    }
    if (time_col_ < 0) {
      fail(source_, number,
           "csv trace needs a header with a column 'arrival' (e.g. 1.5ms), 'arrival_s' or "
           "'timestamp' (seconds); header is '" +
               join(header_, ",") + "'");
    }
    input_col_ = find_column(header_, {"input_tokens"});
    output_col_ = find_column(header_, {"output_tokens"});
  }

  // The line's fields: split in place (string views, no allocation) when it has no quote,
  // which then gives the same fields as split_csv_line; else through split_csv_line.
  void split_fields(const std::string& line, int number) {
    fields_.clear();
    if (line.find('"') != std::string::npos) {
      quoted_ = split_csv(line, source_, number);
      for (const std::string& f : quoted_) fields_.emplace_back(f);
      return;
    }
    std::string_view rest(line);
    while (true) {
      const std::size_t comma = rest.find(',');
      fields_.push_back(strip_whitespace(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }

  RawRequest csv_row(const std::string& line, int number) {
    split_fields(line, number);
    if (fields_.size() != header_.size()) {
      fail(source_, number,
           "expected " + std::to_string(header_.size()) + " fields (as in the header), got " +
               std::to_string(fields_.size()));
    }
    RawRequest request;
    request.line = number;
    const std::string_view time_text = fields_[static_cast<std::size_t>(time_col_)];
    switch (time_kind_) {
      case TimeKind::duration:
        try {
          request.time = units::parse_duration_ns(std::string(time_text));
        } catch (const std::invalid_argument& e) {
          fail(source_, number,
               "arrival: " + std::string(e.what()) + ", got '" + std::string(time_text) + "'");
        }
        break;
      case TimeKind::seconds:
        request.time = parse_seconds(
            time_text, header_[static_cast<std::size_t>(time_col_)].c_str(), source_, number);
        break;
      case TimeKind::calendar:
        request.time = parse_calendar_time(time_text, source_, number);
        break;
    }
    if (input_col_ >= 0) {
      request.input_tokens =
          parse_count(fields_[static_cast<std::size_t>(input_col_)],
                      header_[static_cast<std::size_t>(input_col_)].c_str(), source_, number);
    }
    if (output_col_ >= 0) {
      request.output_tokens =
          parse_count(fields_[static_cast<std::size_t>(output_col_)],
                      header_[static_cast<std::size_t>(output_col_)].c_str(), source_, number);
    }
    return request;
  }

  RawRequest mooncake_row(const std::string& line, int number) const {
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::out_of_range& e) {
      // e.g. 1e400: a number beyond a double ("[json.exception.out_of_range.406] ...")
      fail(source_, number, "a number out of range (beyond a double): " + std::string(e.what()));
    } catch (const nlohmann::json::exception& e) {
      fail(source_, number, "not a JSON object: " + std::string(e.what()));
    }
    if (!object.is_object()) fail(source_, number, "expected a JSON object per line");
    const auto stamp = object.find("timestamp");
    if (stamp == object.end()) fail(source_, number, "missing field 'timestamp'");
    RawRequest request;
    request.line = number;
    if (stamp->is_number_integer()) {
      const auto ms = stamp->get<std::int64_t>();
      if (std::llabs(ms) > std::numeric_limits<Nanos>::max() / 2'000'000) {
        fail(source_, number, "timestamp out of range");
      }
      request.time = ms * 1'000'000;
    } else if (stamp->is_number() && std::isfinite(stamp->get<double>()) &&
               std::fabs(stamp->get<double>()) < 9e12) {
      request.time = checked::to_nanos(stamp->get<double>() * 1e6);  // |ms| < 9e12: in range
    } else {
      fail(source_, number, "timestamp: expected milliseconds, got " + stamp->dump());
    }
    request.input_tokens = json_count(object, "input_length", source_, number);
    request.output_tokens = json_count(object, "output_length", source_, number);
    return request;
  }

  const std::string& source_;
  TraceFormat format_;
  int header_line_ = 0;  // 0 until the csv header is read
  std::vector<std::string> header_;
  TimeKind time_kind_ = TimeKind::seconds;
  int time_col_ = -1;
  int input_col_ = -1;
  int output_col_ = -1;
  std::vector<std::string_view> fields_;  // the current row's fields (into the line or quoted_)
  std::vector<std::string> quoted_;       // a quoted row's unquoted fields
};

// Raw times -> arrivals: relative to the first request, scaled, checked to be non-decreasing.
// With `defer`, the first order or range error is kept and thrown by finish(), so that a file is
// parsed to its end first and a parse error further down wins (as when every row was read before
// any was checked); without it (the run's cursor) it is thrown at once.
class ArrivalClock {
 public:
  ArrivalClock(const std::string& source, double time_scale, bool defer)
      : source_(source), time_scale_(time_scale), defer_(defer) {}

  TraceRequest next(const RawRequest& raw) {
    if (!started_) {
      started_ = true;
      origin_ = raw.time;
    } else if (raw.time < previous_time_) {
      problem(raw.line, "arrival goes back in time (" +
                            units::format_duration(previous_time_ - raw.time) +
                            " before the request on line " + std::to_string(previous_line_) +
                            "); a trace must be sorted by time");
    }
    previous_time_ = raw.time;
    previous_line_ = raw.line;
    Nanos arrival = 0;
    try {
      const Nanos offset = checked::sub(raw.time, origin_, "the time since the first request");
      arrival = time_scale_ == 1.0 ? offset
                                   : checked::to_nanos(static_cast<double>(offset) * time_scale_);
    } catch (const checked::RangeError& e) {
      std::ostringstream scale;
      scale << time_scale_;
      problem(raw.line, (time_scale_ == 1.0 ? "arrival out of range: "
                                            : "arrivals.time_scale " + scale.str() +
                                                  " puts this arrival out of range: ") +
                            std::string(e.what()));
    }
    return {arrival, raw.input_tokens, raw.output_tokens};
  }

  /// Throws the first deferred error, if any.
  void finish() const {
    if (deferred_) throw *deferred_;
  }

 private:
  void problem(int line, const std::string& message) {
    SourceLocation where;
    where.file = source_;
    where.line = line;
    if (!defer_) throw InputError(where, message);
    if (!deferred_) deferred_.emplace(where, message);
  }

  const std::string& source_;
  double time_scale_;
  bool defer_;
  bool started_ = false;
  Nanos origin_ = 0;
  Nanos previous_time_ = 0;
  int previous_line_ = 0;
  std::optional<InputError> deferred_;
};

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

constexpr std::uint64_t kHashSeed = 0xCBF29CE484222325ULL;

// Lines from a file read in fixed blocks of kTraceBlockBytes (the last one shorter): the same
// lines and numbers as std::getline (a last line without '\n' counts; '\r' and a UTF-8
// byte-order mark on line 1 dropped, as LineReader does). `read_block(buffer, offset)` returns
// the bytes read, 0 at the end. Hashes every block it reads. With no size limit on the file,
// a line is bounded (kMaxTraceLineBytes: a binary or corrupt file fails at its first block
// instead of being gathered into one huge line) and so is the line count (int line numbers).
class BlockLines {
 public:
  explicit BlockLines(std::string source) : source_(std::move(source)) {}
  template <typename ReadBlock>
  bool next(std::string& line, ReadBlock&& read_block) {
    while (true) {
      if (pos_ < size_) {
        const char* start = buffer_.data() + pos_;
        const void* newline = std::memchr(start, '\n', size_ - pos_);
        if (newline != nullptr) {
          const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
          if (pending_.size() + length > kMaxTraceLineBytes) too_long();
          if (pending_.empty()) {
            line.assign(start, length);
          } else {
            pending_.append(start, length);
            line.swap(pending_);
            pending_.clear();
          }
          pos_ += length + 1;
          return finish_line(line);
        }
        if (pending_.size() + (size_ - pos_) > kMaxTraceLineBytes) too_long();
        pending_.append(start, size_ - pos_);
        pos_ = size_;
      }
      if (eof_) {
        if (pending_.empty()) return false;
        line.swap(pending_);
        pending_.clear();
        return finish_line(line);
      }
      if (buffer_.empty()) buffer_.resize(kTraceBlockBytes);
      size_ = read_block(buffer_.data(), offset_);
      pos_ = 0;
      offset_ += static_cast<std::int64_t>(size_);
      if (size_ == 0) {
        eof_ = true;
      } else {
        hash_ = hash_bytes(hash_, buffer_.data(), size_);
      }
    }
  }
  int number() const { return number_; }
  std::int64_t bytes() const { return offset_; }
  std::uint64_t hash() const { return hash_; }
  bool at_end() const { return eof_; }

 private:
  [[noreturn]] void too_long() const {
    fail(source_, number_ + 1,
         fmt::format("a line longer than {}: not a trace (a binary or corrupt file?)",
                     input_file::format_limit(kMaxTraceLineBytes)));
  }
  bool finish_line(std::string& line) {
    if (number_ == std::numeric_limits<int>::max()) {
      fail(source_, number_,
           fmt::format("more than {} lines: over the limit for a trace file", number_));
    }
    trim_trace_line(line, ++number_);
    return true;
  }

  std::string source_;
  std::vector<char> buffer_;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
  std::int64_t offset_ = 0;
  bool eof_ = false;
  std::string pending_;
  int number_ = 0;
  std::uint64_t hash_ = kHashSeed;
};

// Reads up to kTraceBlockBytes at `offset` (pread, retried until full or at the end).
std::size_t read_full_block(int fd, char* buffer, std::int64_t offset, const std::string& path,
                            int line) {
  std::size_t got = 0;
  while (got < kTraceBlockBytes) {
    const ssize_t n = ::pread(fd, buffer + got, kTraceBlockBytes - got,
                              static_cast<off_t>(offset + static_cast<std::int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, line, "read error: " + std::string(strerror(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::int64_t mtime_ns(const struct stat& info) {
  return static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
         static_cast<std::int64_t>(info.st_mtim.tv_nsec);
}

// Closes a descriptor on every path out.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<TraceRequest> parse_trace(std::istream& in, const std::string& source_name,
                                      TraceFormat format, double time_scale) {
  check_time_scale(source_name, time_scale);
  LineReader lines(in);
  RowParser parser(source_name, format);
  ArrivalClock clock(source_name, time_scale, /*defer=*/true);
  std::vector<TraceRequest> requests;
  std::string line;
  RawRequest raw;
  while (lines.next(line)) {
    if (parser.parse(line, lines.number(), raw)) requests.push_back(clock.next(raw));
  }
  parser.finish();
  if (in.bad()) fail(source_name, lines.number(), "read error: " + std::string(strerror(errno)));
  if (requests.empty()) fail(source_name, 0, "trace has no requests");
  clock.finish();
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

TraceSummary scan_trace(const std::string& path, TraceFormat format, double time_scale) {
  check_time_scale(path, time_scale);
  TraceSummary out;
  out.path = path;
  out.format = format;
  out.time_scale = time_scale;
  try {
    input_file::check(path, input_file::kStreamedTraceBytes, "trace file");
  } catch (const input_file::FileError& e) {
    fail(path, 0, e.what());
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    // A pipe (e.g. `<(zcat trace.csv.gz)`) can be read once: its requests stay in memory.
    auto held =
        std::make_shared<const std::vector<TraceRequest>>(read_trace(path, format, time_scale));
    out.rows = static_cast<std::int64_t>(held->size());
    out.last_arrival = held->back().arrival;
    out.held = std::move(held);
    return out;
  }
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) fail(path, 0, "cannot open trace file: " + std::string(strerror(errno)));
  if (::fstat(file.fd, &info) != 0)
    fail(path, 0, "cannot stat trace file: " + std::string(strerror(errno)));
  out.device = static_cast<std::uint64_t>(info.st_dev);
  out.inode = static_cast<std::uint64_t>(info.st_ino);
  out.mtime_ns = mtime_ns(info);

  BlockLines lines(path);
  RowParser parser(path, format);
  ArrivalClock clock(path, time_scale, /*defer=*/true);
  const auto read_block = [&](char* buffer, std::int64_t offset) {
    return read_full_block(file.fd, buffer, offset, path, lines.number());
  };
  std::string line;
  RawRequest raw;
  while (lines.next(line, read_block)) {
    if (!parser.parse(line, lines.number(), raw)) continue;
    out.last_arrival = clock.next(raw).arrival;
    ++out.rows;
  }
  parser.finish();
  if (out.rows == 0) fail(path, 0, "trace has no requests");
  clock.finish();
  out.bytes = lines.bytes();
  out.content_hash = lines.hash();
  return out;
}

// --- TraceCursor ------------------------------------------------------------------------------

struct TraceCursor::State {
  explicit State(const TraceSummary& s)
      : summary(s),
        lines(summary.path),
        parser(summary.path, summary.format),
        clock(summary.path, summary.time_scale, /*defer=*/false) {}
  TraceSummary summary;  // a copy: the cursor may outlive the resolved scenario's vector
  BlockLines lines;
  RowParser parser;
  ArrivalClock clock;
  std::string line;
  bool done = false;
};

TraceCursor::TraceCursor() = default;
TraceCursor::TraceCursor(TraceCursor&&) noexcept = default;
TraceCursor& TraceCursor::operator=(TraceCursor&&) noexcept = default;
TraceCursor::~TraceCursor() = default;

TraceCursor::TraceCursor(const TraceSummary& summary) {
  if (summary.rows == 0) return;
  if (summary.held) {
    held_ = summary.held;
    return;
  }
  TraceSummary copy = summary;
  copy.held.reset();
  state_ = std::make_unique<State>(copy);
}

namespace {

[[noreturn]] void changed(const TraceSummary& s, const std::string& what) {
  SourceLocation where;
  where.file = s.path;
  throw TraceChangedError(where, "the trace file changed after it was validated (" + what +
                                     "); the run stops rather than mix two versions: run again "
                                     "to use the new file");
}

}  // namespace

bool TraceCursor::next(TraceRequest& out) {
  if (held_) {
    if (next_ >= held_->size()) return false;
    out = (*held_)[next_++];
    return true;
  }
  if (!state_ || state_->done) return false;
  State& st = *state_;
  const TraceSummary& s = st.summary;
  // Each block is read through a fresh descriptor (no descriptor held between blocks: a run may
  // replay thousands of traces), after checking that the file is still the one validated.
  const auto read_block = [&s](char* buffer, std::int64_t offset) -> std::size_t {
    FileDescriptor file;
    file.fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0) changed(s, "cannot open it now: " + std::string(strerror(errno)));
    struct stat info {};
    if (::fstat(file.fd, &info) != 0)
      changed(s, "cannot stat it now: " + std::string(strerror(errno)));
    if (static_cast<std::uint64_t>(info.st_dev) != s.device ||
        static_cast<std::uint64_t>(info.st_ino) != s.inode) {
      changed(s, "it was replaced by another file");
    }
    if (info.st_size != s.bytes) {
      changed(s, std::to_string(s.bytes) + " bytes then, " + std::to_string(info.st_size) + " now");
    }
    if (mtime_ns(info) != s.mtime_ns) changed(s, "modified since");
    return read_full_block(file.fd, buffer, offset, s.path, 0);
  };
  RawRequest raw;
  while (true) {
    bool got = false;
    try {
      got = st.lines.next(st.line, read_block);
      if (got && !st.parser.parse(st.line, st.lines.number(), raw)) continue;
      if (got) {
        if (static_cast<std::int64_t>(next_) >= s.rows) {
          changed(s, "more than the " + std::to_string(s.rows) + " requests validated");
        }
        out = st.clock.next(raw);
      }
    } catch (const TraceChangedError&) {
      throw;
    } catch (const InputError& e) {
      changed(s, e.what());
    }
    if (!got) break;
    ++next_;
    return true;
  }
  st.done = true;
  if (static_cast<std::int64_t>(next_) != s.rows) {
    changed(s, std::to_string(next_) + " requests now, " + std::to_string(s.rows) + " validated");
  }
  if (st.lines.bytes() != s.bytes || st.lines.hash() != s.content_hash) {
    changed(s, "its content hash differs");
  }
  return false;
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
