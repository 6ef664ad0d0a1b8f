#include "models/run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <memory>

#include "models/config/profile_loader.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/trace_reader.hpp"
#include "models/strategies/registry.hpp"
#include "sim/core/random.hpp"
#include "sim/util/units.hpp"

namespace gpumux {
namespace {

class Run;

struct Request;

/// One replica of a request on one GPU: a CUDA stream (a multi-GPU tenant has one per GPU).
struct Stream {
  Request* request = nullptr;
  int device = 0;               // index into the tenant's devices
  std::size_t next_kernel = 0;  // next kernel of the launch sequence
  KernelRun kernel;             // the kernel now on the device
  EventId ready_event;
  bool at_barrier = false;      // waiting for the other GPUs at a collective
  bool launching = false;       // issued by the CPU; only the launch overhead is left
};

/// One request: the same sequence of kernels on each of the tenant's GPUs.
struct Request {
  std::uint64_t id = 0;
  Nanos arrival = 0;
  Nanos start = -1;
  Nanos finish = -1;
  RequestStatus status = RequestStatus::unfinished;
  bool measured = false;
  bool dead = false;
  std::int64_t input_tokens = 0, output_tokens = 0;
  double solo_latency = 0;
  std::vector<double> durations;             // per launched kernel, ns
  std::vector<const KernelSpec*> specs;      // per launched kernel
  std::int64_t memory = 0;                   // bytes held for the request, on each GPU
  std::vector<Stream> streams;               // one per GPU of the tenant
  bool engine_iteration = false;             // a batched-serving iteration, not a user request
  std::int64_t tokens_done = 0;              // batched serving: tokens generated so far
  Nanos first_token = -1;                    // when the first output token was ready
  int streams_done = 0;
  int at_barrier = 0;                        // streams waiting at the current collective
};

class Tenant : public KernelOwner, public EventHandler {
 public:
  Tenant(Run& run, int index, const TenantSpec& spec, std::vector<Device*> devices,
         Nanos launch_overhead);

  void start();
  void kill(EventKind kind, const std::string& detail);
  void schedule_restart(Nanos delay);
  void on_kernel_finished(KernelRun& kernel, Nanos now) override;
  void on_event(std::uint64_t tag) override;
  bool busy() const { return in_flight_ > 0 || !queue_.empty() || iteration_running_; }
  bool dead() const { return dead_; }
  void mark_rejected() { dead_ = true; rejected_ = true; }
  const std::vector<Device*>& devices() const { return devices_; }
  /// Records requests still queued or running (an interrupted run) as unfinished.
  void record_unfinished();
  const TenantSpec& spec() const { return spec_; }
  int index() const { return index_; }

  // statistics
  ExactQuantiles latency, queueing, time_to_first_token;
  double slowdown_sum = 0;
  std::int64_t requests = 0, completed = 0, failed = 0, oom_events = 0, slo_violations = 0;

 private:
  enum Tag : std::uint64_t { kTagArrival = 0, kTagClosedArrival = 1, kTagStart = 2,
                             kTagRestart = 3, kTagRequestReady = 4, kTagIteration = 5 };
  void arrive();
  static double draw(RandomStream& rng, const DurationDistribution& d);
  void assign_tokens(Request& r);
  std::unique_ptr<Request> acquire_request();
  void recycle_graveyard();
  void schedule_next_open_arrival();
  void dispatch();
  bool begin_request(Request& request);
  void start_streams(Request& request);
  // batched serving
  void start_iteration();
  void end_iteration();
  double batched_solo_latency(const Request& request) const;
  double stream_time(const std::vector<double>& durations) const;
  void advance_stream(Stream& stream);
  void issue_next_kernel(Stream& stream);
  void submit_kernel(Stream& stream);
  void finish_request(Request& request, RequestStatus status);
  void count_failure(const Request& request);
  Nanos ready_time(const Request& request, std::size_t kernel, Nanos previous_finish) const;
  std::int64_t memory_held() const;
  bool allocate(std::int64_t bytes, const char* what);

  Run& run_;
  int index_;
  const TenantSpec& spec_;
  std::vector<Device*> devices_;
  Nanos launch_overhead_;
  RandomStream arrivals_rng_, kernels_rng_, tokens_rng_;
  std::vector<TraceRequest> trace_;
  std::size_t trace_next_ = 0;
  std::uint64_t next_id_ = 0;
  std::deque<std::unique_ptr<Request>> queue_;
  std::vector<std::unique_ptr<Request>> in_flight_list_;
  std::vector<std::unique_ptr<Request>> graveyard_;  // recycled outside device callbacks
  std::vector<std::unique_ptr<Request>> free_requests_;  // recycled, capacity kept
  int in_flight_ = 0;
  bool dead_ = false;
  bool rejected_ = false;
  Nanos smallest_slo_ = kNever;
  Request iteration_;             // the batched-serving iteration in progress
  bool iteration_running_ = false;
  bool iteration_pending_ = false;  // a start_iteration event is scheduled
};

class Run : public EventHandler {
 public:
  Run(const ResolvedScenario& resolved, const RunOptions& options);
  RunResult execute();

  Simulator sim;
  const ResolvedScenario& resolved;
  const Scenario& scenario;
  RandomStreams streams;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<Tenant>> tenants;
  RunResult result;
  bool record_kernels = false;
  bool record_requests = true;

