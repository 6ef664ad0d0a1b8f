// Continuous batching (`batching: {max_batch: B}`): the tenant is one serving engine that runs
// Iterations back to back while it has work. Each iteration starts after every event of its
// instant (so simultaneous arrivals batch together), admits queued requests FIFO up to B in
// flight — a request only when its KV memory fits; one that cannot fit even alone fails with an
// OOM event — then runs: `per_token: input` kernels once over all prompt tokens admitted now
// (prefill; skipped when none), each `repeat: output_tokens` kernel once for the whole batch
// (decode), other kernels as per-iteration work; `per_sequence` adds that much per request in
// the batch. Every request in the batch gains one token per iteration and completes after its
// output tokens. Solo latency: the same request alone (a batch of one, mean durations).
#include <algorithm>

#include "models/run/run.hpp"
#include "models/run/tenant.hpp"

namespace gpumux::run {

void Tenant::on_iteration_due() {
  recycle_graveyard();
  iteration_pending_ = false;
  if (!dead_ && !iteration_running_) start_iteration();
}

double Tenant::batched_solo_latency(const Request& r) const {
  // Alone: the first iteration prefills its prompt; every iteration decodes one token.
  std::vector<double> first, later;
  std::vector<const KernelSpec*> first_specs, later_specs;
  for (const KernelSpec& k : spec_.workload.kernels) {
    const double mean = k.duration.mean();
    const double per_seq = static_cast<double>(k.per_sequence);
    if (k.duration_per_token == TokenCount::input) {
      if (r.input_tokens > 0) {
        first.push_back(mean * static_cast<double>(r.input_tokens) + per_seq);
        first_specs.push_back(&k);
      }
      continue;
    }
    const int launches = k.repeat_per_token != TokenCount::none ? 1 : k.repeat;
    for (int i = 0; i < launches; ++i) {
      first.push_back(mean + per_seq);
      first_specs.push_back(&k);
      later.push_back(mean + per_seq);
      later_specs.push_back(&k);
    }
  }
  const double iterations = static_cast<double>(std::max<std::int64_t>(1, r.output_tokens));
  return stream_time(first, first_specs) + (iterations - 1) * stream_time(later, later_specs);
}

void Tenant::start_iteration() {
  const Nanos now = run_.sim.now();
  std::int64_t prefill_tokens = 0;
  while (!queue_.empty() && in_flight_ < spec_.workload.max_batch) {
    const std::int64_t bytes = request_bytes(*queue_.front());
    std::string why;
    if (try_allocate(bytes, why) >= 0) {
      if (in_flight_ > 0) break;  // wait for running requests to free their KV memory
      // It cannot fit even alone: the server rejects it.
      std::unique_ptr<Request> rejected = std::move(queue_.front());
      queue_.pop_front();
      run_.record_event(
          EventKind::oom, index_, devices_.front()->index(),
          spec_.name + ": request " + std::to_string(rejected->id) + " does not fit alone: " + why);
      fail_waiting(std::move(rejected));
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
  Iteration& it = iteration_;
  it.durations.clear();
  it.specs.clear();
  it.dead = false;
  it.start = now;
  // One iteration: prefill kernels over the prompts admitted now, one launch of each
  // per-token (decode) kernel for the whole batch, and the other kernels as per-iteration work.
  expand_kernels(it,
                 KernelScaling{prefill_tokens, in_flight_, false, static_cast<double>(in_flight_)});
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

}  // namespace gpumux::run
