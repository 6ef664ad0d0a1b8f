#pragma once
// Run: one simulation of a resolved scenario — the simulators, the devices, the tenants and the
// result being filled. Its parts, one file each:
//   run.cpp         construction (devices, tenants, admission), the run loop: start, warm-up,
//                   faults and sampler armed, interruption polled, the end of the run (drain)
//   components.cpp  the independent parts of a run (components) and the windowed loop that runs
//                   several of them, with the records they produce merged in time order
//   faults.cpp      injected fatal faults: the blast radius and restarts
//   sampling.cpp    the utilization timeseries (a ticker: observes, schedules nothing)
//   summary.cpp     the measured window: warm-up baselines, per-tenant and per-device metrics
//   cost.cpp        attributed GPU time and cost per tenant, the GPUs' cost
//   provenance.cpp  what the result was made from: scenario, seed, profile hashes, notes
// Internal to the runner; the public entry point is simulate() (runner.hpp).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"

#include "models/gpu/device.hpp"
#include "models/scenario/resolve.hpp"
#include "models/run/result.hpp"
#include "models/run/request.hpp"
#include "models/run/runner.hpp"
#include "models/run/tenant.hpp"
#include "models/run/tenant_stats.hpp"

namespace gpumux::run {

/// A request's row as a partitioned run holds it until its window ends when no recorder takes
/// outcomes (Recorder::wants_outcomes): RequestRecord's fields without its padding, 40 bytes
/// against a RequestOutcome's 80. The window's time merge reads each held record twice after it
/// has left the caches (sim/core/time_merge.hpp), so its cost follows the bytes held.
struct RequestRow {
  Nanos finish_ns, arrival_ns, start_ns;
  std::uint64_t request_id;
  std::uint32_t tenant;
  RequestStatus status;
  RequestRecord record() const {
    return RequestRecord{tenant, request_id, arrival_ns, start_ns, finish_ns, status};
  }
};
static_assert(sizeof(RequestRow) == 40);

/// One component of a run: devices and the tenants on them such that no tenant has a device
/// outside it (a multi-GPU tenant joins its devices into one component). Nothing that happens in
/// one component reads or changes the state of another: each has its own Simulator (clock and
/// pending events), its own sampler ticks, its own warm-up mark. Within a component the events
/// run in exactly the order one queue for the whole run would give them (components.cpp).
struct Component {
  std::unique_ptr<Simulator> sim;
  std::vector<std::size_t> devices;  // indices into Run::devices, ascending
  std::vector<std::size_t> tenants;  // indices into Run::tenants, ascending
  // The utilization sampler of this component's devices (sampling.cpp).
  Nanos last_sample = 0;
  Nanos sample_every = 0;  // output.sample x 2^decimations
  bool warmup_ran = false;
  // What the component recorded during the current window of a partitioned run, in the order
  // it happened; merged with the other components' in time order at the window's end.
  struct Arrival {
    std::uint32_t tenant;
    Nanos arrival;
    bool measured;
  };
  std::vector<RequestOutcome> requests;  // when a recorder takes outcomes
  std::vector<RequestRow> request_rows;  // else
  std::vector<KernelRecord> kernels;
  std::vector<EventRecord> events;
  std::vector<Arrival> arrivals;
};

class Run {
 public:
  Run(const ResolvedScenario& resolved, const RunOptions& options);
  RunResult execute();

  // A run in steps (SteppedRun, runner.hpp): execute() is start(), run_components(), finish().
  /// Arms the run: the tenants' start-up events, the warm-up mark, the sampler, the faults.
  void start();
  /// One component, no faults and no tenant on the direct path: the run may stop before any
  /// time and go on (advance_before), or end early (end_arrivals_at).
  bool steppable() const;
  /// Runs every event before T (steppable runs only). False when interrupted.
  bool advance_before(Nanos t);
  /// From now on the run ends as a run of duration T does: no arrival at or after T (the
  /// scenario's `duration` must be set to T by the owner as well).
  void end_arrivals_at(Nanos t);
  /// Runs the rest, to the drain's end.
  void run_to_end() {
    if (run_components()) interrupted_ = true;
  }
  /// Fills the result (after run_to_end).
  RunResult finish();