  void record_event(EventKind kind, int tenant, int device, const std::string& detail) {
    result.events_log.push_back(EventRecord{sim.now(), kind, tenant, device, detail});
  }
  void record_request(int tenant, const Request& r) {
    // Every completed or failed request passes here: the run ends at the last of them (or at
    // `duration`), whatever else is still pending.
    if (r.status != RequestStatus::unfinished) last_finish_ = std::max(last_finish_, r.finish);
    if (!record_requests) return;
    result.requests.push_back(RequestRecord{static_cast<std::uint32_t>(tenant), r.id, r.arrival,
                                            r.start, r.finish, r.status});
  }
  void on_event(std::uint64_t tag) override;

 private:
  enum Tag : std::uint64_t { kTagWarmup = 1, kTagFaultBase = 16 };
  void sample(Nanos now);
  void finish_timeseries(Nanos end);
  void fill_results(Nanos end);
  void add_assumption_notes();

  const RunOptions& options_;
  Nanos last_finish_ = 0;  // latest completion or failure of a request
  Nanos last_sample_ = 0;
  // Per device: busy and DRAM integrals at each sample time so far (the timeseries' basis).
  std::vector<std::vector<double>> sample_busy_, sample_dram_;
  std::vector<double> warm_busy_, warm_useful_, warm_dram_;
  std::vector<std::vector<double>> warm_client_sm_;
};

// ---------------------------------------------------------------------------------------------

Tenant::Tenant(Run& run, int index, const TenantSpec& spec, std::vector<Device*> devices,
               Nanos launch_overhead)
    : run_(run),
      index_(index),
      spec_(spec),
      devices_(std::move(devices)),
      launch_overhead_(launch_overhead),
      arrivals_rng_(run.streams.stream("tenant/" + spec.name + "/arrivals")),
      kernels_rng_(run.streams.stream("tenant/" + spec.name + "/kernels")),
      tokens_rng_(run.streams.stream("tenant/" + spec.name + "/tokens")) {
  const SloSpec& slo = spec.slo;
  for (const auto& target : {slo.p50, slo.p90, slo.p99, slo.p999}) {
    if (target) smallest_slo_ = std::min(smallest_slo_, *target);
  }
  trace_ = run.resolved.traces[static_cast<std::size_t>(index)];
  // Reserve the expected number of measured latencies (avoids regrowing large vectors).
  const ArrivalSpec& a = spec.workload.arrivals;
  const double window_s = to_seconds(run.scenario.duration - run.scenario.warmup);
  double expected = 0;
  if (a.process == ArrivalProcess::poisson || a.process == ArrivalProcess::constant) {
    expected = a.rate_per_s * window_s * 1.02 + 64;
  } else if (a.process == ArrivalProcess::trace) {
    expected = static_cast<double>(trace_.size());
  }
  if (expected > 0 && expected < 5e8) {
    latency.reserve(static_cast<std::size_t>(expected));
    queueing.reserve(static_cast<std::size_t>(expected));
  }
}

bool Tenant::allocate(std::int64_t bytes, const char* what) {
  if (bytes <= 0) return true;
  // The same allocation on every GPU of the tenant (data-parallel replicas).
  std::string why;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    if (devices_[d]->allocate(index_, bytes, why)) continue;
    for (std::size_t undo = 0; undo < d; ++undo) devices_[undo]->release(index_, bytes);
    ++oom_events;
    run_.record_event(EventKind::oom, index_, devices_[d]->index(),
                      spec_.name + ": " + what + " " + why);
    kill(EventKind::kill, spec_.name + " OOM-killed on " + devices_[d]->geometry().name);
    return false;
  }
  return true;
}

void Tenant::start() {
  run_.sim.schedule_at(0, *this, kTagStart, kPriorityControl);
}

void Tenant::on_event(std::uint64_t tag) {
  recycle_graveyard();
  switch (tag & 7) {
    case kTagStart: {
      if (rejected_) {
        dead_ = true;
      } else {
        allocate(spec_.memory, "start-up allocation:");
      }
      const ArrivalSpec& a = spec_.workload.arrivals;
      if (a.process == ArrivalProcess::closed) {
        for (int i = 0; i < a.concurrency; ++i) arrive();
      } else {
        schedule_next_open_arrival();
      }
      break;
    }
    case kTagArrival:
      arrive();
      schedule_next_open_arrival();
      break;
    case kTagClosedArrival:
      arrive();
      break;
    case kTagIteration:
      iteration_pending_ = false;
      if (!dead_ && !iteration_running_) start_iteration();
      break;
    case kTagRestart:
      if (!dead_ || rejected_) break;
      dead_ = false;
      run_.record_event(EventKind::restart, index_, devices_.front()->index(),
                        spec_.name + " restarted");
      if (allocate(spec_.memory, "start-up allocation:")) dispatch();
      break;
    case kTagRequestReady: {
      auto* stream = reinterpret_cast<Stream*>(tag & ~std::uint64_t{7});
      stream->ready_event = EventId{};
      if (stream->launching) {
        stream->launching = false;
        devices_[static_cast<std::size_t>(stream->device)]->kernel_launching(index_, false);
      }
      submit_kernel(*stream);
      break;
    }
    default:
      break;
  }
}

double Tenant::draw(RandomStream& rng, const DurationDistribution& d) {
  switch (d.kind) {
    case DurationDistribution::Kind::fixed:
      return static_cast<double>(d.value);
    case DurationDistribution::Kind::exponential:
      return rng.exponential(static_cast<double>(d.value));
    case DurationDistribution::Kind::lognormal:
      return rng.lognormal(static_cast<double>(d.value), d.sigma);
    case DurationDistribution::Kind::uniform:
      return rng.uniform(static_cast<double>(d.value), static_cast<double>(d.upper));
  }
  return 0;
}

void Tenant::assign_tokens(Request& r) {
  if (spec_.workload.arrivals.process == ArrivalProcess::trace && trace_next_ > 0) {
    const TraceRequest& t = trace_[trace_next_ - 1];
    r.input_tokens = t.input_tokens;
    r.output_tokens = t.output_tokens;
  } else if (spec_.workload.has_tokens) {
    r.input_tokens = std::llround(std::max(0.0, draw(tokens_rng_, spec_.workload.input_tokens)));
    r.output_tokens = std::llround(std::max(0.0, draw(tokens_rng_, spec_.workload.output_tokens)));
  } else {
    r.input_tokens = r.output_tokens = 0;
  }
}

std::unique_ptr<Request> Tenant::acquire_request() {
  if (free_requests_.empty()) return std::make_unique<Request>();
  std::unique_ptr<Request> r = std::move(free_requests_.back());
  free_requests_.pop_back();
  r->start = r->finish = -1;
  r->status = RequestStatus::unfinished;
  r->measured = r->dead = false;
  r->solo_latency = 0;
  r->durations.clear();
  r->specs.clear();
  r->memory = 0;
  r->tokens_done = 0;
  r->first_token = -1;
  r->engine_iteration = false;
  r->streams_done = 0;
  r->at_barrier = 0;
  return r;
}

void Tenant::recycle_graveyard() {
  for (auto& r : graveyard_) free_requests_.push_back(std::move(r));
  graveyard_.clear();
}

void Tenant::schedule_next_open_arrival() {
  const ArrivalSpec& a = spec_.workload.arrivals;
  const Nanos now = run_.sim.now();
  Nanos next = kNever;
  switch (a.process) {
    case ArrivalProcess::poisson:
      next = now + static_cast<Nanos>(std::llround(arrivals_rng_.exponential(1e9 / a.rate_per_s)));
      break;
    case ArrivalProcess::constant:
      // Arrivals at 0, 1/rate, 2/rate, ... computed from the count (no drift).
      next = static_cast<Nanos>(std::llround(static_cast<double>(next_id_) * 1e9 / a.rate_per_s));
      break;
    case ArrivalProcess::trace:
      if (trace_next_ < trace_.size()) next = trace_[trace_next_++].arrival;
      break;
    case ArrivalProcess::closed:
      return;
  }
  if (next < run_.scenario.duration) run_.sim.schedule_at(next, *this, kTagArrival, kPriorityArrival);
}

void Tenant::arrive() {
  const Nanos now = run_.sim.now();
  if (now >= run_.scenario.duration) return;
  std::unique_ptr<Request> request = acquire_request();
  request->id = next_id_++;
  request->arrival = now;
  request->measured = now >= run_.scenario.warmup;
  assign_tokens(*request);
  if (request->measured) ++requests;
  if (dead_) {
    Request& r = *request;
    r.start = -1;
    r.finish = now;
    r.status = RequestStatus::failed;
    count_failure(r);
    run_.record_request(index_, r);
    graveyard_.push_back(std::move(request));
    if (spec_.workload.arrivals.process == ArrivalProcess::closed) {
      // A dead closed-loop client retries after its think time (at least 1 ms, to avoid a storm).
      const Nanos delay = std::max<Nanos>(spec_.workload.arrivals.think, kMillisecond);
      if (now + delay < run_.scenario.duration) {
        run_.sim.schedule_at(now + delay, *this, kTagClosedArrival, kPriorityArrival);
      }
    }
    return;
  }
  queue_.push_back(std::move(request));
  dispatch();
}

void Tenant::dispatch() {
  if (spec_.workload.max_batch > 0) {
    // The next iteration starts after every event of this instant (so requests arriving
    // together are batched together).
    if (!dead_ && !iteration_running_ && !iteration_pending_) {
      iteration_pending_ = true;
      run_.sim.schedule_at(run_.sim.now(), *this, kTagIteration, kPriorityDefault);
    }
    return;
  }
  while (!dead_ && in_flight_ < spec_.workload.max_in_flight && !queue_.empty()) {
    std::unique_ptr<Request> request = std::move(queue_.front());
    queue_.pop_front();
    Request& r = *request;
    in_flight_list_.push_back(std::move(request));
    ++in_flight_;
    if (!begin_request(r)) return;  // the tenant was killed
  }
}

Nanos Tenant::ready_time(const Request& request, std::size_t kernel, Nanos previous_finish) const {
  const Nanos issue = request.start + static_cast<Nanos>(kernel) * spec_.workload.host_gap;
  return std::max(previous_finish, issue) + launch_overhead_;
}

bool Tenant::begin_request(Request& r) {
  const Nanos now = run_.sim.now();
  r.start = now;
  const WorkloadSpec& w = spec_.workload;
  const std::int64_t bytes =
      w.memory_per_request + w.memory_per_token * (r.input_tokens + r.output_tokens);
  if (!allocate(bytes, "per-request allocation:")) return false;
  r.memory = bytes;
  auto tokens = [&r](TokenCount c) {
    return c == TokenCount::input ? r.input_tokens : c == TokenCount::output ? r.output_tokens : 1;
  };
  // Draw every kernel's duration now, so the solo latency of this exact request is known.
  for (const KernelSpec& k : w.kernels) {
    const std::int64_t repeats =
        k.repeat_per_token == TokenCount::none ? k.repeat : tokens(k.repeat_per_token);
    const double scale =
        k.duration_per_token == TokenCount::none ? 1.0 : static_cast<double>(tokens(k.duration_per_token));
    if (scale <= 0) continue;  // no tokens of that kind: the kernel is not launched
    for (std::int64_t i = 0; i < repeats; ++i) {
      const double d =
          draw(kernels_rng_, k.duration) * scale + static_cast<double>(k.per_sequence);
      r.durations.push_back(std::max(1.0, std::round(d)));
      r.specs.push_back(&k);
    }
  }
  if (r.durations.empty()) {
    // Nothing to run (e.g. zero tokens): the request completes at once.
    r.solo_latency = 0;
    finish_request(r, RequestStatus::completed);
    return true;
  }
  r.solo_latency = stream_time(r.durations);  // the same request alone on the whole GPU
  start_streams(r);
  return true;
}

void Tenant::start_streams(Request& r) {
  r.streams.resize(devices_.size());
  r.streams_done = 0;
  r.at_barrier = 0;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    Stream& stream = r.streams[d];
    stream = Stream{};
    stream.request = &r;
    stream.device = static_cast<int>(d);
  }
  for (Stream& stream : r.streams) advance_stream(stream);
}

