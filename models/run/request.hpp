#pragma once
// The units of work a tenant launches: a LaunchSequence is the kernels one unit runs on each of
// the tenant's GPUs (one Stream per GPU, the same kernels on each: data-parallel replicas). A
// Request is a user request; an Iteration is one step of a batched-serving engine (it runs the
// kernels of the whole batch and completes no request itself). Plain data: the Tenant's parts
// (requests.cpp, launch.cpp, batching.cpp, collectives.cpp) own the behaviour.
#include <cstdint>
#include <vector>

#include "sim/core/queue_types.hpp"
#include "sim/core/time.hpp"

#include "models/gpu/kernel_run.hpp"
#include "models/run/result.hpp"

namespace gpumux {

struct KernelSpec;

namespace run {

struct LaunchSequence;
struct Request;

/// One replica of a launch sequence on one GPU: a CUDA stream.
struct Stream {
  LaunchSequence* sequence = nullptr;
  int device = 0;               // index into the tenant's devices
  int lane = 0;                 // kernel-trace stream of the sequence (KernelSpec::lane)
  std::size_t next_kernel = 0;  // next kernel of the launch sequence
  KernelRun kernel;             // the kernel now on the device
  EventId ready_event;          // the kernel's launch overhead ends (pending or invalid)
  bool launching = false;       // issued by the CPU; only the launch overhead is left
};

/// A launch's grid and boundedness when they depend on its size (roofline kernels of an `llm:`
/// card); otherwise its KernelSpec's. busy_share: KernelRun::busy_share (-1: serial phases).
struct LaunchShape {
  double sm_fraction = 1, waves = 1, memory_bound = 0, busy_share = -1;
};

/// The kernels of one unit of work, launched in order on each stream (launch.cpp has the
/// timing). Durations in solo ns on the whole GPU, drawn when the sequence starts.
struct LaunchSequence {
  std::uint64_t id = 0;  // the request's id (an iteration: 0), as recorded
  Nanos start = -1;      // when its first kernel was issued
  /// CPU time before its first kernel that is the sequence's own, ns: a batched iteration's
  /// engine CPU time (EngineCpu; requests: 0).
  Nanos host_lead = 0;
  bool dead = false;                     // finished or killed: late completions are ignored
  std::vector<double> durations;         // per launched kernel, ns
  std::vector<const KernelSpec*> specs;  // per launched kernel
  std::vector<LaunchShape> shapes;       // per launched kernel when a roofline kernel is among
                                         // the workload's (empty otherwise)
  std::vector<Stream> streams;           // per GPU of the tenant, one per lane (GPU-major)
  int streams_done = 0;                  // streams past their last kernel
  int at_barrier = 0;                    // streams waiting at the current collective
  int collective_done = 0;  // streams whose current collective ended (waiting for the others)
  /// The Request this sequence is, or nullptr for a batched-serving Iteration.
  Request* request = nullptr;
};

/// One user request: arrives, queues FIFO, runs (its own launch sequence, or inside batched
/// iterations), then completes or fails.
struct Request : LaunchSequence {
  Request() { request = this; }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  Nanos arrival = 0;
  Nanos finish = -1;
  RequestStatus status = RequestStatus::unfinished;
  bool measured = false;  // arrived after warm-up: counts in the statistics
  std::int64_t input_tokens = 0, output_tokens = 0;
  double solo_latency = 0;       // ns, the same request alone on a dedicated whole GPU
  std::int64_t memory = 0;       // bytes held for the request, on each GPU
  std::int64_t tokens_done = 0;  // batched serving: tokens generated so far
  Nanos first_token = -1;        // when the first output token was ready
  // Batched serving (batching.cpp):
  std::int64_t prefill_goal = 0;  // prompt tokens to compute: input (+ generated, recomputed)
  std::int64_t prefilled = 0;     // of prefill_goal, computed so far
  std::int64_t kv_tokens = 0;     // tokens the KV allocation covers (vllm / sarathi blocks)
  std::int64_t chunk = 0;         // prompt tokens computed in the iteration now running
  bool decoding = false;          // decodes one token in the iteration now running
  int preemptions = 0;            // times its KV memory was taken back (recompute)
};

/// One step of a batched-serving engine: prompt tokens (whole prompts or chunks), one decode
/// launch for the decoding sequences, the per-iteration kernels (batching.cpp builds it).
struct Iteration : LaunchSequence {};

}  // namespace run
}  // namespace gpumux
