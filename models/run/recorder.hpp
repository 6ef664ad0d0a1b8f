#pragma once
// Recorder: an observer of one run. The run calls every recorder attached through
// RunOptions::observers when a request completes or fails, a kernel completes, an event (OOM,
// kill, fault, reject, restart) happens, and for each timeseries sample (delivered when the run's
// end is known, so exactly the samples of RunResult::timeseries); also when a request arrives.
// The per-tenant statistics of the result are themselves a recorder (TenantStatsRecorder,
// tenant_stats.hpp), fed through the same calls. Recorders see const records
// only and schedule nothing: attaching any number changes no number of the result
// (tests/unit/test_metrics_observers.cpp). Calls come in simulated-time order per kind.
#include <cstddef>
#include <cstdint>

#include "models/run/result.hpp"
#include "sim/core/time.hpp"

namespace gpumux {

/// A request at its end, as observers see it.
struct RequestOutcome {
  RequestRecord record;    ///< tenant, id, arrival, start, finish, status
  bool measured = false;   ///< arrived in [warmup, duration): counted in the statistics
  Nanos first_token = -1;  ///< when its first output token was ready; -1: none
  std::int64_t output_tokens = 0;
  double solo_latency_ns = 0;  ///< the same request alone on a dedicated whole GPU
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  /// A request arrived at ARRIVAL for TENANT (index into RunResult::tenants); MEASURED: after
  /// warm-up, so counted in the statistics.
  virtual void on_request_arrived(std::uint32_t /*tenant*/, Nanos /*arrival*/, bool /*measured*/) {}
  virtual void on_request_completed(const RequestOutcome&) {}
  virtual void on_request_failed(const RequestOutcome&) {}
  /// Every row of RunResult::requests, in its order (a completed or failed request when it
  /// ends, after on_request_completed/failed; the unfinished ones when the run ends), whether or
  /// not RunOptions::record_requests keeps them: a result file streams them from here.
  virtual void on_request_record(const RequestRecord&) {}
  /// Every kernel that ran to completion (whether or not output.kernels records it).
  virtual void on_kernel_completed(const KernelRecord&) {}
  virtual void on_event(const EventRecord&) {}
  /// DEVICE: index into RunResult::devices.
  virtual void on_sample(std::size_t /*device*/, const TimeseriesSample&) {}

  /// Whether this recorder uses on_request_arrived / on_kernel_completed (asked once, when the
  /// run is built): it is not called for what it declines, and a run whose recorders all decline
  /// one of them neither gathers nor orders those calls (the result is the same).
  virtual bool wants_arrivals() const { return true; }
  virtual bool wants_kernels() const { return true; }
  /// Whether this recorder uses on_request_completed / on_request_failed (asked once, when the
  /// run is built; on_request_record is called either way). A partitioned run whose recorders
  /// all decline them holds a window's requests as 40-byte rows instead of 80-byte outcomes
  /// (half of what the window's time merge reads from memory; the result is the same).
  virtual bool wants_outcomes() const { return true; }
};

}  // namespace gpumux
