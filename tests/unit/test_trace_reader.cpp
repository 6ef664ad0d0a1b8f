// Trace readers (models/scenario/trace_reader.hpp): csv, azure-llm, mooncake; corrupt input.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>

#include "models/scenario/trace_reader.hpp"

namespace gpumux {
namespace {

const std::string kTraces = std::string(GPUMUX_SOURCE_DIR) + "/tests/data/traces/";

std::vector<Nanos> arrivals(const std::vector<TraceRequest>& trace) {
  std::vector<Nanos> out;
  for (const auto& r : trace) out.push_back(r.arrival);
  return out;
}

std::vector<TraceRequest> parse(const std::string& text, TraceFormat format,
                                double time_scale = 1.0) {
  std::istringstream in(text);
  return parse_trace(in, "mem.trace", format, time_scale);
}

// The message of the InputError that parsing `text` throws ("" when it does not throw).
std::string parse_error(const std::string& text, TraceFormat format, double time_scale = 1.0) {
  try {
    parse(text, format, time_scale);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string read_error(const std::string& path, TraceFormat format) {
  try {
    read_trace(path, format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

TEST(TraceReader, CsvWithDurationsAndTokens) {
  const auto trace = read_trace(kTraces + "small.csv", TraceFormat::csv);
  ASSERT_EQ(trace.size(), 4u);  // the blank line is skipped
  EXPECT_EQ(arrivals(trace), (std::vector<Nanos>{0, 1'500'000, 1'500'000, 4'000'000}));
  EXPECT_EQ(trace[1].input_tokens, 200);
  EXPECT_EQ(trace[3].output_tokens, 5);
}

TEST(TraceReader, TimeScaleMultipliesInterArrivalTimes) {
  const auto trace = read_trace(kTraces + "small.csv", TraceFormat::csv, 0.5);
  EXPECT_EQ(arrivals(trace), (std::vector<Nanos>{0, 750'000, 750'000, 2'000'000}));
  const auto slow = read_trace(kTraces + "small.csv", TraceFormat::csv, 3.0);
  EXPECT_EQ(slow.back().arrival, 12'000'000);
}

TEST(TraceReader, CsvPlainSecondsAreExactToTheNanosecond) {
  // 100.250000001 s as a double is 100.25000000099999; the reader parses decimals exactly.
  const auto trace = read_trace(kTraces + "seconds.csv", TraceFormat::csv);
  EXPECT_EQ(arrivals(trace), (std::vector<Nanos>{0, 1, 750'000'000}));
  EXPECT_EQ(trace[0].input_tokens, 0);  // no token columns -> 0

  const auto stamped = parse("timestamp,output_tokens\n5,1\n5.5,2\n1e1,3\n", TraceFormat::csv);
  EXPECT_EQ(arrivals(stamped), (std::vector<Nanos>{0, 500'000'000, 5'000'000'000}));
  EXPECT_EQ(stamped[2].output_tokens, 3);
}

TEST(TraceReader, CsvQuotedFieldsAndUnknownColumns) {
  const auto trace =
      parse("note,arrival\n\"a, b\",1ms\n\"say \"\"hi\"\"\",3ms\n", TraceFormat::csv);
  EXPECT_EQ(arrivals(trace), (std::vector<Nanos>{0, 2'000'000}));
}

TEST(TraceReader, AzureLlmCalendarTimesAcrossMidnight) {
  const auto trace = read_trace(kTraces + "azure_small.csv", TraceFormat::azure_llm);
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(trace[0].arrival, 0);
  EXPECT_EQ(trace[1].arrival, 4'314'579'000);  // 18:15:50.9951690 - 18:15:46.6805900
  // 23:59:59.9999999 - 18:15:46.6805900 = 5h44m13.3194099s; then 200 ns later, the next day.
  EXPECT_EQ(trace[2].arrival, 20'653'319'409'900);
  EXPECT_EQ(trace[3].arrival, 20'653'319'410'100);
  EXPECT_EQ(trace[0].input_tokens, 374);
  EXPECT_EQ(trace[1].output_tokens, 109);
}

TEST(TraceReader, MooncakeMillisecondTimestamps) {
  const auto trace = read_trace(kTraces + "mooncake_small.jsonl", TraceFormat::mooncake);
  EXPECT_EQ(arrivals(trace), (std::vector<Nanos>{0, 3'053'000'000, 3'053'500'000}));
  EXPECT_EQ(trace[0].input_tokens, 6955);
  EXPECT_EQ(trace[1].output_tokens, 26);
}

TEST(TraceReader, FormatNames) {
  EXPECT_EQ(parse_trace_format("csv"), TraceFormat::csv);
  EXPECT_EQ(parse_trace_format("azure-llm"), TraceFormat::azure_llm);
  EXPECT_EQ(parse_trace_format("azure_llm"), TraceFormat::azure_llm);
  EXPECT_EQ(parse_trace_format("mooncake"), TraceFormat::mooncake);
  EXPECT_THROW(parse_trace_format("parquet"), std::invalid_argument);
  for (const auto f : {TraceFormat::csv, TraceFormat::azure_llm, TraceFormat::mooncake}) {
    EXPECT_EQ(parse_trace_format(trace_format_name(f)), f);
  }
}

TEST(TraceReaderErrors, FilesNameThePathAndLine) {
  EXPECT_CONTAINS(read_error(kTraces + "unsorted.csv", TraceFormat::csv),
                  "unsorted.csv:4: arrival goes back in time (500ms before the request on line 3)");
  EXPECT_CONTAINS(read_error(kTraces + "corrupt.jsonl", TraceFormat::mooncake),
                  "corrupt.jsonl:2: not a JSON object");
  EXPECT_CONTAINS(read_error(kTraces + "empty.csv", TraceFormat::csv),
                  "empty.csv: empty trace file");
  EXPECT_CONTAINS(read_error(kTraces + "no-such.csv", TraceFormat::csv),
                  "no-such.csv: cannot open trace file: No such file or directory");
  // A file in the wrong format names the header line.
  EXPECT_CONTAINS(read_error(kTraces + "small.csv", TraceFormat::azure_llm),
                  "small.csv:1: azure-llm trace needs the columns TIMESTAMP,ContextTokens");
}

TEST(TraceReaderErrors, CorruptCsv) {
  EXPECT_CONTAINS(parse_error("id,size\n1,2\n", TraceFormat::csv),
                  "mem.trace:1: csv trace needs a header with a column 'arrival'");
  EXPECT_CONTAINS(parse_error("arrival,input_tokens\n1ms,12\n2ms,abc\n", TraceFormat::csv),
                  "mem.trace:3: input_tokens: expected a non-negative integer, got 'abc'");
  EXPECT_CONTAINS(parse_error("arrival,input_tokens\n1ms,-3\n", TraceFormat::csv),
                  "mem.trace:2: input_tokens: expected a non-negative integer, got '-3'");
  EXPECT_CONTAINS(parse_error("arrival\n\n5\n", TraceFormat::csv),
                  "mem.trace:3: arrival: missing unit, e.g. 2ms, got '5'");
  EXPECT_CONTAINS(parse_error("arrival_s\n1.5x\n", TraceFormat::csv),
                  "mem.trace:2: arrival_s: expected plain seconds (e.g. 1.25), got '1.5x'");
  EXPECT_CONTAINS(parse_error("arrival,output_tokens\n1ms,1\n2ms\n", TraceFormat::csv),
                  "mem.trace:3: expected 2 fields (as in the header), got 1");
  EXPECT_CONTAINS(parse_error("arrival\n\"1ms\n", TraceFormat::csv),
                  "mem.trace:2: unterminated quoted field");
  EXPECT_CONTAINS(parse_error("arrival,input_tokens\n", TraceFormat::csv),
                  "mem.trace: trace has no requests");
  EXPECT_CONTAINS(parse_error("\n\n", TraceFormat::csv), "mem.trace: empty trace file");
  EXPECT_CONTAINS(parse_error("arrival\n1ms\n", TraceFormat::csv, 0.0),
                  "time_scale must be a finite number > 0");
}

TEST(TraceReaderErrors, CorruptAzureLlm) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_CONTAINS(parse_error(header + "2023-11-16 18:15:46.68,1,1\n2023-11-16 18:15,1,1\n",
                              TraceFormat::azure_llm),
                  "mem.trace:3: TIMESTAMP: too short in '2023-11-16 18:15'");
  EXPECT_CONTAINS(parse_error(header + "2023-13-16 18:15:46,1,1\n", TraceFormat::azure_llm),
                  "mem.trace:2: TIMESTAMP: field out of range");
  EXPECT_CONTAINS(parse_error(header + "16/11/2023 18:15:46,1,1\n", TraceFormat::azure_llm),
                  "mem.trace:2: TIMESTAMP: not a date and time");
  EXPECT_CONTAINS(parse_error(header + "2023-11-16 18:15:46.5,x,1\n", TraceFormat::azure_llm),
                  "mem.trace:2: ContextTokens: expected a non-negative integer, got 'x'");
  EXPECT_CONTAINS(parse_error(header + "2023-11-16 18:15:46,1,1\n2023-11-16 18:15:45,1,1\n",
                              TraceFormat::azure_llm),
                  "mem.trace:3: arrival goes back in time (1s before the request on line 2)");
}

TEST(TraceReaderErrors, CorruptMooncake) {
  EXPECT_CONTAINS(parse_error("{\"timestamp\": 1, \"output_length\": 2}\n", TraceFormat::mooncake),
                  "mem.trace:1: missing field 'input_length'");
  EXPECT_CONTAINS(
      parse_error("{\"input_length\": 1, \"output_length\": 2}\n", TraceFormat::mooncake),
      "mem.trace:1: missing field 'timestamp'");
  EXPECT_CONTAINS(parse_error("{\"timestamp\": \"soon\", \"input_length\": 1, "
                              "\"output_length\": 2}\n",
                              TraceFormat::mooncake),
                  "mem.trace:1: timestamp: expected milliseconds, got \"soon\"");
  EXPECT_CONTAINS(parse_error("{\"timestamp\": 1, \"input_length\": -1, \"output_length\": 2}\n",
                              TraceFormat::mooncake),
                  "mem.trace:1: input_length: expected a non-negative integer, got -1");
  EXPECT_CONTAINS(parse_error("[1, 2]\n", TraceFormat::mooncake),
                  "mem.trace:1: expected a JSON object per line");
  EXPECT_CONTAINS(parse_error("\n", TraceFormat::mooncake), "mem.trace: trace has no requests");
}

// The public traces, copied unchanged into tests/data/traces (SOURCE.md there).
TEST(TraceReaderPublicData, RealAzureAndMooncakeTraces) {
  const std::string& shared = kTraces;

  const auto code = read_trace(shared + "azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv",
                               TraceFormat::azure_llm);
  ASSERT_EQ(code.size(), 8819u);
  EXPECT_EQ(code.front().arrival, 0);
  // 19:14:19.9280160 - 18:17:03.9799600
  EXPECT_EQ(code.back().arrival, 3'435'948'056'000);
  EXPECT_EQ(code.back().input_tokens, 549);
  EXPECT_EQ(code.back().output_tokens, 173);
  const auto sum_input =
      std::accumulate(code.begin(), code.end(), std::int64_t{0},
                      [](std::int64_t s, const auto& r) { return s + r.input_tokens; });
  EXPECT_EQ(sum_input, 18'059'974);

  const auto conv = read_trace(shared + "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv",
                               TraceFormat::azure_llm);
  ASSERT_EQ(conv.size(), 19366u);
  EXPECT_EQ(conv.back().arrival, 3'501'721'937'000);  // 19:14:08.4025270 - 18:15:46.6805900

  const auto mooncake =
      read_trace(shared + "mooncake-fast25/conversation_trace.jsonl", TraceFormat::mooncake);
  ASSERT_EQ(mooncake.size(), 12031u);
  EXPECT_EQ(mooncake.back().arrival, 3'536'999'000'000);
  const auto sum_output =
      std::accumulate(mooncake.begin(), mooncake.end(), std::int64_t{0},
                      [](std::int64_t s, const auto& r) { return s + r.output_tokens; });
  EXPECT_EQ(sum_output, 4'122'048);

  const auto synthetic =
      read_trace(shared + "mooncake-fast25/synthetic_trace.jsonl", TraceFormat::mooncake, 0.001);
  ASSERT_EQ(synthetic.size(), 3993u);
  EXPECT_EQ(synthetic.back().arrival, 1'022'025'000);  // 1022025 ms scaled by 1/1000
}

// Issue 13 (checked arithmetic): values that would overflow int64 nanoseconds or exceed the token
// maximum are one-line errors naming the file and line, never wrapped numbers.
TEST(TraceReader, OutOfRangeValuesAreErrorsWithTheLine) {
  // Dates beyond int64 ns since 1970 (1677..2262): the year 0001 and 9999.
  EXPECT_EQ(parse_error("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                        "0001-01-01 00:00:00,1,1\n",
                        TraceFormat::azure_llm),
            "mem.trace:2: TIMESTAMP: date out of range (gpumux times reach from 1677 to 2262) in "
            "'0001-01-01 00:00:00' (expected YYYY-MM-DD HH:MM:SS.fffffff)");
  EXPECT_CONTAINS(parse_error("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                              "9999-12-31 23:59:59,1,1\n",
                              TraceFormat::azure_llm),
                  "mem.trace:2: TIMESTAMP: date out of range");
  // Two in-range dates whose difference overflows (2262 - 1677 > 292 years).
  EXPECT_CONTAINS(parse_error("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                              "1678-01-01 00:00:00,1,1\n2261-12-31 00:00:00,1,1\n",
                              TraceFormat::azure_llm),
                  "mem.trace:3: arrival out of range: the time since the first request overflows");
  // time_scale: 1e10 on a 4 s trace: 4e19 ns.
  EXPECT_CONTAINS(parse_error("arrival\n0s\n4s\n", TraceFormat::csv, 1e10),
                  "mem.trace:3: arrivals.time_scale 1e+10 puts this arrival out of range: "
                  "4e+19ns is out of range");
  // mooncake: a number beyond a double (nlohmann's out_of_range.406), tokens beyond 1e9.
  EXPECT_CONTAINS(parse_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n"
                              "{\"timestamp\": 1e400, \"input_length\": 1, \"output_length\": 1}\n",
                              TraceFormat::mooncake),
                  "mem.trace:2: a number out of range (beyond a double): "
                  "[json.exception.out_of_range.406]");
  EXPECT_EQ(parse_error("{\"timestamp\": 0, \"input_length\": 1000000001, \"output_length\": 1}\n",
                        TraceFormat::mooncake),
            "mem.trace:1: input_length: 1000000001 is more than the most tokens a request may have "
            "(1000000000)");
  EXPECT_EQ(parse_error("arrival,input_tokens\n0s,5000000000\n", TraceFormat::csv),
            "mem.trace:2: input_tokens: 5000000000 is more than the most tokens a request may have "
            "(1000000000)");
  // The maximum itself is accepted.
  EXPECT_EQ(parse("arrival,input_tokens\n0s,1000000000\n", TraceFormat::csv)[0].input_tokens,
            kMaxTokens);
}

}  // namespace
}  // namespace gpumux
