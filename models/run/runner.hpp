#pragma once
// simulate(): one run of a resolved scenario — the entry point shared by the CLI, `compare` and
// the Python bindings. A ResolvedScenario in (validated, profile defaults filled), a RunResult
// out (times in integer ns of simulated time, sizes in bytes, fractions in [0, 1]; only wall_s
// is host time). Deterministic: the same scenario and seed give the same result, bit for bit,
// whatever the queue kind, sample period or record options.
//
// What is modelled, and where (models/run/): tenants' arrivals (arrivals.cpp), requests queued
// FIFO with up to `max_in_flight` running (requests.cpp), each a CUDA stream per GPU whose
// kernel k can start at max(finish_{k-1}, start + k * host_gap) + launch_overhead
// (launch.cpp), data-parallel collectives (collectives.cpp), continuous batching
// (batching.cpp), memory and OOM kills (memory.cpp), injected faults and restarts (faults.cpp),
// the utilization timeseries (sampling.cpp), metrics (summary.cpp), cost (cost.cpp) and
// provenance (provenance.cpp). Contention on a device is the device's (models/gpu/device.hpp).
//
// Cost: O(events x log pending) for the event set plus the devices' fluid recomputations;
// memory O(tenants + devices + requests in flight) plus 8 B per measured request (exact
// quantiles) and, when recorded, 48 B per request record and 40 B per kernel record.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/event_queue.hpp"

#include "models/run/recorder.hpp"
#include "models/run/result.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {

struct RunOptions {
  /// Polled every 4096 events; when it becomes true the run stops and the result is marked
  /// "interrupted" (SIGINT).
  const std::atomic<bool>* interrupt = nullptr;
  /// Called every 4096 events with (simulated now, horizon = duration, events so far).
  std::function<void(Nanos, Nanos, std::uint64_t)> progress;
  /// Keep one RequestRecord per request in RunResult::requests (48 B each; needed for HDF5 and
  /// Python, not for the summary).
  bool record_requests = true;
  /// Keep the kernel records of `output: {kernels: true}` in RunResult::kernels (40 B each);
  /// false when an observer writes them (a streamed result file): the observers see every
  /// kernel either way.
  bool record_kernels = true;
  /// The pending-event set; unset = chosen from the scenario's size (results are identical
  /// either way, only speed differs).
  std::optional<QueueKind> queue;
  /// Let a tenant alone on an exclusive device run its own events inline (models/run/direct.cpp,
  /// without the event queue). Results, the event count included, are identical either way
  /// (tested); false forces every event through the queue (tests; the CLI's GPUMUX_DIRECT=0).
  bool direct_path = true;
  /// Run independent parts of the scenario (components: devices and the tenants on them, no
  /// tenant on devices of two parts) each with its own event queue, in windows of simulated
  /// time, instead of one queue for everything (models/run/components.cpp). Each device's and
  /// tenant's events, and so every number of the result, are the same either way (tested); the
  /// records of different components that happen at the same nanosecond come in component
  /// order instead of the order one queue would have given them. false: one queue (tests; the
  /// CLI's GPUMUX_PARTITION=0).
  bool partition = true;
  /// Every device of the run does the full recompute at every event (Device::set_eager; the
  /// arithmetic before the lazy path, the test oracle; results within the last bits, tested on
  /// every golden file). false: the lazy path (tests; the CLI's GPUMUX_DEVICE_EAGER=1).
  bool eager_device = false;
  /// false: the devices keep no utilization statistics (Device::set_statistics): every latency,
  /// failure, memory and event number of the result is the same, but DeviceResult's sm_busy,
  /// useful_fraction and dram_busy, the timeseries' busy fractions and each tenant's gpu_seconds
  /// read 0 (except where a board's power may cap its clock: the pilot run that sets the clock
  /// keeps them, and is the result when the board does not cap). For callers that read only the
  /// tenants' latencies and failures (`gpumux plan`'s unit runs): about 15 % of a time-sliced
  /// unit's instructions (docs/performance.md, "The planner").
  bool device_statistics = true;
  /// The most samples one device's timeseries keeps: when a series reaches it, every pair of
  /// neighbouring samples is merged into one (the resolution halves; docs/metrics.md).
  std::size_t max_samples_per_series = kMaxSamplesPerSeries;
  /// Observers of the run (recorder.hpp), called as requests, kernels, events and samples are
  /// recorded; not owned. They change no number of the result.
  std::vector<Recorder*> observers;
  /// When set, filled at the run's end: per tenant (index into RunResult::tenants) its latency
  /// series as bytes (Percentiles::encode: the exact samples in ascending order, or the
  /// sketch), from which any percentile of it comes back bit for bit; what a cluster's
  /// workload pod reports (models/cluster/workload_pods.hpp). Cost: the encode, O(n log n)
  /// per exact series, O(buckets) per sketch. Not owned.
  std::vector<std::string>* latency_series = nullptr;
};

RunResult simulate(const ResolvedScenario& scenario, const RunOptions& options = {});

/// One scenario judged over growing windows (`gpumux plan`'s doubling windows): at(w, report)
/// is REPORT of what simulate() gives for the scenario with `duration: w`, for increasing w up
/// to the scenario's own duration (the longest window), each tenant's numbers bit for bit (the
/// result's `events` and the tail of its timeseries may differ). Where it can — one component,
/// no faults, no tenant on the direct path, no power cap, a POSIX fork() — one simulation runs
/// on instead of starting again for each w: it runs every event before w, the process forks
/// (copy-on-write), and the child ends the run as a run of duration w ends (no arrival from w
/// on, the drain), sends REPORT of its result back through a pipe and exits; the parent goes
/// on. Otherwise (or when the child fails) each w is a fresh simulate(). A child whose CPU time
/// stops advancing for 2 s (blocked for ever on a lock or a static another thread of a
/// multi-threaded parent held at the fork) is killed and its window runs afresh: the same
/// answer, 2 s later (children_failed() counts them). `gpumux plan` with several jobs runs its
/// units in single-threaded worker processes where it can (docs/plan.md, "The window"); this is
/// the net for the rest. Cost: the longest window's simulation plus each window's drain and
/// fork (the pages the parent writes after it are copied), instead of the sum of every window's
/// simulation. REPORT runs in the child: it must only read the result. Not thread-safe; one
/// SteppedRun per thread.
class SteppedRun {
 public:
  using Report = std::function<std::string(const RunResult&)>;
  SteppedRun(const ResolvedScenario& scenario, const RunOptions& options);
  ~SteppedRun();
  SteppedRun(const SteppedRun&) = delete;
  SteppedRun& operator=(const SteppedRun&) = delete;
  /// REPORT of the result over duration W (> the last call's, <= the scenario's duration).
  std::string at(Nanos w, const Report& report);
  /// Whether the windows continue one simulation (false: each is a fresh run).
  bool continues() const;
  /// How many windows' children failed or stalled (those windows ran afresh).
  int children_failed() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpumux
