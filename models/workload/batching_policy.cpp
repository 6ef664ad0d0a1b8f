// Continuous batching's policy: the admission arithmetic and a request's solo latency under its
// scheduler (batching_policy.hpp states the rules; the iteration plans are templates there).
#include "models/workload/batching_policy.hpp"

#include <algorithm>

namespace gpumux {

Admission admission(const WorkloadSpec& w, std::int64_t input_tokens, std::int64_t output_tokens,
                    std::int64_t tokens_done, std::int64_t prefill_budget) {
  Admission a;
  const bool reserve = w.scheduler == BatchScheduler::orca;
  a.goal = input_tokens + tokens_done;  // recompute after a preemption
  const std::int64_t cap = w.max_tokens_in_batch;
  const bool whole_prompt = w.scheduler != BatchScheduler::sarathi;
  if (whole_prompt && cap > 0 && a.goal + (reserve ? 1 : 0) > cap) {
    a.verdict = Admission::Verdict::too_long;
    return a;
  }
  if (whole_prompt && a.goal > prefill_budget) {
    a.verdict = Admission::Verdict::wait;  // the iteration's token budget is spent
    return a;
  }
  if (reserve) {
    a.bytes = whole_request_bytes(w, input_tokens, output_tokens);
  } else {
    a.kv_tokens = prompt_kv_tokens(w, a.goal);
    const std::int64_t kv = kv_bytes(w, a.kv_tokens);
    a.bytes = kv > checked::kMaxInt64 - w.memory_per_request ? checked::kMaxInt64
                                                             : w.memory_per_request + kv;
  }
  return a;
}

double batched_solo_latency(
    const WorkloadSpec& w, std::int64_t input_tokens, std::int64_t output_tokens,
    const std::function<double(const KernelScaling&)>& mean_iteration_time) {
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
    const std::int64_t budget = w.scheduler == BatchScheduler::sarathi
                                    ? std::max<std::int64_t>(1, sarathi_token_budget(w))
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

}  // namespace gpumux
