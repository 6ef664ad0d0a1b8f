#pragma once
// Tenant: one workload on its devices during a run — the event handlers and state of its
// arrivals, requests, launches, batching engine, collectives and memory. The class is declared
// here; its parts are defined by responsibility, one file each:
//   tenant.cpp       construction, start, kill (OOM or fault), restart, unfinished records
//   arrivals.cpp     arrival events (poisson, constant, trace, closed loop) and token counts;
//                    their times and draws: models/workload/arrival_process.hpp
//   requests.cpp     request lifecycle: arrival, queue, dispatch, completion, the one failure
//                    record
//   launch.cpp       starting a request, kernel expansion and launch timing:
//                    ready_k = max(finish_{k-1}, start + lead + host_before_0 + k * host_gap) + L
//                    (lead: a batched iteration's engine CPU time, else 0)
//                    (host_before_0 counted only when host_gap > 0); submission
//   collectives.cpp  data-parallel barriers: a collective starts and ends on every GPU together
//   batching.cpp     continuous batching: the serving engine's Iterations, run as events;
//                    which requests each admits, preempts, prefills and decodes:
//                    models/workload/batching_policy.hpp (Tenant is its ServingEngine)
//   memory.cpp       allocations on every GPU of the tenant and the OOM rule
// Statistics are a recorder of the run (TenantStatsRecorder, tenant_stats.hpp). Costs: O(1) per
// event except the kernel expansion (O(kernels) per request) and dispatch (O(in flight) to find a
// finished request).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/random.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/time.hpp"
#include "sim/util/checked.hpp"

#include "models/gpu/device.hpp"
#include "models/gpu/kernel_run.hpp"
#include "models/run/result.hpp"
#include "models/run/request.hpp"
#include "models/run/tenant_stats.hpp"
#include "models/workload/arrival_process.hpp"
#include "models/workload/kernel_scaling.hpp"
#include "models/scenario/scenario.hpp"
#include "models/scenario/trace_reader.hpp"

namespace gpumux::run {

class Run;

class Tenant final : public KernelOwner {
 public:
  /// SIM: the simulator of the tenant's component (run.hpp), where its events run.
  Tenant(Run& run, Simulator& sim, int index, const TenantSpec& spec, std::vector<Device*> devices,
         Nanos launch_overhead);

  // --- lifecycle (tenant.cpp) ----------------------------------------------------------------
  /// Schedules the start-up (memory, first arrivals) at `active.from` (default t = 0) and, with
  /// `active.until`, the stop (no more arrivals, start-up memory freed).
  void start();
  /// Fails every request, frees the tenant's memory and kernels; `detail` is recorded.
  void kill(EventKind kind, const std::string& detail);
  void schedule_restart(Nanos delay);
  /// Refused by a device before the run (e.g. the MPS client limit): never runs.
  /// No arrival at or after T from now on (a stepped run ending early: Run::end_arrivals_at).
  void end_arrivals_at(Nanos t) { arrivals_end_ = std::min(arrivals_end_, t); }
  /// Whether it may run inline from its arrivals in this run: direct_workload(), the run allows
  /// it, and its device can host its solo session (the only client of a strategy that submits at
  /// once). Before the run (Run::steppable); a tenant beside others, or time-sliced, never takes
  /// an arrival inline (a time-sliced holder's kernels may run inline within its slice:
  /// run_holder, which leaves a run steppable).
  bool direct() const;
  void mark_rejected() {
    dead_ = true;
    rejected_ = true;
  }
  bool dead() const { return dead_; }
  /// No request queued or running (during the single-launch loop too: the sampler asks it at
  /// the ticks that loop delivers).
  bool idle() const { return queue_.empty() && in_flight_ == 0 && !direct_busy_; }
  /// Records requests still queued or running (an interrupted run) as unfinished.
  void record_unfinished();

  const std::vector<Device*>& devices() const { return devices_; }
  const TenantSpec& spec() const { return spec_; }
  int index() const { return index_; }
  const TenantStats& stats() const;  // the run's TenantStatsRecorder entry (tenant.cpp)

  void on_kernel_finished(KernelRun& kernel, Nanos now) override;  // launch.cpp