double Tenant::stream_time(const std::vector<double>& durations) const {
  double finish = 0;
  for (std::size_t k = 0; k < durations.size(); ++k) {
    const double issue = static_cast<double>(k) * static_cast<double>(spec_.workload.host_gap);
    finish = std::max(finish, issue) + static_cast<double>(launch_overhead_) + durations[k];
  }
  return finish;
}

double Tenant::batched_solo_latency(const Request& r) const {
  // Alone: the first iteration prefills its prompt; every iteration decodes one token.
  std::vector<double> first, later;
  for (const KernelSpec& k : spec_.workload.kernels) {
    const double mean = k.duration.mean();
    const double per_seq = static_cast<double>(k.per_sequence);
    if (k.duration_per_token == TokenCount::input) {
      if (r.input_tokens > 0) first.push_back(mean * static_cast<double>(r.input_tokens) + per_seq);
      continue;
    }
    const int launches = k.repeat_per_token != TokenCount::none ? 1 : k.repeat;
    for (int i = 0; i < launches; ++i) {
      first.push_back(mean + per_seq);
      later.push_back(mean + per_seq);
    }
  }
  const double iterations = static_cast<double>(std::max<std::int64_t>(1, r.output_tokens));
  return stream_time(first) + (iterations - 1) * stream_time(later);
}

