#pragma once
// Writing and reading results: JSON summary (SPEC §4), text summary table, CSV, HDF5 file
// (SPEC §5). Every per-tenant and per-device column comes from the metric table
// (models/output/metric_table.hpp). Files: summary_json.cpp (JSON), text_tables.cpp (tables, CSV,
// SLO messages), result_h5.cpp (HDF5 layout and reading back), text_format.cpp (units). JSON
// objects are nlohmann::ordered_json so tenants and devices keep the scenario's order in
// `--json` output, in the HDF5 /summary string and in `gpumux report`.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/run/recorder.hpp"
#include "models/run/result.hpp"
#include "models/run/slo.hpp"

namespace gpumux {

/// The SPEC §4 summary object (plus "strategy" when set, tenant gpu_seconds/cost and device
/// sharing). Keys in insertion order. Cost: O(tenants + devices).
nlohmann::ordered_json summary_json(const RunResult& result);

/// The summary's "percentiles" object: {"mode", "method"} and, when a sketch was used,
/// "relative_error" and "sketched_series" of "series" (docs/metrics.md). O(1).
nlohmann::ordered_json percentiles_json(const PercentileProvenance& p);

/// Human-readable header line plus per-tenant and per-device tables (what `gpumux run` prints).
/// Equal to summary_table_from_json(summary_json(result)). Cost: O(tenants + devices).
std::string summary_table(const RunResult& result);

/// Side-by-side table for `gpumux compare`: one block per tenant, one column per strategy
/// (p50, p99, throughput, slowdown, failed, OOMs), then SM busy per strategy and device.
/// Equal to compare_table_from_json of the results' summaries.
std::string compare_table(const std::vector<RunResult>& results);

/// One CSV table, one row per tenant of each summary; units in the column names (the metric
/// table's `csv` names, device columns prefixed device_). with_strategy adds a strategy column
/// (compare runs, compare files).
std::string summaries_csv(const std::vector<nlohmann::ordered_json>& summaries, bool with_strategy);

/// One line per check of SLOS not shown met, values in the tables' units: "SLO missed: chat
/// p99 117 ms > target 100 ms (95% CI [109 ms, 125 ms] from 2000 samples)", or "SLO
/// inconclusive: chat p99 95 ms, target 100 ms: the 95% CI [88 ms, -] from 120 samples has no
/// upper bound (lengthen duration)". PREFIX goes before the tenant name (compare: "[mps] ");
/// CONFIDENCE is the run's level (RunResult::percentiles.confidence).
std::vector<std::string> slo_miss_messages(const std::vector<TenantSlo>& slos,
                                           const std::string& prefix = "",
                                           double confidence = kDefaultConfidence);

/// Writes the HDF5 file (layout in models/output/result_h5.cpp and docs/metrics.md): root
/// attributes, /summary (JSON string), /requests, /tenants, /tenant_names, /devices, /slos,
/// /events, /timeseries/<device>, /kernels (when present). Written to PATH.tmp.PID then renamed, so
/// a reader never sees a half-written file. Throws std::runtime_error on I/O failure (the temporary
/// file is removed). Cost: O(records), one chunk of extra memory.
void write_result_h5(const std::string& path, const RunResult& result);

/// Chunks of streamed records that may wait for StreamedResultFile's writer thread (each 4,096
/// rows: 148 KiB of requests, 160 KiB of kernels); the run blocks when they are all taken.
inline constexpr std::size_t kStreamQueueChunks = 8;

/// A result file written while the run goes, for `gpumux run -o`: attached as an observer
/// (RunControl::observers, with record_requests and record_kernels off), it appends every
/// request record (and with `kernels`, output.kernels' kernel records) to /requests (/kernels)
/// chunk by chunk as the run reports them; finish() writes the rest of the layout of
/// write_result_h5 (the same datasets, types and attributes; a reader cannot tell the two
/// apart). The file is PATH.tmp.PID (check_output_target's rules, registered for the signal
/// handlers) until finish() renames it, so PATH is never half-written; destroyed unfinished (a
/// failed run), the temporary file is removed.
///
/// Cost on the run's thread: packing one 37-byte row per request (40 per kernel); encoding
/// (shuffle + deflate) and writing run on one background thread, at most kStreamQueueChunks
/// chunks behind. Memory: about (kStreamQueueChunks + 2) chunks, whatever the run's length.
/// A write error during the run (disk full) stops the writing, not the run: finish() reports it.
class StreamedResultFile final : public Recorder {
 public:
  /// Checks PATH and creates the temporary file with its (empty) record tables. Throws
  /// OutputError ("PATH: why" for a refused target, "cannot write PATH: why").
  StreamedResultFile(const std::string& path, bool kernels);
  ~StreamedResultFile() override;
  StreamedResultFile(const StreamedResultFile&) = delete;
  StreamedResultFile& operator=(const StreamedResultFile&) = delete;

