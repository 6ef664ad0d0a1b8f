// Arrival traces read as a stream (issue 12 item 3; models/scenario/trace_reader.hpp): the
// resolver's scan_trace + the run's TraceCursor give exactly the rows and errors of the
// in-memory reader on random traces (several blocks, lines across block boundaries, CRLF, BOM,
// blank lines); a run reading its trace from the file equals the run from the rows in memory;
// a file changed between validation and run stops the run with one TraceChangedError.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/scenario/trace_reader.hpp"
#include "tests/support/identical_runs.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/gpumux-trace-XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A random trace in `format` with `rows` requests: random gaps (including zero gaps), tokens,
// blank lines, CRLF line ends, a BOM, an optional last line without '\n', long ignored columns
// (so that lines cross the cursor's block boundaries).
std::string random_trace(std::mt19937_64& rng, TraceFormat format, int rows,
                         std::int64_t max_tokens = 4000) {
  std::uniform_int_distribution<int> coin(0, 9);
  std::uniform_int_distribution<std::int64_t> gap_us(0, 5000);
  std::uniform_int_distribution<std::int64_t> tokens(0, max_tokens);
  const bool crlf = coin(rng) < 3;
  const std::string eol = crlf ? "\r\n" : "\n";
  std::ostringstream out;
  if (coin(rng) < 3) out << "\xEF\xBB\xBF";
  const std::int64_t base_us = 1'700'000'000'000;
  std::int64_t t_us = base_us + gap_us(rng);
  const int csv_kind = coin(rng) % 3;  // arrival (duration) / arrival_s / timestamp
  if (format == TraceFormat::csv) {
    out << (csv_kind == 0   ? "arrival"
            : csv_kind == 1 ? "arrival_s"
                            : "timestamp")
        << ",note,input_tokens,output_tokens" << eol;
  } else if (format == TraceFormat::azure_llm) {
    out << "TIMESTAMP,ContextTokens,GeneratedTokens" << eol;
  }
  for (int i = 0; i < rows; ++i) {
    if (coin(rng) == 0) out << eol;  // a blank line
    t_us += coin(rng) < 2 ? 0 : gap_us(rng);
    const std::int64_t in = tokens(rng);
    const std::int64_t gen = tokens(rng);
    if (format == TraceFormat::mooncake) {
      out << "{\"timestamp\": " << t_us / 1000 << ", \"input_length\": " << in
          << ", \"output_length\": " << gen << ", \"hash_ids\": [" << i << "]}";
    } else if (format == TraceFormat::azure_llm) {
      const std::int64_t s = (t_us - base_us) / 1'000'000 + 3600 * 18;
      char text[64];
      std::snprintf(text, sizeof text, "2023-11-%02lld %02lld:%02lld:%02lld.%06lld",
                    static_cast<long long>(16 + s / 86400), static_cast<long long>(s / 3600 % 24),
                    static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60),
                    static_cast<long long>(t_us % 1'000'000));
      out << text << "," << in << "," << gen;
    } else {
      const std::int64_t rel = t_us - base_us;
      if (csv_kind == 0) {
        out << rel << "us";
      } else {
        out << rel / 1'000'000 << "." << std::to_string(1'000'000 + rel % 1'000'000).substr(1);
      }
      const std::string note(static_cast<std::size_t>(coin(rng) * 40), 'x');
      out << (coin(rng) < 5 ? ",\"" + note + ", y\"," : "," + note + " ,") << in << "," << gen;
    }
    if (i + 1 < rows || coin(rng) < 7) out << eol;
  }
  return out.str();
}

// The InputError message of `call` ("" when it does not throw).
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<TraceRequest> drain(TraceCursor& cursor) {
  std::vector<TraceRequest> out;
  TraceRequest r;
  while (cursor.next(r)) out.push_back(r);
  return out;
}

bool same(const std::vector<TraceRequest>& a, const std::vector<TraceRequest>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].arrival != b[i].arrival || a[i].input_tokens != b[i].input_tokens ||
        a[i].output_tokens != b[i].output_tokens) {
      return false;
    }
  }
  return true;
}

