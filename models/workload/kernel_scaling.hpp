#pragma once
// How a launch sequence counts and scales the workload's kernels (KernelScaling): the token,
// sequence and context terms of one unit of work, a request alone or a batched iteration
// (batching_policy.hpp sets them per iteration; models/run/launch.cpp's each_launch applies
// them to each kernel's `per_token`, `repeat`, `per_sequence` and `per_context_token` keys).
// Causal attention's work per prompt chunk and a sliding window's context are stated here.
// Units: tokens and sequences are counts (doubles where a sum of them is a kernel's scale).
// Every function is O(1).
#include <algorithm>
#include <cstdint>

namespace gpumux {

/// How a launch sequence counts and scales the workload's kernels (`per_token`, `repeat`).
struct KernelScaling {
  std::int64_t input_tokens = 0;   // scales `per_token: input` kernels
  std::int64_t output_tokens = 0;  // scales `per_token: output` kernels
  /// `repeat: output_tokens` kernels run once per token (a request alone) or once (a batched
  /// iteration decodes one token for the whole batch).
  bool repeat_per_token = true;
  double sequences = 1;  // `per_sequence` time is added once per sequence in the launch
  // Batched serving and `per_context_token` (models/workload/kernel_spec.hpp,
  // KernelSpec::per_context_token):
  std::int64_t batch_tokens = 0;  // scales `per_token: batch` kernels
  double prompt_sequences = 1;    // sequences of the `per_token: input` kernels
  double decode_sequences = 1;    // sequences of the `repeat: output_tokens` kernels
  double prompt_pairs = 0;        // causal (query, key) pairs of the prompt tokens
  /// KV tokens the decoding sequences read; a request alone: its prompt (launch i of a
  /// `repeat: output_tokens` kernel reads context_tokens + i).
  double context_tokens = 0;
  double all_context_tokens = 0;  // KV tokens of every sequence (the other kernels)
  bool decode = true;             // `repeat: output_tokens` kernels are launched

  /// Every field equal (doubles compared exactly: a NaN is never equal). O(1).
  bool operator==(const KernelScaling&) const = default;
};

/// The (query, key) pairs causal attention computes for `chunk` new tokens after `done` earlier
/// ones of the same sequence, each new token j (done < j <= done + chunk) attending to
/// min(j, window) keys (window 0 = all): sum over j of min(j, window). O(1).
inline double causal_pairs(std::int64_t done, std::int64_t chunk, std::int64_t window = 0) {
  const double o = static_cast<double>(done);
  const double c = static_cast<double>(chunk);
  if (window <= 0 || done + chunk <= window) return c * o + c * (c + 1) / 2;
  const double w = static_cast<double>(window);
  // Tokens o+1 .. w (if any) attend to all before them, the rest to w keys each.
  const double full = std::max(0.0, w - o);
  return full * o + full * (full + 1) / 2 + (c - full) * w;
}

/// A sequence's attention context of `tokens` tokens under a window (0 = none): min(tokens,
/// window). O(1).
inline double windowed(double tokens, std::int64_t window) {
  return window > 0 ? std::min(tokens, static_cast<double>(window)) : tokens;
}

/// A request run alone (no batching): every kernel over its own tokens, decode launch i over its
/// prompt and i generated tokens (at most `attention_window` of them, 0 = all).
inline KernelScaling alone_scaling(std::int64_t input_tokens, std::int64_t output_tokens,
                                   std::int64_t attention_window = 0) {
  KernelScaling s;
  s.input_tokens = input_tokens;
  s.output_tokens = output_tokens;
  s.batch_tokens = input_tokens + output_tokens;
  const double p = static_cast<double>(input_tokens);
  s.prompt_pairs = causal_pairs(0, input_tokens, attention_window);
  s.context_tokens = windowed(p, attention_window);
  s.all_context_tokens = windowed(p + static_cast<double>(output_tokens), attention_window);
  return s;
}

}  // namespace gpumux
