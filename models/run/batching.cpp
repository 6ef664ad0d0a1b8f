// Continuous batching (`batching: {max_batch: B, scheduler: ..., chunk_size: C,
// max_tokens_in_batch: M}`): the tenant is one serving engine that runs Iterations back to back
// while it has work. Each iteration starts after every event of its instant (so simultaneous
// arrivals batch together). Its members, by scheduler (docs/llm-serving.md "Schedulers"):
//
//   orca     admits queued requests FIFO up to B in flight (and M tokens: the prompts plus one
//            per request already in flight), reserving each one's whole KV memory
//            (memory_per_request + memory_per_token x (input + output)); the iteration runs the
//            admitted prompts and one decode step of every request in flight. A request that
//            cannot fit even alone fails with an OOM event.
//   vllm     prefill first (vLLM v0, as Vidur's vllm scheduler): if queued requests fit (B, M
//            tokens, and KV blocks for the prompt) the iteration prefills only them; otherwise it
//            decodes every running request. KV memory grows by `kv_block` tokens; when a block is
//            not free the most recently admitted request is preempted: its memory freed, it goes
//            back to the queue's front and is recomputed (prompt + generated tokens prefilled
//            again) when readmitted.
//   sarathi  chunked prefill (Sarathi-Serve): a token budget of min(C, M) per iteration; every
//            running request past its prompt decodes one token, the rest of the budget goes to
//            prompt chunks, first of requests already admitted, then of new ones (admitted with
//            KV blocks for their prompt). KV memory and preemption as vllm.
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
  const double latency = batched_solo_latency_uncached(r.input_tokens, r.output_tokens);
  solo_latency_memo_.emplace(key, latency);
  return latency;
}

double Tenant::batched_solo_latency_uncached(std::int64_t input_tokens,
                                             std::int64_t output_tokens) const {
  const WorkloadSpec& w = spec_.workload;
  const std::int64_t window = w.attention_window;
  const std::int64_t prompt = input_tokens;
  const std::int64_t outputs = std::max<std::int64_t>(1, output_tokens);
  KernelScaling s;
  s.repeat_per_token = false;
  s.sequences = s.prompt_sequences = s.decode_sequences = 1;
  double total = 0;
  std::int64_t decodes = outputs;  // iterations that decode a token
  if (w.scheduler == BatchScheduler::orca) {
    // One iteration prefills the prompt and decodes; every later one decodes.
    s.input_tokens = prompt;
    s.output_tokens = 1;
    s.batch_tokens = prompt + 1;
    s.prompt_pairs = causal_pairs(0, prompt, window);
    s.context_tokens = s.all_context_tokens = windowed(static_cast<double>(prompt), window);
    total += mean_iteration_time(s);
    decodes = outputs - 1;
  } else {
    // Prompt iterations (one, or ceil(prompt / budget) chunks), the last yielding a token.
    const std::int64_t budget =
        w.scheduler == BatchScheduler::sarathi
            ? std::max<std::int64_t>(1, w.max_tokens_in_batch > 0
                                            ? std::min(w.chunk_size, w.max_tokens_in_batch)
                                            : w.chunk_size)
            : std::max<std::int64_t>(1, prompt);
    s.decode = false;
    s.output_tokens = 0;
    for (std::int64_t done = 0; done < prompt;) {
      const std::int64_t c = std::min(budget, prompt - done);
      s.input_tokens = s.batch_tokens = c;
      s.prompt_pairs = causal_pairs(done, c, window);
      s.all_context_tokens = windowed(static_cast<double>(done + c), window);
      total += mean_iteration_time(s);
      done += c;
      if (c == budget && w.scheduler == BatchScheduler::vllm) break;
    }
    decodes = prompt > 0 ? outputs - 1 : outputs;
  }
  // Decode iterations: the k-th reads the prompt and k generated tokens. When no kernel depends
  // on the context, all cost the same; else each is summed (at most 1e5, then the mean context).
  s.decode = true;
  s.input_tokens = 0;
  s.output_tokens = 1;
  s.batch_tokens = 1;
  s.prompt_pairs = 0;
  const std::int64_t first = outputs - decodes;
  bool context_dependent = false;
  for (const KernelSpec& k : w.kernels) {
    context_dependent = context_dependent || k.per_context_token != 0 || k.roofline.any();
  }
  if (decodes <= 0) return total;
  if (!context_dependent || decodes > 100'000) {
    s.context_tokens = s.all_context_tokens = windowed(
        static_cast<double>(prompt) + static_cast<double>(first + outputs - 1) / 2.0, window);
    return total + static_cast<double>(decodes) * mean_iteration_time(s);
  }
  for (std::int64_t k = first; k < outputs; ++k) {
    s.context_tokens = s.all_context_tokens = windowed(static_cast<double>(prompt + k), window);
    total += mean_iteration_time(s);
  }
  return total;
}