TEST(TraceStream, CursorGivesTheInMemoryRowsOnRandomTraces) {
  TempDir dir;
  std::mt19937_64 rng(20261201);
  const TraceFormat formats[] = {TraceFormat::csv, TraceFormat::azure_llm, TraceFormat::mooncake};
  std::uniform_int_distribution<int> rows_of(1, 9000);  // up to ~13 blocks of 64 KiB
  for (int round = 0; round < 24; ++round) {
    const TraceFormat format = formats[round % 3];
    const int rows = round < 3 ? 1 : rows_of(rng);
    const std::string path = dir.file(fmt::format("t{}", round));
    write_file(path, random_trace(rng, format, rows));
    const double scale = round % 4 == 0 ? 0.37 : 1.0;
    const std::vector<TraceRequest> whole = read_trace(path, format, scale);
    ASSERT_EQ(whole.size(), static_cast<std::size_t>(rows)) << path;
    const TraceSummary summary = scan_trace(path, format, scale);
    EXPECT_EQ(summary.rows, rows);
    EXPECT_EQ(summary.last_arrival, whole.back().arrival);
    EXPECT_EQ(summary.bytes, static_cast<std::int64_t>(fs::file_size(path)));
    EXPECT_FALSE(summary.held);
    TraceCursor cursor(summary);
    EXPECT_TRUE(same(drain(cursor), whole)) << "round " << round;
    TraceRequest r;
    EXPECT_FALSE(cursor.next(r));  // stays at the end
    EXPECT_EQ(cursor.position(), static_cast<std::size_t>(rows));
  }
}

TEST(TraceStream, ScanReportsTheSameFirstErrorAsTheInMemoryReader) {
  TempDir dir;
  std::mt19937_64 rng(7);
  const TraceFormat formats[] = {TraceFormat::csv, TraceFormat::azure_llm, TraceFormat::mooncake};
  int compared = 0;
  for (int round = 0; round < 60; ++round) {
    const TraceFormat format = formats[round % 3];
    std::string text = random_trace(rng, format, 200);
    // Corrupt one or two random bytes (a digit, a separator, a quote, a newline...).
    const char junk[] = {'x', ',', '"', '\n', '-', '9', ' ', '{'};
    const int edits = 1 + round % 2;
    for (int e = 0; e < edits; ++e) {
      std::uniform_int_distribution<std::size_t> at(0, text.size() - 1);
      text[at(rng)] = junk[at(rng) % sizeof junk];
    }
    const std::string path = dir.file(fmt::format("c{}", round));
    write_file(path, text);
    const std::string expected = error_of([&] { read_trace(path, format); });
    EXPECT_EQ(error_of([&] { scan_trace(path, format); }), expected) << path;
    compared += !expected.empty();
  }
  EXPECT_GT(compared, 20);  // most corruptions are errors, and both report them alike
  // Order errors wait for the end of the file: a parse error further down is reported first,
  // as when every row was read before any was checked.
  const std::string path = dir.file("order-then-parse.csv");
  write_file(path, "arrival\n2ms\n1ms\nsoon\n");
  EXPECT_CONTAINS(error_of([&] { scan_trace(path, TraceFormat::csv); }),
                  "order-then-parse.csv:4: arrival: ");
  write_file(path, "arrival\n2ms\n1ms\n3ms\n");
  EXPECT_CONTAINS(error_of([&] { scan_trace(path, TraceFormat::csv); }),
                  "order-then-parse.csv:3: arrival goes back in time (1ms before the request on "
                  "line 2)");
}