  const ResolvedScenario& resolved;
  const Scenario& scenario;
  RandomStreams streams;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<Tenant>> tenants;
  RunResult result;
  bool record_kernels = false;
  bool record_requests = true;
  bool direct_path = true;  // RunOptions::direct_path

  /// The simulator of the component whose event is running (set-up: the first component's).
  Simulator& current_sim() { return *current_->sim; }
  /// An event (OOM, kill, fault, reject, restart) of the running component, at its clock.
  void record_event(EventKind kind, int tenant, int device, const std::string& detail) {
    EventRecord event{current_->sim->now(), kind, tenant, device, detail};
    stats_.on_event(event);
    if (buffering_) {
      current_->events.push_back(std::move(event));
      return;
    }
    emit_event(std::move(event));
  }
  /// A request arrived (now): counted when measured.
  void record_arrival(int tenant, const Request& r) {
    record_arrival(tenant, r.arrival, r.measured);
  }
  void record_arrival(int tenant, Nanos arrival, bool measured) {
    stats_.on_request_arrived(static_cast<std::uint32_t>(tenant), arrival, measured);
    if (arrival_observers_.empty()) return;
    if (buffering_) {
      current_->arrivals.push_back({static_cast<std::uint32_t>(tenant), arrival, measured});
      return;
    }
    for (Recorder* o : arrival_observers_) {
      o->on_request_arrived(static_cast<std::uint32_t>(tenant), arrival, measured);
    }
  }
  /// Every completed or failed request passes here: the run ends at the last of them (or at
  /// `duration`), whatever else is still pending.
  void record_request(int tenant, const Request& r) {
    record_request(RequestOutcome{RequestRecord{static_cast<std::uint32_t>(tenant), r.id, r.arrival,
                                                r.start, r.finish, r.status},
                                  r.measured, r.first_token, r.output_tokens, r.solo_latency});
  }
  /// The same, from the request's parts (the direct path keeps no Request for most requests).
  /// Built in place by the caller: copying a record assembled field by field costs a
  /// store-forwarding stall per request on the direct path.
  void record_request(const RequestOutcome& outcome) {
    const RequestRecord& record = outcome.record;
    if (record.status != RequestStatus::unfinished) {
      last_finish_ = std::max(last_finish_, record.finish_ns);
      if (record.status == RequestStatus::completed) {
        stats_.on_request_completed(outcome);
      } else {
        stats_.on_request_failed(outcome);
      }
      if (buffering_) {
        // The buffer's next lines for writing: a window's records (512 components: ~5-10 MB)
        // leave the caches before the component's next visit reuses its buffer.
        if (!outcome_observers_.empty()) {
          std::vector<RequestOutcome>& buffer = current_->requests;
          __builtin_prefetch(reinterpret_cast<const void*>(
                                 reinterpret_cast<std::uintptr_t>(buffer.data() + buffer.size()) +
                                 2 * sizeof(RequestOutcome)),
                             1, 3);
          buffer.push_back(outcome);
        } else if (record_requests || !observers_.empty()) {
          std::vector<RequestRow>& buffer = current_->request_rows;
          __builtin_prefetch(reinterpret_cast<const void*>(
                                 reinterpret_cast<std::uintptr_t>(buffer.data() + buffer.size()) +
                                 4 * sizeof(RequestRow)),
                             1, 3);
          buffer.push_back(RequestRow{record.finish_ns, record.arrival_ns, record.start_ns,
                                      record.request_id, record.tenant, record.status});
        }
        return;
      }
    }
    emit_request(outcome);
  }
  /// A kernel ran to completion: kept when output.kernels, shown to the observers.
  /// The statistics of TENANT so far (the result's per-tenant numbers come from these).
  const TenantStats& tenant_stats(int tenant) const {
    return stats_.tenant(static_cast<std::size_t>(tenant));
  }
  TenantStatsRecorder& stats_recorder() { return stats_; }
  /// Whether record_kernel() has anyone to tell (kept records or observers).
  bool wants_kernels() const { return record_kernels || !kernel_observers_.empty(); }
  void record_kernel(const KernelRecord& k) {
    if (buffering_) {
      current_->kernels.push_back(k);
      return;
    }
    emit_kernel(k);
  }

