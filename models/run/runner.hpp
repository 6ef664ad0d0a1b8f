#pragma once
// The simulation entry point shared by the CLI, `compare` and the Python bindings:
// a ResolvedScenario in, a RunResult out.
//
// A tenant's requests arrive (poisson / constant / closed loop / trace), queue FIFO, and up to
// `max_in_flight` run at once. A request is one CUDA stream: kernel k is issued by the CPU at
// start + k * host_gap and can start on the GPU at
//     ready_k = max(finish_{k-1}, start + k * host_gap) + L
// (asynchronous launches: the CPU runs ahead of the GPU unless host_gap exceeds the kernels).
// Every kernel pays L, the profile's launch_overhead (graph_launch_overhead for `cuda_graph:
// true`): gpu-benches' back-to-back kernels take a fixed time per kernel on top of their data
// time (a least-squares intercept), so n tiny kernels in one stream take n x L, not L.
// Solo latency (for slowdown) is the same recursion with every kernel at its solo duration.
// Batched serving (`batching: {max_batch: B}`): the tenant is one serving engine that runs
// iterations back to back while it has work; the kernel list still describes one request as it
// would run alone. Each iteration (started after every event of the instant, so simultaneous
// arrivals batch together) admits queued requests FIFO up to B in flight — a request only when
// its KV memory fits; one that cannot fit even alone fails with an OOM event — then runs:
// `per_token: input` kernels once over all prompt tokens admitted now (prefill; skipped when
// none), each `repeat: output_tokens` kernel once for the whole batch (decode), other kernels as
// per-iteration work; `per_sequence` adds that much per request in the batch. Every request in
// the batch gains one token per iteration and completes after its output tokens. Solo latency:
// the same request alone (a batch of one).
// Memory: a tenant allocates `memory` when it starts and `memory_per_request` while each
// request runs; an allocation that does not fit its device (or its MPS pinned limit) OOM-kills
// the tenant: its requests fail, its memory is freed, neighbours are untouched. Faults kill the
// tenant, or every client of the device under MPS. Killed tenants restart after `recovery`.
// Cost: O(events x log pending) plus the fluid recomputations of the devices.
#include <atomic>
#include <functional>
#include <optional>

#include "sim/core/event_queue.hpp"

#include "models/run/result.hpp"
#include "models/scenario/resolve.hpp"

namespace gpumux {

struct RunOptions {
  /// Polled every few thousand events; when it becomes true the run stops and the result is
  /// marked "interrupted" (SIGINT).
  const std::atomic<bool>* interrupt = nullptr;
  /// Called about every 65536 events with (simulated now, horizon = duration, events so far).
  std::function<void(Nanos, Nanos, std::uint64_t)> progress;
  /// Keep one RequestRecord per request in RunResult::requests (40 B each; needed for HDF5 and
  /// Python, not for the summary).
  bool record_requests = true;
  /// The pending-event set; unset = chosen from the scenario's size (results are identical
  /// either way, only speed differs).
  std::optional<QueueKind> queue;
};

RunResult simulate(const ResolvedScenario& scenario, const RunOptions& options = {});

}  // namespace gpumux