  void on_request_record(const RequestRecord& record) override;
  void on_kernel_completed(const KernelRecord& kernel) override;
  bool wants_arrivals() const override { return false; }
  bool wants_kernels() const override { return kernels_; }  // output.kernels
  bool wants_outcomes() const override { return false; }    // the rows only
  /// Request rows appended so far.
  std::uint64_t requests_written() const;
  /// Writes everything else of RESULT (its `requests` and `kernels` vectors are not written:
  /// the observed records were), closes, fsyncs and renames the file over PATH. Call once, after
  /// the run. Throws OutputError("cannot write PATH: why"); the temporary file is then removed.
  void finish(const RunResult& result);

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool kernels_;
};

/// The version written into result files (`gpumux_version` attribute): the CMake project's.
const char* gpumux_version();

/// A `compare` file written while its runs go, for `gpumux compare -o`: the layout of
/// write_results_h5 (a reader cannot tell the two apart). Attached as an observer of every run
/// (RunControl::observers, with record_requests and record_kernels off); begin_run(label) opens
/// the run's group /strategies/<label> ('/' -> '_'), into which its request (and, with
/// `kernels`, kernel) records are streamed chunk by chunk as by StreamedResultFile; end_run
/// writes the rest of that group after the run, so only the run in progress has anything
/// pending; finish() writes the root attributes (from the first result), the `strategies`
/// attribute and /summary (the JSON array of the summaries) and renames the file over PATH.
/// The file is PATH.tmp.PID until then (registered for the signal handlers); destroyed
/// unfinished, the temporary file is removed.
///
/// Cost and memory as StreamedResultFile's: about (kStreamQueueChunks + 2) chunks, whatever the
/// runs' lengths and number. A write error (disk full) stops the writing, not the runs: later
/// calls write nothing and finish() reports it.
class StreamedCompareFile final : public Recorder {
 public:
  /// Checks PATH and creates the temporary file. Throws OutputError ("PATH: why" for a refused
  /// target, "cannot write PATH: why").
  StreamedCompareFile(const std::string& path, bool kernels);
  ~StreamedCompareFile() override;
  StreamedCompareFile(const StreamedCompareFile&) = delete;
  StreamedCompareFile& operator=(const StreamedCompareFile&) = delete;

  /// Opens the next run's group, /strategies/<LABEL> (an empty label: "runN", N its place from
  /// 1, as write_results_h5 names a result without a strategy). Call before the run. Never
  /// throws: an error is kept for finish().
  void begin_run(const std::string& label);
  void on_request_record(const RequestRecord& record) override;
  void on_kernel_completed(const KernelRecord& kernel) override;
  bool wants_arrivals() const override { return false; }
  bool wants_kernels() const override { return kernels_; }  // output.kernels
  bool wants_outcomes() const override { return false; }    // the rows only
  /// After the run begun last: completes its group from RESULT (its `requests` and `kernels`
  /// vectors are not written: the observed records were). Never throws: an error is kept for
  /// finish().
  void end_run(const RunResult& result);
  /// Request rows of the run in progress (or of the last one) appended so far.
  std::uint64_t requests_written() const;
  /// RESULTS: the results of the runs begun, in order. Writes the root of the file, closes,
  /// fsyncs and renames it over PATH. Call once. Throws OutputError("cannot write PATH: why")
  /// for this or any earlier write error; the temporary file is then removed. The root's
  /// `status` is "interrupted" when any result is, or when STOPPED (the comparison stopped
  /// before every strategy ran), else the first result's.
  void finish(const std::vector<RunResult>& results, bool stopped = false);

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool kernels_;
};

/// The `compare` file: root attributes from the first result, /summary = JSON array of the
/// summaries, and each result's datasets under /strategies/<label>/ (label: the result's
/// strategy, "runN" when it has none; '/' -> '_'). Written through StreamedCompareFile from the
/// results' records, so the same bytes as `gpumux compare -o`. Throws OutputError (an empty
/// RESULTS: std::runtime_error). Cost: O(records), a few chunks of extra memory.
void write_results_h5(const std::string& path, const std::vector<RunResult>& results);

/// Reads back the summary JSON stored by write_result_h5 (for `gpumux report`). For a compare
/// file returns one summary per strategy. Throws InputError("PATH: not a gpumux result file
/// (why)") when the file is missing, not a regular file (a FIFO would block the open forever, a
/// device never ends: refused before opening), not HDF5, or has no readable /summary
/// (models/output/result_h5_read.cpp).
std::vector<nlohmann::ordered_json> read_summaries_h5(const std::string& path);

/// Reads every dataset of the result file PATH through (every row, every chunk decoded; block
/// by block, so memory stays one block of 16,384 rows), so a corrupt or truncated table is
/// found before `gpumux report` prints. Throws InputError("PATH: /requests: corrupt or
/// truncated table (why)"), or "PATH: not a gpumux result file (why)" when it cannot be opened.
/// A table that declares more bytes than the file could hold (over 1100 x its size, deflate's
/// largest ratio, plus 1 MiB) is refused before reading: its rows would be fill values made up
/// one by one. Cost: O(rows) decoding (about the time it took to write them).
void check_result_tables_h5(const std::string& path);

/// Text for `gpumux report`, from a summary read back. Missing or null fields print as "-".
std::string summary_table_from_json(const nlohmann::ordered_json& summary);

/// compare_table from summaries read back (`gpumux report` of a compare file).
std::string compare_table_from_json(const std::vector<nlohmann::ordered_json>& summaries);

}  // namespace gpumux