 private:
  // The observers' and the result's part of record_event / record_request / record_kernel.
  void emit_event(EventRecord event) {
    result.events_log.push_back(std::move(event));
    for (Recorder* o : observers_) o->on_event(result.events_log.back());
  }
  void emit_request(const RequestOutcome& outcome) {
    const RequestRecord& record = outcome.record;
    if (record.status != RequestStatus::unfinished) {
      for (Recorder* o : outcome_observers_) {
        if (record.status == RequestStatus::completed) {
          o->on_request_completed(outcome);
        } else {
          o->on_request_failed(outcome);
        }
      }
    }
    emit_request_record(record);
  }
  void emit_request_record(const RequestRecord& record) {
    for (Recorder* o : observers_) o->on_request_record(record);
    if (record_requests) result.requests.push_back(record);
  }
  void emit_kernel(const KernelRecord& k) {
    if (record_kernels) result.kernels.push_back(k);
    for (Recorder* o : kernel_observers_) o->on_kernel_completed(k);
  }

  // components.cpp
  /// Splits the devices and tenants into components (one for everything unless
  /// RunOptions::partition) and builds each component's simulator.
  void build_components();
  /// Runs every component to its end in windows of simulated time (several components), or
  /// runs the one component's simulator (one). Returns whether the run was interrupted.
  bool run_components();
  /// The windowed loop of a run with several components.
  bool run_partitioned();
  /// Hands what the components recorded in the window to the result and the observers, in time
  /// order (ties: component order, then the order within the component).
  void flush_records();
  /// Polled every 4096 events: interruption and progress.
  void poll();
  std::uint64_t events_processed() const;
  std::uint64_t events_inline() const;

  // events (typed handlers)
  void on_warmup(std::size_t component);  // summary.cpp: the measured window starts
  void on_fault(std::size_t fault);       // faults.cpp: scenario.faults[fault] strikes
  // sampling.cpp
  /// A tick of COMPONENT: records a sample of its devices when the current period
  /// (output.sample, doubled by each decimation) is over, or always when `force` (the end).
  void sample(std::size_t component, Nanos now, bool force = false);
  /// Halves every series of the component's devices (pairs of samples merged, from the
  /// integrals).
  void decimate_timeseries(std::size_t component);
  void finish_timeseries(Nanos end);
  // summary.cpp, cost.cpp, provenance.cpp
  void fill_results(Nanos end);
  /// Length of the measured window [min(warmup, end), end], ns.
  double measured_window(Nanos end) const;
  void fill_tenant_summary(const Tenant& tenant, TenantResult& tr) const;
  void fill_tenant_cost(const Tenant& tenant, Nanos end, TenantResult& tr) const;
  void fill_gpu_cost(Nanos end);
  void fill_device_results(Nanos end);
  void fill_percentile_provenance();  // summary.cpp
  void fill_provenance(Nanos end);
  void add_assumption_notes();

  const RunOptions& options_;
  std::chrono::steady_clock::time_point wall_start_;
  TenantStatsRecorder stats_;         // the built-in recorder: TenantResult's statistics
  std::vector<Recorder*> observers_;  // RunOptions::observers
  // Those that want arrivals, kernels, outcomes.
  std::vector<Recorder*> arrival_observers_, kernel_observers_, outcome_observers_;
  std::vector<std::size_t> start_order_;  // tenant indices by name: the order of set-up and start
  Nanos last_finish_ = 0;                 // latest completion or failure of a request
  std::vector<Component> components_;
  std::vector<std::size_t> component_of_device_;
  Component* current_ = nullptr;  // whose event runs (set-up and the end: the first)
  bool buffering_ = false;        // records wait in their component until the window ends
  bool interrupted_ = false;
  std::uint64_t unpolled_events_ = 0;  // events since the last poll (partitioned runs)
  // A partitioned run's windows (poll()'s count of events without reading every component):
  // every component's events before the current visit began, the visiting component's count
  // when it began, and the components whose warm-up mark ran.
  bool counting_visits_ = false;
  std::uint64_t events_processed_by_visits_ = 0, visit_start_events_ = 0;
  std::size_t warmups_ran_ = 0;
  // Per device: busy and DRAM integrals at each sample time so far (the timeseries' basis).
  std::vector<std::vector<double>> sample_busy_, sample_dram_;
  // Per device at the end of warm-up: integrals, and each client's SM integral (by slot).
  std::vector<double> warm_busy_, warm_useful_, warm_dram_;
  std::vector<std::vector<double>> warm_client_sm_;
};

}  // namespace gpumux::run