void Tenant::start_iteration() {
  const WorkloadSpec& w = spec_.workload;
  const Nanos now = run_.sim.now();
  std::int64_t prefill_tokens = 0;
  while (!queue_.empty() && in_flight_ < w.max_batch) {
    Request& r = *queue_.front();
    const std::int64_t bytes =
        w.memory_per_request + w.memory_per_token * (r.input_tokens + r.output_tokens);
    std::string why;
    bool fits = true;
    std::size_t placed = 0;
    for (; placed < devices_.size() && bytes > 0; ++placed) {
      if (!devices_[placed]->allocate(index_, bytes, why)) {
        fits = false;
        break;
      }
    }
    if (!fits) {
      for (std::size_t undo = 0; undo < placed; ++undo) devices_[undo]->release(index_, bytes);
      if (in_flight_ > 0) break;  // wait for running requests to free their KV memory
      // It cannot fit even alone: the server rejects it.
      std::unique_ptr<Request> rejected = std::move(queue_.front());
      queue_.pop_front();
      ++oom_events;
      run_.record_event(EventKind::oom, index_, devices_.front()->index(),
                        spec_.name + ": request " + std::to_string(rejected->id) +
                            " does not fit alone: " + why);
      rejected->finish = now;
      rejected->status = RequestStatus::failed;
      count_failure(*rejected);
      run_.record_request(index_, *rejected);
      graveyard_.push_back(std::move(rejected));
      continue;
    }
    std::unique_ptr<Request> admitted = std::move(queue_.front());
    queue_.pop_front();
    admitted->start = now;
    admitted->memory = bytes;
    admitted->tokens_done = 0;
    admitted->solo_latency = batched_solo_latency(*admitted);
    prefill_tokens += admitted->input_tokens;
    in_flight_list_.push_back(std::move(admitted));
    ++in_flight_;
  }
  if (in_flight_ == 0) return;
  Request& it = iteration_;
  it.durations.clear();
  it.specs.clear();
  it.dead = false;
  it.engine_iteration = true;
  it.start = now;
  it.id = 0;
  const double batch = static_cast<double>(in_flight_);
  // One iteration: prefill kernels over the prompts admitted now, one launch of each
  // per-token (decode) kernel for the whole batch, and the other kernels as per-iteration work.
  for (const KernelSpec& k : w.kernels) {
    double scale = 1.0;
    if (k.duration_per_token == TokenCount::input) scale = static_cast<double>(prefill_tokens);
    if (k.duration_per_token == TokenCount::output) scale = batch;
    if (scale <= 0) continue;
    const int launches = k.repeat_per_token != TokenCount::none ? 1 : k.repeat;
    for (int i = 0; i < launches; ++i) {
      const double d = draw(kernels_rng_, k.duration) * scale +
                       static_cast<double>(k.per_sequence) * batch;
      it.durations.push_back(std::max(1.0, std::round(d)));
      it.specs.push_back(&k);
    }
  }
  iteration_running_ = true;
  start_streams(it);
}