std::int64_t Tenant::kv_bytes(std::int64_t tokens) const {
  return checked::mul_saturating(spec_.workload.memory_per_token, tokens);
}

int Tenant::admit_front(std::int64_t prefill_budget) {
  const WorkloadSpec& w = spec_.workload;
  Request& r = *queue_.front();
  const bool reserve = w.scheduler == BatchScheduler::orca;
  const std::int64_t goal = r.input_tokens + r.tokens_done;  // recompute after a preemption
  std::string why;
  bool never = false;     // it can never be admitted
  bool too_long = false;  // ... because its prompt exceeds the token cap (else: memory)
  const std::int64_t cap = w.max_tokens_in_batch;
  const bool whole_prompt = w.scheduler != BatchScheduler::sarathi;
  if (whole_prompt && cap > 0 && goal + (reserve ? 1 : 0) > cap) {
    never = too_long = true;
    why = "its prompt of " + std::to_string(goal) + " tokens exceeds max_tokens_in_batch " +
          std::to_string(cap);
  } else if (whole_prompt && goal > prefill_budget) {
    return 0;  // the iteration's token budget is spent
  }
  std::int64_t kv_tokens = 0;
  std::int64_t bytes = 0;
  if (!never) {
    if (reserve) {
      bytes = request_bytes(r);
    } else {
      // A sliding window keeps at most its tokens' K and V.
      const std::int64_t held = w.attention_window > 0 ? std::min(goal, w.attention_window) : goal;
      kv_tokens = (held + w.kv_block - 1) / w.kv_block * w.kv_block;
      const std::int64_t kv = kv_bytes(kv_tokens);
      bytes = kv > checked::kMaxInt64 - w.memory_per_request ? checked::kMaxInt64
                                                             : w.memory_per_request + kv;
    }
    if (try_allocate(bytes, why) >= 0) {
      if (in_flight_ > 0) return 0;  // wait for running requests to free their KV memory
      never = true;                  // it cannot fit even alone
    }
  }
  std::unique_ptr<Request> front = std::move(queue_.front());
  queue_.pop_front();
  if (never) {
    run_.record_event(too_long ? EventKind::reject : EventKind::oom, index_,
                      devices_.front()->index(),
                      spec_.name + ": request " + std::to_string(front->id) +
                          (too_long ? " rejected: " : " does not fit alone: ") + why);
    if (front->start >= 0) {
      // A preempted request that can no longer be readmitted: it failed while running.
      front->dead = true;
      front->finish = sim_.now();
      front->status = RequestStatus::failed;
      run_.record_request(index_, *front);
      graveyard_.push_back(std::move(front));
    } else {
      fail_waiting(std::move(front));
    }
    return -1;
  }
  if (front->start < 0) {
    front->start = sim_.now();
    front->solo_latency = batched_solo_latency(*front);
  }
  front->memory = bytes;
  front->kv_tokens = kv_tokens;
  front->prefill_goal = goal;
  front->prefilled = 0;
  in_flight_list_.push_back(std::move(front));
  ++in_flight_;
  return 1;
}

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