 private:
  // --- events (typed handlers, scheduled with make_event) ------------------------------------
  void on_start();                       // tenant.cpp
  void on_restart();                     // tenant.cpp
  void on_stop();                        // tenant.cpp: `active.until` reached
  void on_open_arrival();                // arrivals.cpp
  void on_closed_arrival();              // arrivals.cpp
  void on_iteration_due();               // batching.cpp
  void on_stream_ready(Stream& stream);  // launch.cpp: the launch overhead is over

  // --- the direct path (direct.cpp) ----------------------------------------------------------
  /// Whether this tenant's workload can run inline at all (fixed at construction): one GPU, one
  /// lane, an open arrival process, and either one request in flight with no batching and no
  /// per-token memory (a fixed memory_per_request: direct_memory_fits()), or continuous batching
  /// (direct_batched_workload()).
  bool direct_workload() const;
  /// A request's memory_per_request fits the device now (or there is none): alone on its device
  /// with one request in flight, every request of an inline run then allocates the same bytes on
  /// the same state, and none is OOM-killed (an allocation that would fail stays queued).
  bool direct_memory_fits() const;
  /// A batched engine (max_batch > 0) on one GPU and one lane from an open arrival process: its
  /// pending events are its own (the next arrival, the iteration due, the in-flight kernel's
  /// launch end, the device's completion) while it is alone on an empty device.
  bool direct_batched_workload() const;
  /// The arrival event at now, run with every following event of this tenant and its device
  /// inline, up to the first event of anything else (or a tick); then the pending ones queued.
  void run_direct();
  /// run_direct() for a single_launch_ workload: each request's one kernel kept in locals, the
  /// device's changes through its solo session, Requests built only for what is pending at the
  /// end; it runs on past the sampler's ticks, delivering them between its events
  /// (Simulator::InlineScope::deliver_ticks_before), up to the first event of anything else. False
  /// (nothing done) when the kernel would never finish alone (rate 0).
  bool run_direct_single();
  struct DirectEvents;  // the tenant's pending events while inline (direct.cpp)
  /// run_direct() for a batched engine: the queued path's handlers run inline (dispatch() and
  /// issue_next_kernel() hand their events to `direct_pending_`), past the sampler's ticks
  /// (delivered between its events), up to the first event of anything else.
  void run_direct_batched();
  void direct_batched_completion(DirectEvents& pending);
  /// Whether this tenant's kernels can run inline as the holder of a time-sliced device (fixed
  /// at construction): direct_workload() without batching (one request in flight, one GPU, one
  /// lane, open arrivals, no per-token memory).
  bool holder_workload() const;
  /// The stream's launch overhead ended now (on_stream_ready) and its tenant's context runs its
  /// slice on its time-sliced device (Device::SoloSession::available_to_holder): this submission
  /// and every following event of the tenant's kernels (their completions, the next kernels'
  /// launch ends) inline, with the queued path's handlers (direct_pending_), up to the first
  /// event of anything else (or a tick), or a kernel not issued yet; then what is pending is
  /// queued.
  void run_holder(Stream& stream);
  void direct_iteration_due();  // dispatch()'s on_iteration_due event at now, inline
  /// A request that arrived during an inline run and waits (a Request of queue_ once queued).
  struct DirectArrival {
    std::uint64_t id = 0;
    Nanos arrival = 0;
    std::int64_t input_tokens = 0, output_tokens = 0;
    bool measured = false;
  };
  bool direct_arrival(Nanos now, DirectArrival& a);
  /// The arrival's fields (id, arrival, measured, tokens) into the request R.
  static void take_arrival(Request& r, const DirectArrival& a);
  /// R's one stream (one GPU, one lane), as start_streams() leaves it but for the kernel, which
  /// prepare_kernel() resets before the device sees it.
  static Stream& one_stream(Request& r);
  void direct_arrive(DirectEvents& pending);
  void queue_pending(const DirectEvents& pending);
  bool direct_start(const DirectArrival& a, DirectEvents& pending);
  void direct_finish(Request& r);
  void direct_next(DirectEvents& pending);
  void direct_issue(Stream& stream, DirectEvents& pending);
  void direct_submit(Stream& stream, DirectEvents& pending);
  void direct_ready(DirectEvents& pending);
  void direct_completion(DirectEvents& pending);