void Tenant::end_iteration() {
  iteration_running_ = false;
  // Every request in the batch produced one token; those done leave the batch.
  std::vector<Request*> done;
  for (const auto& r : in_flight_list_) {
    if (r->first_token < 0) r->first_token = run_.sim.now();
    if (++r->tokens_done >= std::max<std::int64_t>(1, r->output_tokens)) done.push_back(r.get());
  }
  for (Request* r : done) finish_request(*r, RequestStatus::completed);
  dispatch();
}

void Tenant::advance_stream(Stream& stream) {
  Request& r = *stream.request;
  if (stream.next_kernel == r.durations.size()) {
    if (++r.streams_done == static_cast<int>(r.streams.size())) {
      if (r.engine_iteration) {
        end_iteration();
        return;
      }
      finish_request(r, RequestStatus::completed);
      dispatch();
    }
    return;
  }
  if (r.streams.size() > 1 && r.specs[stream.next_kernel]->collective) {
    // A collective starts on every GPU together, once each stream has reached it.
    stream.at_barrier = true;
    if (++r.at_barrier < static_cast<int>(r.streams.size())) return;
    r.at_barrier = 0;
    for (Stream& s : r.streams) {
      s.at_barrier = false;
      issue_next_kernel(s);
    }
    return;
  }
  issue_next_kernel(stream);
}

void Tenant::issue_next_kernel(Stream& stream) {
  const Nanos now = run_.sim.now();
  const Nanos ready = ready_time(*stream.request, stream.next_kernel, now);
  if (ready <= now) {
    submit_kernel(stream);
  } else {
    const auto tag = reinterpret_cast<std::uint64_t>(&stream) | kTagRequestReady;
    stream.ready_event = run_.sim.schedule_at(ready, *this, tag, kPriorityControl);
    // Already in the stream's queue (the CPU issued it): its context is not idle meanwhile.
    const Request& r = *stream.request;
    if (r.start + static_cast<Nanos>(stream.next_kernel) * spec_.workload.host_gap <= now) {
      stream.launching = true;
      devices_[static_cast<std::size_t>(stream.device)]->kernel_launching(index_, true);
    }
  }
}

void Tenant::submit_kernel(Stream& stream) {
  const Request& r = *stream.request;
  const KernelSpec& spec = *r.specs[stream.next_kernel];
  KernelRun& k = stream.kernel;
  k = KernelRun{};
  k.owner = this;
  k.owner_data = &stream;
  k.tenant = index_;
  k.request_id = r.id;
  k.kernel_index = static_cast<std::uint32_t>(stream.next_kernel);
  k.work = r.durations[stream.next_kernel];
  k.remaining = k.work;
  k.sm_fraction = spec.sm_fraction;
  k.memory_bound = spec.memory_bound;
  k.waves = spec.waves;
  k.working_set = static_cast<double>(spec.working_set);
  k.priority = -spec_.workload.priority;  // CUDA: lower number = more urgent
  devices_[static_cast<std::size_t>(stream.device)]->submit(k);
}

void Tenant::on_kernel_finished(KernelRun& kernel, Nanos now) {
  Stream& stream = *static_cast<Stream*>(kernel.owner_data);
  Request& r = *stream.request;
  if (r.dead) return;
  if (run_.record_kernels) {
    run_.result.kernels.push_back(KernelRecord{
        static_cast<std::uint32_t>(index_), r.id, kernel.kernel_index,
        devices_[static_cast<std::size_t>(stream.device)]->index(), kernel.first_start, now});
  }
  if (r.first_token < 0 && stream.device == 0 &&
      r.specs[stream.next_kernel]->repeat_per_token == TokenCount::output) {
    r.first_token = now;
  }
  ++stream.next_kernel;
  advance_stream(stream);
}

void Tenant::count_failure(const Request& r) {
  // A failed request is a failure and, when the tenant has an SLO, a violation of it.
  if (!r.measured) return;
  ++failed;
  if (smallest_slo_ != kNever) ++slo_violations;
}

void Tenant::finish_request(Request& r, RequestStatus status) {
  const Nanos now = run_.sim.now();
  r.finish = now;
  r.status = status;
  r.dead = true;
  if (r.memory > 0) {
    for (Device* d : devices_) d->release(index_, r.memory);
  }
  r.memory = 0;
  if (r.measured) {
    if (status == RequestStatus::completed) {
      ++completed;
      const Nanos lat = r.finish - r.arrival;
      latency.add(lat);
      queueing.add(r.start - r.arrival);
      if (r.first_token >= 0) time_to_first_token.add(r.first_token - r.arrival);
      slowdown_sum += static_cast<double>(lat) / std::max(1.0, r.solo_latency);
      if (lat > smallest_slo_) ++slo_violations;
    } else {
      count_failure(r);
    }
  }
  run_.record_request(index_, r);
  --in_flight_;
  const auto it = std::find_if(in_flight_list_.begin(), in_flight_list_.end(),
                               [&](const auto& p) { return p.get() == &r; });
  if (it != in_flight_list_.end()) {
    graveyard_.push_back(std::move(*it));
    in_flight_list_.erase(it);
  }
  const ArrivalSpec& a = spec_.workload.arrivals;
  if (a.process == ArrivalProcess::closed && now + a.think < run_.scenario.duration) {
    if (a.think == 0) {
      run_.sim.schedule_at(now, *this, kTagClosedArrival, kPriorityArrival);
    } else {
      run_.sim.schedule_at(now + a.think, *this, kTagClosedArrival, kPriorityArrival);
    }
  }
}