// A streamed trace has no size limit, so a line is bounded instead: a line one byte over
// kMaxTraceLineBytes fails at its number, whether it ends in the first block, spans several or
// is the last (no newline); one of exactly that length is still read.
TEST(TraceStream, ALineLongerThanTheLimitFailsAtItsNumber) {
  TempDir dir;
  const std::string path = dir.file("long.csv");
  for (const bool last : {false, true}) {
    for (const std::size_t extra : {std::size_t{0}, std::size_t{1}}) {
      // Line 3 holds a quoted note of the length wanted, the whole line being N bytes.
      const std::string head = "arrival,note\n1ms,a\n";
      const std::size_t n = kMaxTraceLineBytes + extra;
      std::string line = "2ms,\"" + std::string(n - 6, 'x') + "\"";
      ASSERT_EQ(line.size(), n);
      write_file(path, head + line + (last ? "" : "\n3ms,b\n"));
      const std::string error = error_of([&] { scan_trace(path, TraceFormat::csv); });
      if (extra == 0) {
        EXPECT_EQ(error, "") << "last " << last;
        EXPECT_EQ(scan_trace(path, TraceFormat::csv).rows, last ? 2 : 3);
      } else {
        EXPECT_CONTAINS(error, "long.csv:3: a line longer than 1 MiB: not a trace");
      }
    }
  }
}

std::string trace_scenario(const std::string& trace, const std::string& format) {
  return "name: stream\nseed: 3\nduration: 4s\n"
         "gpus: [{name: gpu0, model: h100-sxm-80gb, sharing: {mode: mps}}]\n"
         "tenants:\n"
         "  - name: replay\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: trace, file: " +
         trace + ", format: " + format + ", time_scale: 0.5}\n" +
         "      request: {kernels: [{name: decode, duration: 20us, memory_bound: 0.5, "
         "repeat: output_tokens}]}\n" +
         "  - name: neighbour\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: poisson, rate: 300/s}\n"
         "      request: {kernels: [{name: k, duration: {lognormal: {median: 1ms, sigma: "
         "0.5}}}]}\n";
}

TEST(TraceStream, RunFromTheFileEqualsRunFromMemoryOnRandomTraces) {
  TempDir dir;
  std::mt19937_64 rng(99);
  for (int round = 0; round < 4; ++round) {
    const TraceFormat format = round % 2 ? TraceFormat::mooncake : TraceFormat::csv;
    const std::string text = random_trace(rng, format, 3000, 40);
    const std::string file = dir.file(fmt::format("r{}", round));
    write_file(file, text);
    const std::string name = trace_format_name(format);
    const ResolvedScenario streamed =
        resolve_scenario(load_scenario_text(trace_scenario(file, name), "s.yaml"));
    ASSERT_FALSE(streamed.traces[0].held);
    const RunResult a = simulate(streamed);
    // The same rows held in memory (as every run did before issue 12 item 3).
    ResolvedScenario held = streamed;
    const std::vector<TraceRequest> rows = read_trace(file, format, 0.5);
    held.traces[0].held = std::make_shared<const std::vector<TraceRequest>>(rows);
    const RunResult b = simulate(held);
    ASSERT_GT(a.requests.size(), 100u);
    testing::expect_identical_runs(a, b, fmt::format("round {}", round));
    // The replayed tenant's arrivals are the trace's, in order, up to `duration`.
    std::size_t k = 0;
    for (const RequestRecord& r : a.requests) {
      if (r.tenant != 0) continue;
      ASSERT_LT(k, rows.size());
      EXPECT_EQ(r.arrival_ns, rows[k].arrival);
      ++k;
    }
    std::size_t within = 0;
    for (const TraceRequest& q : rows) within += q.arrival < 4'000'000'000;
    EXPECT_EQ(k, within);
  }
}

TEST(TraceStream, UnquotedRowsSplitAsQuotedOnes) {
  // Rows without a quote are split in place, others by split_csv_line: the same fields.
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> value(0, 99999);
  std::uniform_int_distribution<int> pad(0, 2);
  std::string plain = "arrival_s , input_tokens,note,output_tokens\n";
  std::string quoted = plain;
  for (int i = 0; i < 500; ++i) {
    const std::string spaces(static_cast<std::size_t>(pad(rng)), ' ');
    const std::string fields[] = {fmt::format("{}.{}", i, value(rng)), std::to_string(value(rng)),
                                  fmt::format("n{}", i), std::to_string(value(rng))};
    for (int f = 0; f < 4; ++f) {
      plain += spaces + fields[f] + spaces + (f < 3 ? "," : "\n");
      quoted += spaces + "\"" + fields[f] + "\"" + spaces + (f < 3 ? "," : "\n");
    }
  }
  std::istringstream a(plain);
  std::istringstream b(quoted);
  EXPECT_TRUE(
      same(parse_trace(a, "plain", TraceFormat::csv), parse_trace(b, "quoted", TraceFormat::csv)));
  std::istringstream c(plain + "1000.5,1,2\n");
  EXPECT_CONTAINS(error_of([&] { parse_trace(c, "plain", TraceFormat::csv); }),
                  "plain:502: expected 4 fields (as in the header), got 3");
}

