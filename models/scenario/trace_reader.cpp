#include "models/scenario/trace_reader.hpp"

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

namespace gpumux {
namespace {

using namespace trace_fields;  // NOLINT(google-build-using-namespace): the field parsers

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
