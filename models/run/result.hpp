#pragma once
// RunResult: everything one simulation run produces, independent of how it is written out
// (text table, JSON summary, HDF5 file, Python). Times in integer nanoseconds, sizes in bytes.
// Metric definitions: see docs/metrics.md (the one catalogue).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/core/quantile_interval.hpp"

namespace gpumux {

struct LatencySummary {
  std::int64_t count = 0;
  double mean = 0;
  std::int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  /// Confidence intervals of p50, p90, p99, p999 (in that order) at the run's
  /// output.confidence (sim/core/quantile_interval.hpp; docs/metrics.md).
  std::array<QuantileInterval, 4> intervals{};
};

struct TenantResult {
  std::string name;
  std::string device;          ///< "gpu0" or "gpu0/1"
  std::int64_t requests = 0;   ///< arrived after warmup (and before duration)
  std::int64_t completed = 0;  ///< of those, finished successfully
  std::int64_t failed = 0;     ///< of those, failed (OOM, fault, rejected)
  LatencySummary latency;      ///< arrival -> finish, completed requests
  LatencySummary queueing;     ///< arrival -> first kernel issued
  /// LLM workloads: arrival -> first output token (end of the first decode launch, or of the
  /// first batched iteration); count 0 when the tenant has no per-token kernels.
  LatencySummary time_to_first_token;
  /// LLM workloads: time per output token of each completed request with more than one
  /// output token and a first token, (latency - ttft) / (output_tokens - 1); count 0 otherwise.
  LatencySummary time_per_output_token;
  double slowdown_mean = 0;     ///< latency / solo latency on a dedicated whole GPU
  double throughput_per_s = 0;  ///< completed / measured window
  /// Output tokens of completed measured requests / measured window (LLM tenants; 0 otherwise).
  double output_tokens_per_s = 0;
  std::int64_t slo_violations = 0;
  std::int64_t oom_events = 0;
  double gpu_seconds = 0;  ///< device-time share attributed to the tenant (cost basis)
  double cost = 0;         ///< gpu cost_per_hour x attributed hours (0 without prices)
  /// The tenant's `slo:` targets in ns by key ("p99" -> 100000000, "ttft_p99", "tpot_p50";
  /// models/run/slo.hpp); empty = best-effort. Verdicts: evaluate_slo (models/run/slo.hpp).
  std::map<std::string, std::int64_t> slo_ns;
};

struct DeviceResult {
  std::string name;     ///< "gpu0" or "gpu0/1"
  std::string profile;  ///< "h100-sxm-80gb" or MIG profile "1g.10gb"
  std::string sharing;  ///< the strategy's `sharing.mode` name (models/strategies/registry.hpp)
  int sms = 0;
  std::int64_t memory_bytes = 0;
  double sm_busy = 0;          ///< time-average fraction of the device's SMs occupied
  double useful_fraction = 0;  ///< sm_busy minus context-switch / preemption overhead
  /// Time-average over [warmup, end] of the fraction of the device's HBM bandwidth in use
  /// (DCGM DRAM_ACTIVE); see docs/metrics.md.
  double dram_busy = 0;
  std::int64_t memory_peak_bytes = 0;
  std::int64_t context_switches = 0;
  std::int64_t switch_overhead_ns = 0;
  /// The SM clock its board ran at (MHz) and the board's mean draw (W) over [warmup, end],
  /// where power is modelled (models/gpu/power.hpp); 0 = not modelled. Every instance of a
  /// board reports the board's.
  double clock_mhz = 0;
  double board_power_w = 0;
};

enum class RequestStatus : std::uint8_t { completed = 0, failed = 1, unfinished = 2 };
/// The names of RequestStatus values, indexed by value: the one list the HDF5 enum type, the
/// bindings' REQUEST_STATUS and (through them or the file's enum) Python use.
inline constexpr std::array<const char*, 3> kRequestStatusNames = {"completed", "failed",
                                                                   "unfinished"};

struct RequestRecord {
  std::uint32_t tenant = 0;  ///< index into RunResult::tenants
  std::uint64_t request_id = 0;
  std::int64_t arrival_ns = 0, start_ns = 0, finish_ns = 0;  ///< start/finish -1 if never
  RequestStatus status = RequestStatus::completed;
};

/// preempt: a batched-serving request's KV memory taken back (vllm / sarathi scheduler); it is
/// recomputed when readmitted.
enum class EventKind : std::uint8_t {
  oom = 0,
  kill = 1,
  fault = 2,
  reject = 3,
  restart = 4,
  preempt = 5
};
/// The names of EventKind values, indexed by value (as kRequestStatusNames).
inline constexpr std::array<const char*, 6> kEventKindNames = {"oom",    "kill",    "fault",
                                                               "reject", "restart", "preempt"};

struct EventRecord {
  std::int64_t time_ns = 0;
  EventKind kind = EventKind::oom;
  std::int32_t tenant = -1;  ///< index into tenants, -1 if none
  std::int32_t device = -1;  ///< index into devices, -1 if none
  std::string detail;        ///< one line, human readable
};

struct TimeseriesSample {
  std::int64_t time_ns = 0;
  double sm_busy = 0;    ///< average over the sample period
  double dram_busy = 0;  ///< average over the sample period
  std::int64_t memory_used_bytes = 0;
};

struct KernelRecord {
  std::uint32_t tenant = 0;
  std::uint64_t request_id = 0;
  std::uint32_t kernel_index = 0;
  std::int32_t device = 0;
  std::int64_t start_ns = 0, finish_ns = 0;
};

/// How a run's latency / queueing / TTFT / TPOT percentiles were computed (output.percentiles,
/// sim/core/statistics.hpp, docs/metrics.md). Counts, means and maxima are always exact.
struct PercentileProvenance {
  std::string mode = "auto";     ///< the scenario's output.percentiles: exact | sketch | auto
  std::string method = "exact";  ///< exact | sketch | mixed (some series exact, some sketched)
  /// Bound on |reported - exact| / |exact| of every percentile from a sketch; 0 when exact.
  double relative_error = 0;
  std::int64_t series = 0;           ///< 4 per tenant: latency, queueing, TTFT, TPOT
  std::int64_t sketched_series = 0;  ///< of those, the ones whose percentiles came from a sketch
  /// Confidence level of every percentile's interval (output.confidence).
  double confidence = kDefaultConfidence;
};

struct RunResult {
  std::string scenario_name;
  std::uint64_t seed = 0;
  std::string status = "complete";  ///< complete | interrupted
  std::int64_t sim_time_ns = 0;
  /// The measured window [warmup_ns, duration_ns): the scenario's warmup and duration (tenant
  /// statistics count the requests arriving in it; docs/metrics.md "Windows").
  std::int64_t warmup_ns = 0, duration_ns = 0;
  std::uint64_t events = 0;
  /// Of `events`, those a tenant ran inline (models/run/direct.cpp). A diagnostic of how the run
  /// was computed, like wall_s: not in the summary, the file or the text.
  std::uint64_t events_inline = 0;
  /// Independent parts the run was simulated as, each with its own event queue
  /// (models/run/components.cpp; 1 with RunOptions::partition off). A diagnostic, like
  /// events_inline.
  std::size_t components = 0;
  double wall_s = 0;
  /// Price of every physical GPU of the scenario over the measured window (cost_per_hour x
  /// hours), idle MIG slices included; 0 without prices. Tenant costs attribute only the
  /// reserved shares, so their sum can be lower.
  double gpu_cost = 0;
  std::string strategy;  ///< label when produced by `compare`, else ""
  std::vector<TenantResult> tenants;
  std::vector<DeviceResult> devices;
  std::vector<RequestRecord> requests;
  std::vector<EventRecord> events_log;
  std::map<std::string, std::vector<TimeseriesSample>> timeseries;  ///< by device name
  std::vector<KernelRecord> kernels;                                ///< only when output.kernels
  std::string scenario_yaml;  ///< the resolved scenario, all defaults filled
  /// One-line caveats about this run's inputs, e.g. which profile defaults it used that are
  /// assumptions rather than measurements (shown under the summary table, in JSON "notes").
  std::vector<std::string> notes;
  std::map<std::string, std::string> calibration;  ///< profile name -> content hash
  PercentileProvenance percentiles;
};

}  // namespace gpumux