// Sets a file's modification time back to `mtime_ns` (a change that tries to hide).
void set_mtime(const std::string& path, std::int64_t mtime_ns) {
  const timespec t{static_cast<time_t>(mtime_ns / 1'000'000'000),
                   static_cast<long>(mtime_ns % 1'000'000'000)};
  const timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(TraceStream, AFileChangedAfterValidationStopsTheCursor) {
  TempDir dir;
  std::mt19937_64 rng(5);
  const std::string path = dir.file("t.csv");
  const std::string text = random_trace(rng, TraceFormat::csv, 6000);  // several blocks
  const auto changed_error = [&](const TraceSummary& summary) {
    TraceCursor cursor(summary);
    try {
      drain(cursor);
    } catch (const TraceChangedError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Appended rows, a truncated file, a replaced file: refused at the next block read.
  write_file(path, text);
  TraceSummary summary = scan_trace(path, TraceFormat::csv);
  write_file(path, text + "99999s,a,1,1\n");
  EXPECT_CONTAINS(changed_error(summary), "t.csv: the trace file changed after it was validated");
  write_file(path, text);
  summary = scan_trace(path, TraceFormat::csv);
  write_file(path, text.substr(0, text.size() / 2));
  EXPECT_CONTAINS(changed_error(summary), "bytes then");
  write_file(path, text);
  summary = scan_trace(path, TraceFormat::csv);
  std::string other = text;  // the same size, one digit changed
  const std::size_t first_digit = other.find_first_of("0123456789", other.find('\n'));
  other[first_digit] = other[first_digit] == '1' ? '2' : '1';
  fs::remove(path);
  write_file(path, other);  // a new file (the inode number may be reused, the mtime coarse)
  const std::string replaced = changed_error(summary);
  EXPECT_TRUE(replaced.find("replaced by another file") != std::string::npos ||
              replaced.find("modified since") != std::string::npos ||
              replaced.find("content hash differs") != std::string::npos)
      << replaced;
  write_file(path, text);
  // Same size, the modification time set back: the content hash at the end sees it.
  summary = scan_trace(path, TraceFormat::csv);
  std::string edited = text;
  const std::size_t digit = edited.find_last_of("0123456789");
  edited[digit] = edited[digit] == '1' ? '2' : '1';
  write_file(path, edited);
  set_mtime(path, summary.mtime_ns);
  EXPECT_CONTAINS(changed_error(summary), "its content hash differs");
  // Unchanged: no error, and the summary's fingerprint is stable.
  write_file(path, text);
  summary = scan_trace(path, TraceFormat::csv);
  EXPECT_EQ(changed_error(summary), "");
  EXPECT_EQ(scan_trace(path, TraceFormat::csv).content_hash, summary.content_hash);
}

TEST(TraceStream, ARunOnAChangedTraceFailsWithOneLine) {
  TempDir dir;
  std::mt19937_64 rng(11);
  const std::string path = dir.file("t.csv");
  const std::string text = random_trace(rng, TraceFormat::csv, 3000, 40);
  write_file(path, text);
  const ResolvedScenario resolved =
      resolve_scenario(load_scenario_text(trace_scenario(path, "csv"), "s.yaml"));
  write_file(path, text.substr(0, text.size() - 10));  // truncated after validation
  try {
    simulate(resolved);
    FAIL() << "the run used a changed trace";
  } catch (const TraceChangedError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_CONTAINS(message, path + ": the trace file changed after it was validated");
  }
}

}  // namespace
}  // namespace gpumux