void Tenant::kill(EventKind kind, const std::string& detail) {
  if (dead_) return;
  dead_ = true;
  run_.record_event(kind, index_, devices_.front()->index(), detail);
  for (Device* d : devices_) d->remove_client_kernels(index_);
  if (iteration_running_) {
    for (Stream& stream : iteration_.streams) run_.sim.cancel(stream.ready_event);
    iteration_.dead = true;
    iteration_running_ = false;
  }
  while (!in_flight_list_.empty()) {
    Request& r = *in_flight_list_.front();
    for (Stream& stream : r.streams) run_.sim.cancel(stream.ready_event);
    finish_request(r, RequestStatus::failed);
  }
  while (!queue_.empty()) {
    std::unique_ptr<Request> r = std::move(queue_.front());
    queue_.pop_front();
    r->start = -1;
    r->finish = run_.sim.now();
    r->status = RequestStatus::failed;
    count_failure(*r);
    run_.record_request(index_, *r);
  }
  for (Device* d : devices_) {
    const std::int64_t held = d->client_memory(index_);
    if (held > 0) d->release(index_, held);
  }
}

void Tenant::record_unfinished() {
  for (const auto& r : in_flight_list_) run_.record_request(index_, *r);
  for (const auto& r : queue_) run_.record_request(index_, *r);
}

void Tenant::schedule_restart(Nanos delay) {
  run_.sim.schedule_in(delay, *this, kTagRestart, kPriorityControl);
}

// ---------------------------------------------------------------------------------------------

// The heap is fastest while a handful of events is pending (a single service: 20% faster on
// the quickstart); the calendar queue wins from a few dozen on (40 tenants on 10 GPUs: 9%
// faster; 1200 tenants: 27%). A run keeps about one arrival and one kernel event per request in
// flight pending, so the estimate is the tenants' possible requests in flight. Both kinds give
// the same event order, so the choice never changes results.
QueueKind choose_queue(const ResolvedScenario& resolved, const RunOptions& options) {
  if (options.queue) return *options.queue;
  std::int64_t pending = static_cast<std::int64_t>(resolved.devices.size());
  for (const TenantSpec& t : resolved.scenario.tenants) {
    const int in_flight = std::max(t.workload.max_in_flight, t.workload.max_batch);
    pending += 1 + static_cast<std::int64_t>(in_flight) * static_cast<std::int64_t>(t.devices.size());
  }
  return pending > 64 ? QueueKind::calendar : QueueKind::heap;
}

Run::Run(const ResolvedScenario& r, const RunOptions& options)
    : sim(choose_queue(r, options)),
      resolved(r),
      scenario(r.scenario),
      streams(r.scenario.seed),
      options_(options) {
  record_kernels = scenario.output.kernels;
  record_requests = options.record_requests;
  for (const ResolvedDevice& d : resolved.devices) {
    devices.push_back(make_device(sim, d.geometry, d.sharing));
    devices.back()->set_index(static_cast<int>(devices.size() - 1));
  }
  for (std::size_t t = 0; t < scenario.tenants.size(); ++t) {
    const ResolvedDevice& first = resolved.devices[static_cast<std::size_t>(resolved.tenant_device[t])];
    const DeviceProfile& gpu = *resolved.gpu_profiles[static_cast<std::size_t>(first.gpu)];
    std::vector<Device*> tenant_devices;
    for (int d : resolved.tenant_devices[t]) tenant_devices.push_back(devices[static_cast<std::size_t>(d)].get());
    tenants.push_back(std::make_unique<Tenant>(*this, static_cast<int>(t), scenario.tenants[t],
                                               tenant_devices,
                                               scenario.tenants[t].workload.cuda_graph
                                                   ? gpu.graph_launch_overhead
                                                   : gpu.launch_overhead));
    for (Device* device : tenant_devices) {
      std::string reason;
      if (!device->attach_client(static_cast<int>(t), reason) && !tenants.back()->dead()) {
        tenants.back()->mark_rejected();
        result.events_log.push_back(
            EventRecord{0, EventKind::reject, static_cast<int>(t), device->index(),
                        scenario.tenants[t].name + " rejected: " + reason});
      }
    }
  }
}

void Run::on_event(std::uint64_t tag) {
  if (tag == kTagWarmup) {
    const Nanos now = sim.now();
    for (std::size_t d = 0; d < devices.size(); ++d) {
      warm_busy_[d] = devices[d]->busy_integral(now);
      warm_useful_[d] = devices[d]->useful_integral(now);
      warm_dram_[d] = devices[d]->dram_integral(now);
      for (std::size_t c = 0; c < devices[d]->clients().size(); ++c) {
        warm_client_sm_[d][c] = devices[d]->client_sm_integral(devices[d]->clients()[c], now);
      }
    }
  } else if (tag >= kTagFaultBase) {
    const FaultSpec& fault = scenario.faults[tag - kTagFaultBase];
    int origin = -1;
    for (const auto& t : tenants) {
      if (t->spec().name == fault.tenant) origin = t->index();
    }
    Tenant& tenant = *tenants[static_cast<std::size_t>(origin)];
    // Blast radius: the tenant itself, plus every client of an MPS server it is a client of.
    std::vector<int> affected{origin};
    for (const Device* device : tenant.devices()) {
      if (!device->limits().shared_server) continue;
      for (int c : device->clients()) {
        if (std::find(affected.begin(), affected.end(), c) == affected.end()) affected.push_back(c);
      }
    }
    const Device& device = *tenant.devices().front();
    record_event(EventKind::fault, origin, device.index(),
                 "fatal fault in " + fault.tenant + " on " + device.geometry().name +
                     (affected.size() > 1 ? " (MPS: every client of the server fails)" : ""));
    for (int t : affected) {
      Tenant& victim = *tenants[static_cast<std::size_t>(t)];
      victim.kill(EventKind::kill, victim.spec().name + " terminated by the fault in " +
                                       fault.tenant);
      if (fault.recovery) victim.schedule_restart(*fault.recovery);
    }
  }
}