  // --- arrivals (arrivals.cpp) ---------------------------------------------------------------
  void assign_tokens(Request& r);
  /// The token counts of the request arriving now (the trace row just read, or drawn).
  void draw_tokens(std::int64_t& input, std::int64_t& output) {
    if (spec_.workload.arrivals.process != ArrivalProcess::trace && !spec_.workload.has_tokens &&
        spec_.workload.length_values.empty()) {
      input = output = 0;  // (inline: the usual case, per arrival)
      return;
    }
    read_or_draw_tokens(input, output);
  }
  void read_or_draw_tokens(std::int64_t& input, std::int64_t& output);
  void schedule_next_open_arrival();
  /// The next open arrival after `now` (poisson, constant, trace: draws or reads it), or kNever
  /// when there is none before the end of arrivals.
  Nanos next_open_arrival(Nanos now) {
    const ArrivalSpec& a = spec_.workload.arrivals;
    Nanos next = kNever;
    switch (a.process) {
      case ArrivalProcess::poisson:
        // exponential(1e9 / rate): both divisions done once (arrival_rate_).
        next = next_poisson_arrival(arrivals_rng_, arrival_rate_, now);
        break;
      case ArrivalProcess::constant:
        // Arrivals at 0, 1/rate, 2/rate, ... computed from the count (no drift), from active.from.
        next = constant_arrival(spec_.active_from, next_id_, a.rate_per_s);
        break;
      case ArrivalProcess::trace:
        if (trace_.next(trace_request_))
          next = trace_arrival(spec_.active_from, trace_request_.arrival);
        break;
      case ArrivalProcess::closed:
        return kNever;
    }
    return next < arrivals_end_ ? next : kNever;
  }
  void schedule_closed_arrival(Nanos at);

  // --- request lifecycle (requests.cpp) ------------------------------------------------------
  /// A request arrives now: fails at once if the tenant is dead, else joins the queue.
  void arrive();
  std::unique_ptr<Request> acquire_request();
  /// A finished request's storage made ready for another (what acquire_request resets).
  static void reset_request(Request& r);
  /// Called first by every tenant event (never inside a device callback). Inline: per event.
  /// Finished requests kept for reuse: at most kMaxFreeRequests, the rest are freed with their
  /// kernels (durations, specs, shapes, streams). Without the cap a saturated tenant's drain,
  /// which finishes requests with no arrival left to reuse them, kept every finished request's
  /// kernels: memory grew with backlog x kernels per request (issue 36; a queued request holds
  /// no kernels, they are drawn when it starts).
  static constexpr std::size_t kMaxFreeRequests = 64;
  void recycle_graveyard() {
    for (auto& r : graveyard_) {
      if (free_requests_.size() < kMaxFreeRequests) free_requests_.push_back(std::move(r));
    }
    graveyard_.clear();
  }
  void dispatch();
  void finish_request(Request& r, RequestStatus status);
  /// The one place a request that never ran is recorded as failed (tenant dead, killed while
  /// queued, too large for its batch server); it goes to the graveyard.
  void fail_waiting(std::unique_ptr<Request> request);
  /// Every stream of `sequence` ran its last kernel.
  void sequence_done(LaunchSequence& sequence);

