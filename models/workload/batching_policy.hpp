#pragma once
// Continuous batching's policy (`batching: {max_batch: B, scheduler: ..., chunk_size: C,
// max_tokens_in_batch: M, kv_block: K}`): which requests one iteration of a serving engine
// admits, preempts, prefills (with how many prompt tokens) and decodes, and the iteration's
// KernelScaling. Pure of events and time: the functions read the engine's queue and running list
// and ask it for memory through a ServingEngine (below); the run layer's Tenant
// (models/run/batching.cpp) is one, schedules the iterations and runs their kernels, and a
// test's fake with a byte budget is another. Schedulers (docs/llm-serving.md "Schedulers"):
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
// Memory (bytes, on each GPU of the engine; saturating at INT64_MAX, which fits nowhere):
//   kv_bytes(n)            = memory_per_token x n
//   whole_request_bytes    = memory_per_request + kv_bytes(min(input + output, window))
//   prompt_kv_tokens(g)    = ceil(min(g, window) / K) x K     (window 0 = none)
//   a vllm / sarathi admission holds memory_per_request + kv_bytes(prompt_kv_tokens(g)), where
//   g = input + tokens generated before a preemption (the recompute goal); each decode step
//   needs min(input + generated, window) tokens of cache and takes one block of K when short.
// Tokens of an iteration (the KernelScaling, kernel_scaling.hpp): a prompt chunk of c tokens
// after o computed ones costs c o + c (c + 1) / 2 causal (query, key) pairs; a decoding
// sequence reads min(input + generated, window) KV tokens. A request gains a token when its
// prompt's last chunk or its decode step ran (orca: every request in flight, every iteration),
// and completes after max(1, output) tokens (end_of_iteration).
// Costs: an iteration's plan is O(running + admitted) plus O(1) per preemption; the solo
// latency O(output tokens) iterations (at most 1e5, then their mean).
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "models/workload/kernel_scaling.hpp"
#include "models/workload/workload_spec.hpp"
#include "sim/util/checked.hpp"