// Called by the simulator's ticker (not an event): reads the device integrals at `now`, after
// every event at or before `now` ran. Changes nothing the simulation reads.
void Run::sample(Nanos now) {
  const double period = static_cast<double>(now - last_sample_);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const double busy = devices[d]->busy_integral(now);
    const double dram = devices[d]->dram_integral(now);
    TimeseriesSample s;
    s.time_ns = now;
    s.sm_busy = period > 0 ? (busy - sample_busy_[d].back()) / period : 0.0;
    s.dram_busy = period > 0 ? (dram - sample_dram_[d].back()) / period : 0.0;
    s.memory_used_bytes = devices[d]->memory_used();
    result.timeseries[devices[d]->geometry().name].push_back(s);
    sample_busy_[d].push_back(busy);
    sample_dram_[d].push_back(dram);
  }
  last_sample_ = now;
}

// The timeseries ends at `end`: ticks the simulator did not deliver (the queue ran dry before
// `end`) are taken now, ticks after `end` (events that outlive the run, e.g. a restart after the
// drain) are dropped, and a last sample at `end` covers a final partial period.
void Run::finish_timeseries(Nanos end) {
  for (Nanos t = sim.next_tick(); t <= end; t += scenario.output.sample) sample(t);
  last_sample_ = 0;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    auto& series = result.timeseries[devices[d]->geometry().name];
    while (!series.empty() && series.back().time_ns > end) {
      series.pop_back();
      sample_busy_[d].pop_back();
      sample_dram_[d].pop_back();
    }
    if (!series.empty()) last_sample_ = series.back().time_ns;
  }
  if (!devices.empty() && last_sample_ < end) sample(end);
}

RunResult Run::execute() {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::size_t n = devices.size();
  sample_busy_.assign(n, std::vector<double>{0.0});
  sample_dram_.assign(n, std::vector<double>{0.0});
  warm_busy_.assign(n, 0.0);
  warm_useful_.assign(n, 0.0);
  warm_dram_.assign(n, 0.0);
  warm_client_sm_.assign(n, {});
  for (std::size_t d = 0; d < n; ++d) warm_client_sm_[d].assign(devices[d]->clients().size(), 0.0);
  for (auto& t : tenants) t->start();
  if (scenario.warmup > 0) sim.schedule_at(scenario.warmup, *this, kTagWarmup, kPriorityControl);
  // The sampler observes the clock; it is not an event, so it neither extends the run nor
  // counts in `events` (results are identical whatever output.sample is).
  sim.set_ticker([this](Nanos t) { sample(t); }, scenario.output.sample, scenario.output.sample);
  for (std::size_t f = 0; f < scenario.faults.size(); ++f) {
    if (scenario.faults[f].at < scenario.duration) {
      sim.schedule_at(scenario.faults[f].at, *this, kTagFaultBase + f, kPriorityControl);
    }
  }
  bool interrupted = false;
  sim.set_poll(
      [&] {
        if (options_.interrupt != nullptr && options_.interrupt->load()) {
          interrupted = true;
          sim.stop();
        }
        if (options_.progress) options_.progress(sim.now(), scenario.duration, sim.events_processed());
      },
      4096);
  sim.run();
  // The run ends when the last request has completed or failed after `duration` (drain), not
  // when the last pending event ran (a restart scheduled after the drain changes nothing).
  const Nanos end = interrupted ? sim.now() : std::max(scenario.duration, last_finish_);
  result.status = interrupted ? "interrupted" : "complete";
  finish_timeseries(end);
  fill_results(end);
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(result);
}

// Says which of the profile defaults this run relied on are assumptions, not measurements:
// only the parameters its strategies use, and only those the scenario did not set itself.
void Run::add_assumption_notes() {
  std::vector<int> noted;
  for (const ResolvedDevice& d : resolved.devices) {
    if (std::find(noted.begin(), noted.end(), d.gpu) != noted.end()) continue;
    const DeviceProfile& profile = *resolved.gpu_profiles[static_cast<std::size_t>(d.gpu)];
    const GpuSpec& gpu = scenario.gpus[static_cast<std::size_t>(d.gpu)];
    auto assumed = [&profile](const std::string& key) {
      return std::find(profile.assumed.begin(), profile.assumed.end(), key) !=
             profile.assumed.end();
    };
    // (profile key, scenario `sharing:` key) of the parameters each strategy uses.
    std::vector<std::pair<std::string, std::string>> relevant;
    if (d.sharing.mode == SharingMode::time_slicing) {
      relevant = {{"timeslice", "timeslice"},
                  {"context_switch", "context_switch"},
                  {"preemption_latency", "preemption_latency"},
                  {"cache_refill", "cache_refill"}};
    }
    std::string used;
    int count = 0;
    for (const auto& [profile_key, scenario_key] : relevant) {
      if (std::find(d.profile_defaults.begin(), d.profile_defaults.end(), profile_key) ==
              d.profile_defaults.end() ||
          !assumed(profile_key)) {
        continue;
      }
      used += (used.empty() ? "" : ", ") + scenario_key;
      ++count;
    }
    if (!used.empty()) {
      result.notes.push_back(gpu.name + " (" + profile.name + ", " +
                             sharing_mode_name(d.sharing.mode) + "): " + used +
                             " from the profile " + (count > 1 ? "are assumptions" : "is an assumption") +
                             ", not measured; sweep with --set " + gpu.where.key_path +
                             ".sharing.KEY=VALUE");
    }
    if (d.mig_instance >= 0) {
      for (const std::string& key : profile.assumed) {
        if (key.rfind("mig.", 0) == 0) {
          result.notes.push_back(gpu.name + ": some MIG numbers of " + profile.name +
                                 " are assumptions (e.g. " + key +
                                 "; see calibration/README.md)");
          break;
        }
      }
    }
    noted.push_back(d.gpu);
  }
}

