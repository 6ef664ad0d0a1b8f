#pragma once
// Request-arrival traces: a file of timestamped requests -> arrival times in integer nanoseconds
// relative to the first request, for `arrivals: {process: trace, file: ..., format: ...}`.
//
// Formats (TraceFormat, models/workload/workload_spec.hpp):
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
// arrival(i) = round((t_i - t_0) * time_scale) in ns.
//
// Two ways to read one (issue 12 item 3: a trace is read as a stream, not held in memory):
//   scan_trace + TraceCursor  what resolve and the run use. scan_trace checks every row once
//              (linear in the file, O(1) memory) and keeps a TraceSummary: the row count, the
//              last arrival and the file's fingerprint (device, inode, size, mtime, a 64-bit
//              content hash). A TraceCursor then reads the rows again, one at a time, in blocks
//              of kTraceBlockBytes (its whole memory; no file descriptor held between blocks),
//              and throws TraceChangedError when the file is no longer the one checked: another
//              size, mtime or inode at any block, another row count or content hash at the end.
//              A scenario's trace is a regular file (the loader refuses others); should
//              scan_trace be given a pipe, which can be read only once, it keeps the rows in
//              memory (24 bytes per request, within kMaxTraceBytes) and the cursor walks them.
//   read_trace / parse_trace  the whole trace as a vector (tests, tools).
// All of them parse with the same code and report the same first error.
// Every failure throws InputError "PATH:LINE: message" (line 1-based; no line for open errors).
#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
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

/// The cursor's read size: its buffer, and the unit the content hash is computed over.
inline constexpr std::size_t kTraceBlockBytes = std::size_t{64} << 10;
/// The longest line a streamed trace may have: 1 MiB. The longest rows of the public traces
/// are a few KB (source: Mooncake FAST'25 conversation_trace.jsonl 2,053 B and
/// synthetic_trace.jsonl 2,698 B, https://github.com/kvcache-ai/Mooncake; Azure LLM inference
/// 2023 csv rows under 100 B, https://github.com/Azure/AzurePublicDataset), so a longer line is
/// a binary or corrupt file, refused at its first block.
inline constexpr std::size_t kMaxTraceLineBytes = std::size_t{1} << 20;

/// What resolve keeps of a checked trace file (scan_trace): O(1) memory except for a pipe.
struct TraceSummary {
  std::string path;
  TraceFormat format = TraceFormat::csv;
  double time_scale = 1.0;
  std::int64_t rows = 0;   ///< requests in the trace (0: no trace)
  Nanos last_arrival = 0;  ///< the last request's arrival, ns after the first
  /// The fingerprint of the file as checked (regular files).
  std::int64_t bytes = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t content_hash = 0;
  /// The requests in memory (a pipe, which cannot be read twice; tests comparing with the
  /// streamed rows); null for a regular file, which the cursor reads again.
  std::shared_ptr<const std::vector<TraceRequest>> held;
};

/// Checks every row of a trace file and returns its summary. Throws InputError exactly as
/// read_trace does for the same file (the first parse error; then an empty trace; then the first
/// order or range error). Cost: one pass, linear in the file, O(1) memory for a regular file.
TraceSummary scan_trace(const std::string& path, TraceFormat format, double time_scale = 1.0);

/// The trace file changed between scan_trace and the run: "PATH: the trace file changed after
/// it was validated (WHAT); ..." (one line, exit 2 like any InputError).
class TraceChangedError : public InputError {
 public:
  using InputError::InputError;
};

/// The requests of a scanned trace, in order, read from the file as they are asked for.
/// Memory: one block (kTraceBlockBytes) and the current line; per request a csv split or a JSON
/// parse, as in scan_trace. Move-only.
class TraceCursor {
 public:
  TraceCursor();  ///< no trace: next() is false
  explicit TraceCursor(const TraceSummary& summary);
  TraceCursor(TraceCursor&&) noexcept;
  TraceCursor& operator=(TraceCursor&&) noexcept;
  ~TraceCursor();

  /// The next request into `out`; false after the last one. Throws TraceChangedError when the
  /// file differs from the one scanned (checked at every block read and, at the end, the row
  /// count and content hash: a change in a part of the file the run never reads, keeping size,
  /// inode and mtime, is not seen, and does not affect the run).
  bool next(TraceRequest& out);
  /// Requests returned so far.
  std::size_t position() const { return next_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::shared_ptr<const std::vector<TraceRequest>> held_;
  std::size_t next_ = 0;
};

/// "csv" | "azure-llm" | "mooncake" (also "azure_llm", "azure"). Throws std::invalid_argument
/// listing the known names.
TraceFormat parse_trace_format(const std::string& name);

/// The canonical name ("csv", "azure-llm", "mooncake").
const char* trace_format_name(TraceFormat format);

}  // namespace gpumux