namespace gpumux {

/// What a batching policy asks of a serving engine. Seq (the engine's request type) carries the
/// batching state as int64 fields input_tokens, output_tokens, tokens_done (generated so far),
/// memory (bytes held), prefill_goal (prompt tokens to compute), prefilled (of them, computed),
/// kv_tokens (tokens its KV blocks cover), chunk (prompt tokens in this iteration) and the bool
/// decoding (decodes in this iteration).
///   queue_empty(), queue_front()   the FIFO queue of waiting requests (the front: const Seq&)
///   in_flight()                    requests admitted and not finished (int)
///   running()                      the admitted requests in admission order: an indexable
///                                  vector of pointers to Seq (back() = the newest)
///   try_reserve(bytes, why)        takes `bytes` on every GPU, or nothing and says why not
///   admit_front()                  moves the queue's front to the back of running(), counts it
///                                  in flight, and returns it (its start and solo latency set)
///   reject_front(too_long, why)    removes the queue's front as failed (too long for the token
///                                  cap, else it cannot fit in memory even alone)
///   preempt(i)                     frees running()[i]'s memory, clears its batching state and
///                                  puts it back at the queue's front
///   fail_alone(r, why)             r (alone in flight) cannot get a block even alone: failed
template <typename E>
concept ServingEngine = requires(E& e, const E& ce, std::int64_t bytes, std::string& why,
                                 const std::string& reason, std::size_t i) {
  { ce.queue_empty() } -> std::convertible_to<bool>;
  ce.queue_front().input_tokens;
  { ce.in_flight() } -> std::convertible_to<int>;
  e.running().back()->chunk;
  e.running().size();
  { e.try_reserve(bytes, why) } -> std::convertible_to<bool>;
  e.admit_front().prefill_goal;
  e.reject_front(true, reason);
  e.preempt(i);
  e.fail_alone(*e.running().back(), reason);
};

// --- memory and token arithmetic (O(1), no engine) -------------------------------------------

/// Bytes of `tokens` KV tokens: memory_per_token x tokens, saturating.
inline std::int64_t kv_bytes(const WorkloadSpec& w, std::int64_t tokens) {
  return checked::mul_saturating(w.memory_per_token, tokens);
}

/// A request's whole memory, reserved while it runs (orca's admission, and every request of an
/// unbatched tenant): memory_per_request + kv_bytes(input + output tokens, at most the attention
/// window's), saturating.
inline std::int64_t whole_request_bytes(const WorkloadSpec& w, std::int64_t input_tokens,
                                        std::int64_t output_tokens) {
  // A sliding window keeps at most its tokens' K and V per sequence.
  const std::int64_t tokens = w.attention_window > 0
                                  ? std::min(input_tokens + output_tokens, w.attention_window)
                                  : input_tokens + output_tokens;
  const std::int64_t per_token = checked::mul_saturating(w.memory_per_token, tokens);
  return per_token > checked::kMaxInt64 - w.memory_per_request ? checked::kMaxInt64
                                                               : w.memory_per_request + per_token;
}

/// The KV tokens a vllm / sarathi admission allocates for a prompt of `goal` tokens: min(goal,
/// window) rounded up to whole blocks of kv_block tokens.
inline std::int64_t prompt_kv_tokens(const WorkloadSpec& w, std::int64_t goal) {
  // A sliding window keeps at most its tokens' K and V.
  const std::int64_t held = w.attention_window > 0 ? std::min(goal, w.attention_window) : goal;
  return (held + w.kv_block - 1) / w.kv_block * w.kv_block;
}

/// The tokens a running sequence's KV cache holds after this decode step: its prompt and every
/// generated token, at most the attention window's.
inline std::int64_t kv_tokens_needed(const WorkloadSpec& w, std::int64_t input_tokens,
                                     std::int64_t tokens_done) {
  const std::int64_t window = w.attention_window;
  return window > 0 ? std::min(input_tokens + tokens_done, window) : input_tokens + tokens_done;
}

/// sarathi's token budget per iteration: min(chunk_size, max_tokens_in_batch), or chunk_size
/// without a cap.
inline std::int64_t sarathi_token_budget(const WorkloadSpec& w) {
  return w.max_tokens_in_batch > 0 ? std::min(w.chunk_size, w.max_tokens_in_batch) : w.chunk_size;
}

/// The admission of a queued request before memory is asked (admission()).
struct Admission {
  enum class Verdict {
    reserve,   ///< ask for `bytes`: admitted when they are free
    wait,      ///< the iteration's token budget is spent: it stays at the queue's front
    too_long,  ///< its prompt exceeds max_tokens_in_batch: it can never run
  };
  Verdict verdict = Verdict::reserve;
  std::int64_t goal = 0;       ///< prompt tokens to compute: input + generated (a recompute)
  std::int64_t bytes = 0;      ///< memory to hold while it runs (reserve)
  std::int64_t kv_tokens = 0;  ///< tokens its KV blocks cover (vllm / sarathi; orca: 0)
};

/// The admission of a queued request of `input_tokens` + `output_tokens` tokens, `tokens_done`
/// of them generated before a preemption, into an iteration with `prefill_budget` prompt tokens
/// left. orca and vllm take whole prompts: a goal (+1 for orca's decode step) above
/// max_tokens_in_batch is too long, one above the budget waits; sarathi chunks prompts (neither).
/// bytes: orca whole_request_bytes, else memory_per_request + kv_bytes(prompt_kv_tokens(goal)).
Admission admission(const WorkloadSpec& w, std::int64_t input_tokens, std::int64_t output_tokens,
                    std::int64_t tokens_done, std::int64_t prefill_budget);

/// A request's latency alone under the workload's scheduler, ns: the sum of the iterations it
/// would run on an idle engine, each costing mean_iteration_time(scaling). orca: one iteration
/// prefills the prompt and decodes, each later one decodes; vllm: the prompt's iteration (one)
/// then decodes; sarathi: ceil(prompt / budget) chunk iterations, then decodes; the iteration
/// that ends the prompt yields the first token. Decode k reads prompt + k tokens (windowed);
/// when no kernel depends on the context, or beyond 1e5 decodes, they cost the mean context's.
/// O(output tokens + prompt / budget) calls.
double batched_solo_latency(const WorkloadSpec& w, std::int64_t input_tokens,
                            std::int64_t output_tokens,
                            const std::function<double(const KernelScaling&)>& mean_iteration_time);

// --- one iteration (templates over the engine) -----------------------------------------------

/// Admits the queue's front request for a prompt of at most `prefill_budget` tokens with its KV
/// memory (orca: the whole request; vllm / sarathi: the prompt's blocks). Returns 1 admitted (at
/// running().back(), with memory, kv_tokens, prefill_goal set and prefilled 0), 0 it must wait
/// (the budget, or memory that running requests hold), -1 it was rejected (it can never fit
/// alone, or exceeds the token cap).
template <ServingEngine E>
int admit_front(const WorkloadSpec& w, E& engine, std::int64_t prefill_budget) {
  const auto& r = engine.queue_front();
  const Admission a = admission(w, r.input_tokens, r.output_tokens, r.tokens_done, prefill_budget);
  if (a.verdict == Admission::Verdict::wait) return 0;
  std::string why;
  bool never = false;  // it can never be admitted
  const bool too_long = a.verdict == Admission::Verdict::too_long;
  if (too_long) {
    never = true;
    why = "its prompt of " + std::to_string(a.goal) + " tokens exceeds max_tokens_in_batch " +
          std::to_string(w.max_tokens_in_batch);
  } else if (!engine.try_reserve(a.bytes, why)) {
    if (engine.in_flight() > 0) return 0;  // wait for running requests to free their KV memory
    never = true;                          // it cannot fit even alone
  }
  if (never) {
    engine.reject_front(too_long, why);
    return -1;
  }
  auto& admitted = engine.admit_front();
  admitted.memory = a.bytes;
  admitted.kv_tokens = a.kv_tokens;
  admitted.prefill_goal = a.goal;
  admitted.prefilled = 0;
  return 1;
}

/// vllm / sarathi: makes room in `r`'s KV blocks for one more token, taking one block of
/// kv_block tokens at a time and, while none is free, preempting the most recently admitted
/// request (running().back(), possibly `r`). False when `r` itself was preempted or failed (it
/// cannot fit alone): it has left running().
template <ServingEngine E, typename Seq>
bool grow_kv(const WorkloadSpec& w, E& engine, Seq& r) {
  // After this step the cache holds the prompt and every generated token.
  const std::int64_t needed = kv_tokens_needed(w, r.input_tokens, r.tokens_done);
  if (needed <= r.kv_tokens) return true;
  const std::int64_t block = w.kv_block;
  const std::int64_t bytes = kv_bytes(w, block);
  for (;;) {
    std::string why;
    if (engine.try_reserve(bytes, why)) {
      r.memory += bytes;
      r.kv_tokens += block;
      return true;
    }
    // No free block: preempt the most recently admitted request (possibly `r` itself).
    const std::size_t victim = engine.running().size() - 1;
    const bool itself = &*engine.running()[victim] == &r;
    if (itself && engine.in_flight() == 1) {
      engine.fail_alone(r, why);  // alone and still out of memory: it can never complete
      return false;
    }
    engine.preempt(victim);
    if (itself) return false;
  }
}

/// orca's iteration: admits FIFO (B in flight, M tokens: prompts + one per request in flight
/// before it), each admitted request's whole prompt as its chunk; every request in flight
/// decodes. False when nothing is in flight.
template <ServingEngine E>
bool plan_orca(const WorkloadSpec& w, E& engine, KernelScaling& s) {
  std::int64_t prefill_tokens = 0;
  double pairs = 0;
  const std::int64_t decoders = engine.in_flight();
  while (!engine.queue_empty() && engine.in_flight() < w.max_batch) {
    const std::int64_t budget = w.max_tokens_in_batch > 0
                                    ? w.max_tokens_in_batch - decoders - prefill_tokens - 1
                                    : checked::kMaxInt64;
    const std::int64_t input = engine.queue_front().input_tokens;
    const int admitted = admit_front(w, engine, budget);
    if (admitted == 0) break;
    if (admitted < 0) continue;
    prefill_tokens += input;
    pairs += causal_pairs(0, input, w.attention_window);
    engine.running().back()->chunk = input;
  }
  if (engine.in_flight() == 0) return false;
  double context = 0;
  for (const auto& r : engine.running()) {
    r->decoding = true;
    context += windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
  }
  const int in_flight = engine.in_flight();
  const double n = static_cast<double>(in_flight);
  s.input_tokens = prefill_tokens;
  s.output_tokens = in_flight;
  s.batch_tokens = prefill_tokens + decoders;
  s.sequences = s.prompt_sequences = s.decode_sequences = n;
  s.prompt_pairs = pairs;
  s.context_tokens = s.all_context_tokens = context;
  return true;
}

/// vllm's iteration: prefills the queued requests that fit (B, M tokens, KV blocks), whole
/// prompts; when none does, every running request decodes, each first given room for its next
/// token (grow_kv, which may preempt). When that empties the running list (every member
/// preempted, or the last one failed alone) while requests wait, the same call plans their
/// prefill, as vLLM's engine loop schedules its next step at once (no idling until the next
/// arrival). False when nothing runs.
template <ServingEngine E>
bool plan_vllm(const WorkloadSpec& w, E& engine, KernelScaling& s, bool after_decode = false) {
  const std::int64_t cap = w.max_tokens_in_batch > 0 ? w.max_tokens_in_batch : checked::kMaxInt64;
  std::int64_t prefill_tokens = 0;
  double pairs = 0, context = 0;
  int admitted = 0;
  while (!engine.queue_empty() && engine.in_flight() < w.max_batch) {
    const int a = admit_front(w, engine, cap - prefill_tokens);
    if (a == 0) break;
    if (a < 0) continue;
    auto& r = *engine.running().back();
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
  for (std::size_t i = 0; i < engine.running().size();) {
    auto& r = *engine.running()[i];
    if (!grow_kv(w, engine, r)) continue;  // r left the list (preempted or failed): same index
    ++i;
  }
  if (engine.in_flight() == 0) {
    // At most one such pass: with nothing running, the admission above ran already this call.
    return !after_decode && !engine.queue_empty() && plan_vllm(w, engine, s, true);
  }
  for (const auto& r : engine.running()) {
    r->decoding = true;
    context += windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
  }
  const int in_flight = engine.in_flight();
  s.input_tokens = 0;
  s.output_tokens = s.batch_tokens = in_flight;
  s.sequences = s.decode_sequences = static_cast<double>(in_flight);
  s.prompt_sequences = 0;
  s.context_tokens = s.all_context_tokens = context;
  return true;
}

/// sarathi's iteration: a budget of sarathi_token_budget(w) tokens; every running request past
/// its prompt decodes one (grow_kv first) while it lasts, then prompt chunks of min(budget left,
/// prompt left) tokens go to admitted requests in order, then to new ones. False when nothing
/// runs.
template <ServingEngine E>
bool plan_sarathi(const WorkloadSpec& w, E& engine, KernelScaling& s) {
  std::int64_t budget = sarathi_token_budget(w);
  // Decodes first: every running request past its prompt, while the budget lasts.
  for (std::size_t i = 0; i < engine.running().size() && budget > 0;) {
    auto& r = *engine.running()[i];
    if (r.prefilled < r.prefill_goal) {
      ++i;
      continue;
    }
    if (!grow_kv(w, engine, r)) continue;
    r.decoding = true;
    --budget;
    ++i;
  }
  // Then prompt chunks: requests already admitted, then new ones.
  std::int64_t prefill_tokens = 0, decoders = 0;
  double pairs = 0, context = 0, prompts = 0;
  auto take_chunk = [&](auto& r) {
    r.chunk = std::min(budget, r.prefill_goal - r.prefilled);
    pairs += causal_pairs(r.prefilled, r.chunk, w.attention_window);
    prefill_tokens += r.chunk;
    budget -= r.chunk;
    prompts += 1;
  };
  for (const auto& r : engine.running()) {
    if (budget > 0 && !r->decoding && r->prefilled < r->prefill_goal) take_chunk(*r);
  }
  while (budget > 0 && !engine.queue_empty() && engine.in_flight() < w.max_batch) {
    const int a = admit_front(w, engine, budget);
    if (a == 0) break;
    if (a > 0) take_chunk(*engine.running().back());
  }
  for (const auto& r : engine.running()) {
    if (r->decoding) {
      ++decoders;
      context +=
          windowed(static_cast<double>(r->input_tokens + r->tokens_done), w.attention_window);
    }
  }
  if (prefill_tokens == 0 && decoders == 0) return false;
  double all_context = context;
  for (const auto& r : engine.running()) {
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

/// The next iteration under w.scheduler: its members marked (chunk, decoding) and its scaling
/// in `s` (repeat_per_token left to the caller). False when nothing can run.
template <ServingEngine E>
bool plan_iteration(const WorkloadSpec& w, E& engine, KernelScaling& s) {
  switch (w.scheduler) {
    case BatchScheduler::orca:
      return plan_orca(w, engine, s);
    case BatchScheduler::vllm:
      return plan_vllm(w, engine, s);
    case BatchScheduler::sarathi:
      return plan_sarathi(w, engine, s);
  }
  return false;
}

/// What an iteration that ran gave one of its members (end_of_iteration()).
enum class IterationOutcome { no_token, token, completed };

/// After an iteration ran: `r`'s chunk counted as prefilled and its marks (chunk, decoding)
/// cleared; it gains a token when it decoded or its prompt's last chunk ran (orca: always), and
/// is completed at max(1, output_tokens) tokens. O(1).
template <typename Seq>
IterationOutcome end_of_iteration(Seq& r, BatchScheduler scheduler) {
  bool token = r.decoding;
  if (r.chunk > 0) {
    r.prefilled += r.chunk;
    token = token || r.prefilled >= r.prefill_goal;
  }
  r.chunk = 0;
  r.decoding = false;
  if (!token && scheduler != BatchScheduler::orca) return IterationOutcome::no_token;
  return ++r.tokens_done >= std::max<std::int64_t>(1, r.output_tokens) ? IterationOutcome::completed
                                                                       : IterationOutcome::token;
}

}  // namespace gpumux