void Run::fill_results(Nanos end) {
  result.scenario_name = scenario.name;
  result.seed = scenario.seed;
  result.sim_time_ns = end;
  result.events = sim.events_processed();
  result.scenario_yaml = emit_scenario_yaml(scenario);
  for (const DeviceProfile* p : resolved.gpu_profiles) result.calibration[p->name] = p->content_hash;
  add_assumption_notes();

  const Nanos window_start = std::min(scenario.warmup, end);
  const double window = static_cast<double>(end - window_start);
  const double measured_s = to_seconds(scenario.duration - scenario.warmup);
  for (auto& t : tenants) {
    TenantResult tr;
    tr.name = t->spec().name;
    for (int d : resolved.tenant_devices[static_cast<std::size_t>(t->index())]) {
      tr.device += (tr.device.empty() ? "" : ",") + resolved.devices[static_cast<std::size_t>(d)].geometry.name;
    }
    tr.requests = t->requests;
    tr.completed = t->completed;
    tr.failed = t->failed;
    auto summarize = [](ExactQuantiles& q) {
      LatencySummary s;
      s.count = static_cast<std::int64_t>(q.count());
      s.mean = q.mean();
      s.p50 = q.quantile(0.5);
      s.p90 = q.quantile(0.9);
      s.p99 = q.quantile(0.99);
      s.p999 = q.quantile(0.999);
      s.max = q.max();
      return s;
    };
    tr.latency = summarize(t->latency);
    tr.queueing = summarize(t->queueing);
    tr.time_to_first_token = summarize(t->time_to_first_token);
    tr.slowdown_mean = t->completed > 0 ? t->slowdown_sum / static_cast<double>(t->completed) : 0;
    tr.throughput_per_s = measured_s > 0 ? static_cast<double>(t->completed) / measured_s : 0;
    tr.slo_violations = t->slo_violations;
    const SloSpec& slo = t->spec().slo;
    if (slo.p50) tr.slo_ns["p50"] = *slo.p50;
    if (slo.p90) tr.slo_ns["p90"] = *slo.p90;
    if (slo.p99) tr.slo_ns["p99"] = *slo.p99;
    if (slo.p999) tr.slo_ns["p999"] = *slo.p999;
    tr.oom_events = t->oom_events;
    for (int d : resolved.tenant_devices[static_cast<std::size_t>(t->index())]) {
      const ResolvedDevice& rd = resolved.devices[static_cast<std::size_t>(d)];
      const Device& device = *devices[static_cast<std::size_t>(d)];
      // Attributed GPU time: the tenant's SM occupancy on the device, as a share of the
      // physical GPU (a 1g instance holds 1/8 of it), in seconds.
      const auto& clients = device.clients();
      const auto slot = static_cast<std::size_t>(
          std::find(clients.begin(), clients.end(), t->index()) - clients.begin());
      if (slot < clients.size()) {
        const double sm_ns = device.client_sm_integral(t->index(), end) -
                             warm_client_sm_[static_cast<std::size_t>(d)][slot];
        tr.gpu_seconds +=
            sm_ns / std::max(1, rd.geometry.sms) * rd.geometry.reserved_fraction * 1e-9;
      }
      // Cost: the device's share of its GPU's price over the measured window, split evenly
      // among the device's tenants (what each tenant's reservation costs).
      const double sharing = static_cast<double>(std::max<std::size_t>(1, rd.tenants.size()));
      tr.cost += rd.cost_per_hour * (window * 1e-9 / 3600.0) / sharing;
    }
    result.tenants.push_back(tr);
  }
  for (const GpuSpec& gpu : scenario.gpus) {
    result.gpu_cost += gpu.cost_per_hour * (window * 1e-9 / 3600.0);
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const Device& device = *devices[d];
    const ResolvedDevice& rd = resolved.devices[d];
    DeviceResult dr;
    dr.name = rd.geometry.name;
    dr.profile = rd.geometry.profile;
    dr.sharing = sharing_mode_name(rd.sharing.mode);
    dr.sms = rd.geometry.sms;
    dr.memory_bytes = rd.geometry.memory;
    dr.sm_busy = window > 0 ? (device.busy_integral(end) - warm_busy_[d]) / window : 0;
    dr.useful_fraction = window > 0 ? (device.useful_integral(end) - warm_useful_[d]) / window : 0;
    dr.dram_busy = window > 0 ? (device.dram_integral(end) - warm_dram_[d]) / window : 0;
    dr.memory_peak_bytes = device.memory_peak();
    dr.context_switches = device.context_switches();
    dr.switch_overhead_ns = device.switch_overhead();
    result.devices.push_back(dr);
  }
  if (result.status != "complete") {
    for (auto& t : tenants) t->record_unfinished();
  }
}

}  // namespace

RunResult simulate(const ResolvedScenario& scenario, const RunOptions& options) {
  Run run(scenario, options);
  return run.execute();
}

}  // namespace gpumux
