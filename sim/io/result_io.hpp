#pragma once
// Writing and reading results: JSON summary (SPEC §4), text summary table, HDF5 file (SPEC §5).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/result.hpp"

namespace gpumux {

/// The SPEC §4 summary object. Cost: O(tenants + devices).
nlohmann::json summary_json(const RunResult& result);

/// Human-readable per-tenant and per-device table (what `gpumux run` prints).
std::string summary_table(const RunResult& result);

/// Side-by-side table for `gpumux compare`: one block per tenant, one column per strategy
/// (p50, p99, throughput, SM busy, OOMs, failures).
std::string compare_table(const std::vector<RunResult>& results);

/// Writes the HDF5 file: root attributes, /summary (JSON string), /requests, /tenants,
/// /devices, /events, /timeseries/<device>, /kernels (when present). Written to PATH.tmp.PID
/// then renamed, so a reader never sees a half-written file. Throws std::runtime_error on I/O
/// failure (the temporary file is removed). `group` != "" writes everything under that group
/// (used by `compare`, one group per strategy) — the root attributes still describe the file.
void write_result_h5(const std::string& path, const RunResult& result);
void write_results_h5(const std::string& path, const std::vector<RunResult>& results);

/// Reads back the summary JSON stored by write_result_h5 (for `gpumux report`). For a compare
/// file returns one summary per strategy. Throws InputError when the file is missing or not a
/// gpumux result.
std::vector<nlohmann::json> read_summaries_h5(const std::string& path);

/// Text for `gpumux report`, from summaries read back.
std::string summary_table_from_json(const nlohmann::json& summary);

}  // namespace gpumux
