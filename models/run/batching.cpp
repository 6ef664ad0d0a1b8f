// Continuous batching (`batching: {max_batch: B, scheduler: ..., chunk_size: C,
// max_tokens_in_batch: M}`) as events: the tenant is one serving engine that runs Iterations
// back to back while it has work. Each iteration starts after every event of its instant (so
// simultaneous arrivals batch together). Which requests it admits, preempts, prefills and
// decodes, with its token counts, is the policy of models/workload/batching_policy.hpp (orca,
// vllm, sarathi; docs/llm-serving.md "Schedulers"); here the tenant is the policy's
// ServingEngine (BatchEngine: its queue, its in-flight list, its GPUs' memory, its events).
//
// Kernels of an iteration (launch.cpp, each_launch): `per_token: input` kernels over its prompt
// tokens P (their per_context_token over the prompt chunks' causal (query, key) pairs: a chunk
// of c tokens after o computed ones has c o + c (c + 1) / 2), `per_token: batch` kernels over
// P + decoding sequences, `repeat: output_tokens` kernels once when some sequence decodes
// (per_sequence per decoding sequence, per_context_token per KV token they read: prompt +
// generated), other kernels once. Before its kernels the engine spends its CPU time,
// per_iteration + per_sequence x the iteration's sequences (`engine_cpu:`,
// models/workload/engine_cpu.hpp): the first kernel is issued that much after the iteration
// starts, and its GPU is the neighbours' meanwhile. A request gains a token when its prompt's last
// chunk or its decode step ran, and completes after its output tokens. Solo latency: the same
// request alone under the same scheduler (mean durations).
#include <algorithm>
#include <cmath>

#include "models/run/run.hpp"
#include "models/run/tenant.hpp"
#include "models/workload/batching_policy.hpp"
#include "sim/util/checked.hpp"

namespace gpumux::run {

void Tenant::on_iteration_due() {
  recycle_graveyard();
  iteration_pending_ = false;
  if (!dead_ && !iteration_running_) start_iteration();
}

double Tenant::batched_solo_latency(const Request& r) {
  const std::pair<std::int64_t, std::int64_t> key{r.input_tokens, r.output_tokens};
  const auto found = solo_latency_memo_.find(key);
  if (found != solo_latency_memo_.end()) return found->second;
  if (solo_latency_memo_.size() >= kSoloLatencyMemoSize) solo_latency_memo_.clear();
  const double latency = gpumux::batched_solo_latency(
      spec_.workload, r.input_tokens, r.output_tokens,
      [this](const KernelScaling& s) { return mean_iteration_time(s); });
  solo_latency_memo_.emplace(key, latency);
  return latency;
}

/// The tenant as the batching policy's ServingEngine (models/workload/batching_policy.hpp): its
/// queue and in-flight list, its GPUs' memory, and the events and records of admissions,
/// rejections, preemptions and failures.
struct Tenant::BatchEngine {
  Tenant& t;
  bool queue_empty() const { return t.queue_.empty(); }
  const Request& queue_front() const { return *t.queue_.front(); }
  int in_flight() const { return t.in_flight_; }
  std::vector<std::unique_ptr<Request>>& running() { return t.in_flight_list_; }
  bool try_reserve(std::int64_t bytes, std::string& why) { return t.try_allocate(bytes, why) < 0; }
  Request& admit_front() {
    std::unique_ptr<Request> front = std::move(t.queue_.front());
    t.queue_.pop_front();
    if (front->start < 0) {
      front->start = t.sim_.now();
      front->solo_latency = t.batched_solo_latency(*front);
    }
    t.in_flight_list_.push_back(std::move(front));
    ++t.in_flight_;
    return *t.in_flight_list_.back();
  }
  void reject_front(bool too_long, const std::string& why) {
    std::unique_ptr<Request> front = std::move(t.queue_.front());
    t.queue_.pop_front();
    t.run_.record_event(too_long ? EventKind::reject : EventKind::oom, t.index_,
                        t.devices_.front()->index(),
                        t.spec_.name + ": request " + std::to_string(front->id) +
                            (too_long ? " rejected: " : " does not fit alone: ") + why);
    if (front->start >= 0) {
      // A preempted request that can no longer be readmitted: it failed while running.
      front->dead = true;
      front->finish = t.sim_.now();
      front->status = RequestStatus::failed;
      t.run_.record_request(t.index_, *front);
      t.graveyard_.push_back(std::move(front));
    } else {
      t.fail_waiting(std::move(front));
    }
  }
  void preempt(std::size_t index) { t.preempt(index); }
  void fail_alone(Request& r, const std::string& why) {
    t.run_.record_event(
        EventKind::oom, t.index_, t.devices_.front()->index(),
        t.spec_.name + ": request " + std::to_string(r.id) + " does not fit alone: " + why);
    t.finish_request(r, RequestStatus::failed);
  }
};

void Tenant::preempt(std::size_t index) {
  std::unique_ptr<Request> r = std::move(in_flight_list_[index]);
  in_flight_list_.erase(in_flight_list_.begin() + static_cast<std::ptrdiff_t>(index));
  --in_flight_;
  release(r->memory);
  r->memory = 0;
  r->kv_tokens = 0;
  r->prefilled = r->prefill_goal = r->chunk = 0;
  r->decoding = false;
  ++r->preemptions;
  run_.record_event(EventKind::preempt, index_, devices_.front()->index(),
                    spec_.name + ": request " + std::to_string(r->id) +
                        " preempted (KV cache full after " + std::to_string(r->tokens_done) +
                        " tokens; recomputed when readmitted)");
  queue_.push_front(std::move(r));
}

void Tenant::start_iteration() {
  KernelScaling s;
  s.repeat_per_token = false;
  BatchEngine engine{*this};
  const bool any = plan_iteration(spec_.workload, engine, s);
  if (!any || dead_) return;
  Iteration& it = iteration_;
  it.durations.clear();
  it.specs.clear();
  it.shapes.clear();
  it.dead = false;
  it.start = sim_.now();
  // The engine's CPU time before the kernels (scheduling, inputs, sampling, outputs:
  // models/workload/engine_cpu.hpp), whole ns; bounded at load, so the rounding is exact.
  it.host_lead = static_cast<Nanos>(std::llround(spec_.workload.engine_cpu.time(s.sequences)));
  expand_kernels(it, s);
  iteration_running_ = true;
  start_streams(it);
}

void Tenant::end_iteration() {
  iteration_running_ = false;
  // A request gains a token when its decode step or its prompt's last chunk ran (orca: every
  // request in flight); those with all their output tokens leave the batch.
  std::vector<Request*> done;
  for (const auto& r : in_flight_list_) {
    const IterationOutcome outcome = end_of_iteration(*r, spec_.workload.scheduler);
    if (outcome == IterationOutcome::no_token) continue;
    if (r->first_token < 0) r->first_token = sim_.now();
    if (outcome == IterationOutcome::completed) done.push_back(r.get());
  }
  for (Request* r : done) finish_request(*r, RequestStatus::completed);
  dispatch();
}

}  // namespace gpumux::run