  // --- launch timing (launch.cpp) ------------------------------------------------------------
  /// Starts a dispatched request: memory, kernels, solo latency, streams. False when the
  /// tenant was killed (OOM).
  bool begin_request(Request& r);
  KernelScaling alone_scaling(const Request& r) const {
    return gpumux::alone_scaling(r.input_tokens, r.output_tokens, spec_.workload.attention_window);
  }
  /// Appends the workload's kernels to `sequence` with their durations drawn now (the one
  /// kernel expansion: requests and batched iterations).
  void expand_kernels(LaunchSequence& sequence, const KernelScaling& scaling);
  /// The kernels a request of `length` input tokens runs: a catalog tenant's with a seq_len
  /// distribution at that length (WorkloadSpec::kernels_by_length; a length between tabulated
  /// ones takes the nearest above, beyond them the nearest end), else the workload's.
  /// O(log lengths).
  const std::vector<KernelSpec>& kernels_for(std::int64_t length) const;
  /// Calls push(kernel, duration, shape) for every launch of the workload under `scaling`, each
  /// launch's duration from base(kernel) (a draw, or the mean) and its token, sequence, context
  /// and roofline terms: the one place the kernel keys' scaling is computed. kShapes: compute
  /// each roofline launch's LaunchShape (else push gets the spec's).
  template <bool kShapes, typename Base, typename Push>
  void each_launch(const KernelScaling& scaling, Base base, Push push) const;
  /// Appends one launch of `k` with drawn duration `d`, as kernel_work(d).
  static void push_kernel(LaunchSequence& sequence, const KernelSpec& k, double d);
  /// A drawn duration as a kernel's work: rounded to whole ns, in [1, 2^62] (NaN: 2^62).
  static double kernel_work(double d);
  /// The launch recursion with these durations alone, ns (each lane in order; the last lane's
  /// end).
  double stream_time(const std::vector<double>& durations,
                     const std::vector<const KernelSpec*>& specs) const;
  /// One step of that recursion, the one place it is written (stream_time and the direct path's
  /// single-launch loop): kernel number K of its request (spec SPEC; FIRST the request's first
  /// kernel, whose host_before starts the host_gap pacing) whose lane's previous kernel finished
  /// at FINISH (0: none) finishes, alone, at
  ///     max(FINISH + host_before, paced) + launch overhead + WORK   (ns),
  /// paced = FIRST's host_before + K x host_gap when host_gap > 0, else 0. O(1).
  double stream_step(double finish, const KernelSpec& spec, const KernelSpec& first, std::size_t k,
                     double work) const {
    const double paced =
        spec_.workload.host_gap > 0
            ? static_cast<double>(first.host_before) +
                  static_cast<double>(k) * static_cast<double>(spec_.workload.host_gap)
            : 0.0;
    const double launch = static_cast<double>(launch_overhead_of(spec));
    return std::max(finish + static_cast<double>(spec.host_before), paced) + launch + work;
  }
  /// each_launch's duration for a workload of one kernel launched once (scale 1, no context or
  /// roofline terms): the drawn base plus the per-sequence term for SEQUENCES sequences, ns,
  /// before kernel_work(). Shared by expand_kernels and the direct path.
  static double single_launch_duration(const KernelSpec& k, double drawn, double sequences) {
    return drawn * 1.0 + static_cast<double>(k.per_sequence) * sequences;
  }
  /// When the CPU issues kernel `kernel` of its stream, whose previous kernel finished at
  /// `previous_finish` (or the sequence started then).
  Nanos issue_time(const LaunchSequence& sequence, std::size_t kernel,
                   Nanos previous_finish) const {
    // The host's dispatch loop starts after the request's own host time (the first kernel's
    // host_before: catalog pre-processing and copies), so pacing counts from there.
    // A batched iteration's engine CPU time (host_lead) comes before all of it.
    const Nanos start = sequence.start + sequence.host_lead;
    const Nanos paced = host_gap_ > 0 ? start + sequence.specs.front()->host_before +
                                            static_cast<Nanos>(kernel) * host_gap_
                                      : start;
    return std::max(previous_finish + sequence.specs[kernel]->host_before, paced);
  }
  /// The launch overhead of kernel `kernel`: its own (kernel traces) or the tenant's.
  Nanos launch_time(const LaunchSequence& sequence, std::size_t kernel) const {
    return launch_overhead_of(*sequence.specs[kernel]);
  }
  /// The launch overhead of kernel K, ns: its own (kernel traces) or the tenant's.
  Nanos launch_overhead_of(const KernelSpec& k) const {
    return k.launch_overhead >= 0 ? k.launch_overhead : launch_overhead_;
  }
  /// The first kernel at or after `from` on `lane` (the sequence's size when none).
  std::size_t next_of_lane(const LaunchSequence& sequence, std::size_t from, int lane) const;
  void start_streams(LaunchSequence& sequence);
  void advance_stream(Stream& stream);
  void issue_next_kernel(Stream& stream);
  void submit_kernel(Stream& stream);
  /// The stream's kernel has ended at `now`: recorded, then the stream goes on.
  void end_kernel(Stream& stream, Nanos now);
  /// The device's KernelRun for the stream's next kernel (submit_kernel's fill).
  KernelRun& prepare_kernel(Stream& stream) {
    const LaunchSequence& sequence = *stream.sequence;
    const KernelSpec& spec = *sequence.specs[stream.next_kernel];
    KernelRun& k = stream.kernel;
    reset_kernel_run(k);
    k.owner = this;
    k.owner_data = &stream;
    k.tenant = index_;
    k.request_id = sequence.id;
    k.kernel_index = static_cast<std::uint32_t>(stream.next_kernel);
    k.work = sequence.durations[stream.next_kernel];
    k.remaining = k.work;
    if (sequence.shapes.empty()) {
      k.sm_fraction = spec.sm_fraction;
      k.memory_bound = spec.memory_bound;
      k.busy_share = spec.busy_share;
      k.waves = spec.waves;
    } else {
      const LaunchShape& shape = sequence.shapes[stream.next_kernel];
      k.sm_fraction = shape.sm_fraction;
      k.memory_bound = shape.memory_bound;
      k.busy_share = shape.busy_share;
      k.waves = shape.waves;
    }
    k.working_set = static_cast<double>(spec.working_set);
    k.grid = spec.grid();
    k.blocks = spec.blocks;
    k.throughput_share = spec.sm_throughput_share;
    k.footprint = spec.block;
    k.priority = kernel_priority_;
    return k;
  }