bool Tenant::grow_kv(Request& r) {
  // After this step the cache holds the prompt and every generated token.
  const std::int64_t window = spec_.workload.attention_window;
  const std::int64_t needed = window > 0 ? std::min(r.input_tokens + r.tokens_done, window)
                                         : r.input_tokens + r.tokens_done;
  if (needed <= r.kv_tokens) return true;
  const std::int64_t block = spec_.workload.kv_block;
  const std::int64_t bytes = kv_bytes(block);
  for (;;) {
    std::string why;
    if (try_allocate(bytes, why) < 0) {
      r.memory += bytes;
      r.kv_tokens += block;
      return true;
    }
    // No free block: preempt the most recently admitted request (possibly `r` itself).
    const std::size_t victim = in_flight_list_.size() - 1;
    const bool itself = in_flight_list_[victim].get() == &r;
    if (itself && in_flight_ == 1) {
      // Alone and still out of memory: it can never complete.
      run_.record_event(
          EventKind::oom, index_, devices_.front()->index(),
          spec_.name + ": request " + std::to_string(r.id) + " does not fit alone: " + why);
      finish_request(r, RequestStatus::failed);
      return false;
    }
    preempt(victim);
    if (itself) return false;
  }
}

bool Tenant::plan_orca(KernelScaling& s) {
  const WorkloadSpec& w = spec_.workload;
  std::int64_t prefill_tokens = 0;
  double pairs = 0;
  const std::int64_t decoders = in_flight_;
  while (!queue_.empty() && in_flight_ < w.max_batch) {
    const std::int64_t budget = w.max_tokens_in_batch > 0
                                    ? w.max_tokens_in_batch - decoders - prefill_tokens - 1
                                    : checked::kMaxInt64;
    const std::int64_t input = queue_.front()->input_tokens;
    const int admitted = admit_front(budget);
    if (admitted == 0) break;
    if (admitted < 0) continue;
    prefill_tokens += input;
    pairs += causal_pairs(0, input, w.attention_window);
    in_flight_list_.back()->chunk = input;
  }
  if (in_flight_ == 0) return false;
  double context = 0;
  for (const auto& r : in_flight_list_) {
    r->decoding = true;
    context += windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
  }
  const double n = static_cast<double>(in_flight_);
  s.input_tokens = prefill_tokens;
  s.output_tokens = in_flight_;
  s.batch_tokens = prefill_tokens + decoders;
  s.sequences = s.prompt_sequences = s.decode_sequences = n;
  s.prompt_pairs = pairs;
  s.context_tokens = s.all_context_tokens = context;
  return true;
}

bool Tenant::plan_vllm(KernelScaling& s) {
  const WorkloadSpec& w = spec_.workload;
  const std::int64_t cap = w.max_tokens_in_batch > 0 ? w.max_tokens_in_batch : checked::kMaxInt64;
  std::int64_t prefill_tokens = 0;
  double pairs = 0, context = 0;
  int admitted = 0;
  while (!queue_.empty() && in_flight_ < w.max_batch) {
    const int a = admit_front(cap - prefill_tokens);
    if (a == 0) break;
    if (a < 0) continue;
    Request& r = *in_flight_list_.back();
    r.chunk = r.prefill_goal;
    prefill_tokens += r.chunk;
    pairs += causal_pairs(0, r.chunk, w.attention_window);
    context += windowed(static_cast<double>(r.chunk), w.attention_window);
    ++admitted;
  }
  if (admitted > 0) {
    s.decode = false;
    s.input_tokens = s.batch_tokens = prefill_tokens;
    s.output_tokens = 0;
    s.sequences = s.prompt_sequences = static_cast<double>(admitted);
    s.decode_sequences = 0;
    s.prompt_pairs = pairs;
    s.all_context_tokens = context;
    return true;
  }
  // Decode every running request, each with room for its next token's KV.
  for (std::size_t i = 0; i < in_flight_list_.size();) {
    Request& r = *in_flight_list_[i];
    if (!grow_kv(r)) continue;  // r left the list (preempted or failed): same index
    ++i;
  }
  if (in_flight_ == 0) return false;
  for (const auto& r : in_flight_list_) {
    r->decoding = true;
    context += windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
  }
  s.input_tokens = 0;
  s.output_tokens = s.batch_tokens = in_flight_;
  s.sequences = s.decode_sequences = static_cast<double>(in_flight_);
  s.prompt_sequences = 0;
  s.context_tokens = s.all_context_tokens = context;
  return true;
}

