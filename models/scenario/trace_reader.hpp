#pragma once
// Request-arrival traces: a file of timestamped requests -> arrival times in integer nanoseconds
// relative to the first request, for `arrivals: {process: trace, file: ..., format: ...}`.
//
// Formats (TraceFormat, scenario.hpp):
//   csv        a header row, then one request per row. The time column is `arrival` (a duration
//              with a unit per row: "1.5ms"), `arrival_s` or `timestamp` (plain seconds). Optional
//              `input_tokens`, `output_tokens` (integers). Other columns are ignored.
//   azure-llm  Azure LLM inference trace 2023: `TIMESTAMP,ContextTokens,GeneratedTokens`, with
//              TIMESTAMP like "2023-11-16 18:15:46.6805900" (UTC calendar time; converted to ns
//              exactly, no time-zone or leap-second handling).
//   mooncake   Mooncake (FAST'25) JSON lines: {"timestamp": MS, "input_length": N,
//              "output_length": N, ...} with timestamp in milliseconds; other fields ignored.
// Blank lines are skipped. Times must be non-decreasing (a trace is a log, not a set); the
// readers refuse an unsorted trace rather than silently reorder it.
//
// arrival(i) = round((t_i - t_0) * time_scale) in ns. Cost: linear in the file size; one pass,
// the whole trace in memory (24 bytes per request).
// Every failure throws InputError "PATH:LINE: message" (line 1-based; no line for open errors).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace gpumux {

/// One request of a trace.
struct TraceRequest {
  Nanos arrival = 0;               ///< ns after the first request of the trace (first = 0)
  std::int64_t input_tokens = 0;   ///< prompt / context tokens; 0 when the trace has none
  std::int64_t output_tokens = 0;  ///< generated tokens; 0 when the trace has none
};

/// Reads a trace file. `time_scale` (> 0) multiplies every inter-arrival time (0.5 = twice the
/// load). Throws InputError for an unreadable, empty, corrupt or unsorted file.
std::vector<TraceRequest> read_trace(const std::string& path, TraceFormat format,
                                     double time_scale = 1.0);

/// As read_trace, from a stream; `source_name` is used in error messages.
std::vector<TraceRequest> parse_trace(std::istream& in, const std::string& source_name,
                                      TraceFormat format, double time_scale = 1.0);

/// "csv" | "azure-llm" | "mooncake" (also "azure_llm", "azure"). Throws std::invalid_argument
/// listing the known names.
TraceFormat parse_trace_format(const std::string& name);

/// The canonical name ("csv", "azure-llm", "mooncake").
const char* trace_format_name(TraceFormat format);

}  // namespace gpumux
