// LLM card variants (models/workload/llm_card.hpp): mixture of experts (A(n) = E (1 - (1 -
// k/E)^n) experts active for n tokens, grouped expert GEMMs) and sliding-window attention (a
// sequence reads and caches at most the window's tokens). The dense card and the schedulers:
// test_llm_serving.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/run/tenant.hpp"
#include "models/scenario/emit.hpp"
#include "models/workload/engine_cpu.hpp"
#include "models/workload/llm_card.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/unfitted_profile.hpp"
#include "tests/support/llm_cards.hpp"

namespace gpumux {
namespace {

using testing::card;
using testing::kernel_named;
using testing::run_text;

// ---- mixture of experts (llm_card.hpp: A(n) = E (1 - (1 - k/E)^n), grouped expert GEMMs) ----

TEST(MixtureOfExperts, TouchedExpertsClosedForms) {
  const LlmCard mixtral = card("mixtral-8x7b");
  // One token touches exactly its k experts; many touch all E.
  EXPECT_DOUBLE_EQ(llm_touched_experts(mixtral, 1), 2.0);
  EXPECT_NEAR(llm_touched_experts(mixtral, 1000), 8.0, 1e-9);
  // Two tokens: E (1 - (1 - k/E)^2) = 8 (1 - 0.5625) = 3.5.
  EXPECT_DOUBLE_EQ(llm_touched_experts(mixtral, 2), 3.5);
  const LlmCard qwen = card("qwen3-30b-a3b");
  EXPECT_NEAR(llm_touched_experts(qwen, 1), 8.0, 1e-12);
  EXPECT_NEAR(llm_touched_experts(qwen, 4096), 128.0, 1e-6);
  // Increasing in n, never above E.
  for (double n = 1; n < 512; n *= 2) {
    EXPECT_LT(llm_touched_experts(qwen, n), llm_touched_experts(qwen, 2 * n));
    EXPECT_LE(llm_touched_experts(qwen, 2 * n), 128.0);
  }
  EXPECT_EQ(llm_touched_experts(card("llama-2-7b"), 64), 0.0);  // dense
}

TEST(MixtureOfExperts, WeightsCountEveryExpertActiveParametersCountK) {
  // Mixtral: per layer attention 4096 (4096 + 2 x 8 x 128) + 4096^2, router 8 x 4096, experts
  // 8 x 3 x 4096 x 14336; embedding and LM head 2 x 32000 x 4096: 46,702,526,464 parameters
  // (the published 46.7B), active with 2 experts 12,879,659,008 (12.9B).
  const LlmCard mixtral = card("mixtral-8x7b");
  const double attention = 4096.0 * (4096 + 2 * 8 * 128) + 4096.0 * 4096;
  EXPECT_DOUBLE_EQ(llm_layer_weights(mixtral), attention + 8.0 * 4096 + 8.0 * 3 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(llm_parameters(mixtral, false), 46702526464.0);
  EXPECT_DOUBLE_EQ(llm_parameters(mixtral, true), 12879659008.0);
  EXPECT_EQ(llm_weight_bytes(mixtral), std::int64_t{46702526464} * 2);
  EXPECT_EQ(llm_kv_bytes_per_token(mixtral), 2 * 32 * 8 * 128 * 2);
  // Qwen3-30B-A3B: 30.5B in all, 3.3B active (its model card).
  const LlmCard qwen = card("qwen3-30b-a3b");
  EXPECT_NEAR(llm_parameters(qwen, false) / 1e9, 30.5, 0.05);
  EXPECT_NEAR(llm_parameters(qwen, true) / 1e9, 3.35, 0.05);
  EXPECT_EQ(llm_kv_bytes_per_token(qwen), 2 * 48 * 4 * 128 * 2);
  // A dense card: active = all.
  const LlmCard llama = card("llama-2-7b");
  EXPECT_EQ(llm_active_layer_weights(llama), llm_layer_weights(llama));
}

TEST(MixtureOfExperts, DecodeAtBatchOneReadsAboutTheActiveWeights) {
  const DeviceProfile& h100 = unfitted_profile("h100-sxm-80gb");
  const LlmCard mixtral = card("mixtral-8x7b");
  // The same architecture dense with every token through all 8 experts (ffn 8 x 14336), and
  // with only 2 (ffn 2 x 14336, the active weights but for the router).
  LlmCard all = mixtral, active = mixtral;
  all.experts = active.experts = 0;
  all.ffn = 8 * 14336;
  active.ffn = 2 * 14336;
  const auto gemm_at = [&](const LlmCard& c, double n) {
    return kernel_named(llm_kernels(c, h100), "gemm").roofline.nanos(n, n, 0);
  };
  const double moe = gemm_at(mixtral, 1), dense_active = gemm_at(active, 1),
               dense_all = gemm_at(all, 1);
  EXPECT_NEAR(moe / dense_active, 1.0, 0.15) << moe << " vs " << dense_active;
  EXPECT_GT(dense_all / moe, 2.5);
  // At a large batch every expert is read: the MoE's GEMMs cost about the all-expert FFN's
  // weight traffic and its FLOPs are the active ones', so it sits between the two.
  EXPECT_GT(gemm_at(mixtral, 4096), gemm_at(active, 4096) * 0.9);
  EXPECT_LT(gemm_at(mixtral, 4096), gemm_at(all, 4096));
}

TEST(MixtureOfExperts, MoeScenarioServesAndBadKeysAreErrors) {
  const std::string head =
      "name: moe\nseed: 2\nduration: 2s\n"
      "gpus:\n  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: exclusive}}\n"
      "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n"
      "      arrivals: {process: poisson, rate: 4/s}\n"
      "      batching: {max_batch: 16}\n      tokens: {input: 256, output: 32}\n";
  const RunResult r = simulate(resolve_scenario(
      load_scenario_text(head + "      llm: {model: qwen3-30b-a3b, dtype: bf16}\n", "moe.yaml")));
  EXPECT_GT(r.tenants[0].completed, 0);
  EXPECT_EQ(r.tenants[0].completed + r.tenants[0].failed, r.tenants[0].requests);
  const std::string inline_card =
      "      llm: {layers: 2, hidden: 1024, heads: 8, vocabulary: 1000, experts: 4, ";
  EXPECT_THROW(load_scenario_text(head + inline_card + "experts_per_token: 5, expert_ffn: 256}\n",
                                  "moe.yaml"),
               InputError);
  EXPECT_THROW(load_scenario_text(head + inline_card + "expert_ffn: 256}\n", "moe.yaml"),
               InputError);  // experts_per_token missing
  EXPECT_THROW(load_scenario_text(head + "      llm: {layers: 2, hidden: 1024, heads: 8, "
                                         "vocabulary: 1000, ffn: 512, expert_ffn: 256}\n",
                                  "moe.yaml"),
               InputError);  // expert_ffn without experts
  // A valid inline MoE card resolves, with every expert's weights in memory.
  const ResolvedScenario ok = resolve_scenario(load_scenario_text(
      head + inline_card + "experts_per_token: 2, expert_ffn: 256, shared_experts: 1}\n",
      "moe.yaml"));
  const LlmCard& c = *ok.scenario.tenants[0].workload.llm;
  EXPECT_DOUBLE_EQ(llm_layer_weights(c), 1024.0 * (1024 + 2 * 1024) + 1024.0 * 1024 + 4.0 * 1024 +
                                             (4 + 1) * 3.0 * 1024 * 256);
}

// ---- sliding-window attention (llm_card.hpp; models/workload/kernel_scaling.hpp causal_pairs)
// ----

TEST(SlidingWindow, CausalPairsClosedForms) {
  // No window, or a window the tokens never pass: sum_j j over the chunk.
  EXPECT_EQ(causal_pairs(0, 100), 100.0 * 101 / 2);
  EXPECT_EQ(causal_pairs(0, 100, 100), causal_pairs(0, 100));
  EXPECT_EQ(causal_pairs(30, 20, 64), causal_pairs(30, 20));
  // Past the window each token attends to W keys: W (W + 1) / 2 + (p - W) W.
  EXPECT_EQ(causal_pairs(0, 1000, 64), 64.0 * 65 / 2 + (1000 - 64) * 64.0);
  // Chunks add up to the whole prompt, whatever the split.
  for (const std::int64_t w : {0, 1, 7, 64, 500}) {
    EXPECT_EQ(causal_pairs(0, 300, w) + causal_pairs(300, 700, w), causal_pairs(0, 1000, w)) << w;
  }
}

std::string windowed_card(const std::string& window, const std::string& tokens) {
  return "name: swa\nseed: 4\nduration: 3s\n"
         "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n"
         "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n"
         "      arrivals: {process: constant, rate: 2/s}\n"
         "      batching: {max_batch: 8}\n      tokens: " +
         tokens +
         "\n      llm: {layers: 8, hidden: 2048, heads: 16, kv_heads: 4, ffn: 5632, "
         "vocabulary: 32000" +
         window + "}\n";
}

TEST(SlidingWindow, AWindowLongerThanEveryRequestChangesNothingAShortOneCapsKvAndWork) {
  const std::string tokens = "{input: 2048, output: 64}";
  const RunResult full = run_text(windowed_card("", tokens));
  const RunResult wide = run_text(windowed_card(", sliding_window: 4096", tokens));
  ASSERT_EQ(full.requests.size(), wide.requests.size());
  for (std::size_t i = 0; i < full.requests.size(); ++i) {
    EXPECT_EQ(full.requests[i].finish_ns, wide.requests[i].finish_ns);
  }
  const RunResult narrow = run_text(windowed_card(", sliding_window: 256", tokens));
  ASSERT_GT(narrow.tenants[0].completed, 0);
  // Less attention work: the first token and every later one come sooner.
  EXPECT_LT(narrow.tenants[0].time_to_first_token.p50, full.tenants[0].time_to_first_token.p50);
  EXPECT_LT(narrow.tenants[0].latency.p50, full.tenants[0].latency.p50);
  // Orca reserves a request's KV at admission: 256 tokens' worth instead of 2112.
  const ResolvedScenario resolved = resolve_scenario(
      load_scenario_text(windowed_card(", sliding_window: 256", tokens), "s.yaml"));
  EXPECT_EQ(resolved.scenario.tenants[0].workload.attention_window, 256);
  EXPECT_EQ(resolved.scenario.tenants[0].workload.llm->sliding_window, 256);
}

}  // namespace
}  // namespace gpumux