bool Tenant::plan_sarathi(KernelScaling& s) {
  const WorkloadSpec& w = spec_.workload;
  std::int64_t budget =
      w.max_tokens_in_batch > 0 ? std::min(w.chunk_size, w.max_tokens_in_batch) : w.chunk_size;
  // Decodes first: every running request past its prompt, while the budget lasts.
  for (std::size_t i = 0; i < in_flight_list_.size() && budget > 0;) {
    Request& r = *in_flight_list_[i];
    if (r.prefilled < r.prefill_goal) {
      ++i;
      continue;
    }
    if (!grow_kv(r)) continue;
    r.decoding = true;
    --budget;
    ++i;
  }
  // Then prompt chunks: requests already admitted, then new ones.
  std::int64_t prefill_tokens = 0, decoders = 0;
  double pairs = 0, context = 0, prompts = 0;
  auto take_chunk = [&](Request& r) {
    r.chunk = std::min(budget, r.prefill_goal - r.prefilled);
    pairs += causal_pairs(r.prefilled, r.chunk, w.attention_window);
    prefill_tokens += r.chunk;
    budget -= r.chunk;
    prompts += 1;
  };
  for (const auto& r : in_flight_list_) {
    if (budget > 0 && !r->decoding && r->prefilled < r->prefill_goal) take_chunk(*r);
  }
  while (budget > 0 && !queue_.empty() && in_flight_ < w.max_batch) {
    const int a = admit_front(budget);
    if (a == 0) break;
    if (a > 0) take_chunk(*in_flight_list_.back());
  }
  for (const auto& r : in_flight_list_) {
    if (r->decoding) {
      ++decoders;
      context +=
          windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
    }
  }
  if (prefill_tokens == 0 && decoders == 0) return false;
  double all_context = context;
  for (const auto& r : in_flight_list_) {
    if (r->chunk > 0) {
      all_context += windowed(static_cast<double>(r->prefilled + r->chunk), w.attention_window);
    }
  }
  s.decode = decoders > 0;
  s.input_tokens = prefill_tokens;
  s.output_tokens = decoders;
  s.batch_tokens = prefill_tokens + decoders;
  s.prompt_sequences = prompts;
  s.decode_sequences = static_cast<double>(decoders);
  s.sequences = prompts + static_cast<double>(decoders);
  s.prompt_pairs = pairs;
  s.context_tokens = context;
  s.all_context_tokens = all_context;
  return true;
}

void Tenant::start_iteration() {
  KernelScaling s;
  s.repeat_per_token = false;
  bool any = false;
  switch (spec_.workload.scheduler) {
    case BatchScheduler::orca:
      any = plan_orca(s);
      break;
    case BatchScheduler::vllm:
      any = plan_vllm(s);
      break;
    case BatchScheduler::sarathi:
      any = plan_sarathi(s);
      break;
  }
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
  const bool orca = spec_.workload.scheduler == BatchScheduler::orca;
  std::vector<Request*> done;
  for (const auto& r : in_flight_list_) {
    bool token = r->decoding;
    if (r->chunk > 0) {
      r->prefilled += r->chunk;
      token = token || r->prefilled >= r->prefill_goal;
    }
    r->chunk = 0;
    r->decoding = false;
    if (!token && !orca) continue;
    if (r->first_token < 0) r->first_token = sim_.now();
    if (++r->tokens_done >= std::max<std::int64_t>(1, r->output_tokens)) done.push_back(r.get());
  }
  for (Request* r : done) finish_request(*r, RequestStatus::completed);
  dispatch();
}

}  // namespace gpumux::run