  // --- collectives (collectives.cpp) ---------------------------------------------------------
  /// At a collective kernel of a multi-GPU sequence: true while other streams have not reached
  /// it yet (this one waits); the last to arrive issues it on every stream.
  bool wait_at_collective(Stream& stream) { return devices_.size() > 1 && barrier(stream); }
  bool barrier(Stream& stream);
  /// A collective kernel of a multi-GPU sequence finished on `stream`: true when it ended there
  /// (the stream waits for the other ranks; the last one to end ends it on every stream, now).
  bool wait_at_collective_end(Stream& stream, Nanos now);

  // --- batched serving (batching.cpp) --------------------------------------------------------
  // The policy (which requests an iteration admits, preempts, prefills and decodes) is
  // models/workload/batching_policy.hpp's; BatchEngine is this tenant as its ServingEngine.
  struct BatchEngine;
  void start_iteration();
  void end_iteration();
  /// The request's latency alone under the tenant's scheduler (mean durations), memoised per
  /// (input, output) tokens: a pure function of them and the spec (at most
  /// kSoloLatencyMemoSize entries, then forgotten; O(output tokens) on a miss, O(1) on a hit).
  double batched_solo_latency(const Request& r);
  /// Mean kernel times of one iteration with `scaling` (the solo latency's iterations).
  double mean_iteration_time(const KernelScaling& scaling) const;
  /// Frees `r`'s KV memory and puts it back at the queue's front (recompute: its prompt and
  /// generated tokens are prefilled again when it is readmitted).
  void preempt(std::size_t in_flight_index);

  // --- memory (memory.cpp) -------------------------------------------------------------------
  /// Bytes a request holds on each GPU while it runs.
  std::int64_t request_bytes(const Request& r) const;
  /// `bytes` on every GPU, or an OOM event and the tenant killed (returns false).
  bool allocate(std::int64_t bytes, const char* what);
  /// `bytes` on every GPU (returns -1), or nothing allocated and the index of the GPU that
  /// refused (`why` says which limit).
  int try_allocate(std::int64_t bytes, std::string& why);
  void release(std::int64_t bytes);
  void release_all();

  // Declared in two groups: first what a kernel's or a request's events read or write (a few
  // cache lines; a run over hundreds of tenants visits each one's state cold), then the rest.
  Run& run_;
  Simulator& sim_;
  int index_;
  const TenantSpec& spec_;
  std::vector<Device*> devices_;
  Nanos launch_overhead_;
  /// The workload's one kernel when it is launched exactly once per request (no repeat, no
  /// per-token count or duration): expand_kernels' short path. nullptr otherwise.
  const KernelSpec* single_launch_ = nullptr;
  /// Some kernel of the workload repeats per output token: only then can a kernel's end be a
  /// request's first token (every spec a sequence holds is one of the workload's kernels).
  bool output_token_kernels_ = false;
  /// Some kernel is a roofline (an `llm:` card): every launch carries its LaunchShape.
  bool shaped_launches_ = false;
  /// Every kernel of the workload has a fixed duration (nothing drawn from kernels_rng_): a
  /// launch sequence's expansion is then a function of its KernelScaling alone, so
  /// expand_kernels keeps the last one (expansion_*) and copies it for an equal scaling instead
  /// of building it again, kernel by kernel (the same numbers: they are that build's).
  bool fixed_durations_ = false;
  bool expansion_valid_ = false;
  KernelScaling expansion_scaling_;
  std::vector<double> expansion_durations_;
  std::vector<const KernelSpec*> expansion_specs_;
  std::vector<LaunchShape> expansion_shapes_;
  /// spec_.workload's host_gap and -priority (CUDA: lower number = more urgent), copied here:
  /// read for every kernel, and the spec's lines are cold in a run over many tenants.
  Nanos host_gap_ = 0;
  int kernel_priority_ = 0;
  bool dead_ = false;
  /// `active.until` has passed: no arrivals, no restart, the start-up memory is freed.
  bool stopped_ = false;
  bool rejected_ = false;
  bool iteration_running_ = false;
  bool iteration_pending_ = false;     // an on_iteration_due event is scheduled
  bool direct_ = false;                // direct_workload() and the run allows the direct path
  bool direct_holder_ = false;         // holder_workload() and the run allows the direct path
  bool direct_in_completion_ = false;  // inline: inside a kernel's completion (submit deferred)
  bool direct_busy_ = false;           // the single-launch loop holds a request (queued or running)
  /// The batched inline loop's pending events (run_direct_batched), or nullptr: while set,
  /// dispatch() and issue_next_kernel() record their events there instead of queueing them.
  DirectEvents* direct_pending_ = nullptr;
  int in_flight_ = 0;
  std::int64_t closed_finished_ = 0;  ///< closed loop: requests finished (sessions' cell count)
  int lanes_ = 1;  // kernel-trace lanes (streams) per sequence: 1 + the largest KernelSpec::lane
  RandomStream kernels_rng_;
  std::uint64_t next_id_ = 0;
  /// Arrivals stop here: min(scenario duration, active.until).
  Nanos arrivals_end_ = 0;
  /// Poisson arrivals: 1.0 / (1e9 / rate), the exponential's parameter per ns (exactly the value
  /// RandomStream::exponential(1e9 / rate) would compute on every draw).
  double arrival_rate_ = 0;
  std::vector<std::unique_ptr<Request>> in_flight_list_;
  std::vector<std::unique_ptr<Request>> graveyard_;      // recycled outside device callbacks
  std::vector<std::unique_ptr<Request>> free_requests_;  // recycled, capacity kept
  std::deque<std::unique_ptr<Request>> queue_;

  RandomStream arrivals_rng_, tokens_rng_;
  mutable std::vector<double> lane_finish_scratch_;
  mutable std::vector<double> mean_durations_scratch_;         // mean_iteration_time's
  mutable std::vector<const KernelSpec*> mean_specs_scratch_;  // mean_iteration_time's
  static constexpr std::size_t kSoloLatencyMemoSize = 4096;
  struct TokenPairHash {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& k) const {
      return std::hash<std::int64_t>{}(k.first * 1000003 + k.second);
    }
  };
  /// batched_solo_latency's memo: (input, output tokens) -> latency (ns).
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, double, TokenPairHash>
      solo_latency_memo_;
  /// The tenant's arrival trace, read from its file a request at a time as arrivals are
  /// scheduled (checked by the resolver, run.resolved.traces; memory O(1) in the trace's length:
  /// issue 12 item 3). trace_request_ is the last request read: the one arriving next.
  TraceCursor trace_;
  TraceRequest trace_request_;
  Iteration iteration_;                        // the batched-serving iteration in progress
  std::vector<DirectArrival> direct_waiting_;  // inline: waiting requests, from direct_head_ on
  std::size_t direct_head_ = 0;
};

}  // namespace gpumux::run
