// LLM serving (models/workload/llm_card.hpp, models/run/batching.cpp): the model card's closed
// forms (weights, KV bytes per token, the largest batch), the roofline's laws (decode time linear
// in the KV length at a fixed batch, prefill compute-bound at long prompts, decode GEMMs
// memory-bound on few SMs), the schedulers' invariants (chunked prefill's iteration count,
// preemption completing every request, max_tokens_in_batch never exceeded, random instances) and
// the engine's CPU time. Mixture of experts and sliding-window attention:
// test_llm_card_variants.cpp.
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
#include "models/workload/workload_catalog.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/unfitted_profile.hpp"
#include "tests/support/llm_cards.hpp"

namespace gpumux {
namespace {

using testing::card;
using testing::kernel_named;
using testing::run_text;

// A decode iteration of b sequences reading `context` cached tokens in all (ns, kernels alone).
double decode_iteration(const std::vector<KernelSpec>& kernels, double b, double context) {
  double t = 0;
  for (const KernelSpec& k : kernels) {
    if (k.duration_per_token == TokenCount::input) continue;  // no prompt tokens
    // gemm over b tokens, lm-head and attention-decode over b sequences.
    t += k.roofline.nanos(b, b, k.repeat_per_token != TokenCount::none ? context : 0);
  }
  return t;
}

TEST(LlmCard, Llama2SevenBClosedForms) {
  const LlmCard c = card("llama-2-7b");
  // KV: 2 (K, V) x 32 layers x 32 KV heads x 128 head dim x 2 bytes.
  EXPECT_EQ(llm_kv_bytes_per_token(c), 2 * 32 * 32 * 128 * 2);
  EXPECT_EQ(llm_kv_bytes_per_token(c), 524288);
  // Weights: 32 x (4096 (4096 + 8192) + 4096^2 + 3 x 4096 x 11008) + 2 x 32000 x 4096 =
  // 6,738,149,376 parameters (the published 6.74B), 2 bytes each.
  EXPECT_EQ(llm_weight_bytes(c), std::int64_t{6738149376} * 2);
  // TP halves the weights and the KV heads each GPU holds.
  EXPECT_EQ(llm_weight_bytes(card("llama-2-7b", 2)), std::int64_t{6738149376});
  EXPECT_EQ(llm_kv_bytes_per_token(card("llama-2-7b", 2)), 524288 / 2);
}

TEST(LlmCard, GroupedQueryAttentionKvHeads) {
  // Llama-2-70B: 8 KV heads of 128; at tp 8 one per GPU, at tp 16 still one (replicated).
  EXPECT_EQ(llm_kv_bytes_per_token(card("llama-2-70b")), 2 * 80 * 8 * 128 * 2);
  EXPECT_EQ(llm_kv_bytes_per_token(card("llama-2-70b", 8)), 2 * 80 * 1 * 128 * 2);
  EXPECT_EQ(llm_kv_bytes_per_token(card("llama-2-70b", 16)), 2 * 80 * 1 * 128 * 2);
  EXPECT_EQ(llm_kv_bytes_per_token(card("mistral-7b")), 2 * 32 * 8 * 128 * 2);
}

TEST(LlmCard, HeadDimApartFromHiddenOverHeads) {
  // Qwen3-4B's shape (hidden 2560, 32 query heads and 8 KV heads of 128, 36 layers, ffn 9728,
  // vocabulary 151936): KV 2 x 36 x 8 x 128 x 2 = 147,456 B per token (80-wide heads, hidden /
  // heads, would give 92,160 B); the query is 32 x 128 = 4096 wide, so per layer
  // W = 2560 (4096 + 2 x 8 x 128) + 4096 x 2560 + 3 x 2560 x 9728 = 100,925,440 parameters.
  LlmCard c;
  c.layers = 36;
  c.hidden = 2560;
  c.heads = 32;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.ffn = 9728;
  c.vocabulary = 151936;
  EXPECT_EQ(llm_kv_bytes_per_token(c), 147456);
  EXPECT_DOUBLE_EQ(llm_layer_weights(c), 100925440.0);
  c.head_dim = 0;
  EXPECT_EQ(llm_kv_bytes_per_token(c), 92160);
  EXPECT_DOUBLE_EQ(llm_layer_weights(c),
                   2560.0 * (2560 + 2 * 8 * 80) + 2560.0 * 2560 + 3.0 * 2560 * 9728);
}

TEST(LlmCard, LargestBatchFromMemory) {
  const LlmCard c = card("llama-2-7b");
  const std::int64_t memory = std::int64_t{80} << 30;
  const std::int64_t reserve = std::int64_t{2} << 30;
  const double tokens = 512 + 128;
  const double free = static_cast<double>(memory - llm_weight_bytes(c) - reserve);
  EXPECT_EQ(llm_max_batch_for_memory(c, memory, reserve, tokens),
            static_cast<std::int64_t>(std::floor(free / (524288.0 * tokens))));
  EXPECT_EQ(llm_max_batch_for_memory(card("llama-2-70b"), memory, reserve, tokens), 0);
}

TEST(LlmCard, UnknownCardAndMissingThroughputAreInputErrors) {
  LlmCard c;
  EXPECT_THROW(load_llm_card("llama-9-1b", c), InputError);
  // The A30 profile has no compute_throughput: the roofline cannot be built.
  const DeviceProfile& a30 = unfitted_profile("a30-24gb");
  if (a30.compute.fp16_tensor == 0) {
    EXPECT_THROW(llm_kernels(card("llama-2-7b"), a30), InputError);
  }
  const DeviceProfile& a100 = unfitted_profile("a100-80gb");
  LlmCard fp8 = card("llama-2-7b");
  fp8.dtype = "fp8";  // Ampere has no FP8 tensor cores
  EXPECT_THROW(llm_kernels(fp8, a100), InputError);
}

TEST(LlmRoofline, TabulatedTimeIsLinearBetweenItsPointsAndAlongTheEndSegmentsBeyond) {
  KernelRoofline r;
  r.table_rows = {1, 3, 7};
  r.table_ns = {10, 30, 50};
  r.fixed_ns = 2;
  EXPECT_DOUBLE_EQ(r.nanos(1, 0, 0), 12);
  EXPECT_DOUBLE_EQ(r.nanos(2, 0, 0), 22);
  EXPECT_DOUBLE_EQ(r.nanos(5, 0, 0), 42);
  EXPECT_DOUBLE_EQ(r.nanos(9, 0, 0), 62);   // the last segment's slope, 5 per row
  EXPECT_DOUBLE_EQ(r.nanos(0.5, 0, 0), 7);  // the first segment's, 10 per row
  r.floor_ns = 40;
  EXPECT_DOUBLE_EQ(r.nanos(2, 0, 0), 40);  // the host's floor
  r.rows_are_sequences = true;
  EXPECT_DOUBLE_EQ(r.nanos(1000, 7, 0), 52);  // rows are the sequences
  EXPECT_TRUE(r.any());
}

TEST(LlmRoofline, DecodeTimeLinearInKvLengthAtFixedBatch) {
  const DeviceProfile& a100 = unfitted_profile("a100-80gb");
  const std::vector<KernelSpec> kernels = llm_kernels(card("llama-2-7b"), a100);
  const double b = 8;
  std::vector<double> t;
  for (const double kv : {256.0, 512.0, 1024.0, 2048.0, 4096.0}) {
    t.push_back(decode_iteration(kernels, b, b * kv));
  }
  // Attention reads every cached K and V: slope = KV bytes per token / bandwidth, per token.
  const double slope = 524288.0 / a100.hbm_bandwidth_measured * 1e9;
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_GT(t[i], t[i - 1]);
  const double kvs[] = {256, 512, 1024, 2048, 4096};
  for (std::size_t i = 1; i < t.size(); ++i) {
    EXPECT_NEAR((t[i] - t[i - 1]) / (b * (kvs[i] - kvs[i - 1])), slope, slope * 1e-9);
  }
  // At a fixed batch the GEMMs' time is about the weights' read, 13.5 GB at the measured
  // bandwidth: the catalog's GEMMs (latency floors, split-K reductions) and the layer's
  // elementwise kernels add a few per cent and never undercut it; plus the launch gaps of the
  // 8 L kernels the aggregate stands for (the first's launch is the runner's): 255 x the
  // profile's launch overhead.
  const KernelSpec& gemm = kernel_named(kernels, "gemm");
  EXPECT_DOUBLE_EQ(gemm.roofline.fixed_ns, 255.0 * static_cast<double>(a100.launch_overhead));
  const double read = gemm.roofline.bytes_fixed / a100.hbm_bandwidth_measured * 1e9 +
                      gemm.roofline.bytes_per_token * b / a100.hbm_bandwidth_measured * 1e9;
  EXPECT_GE(gemm.roofline.nanos(b, b, 0), read + gemm.roofline.fixed_ns);
  EXPECT_LE(gemm.roofline.nanos(b, b, 0), 1.05 * read + gemm.roofline.fixed_ns);
  // More tokens never take less time (the table is the catalog's time at each row count).
  double previous = 0;
  for (double n = 1; n <= 65536; n *= 1.25) {
    EXPECT_GE(gemm.roofline.nanos(n, 1, 0), previous) << n;
    previous = gemm.roofline.nanos(n, 1, 0);
  }
}

TEST(LlmRoofline, PrefillComputeBoundAtLongPromptsDecodeMemoryBoundOnFewSms) {
  const DeviceProfile& a100 = unfitted_profile("a100-80gb");
  const std::vector<KernelSpec> kernels = llm_kernels(card("llama-2-7b"), a100);
  const KernelSpec& gemm = kernel_named(kernels, "gemm");
  double f = 0, waves = 0, m = 0, c = 0;
  gemm.roofline.shape(4096, 1, 0, f, waves, m, c);
  EXPECT_LT(m, 0.5);  // 2 x 6.7e9 x 4096 FLOP at 218 TFLOP/s >> 13.5 GB at 1.77 TB/s
  EXPECT_EQ(c, 1.0);  // overlapped phases (contention law 2): the compute phase is the longer
  EXPECT_EQ(f, 1.0);
  EXPECT_GT(waves, 1.0);
  // Time of a long prompt: its FLOPs at the attainable rate, plus the catalog's tile and wave
  // quantization, fills and stores and the elementwise kernels (9 % at 4096 tokens), never less.
  const double flops_time =
      gemm.roofline.flops_per_token * 4096 / (312e12 * kLlmGemmEfficiency) * 1e9;
  EXPECT_GE(gemm.roofline.nanos(4096, 1, 0), flops_time + gemm.roofline.fixed_ns);
  EXPECT_LE(gemm.roofline.nanos(4096, 1, 0), 1.12 * flops_time + gemm.roofline.fixed_ns);
  gemm.roofline.shape(1, 1, 0, f, waves, m, c);
  EXPECT_EQ(m, 1.0);  // batch 1: the weights' read is the longer phase
  EXPECT_LT(c, 0.01);
  const KernelSpec& decode = kernel_named(kernels, "attention-decode");
  decode.roofline.shape(1, 1, 1024, f, waves, m, c);
  EXPECT_NEAR(f, 32.0 / 108.0, 1e-12);  // one block per (sequence, KV head)
  EXPECT_GT(m, 0.9);
}

TEST(LlmRoofline, TensorParallelSplitsTheGemmsAndAddsAnAllReduce) {
  const DeviceProfile& a100 = unfitted_profile("a100-80gb");
  const auto one = llm_kernels(card("llama-2-7b", 1), a100);
  const auto two = llm_kernels(card("llama-2-7b", 2), a100);
  EXPECT_NEAR(kernel_named(two, "gemm").roofline.flops_per_token,
              kernel_named(one, "gemm").roofline.flops_per_token / 2, 1.0);
  const KernelSpec& reduce = kernel_named(two, "allreduce");
  EXPECT_TRUE(reduce.collective);
  // Two ring all-reduces per layer of 4096 x 2 bytes per token, 2 (t - 1) / t of it sent.
  EXPECT_DOUBLE_EQ(reduce.roofline.bytes_per_token, 2.0 * 32 * 4096 * 2 * 2 * 0.5);
  EXPECT_EQ(std::count_if(one.begin(), one.end(), [](const KernelSpec& k) { return k.collective; }),
            0);
}

// NCCL's protocol choice (llm_card.hpp): each protocol's time in closed form, the least taken.
// A decode step's 16 KB all-reduce over 8 ranks goes by LL (latency-bound), a 512-token
// prefill's 8 MiB by LL128 on 8 ranks and by Simple on 2 (its per-step latency paid twice, not
// 14 times, and its full bandwidth); property over random messages: the time is one of the three
// and no more than any, non-decreasing in the message size.
TEST(LlmRoofline, AnAllReduceTakesTheProtocolNcclsTuningModelPicks) {
  const double bw = 300e9, ll_lat = 3.6e-6, ll_hop = 0.47e-6;
  const auto protocols = [&](double bytes, int n, double ll_max) {
    const double steps = 2.0 * (n - 1), bus = steps / n * bytes;
    const double ll_bw = ll_max > 0 ? std::min(ll_max, 0.5 * bw) : 0.5 * bw;
    return std::vector<double>{ll_lat + steps * ll_hop + bus / ll_bw,
                               14.0e-6 + steps * 1.9e-6 + bus / (0.92 * bw),
                               8.4e-6 + steps * 3.4e-6 + bus / bw};
  };
  const double decode = 8192.0 * 2, prefill = 512.0 * 8192 * 2;
  EXPECT_DOUBLE_EQ(nccl_ring_allreduce_seconds(decode, 8, bw, ll_lat, ll_hop, 141e9),
                   protocols(decode, 8, 141e9)[0]);
  EXPECT_DOUBLE_EQ(nccl_ring_allreduce_seconds(prefill, 8, bw, ll_lat, ll_hop, 141e9),
                   protocols(prefill, 8, 141e9)[1]);
  EXPECT_DOUBLE_EQ(nccl_ring_allreduce_seconds(prefill, 2, bw, ll_lat, ll_hop, 141e9),
                   protocols(prefill, 2, 141e9)[2]);
  EXPECT_EQ(nccl_ring_allreduce_seconds(prefill, 1, bw, ll_lat, ll_hop, 0), 0.0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> log_bytes(std::log(64.0), std::log(1e9));
  for (int i = 0; i < 500; ++i) {
    const double bytes = std::exp(log_bytes(rng));
    const int n = 2 + static_cast<int>(rng() % 7);
    const double ll_max = (rng() % 2) ? 87.7e9 : 0.0;
    const double t = nccl_ring_allreduce_seconds(bytes, n, bw, ll_lat, ll_hop, ll_max);
    const std::vector<double> p = protocols(bytes, n, ll_max);
    EXPECT_DOUBLE_EQ(t, *std::min_element(p.begin(), p.end())) << bytes << " " << n;
    EXPECT_LE(t, nccl_ring_allreduce_seconds(bytes * 1.01, n, bw, ll_lat, ll_hop, ll_max));
  }
}

// The card's all-reduce aggregate is that time for each of its 2 L all-reduces: at 512 tokens on
// 8 H100s (compute capability 9.0) 2 x 80 x LL128's time for 8 MiB, against the latency-only LL
// law's 2 x 80 x (3.6 + 14 x 0.47 us) + bytes / bandwidth before; a one-token decode step keeps
// LL's latency.
TEST(LlmRoofline, TheTensorParallelAllReduceIsTheTableOfNcclsProtocolTimes) {
  const DeviceProfile& h100 = unfitted_profile("h100-sxm-80gb");
  const auto kernels = llm_kernels(card("llama-2-70b", 8), h100);
  const KernelSpec& reduce = kernel_named(kernels, "allreduce");
  const KernelFamilies& fam = load_kernel_families();
  for (const double n : {1.0, 512.0, 2048.0}) {
    const double expected =
        160 *
        nccl_ring_allreduce_seconds(n * 8192 * 2, 8, kLlmInterconnect, fam.collective_latency.value,
                                    fam.collective_latency_per_hop.value, kNcclLlMaxHopper) *
        1e9;
    EXPECT_NEAR(reduce.roofline.nanos(n, 1, 0) - reduce.roofline.fixed_ns, expected,
                1e-6 * expected)
        << n;
  }
  const double lat_ll = fam.collective_latency.value + 14 * fam.collective_latency_per_hop.value;
  const double before = 160 * (lat_ll + 1.75 * 512 * 8192 * 2 / kLlmInterconnect) * 1e9;
  EXPECT_GT(reduce.roofline.nanos(512, 1, 0) - reduce.roofline.fixed_ns, 1.5 * before);
}

// --- the schedulers --------------------------------------------------------------------------

std::string serving(const std::string& batching, const std::string& tokens,
                    const std::string& arrivals, const std::string& memory = "1GiB",
                    const std::string& per_token = "16MiB") {
  std::ostringstream y;
  y << "name: llm-sched\nseed: 3\nduration: 10s\noutput: {kernels: true}\n"
    << "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n"
    << "tenants:\n  - name: llm\n    device: gpu0\n    memory: " << memory << "\n"
    << "    workload:\n      arrivals: " << arrivals << "\n      batching: " << batching
    << "\n      tokens: " << tokens << "\n      memory_per_token: " << per_token
    << "\n      request:\n        kernels:\n"
    << "          - {name: prefill, duration: 1us, per_token: input}\n"
    << "          - {name: decode, duration: 50ms, per_sequence: 10us, per_context_token: 100ps,"
       " repeat: output_tokens}\n";
  return y.str();
}

// Durations of the prefill launches (1 us per prompt token; the decode step is 50 ms and more,
// beyond any prompt here).
std::vector<double> prefill_launches(const RunResult& r) {
  std::vector<double> out;
  for (const KernelRecord& k : r.kernels) {
    const double d = static_cast<double>(k.finish_ns - k.start_ns);
    if (d < 40e6) out.push_back(d);
  }
  return out;
}

TEST(Schedulers, ChunkedPrefillSplitsA2048TokenPromptIntoFourIterations) {
  const RunResult r =
      run_text(serving("{max_batch: 8, scheduler: sarathi, chunk_size: 512}",
                       "{input: 2048, output: 3}", "{process: constant, rate: 0.2/s}"));
  ASSERT_EQ(r.tenants[0].completed, 2);
  // Per request: ceil(2048 / 512) = 4 prompt iterations (each 512 us of prefill alone), then
  // 2 decode iterations (the last chunk yields the first token).
  EXPECT_EQ(prefill_launches(r).size(), 2u * 4);
  for (const double d : prefill_launches(r)) EXPECT_NEAR(d, 512'000, 1);
  EXPECT_EQ(r.kernels.size(), 2u * (4 + 2));
  // vllm: the whole prompt in one iteration.
  const RunResult v =
      run_text(serving("{max_batch: 8, scheduler: vllm}", "{input: 2048, output: 3}",
                       "{process: constant, rate: 0.2/s}"));
  EXPECT_EQ(v.kernels.size(), 2u * (1 + 2));
  for (const double d : prefill_launches(v)) EXPECT_NEAR(d, 2'048'000, 1);
}

TEST(Schedulers, VllmPreemptsWhenTheKvCacheRunsOutAndStillCompletesEveryRequest) {
  // 79.25 GiB - 78.25 GiB = 1 GiB of KV at 16 MiB per token: 64 tokens; each request needs
  // 16 + 24 = 40, so two admitted prompts (32 tokens) run out while decoding.
  const RunResult r =
      run_text(serving("{max_batch: 8, scheduler: vllm, kv_block: 4}", "{input: 16, output: 24}",
                       "{process: poisson, rate: 40/s}", "78.25GiB"));
  const TenantResult& t = r.tenants[0];
  EXPECT_GT(t.completed, 100);
  EXPECT_EQ(t.failed, 0);
  int preemptions = 0;
  for (const EventRecord& e : r.events_log) {
    EXPECT_NE(e.kind, EventKind::oom) << e.detail;
    EXPECT_NE(e.kind, EventKind::kill) << e.detail;
    if (e.kind == EventKind::preempt) ++preemptions;
  }
  EXPECT_GT(preemptions, 0);
  for (const RequestRecord& q : r.requests) EXPECT_EQ(q.status, RequestStatus::completed);
}

TEST(Schedulers, MaxTokensInBatchIsNeverExceededOnRandomInstances) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    const char* schedulers[] = {"orca", "vllm", "sarathi"};
    const std::string scheduler = schedulers[trial % 3];
    const int cap = std::uniform_int_distribution<int>(300, 2000)(rng);
    const int median = std::uniform_int_distribution<int>(50, 400)(rng);
    std::string batching = "{max_batch: " + std::to_string(4 + trial) +
                           ", scheduler: " + scheduler +
                           ", max_tokens_in_batch: " + std::to_string(cap) +
                           (scheduler == "sarathi" ? ", chunk_size: 512}" : "}");
    const RunResult r = run_text(serving(
        batching,
        "{input: {lognormal: {median: " + std::to_string(median) + ", sigma: 0.6}}, output: 4}",
        "{process: poisson, rate: 30/s}", "1GiB", "1KiB"));
    for (const double d : prefill_launches(r)) {
      EXPECT_LE(d, cap * 1000.0 + 1) << batching;  // 1 us per prompt token
    }
    // Every request completes, except a prompt longer than the cap (it fails with an event).
    EXPECT_EQ(r.tenants[0].completed + r.tenants[0].failed, r.tenants[0].requests) << batching;
    EXPECT_GT(r.tenants[0].completed, 0);
  }
}

TEST(Schedulers, LlmCardScenarioRunsOnEveryScheduler) {
  for (const char* scheduler : {"orca", "vllm", "sarathi"}) {
    const std::string text =
        std::string("name: card\nseed: 1\nduration: 3s\n") +
        "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n" +
        "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n" +
        "      arrivals: {process: poisson, rate: 5/s}\n      batching: {max_batch: 32, " +
        "scheduler: " + scheduler + "}\n      tokens: {input: 512, output: 64}\n" +
        "      llm: {model: llama-2-7b, dtype: fp16, tp: 1}\n";
    const ResolvedScenario resolved = resolve_scenario(load_scenario_text(text, "card.yaml"));
    EXPECT_EQ(resolved.scenario.tenants[0].workload.memory_per_token, 524288);
    const RunResult r = simulate(resolved);
    EXPECT_EQ(r.tenants[0].completed, r.tenants[0].requests) << scheduler;
    // The first token needs at least the prompt's FLOPs at the attainable rate.
    const double prefill_ns = 2 * 6.476e9 * 512 / (312e12 * kLlmGemmEfficiency) * 1e9;
    EXPECT_GT(static_cast<double>(r.tenants[0].time_to_first_token.p50), prefill_ns);
  }
}

TEST(Schedulers, EmittedScenarioKeepsTheCardAndTheSchedulerKeys) {
  const std::string text =
      "name: card\nseed: 1\nduration: 2s\n"
      "gpus:\n  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: exclusive}}\n"
      "tenants:\n  - name: llm\n    device: gpu0\n    workload:\n"
      "      arrivals: {process: poisson, rate: 5/s}\n"
      "      batching: {max_batch: 32, scheduler: sarathi, chunk_size: 256, "
      "max_tokens_in_batch: 1024, kv_block: 32}\n"
      "      tokens: {input: 512, output: 64}\n"
      "      llm: {model: mistral-7b, dtype: bf16, tp: 1, gemm_efficiency: 0.6}\n";
  const ResolvedScenario first = resolve_scenario(load_scenario_text(text, "card.yaml"));
  const ResolvedScenario again =
      resolve_scenario(load_scenario_text(emit_scenario_yaml(first.scenario), "card.yaml"));
  const WorkloadSpec& a = first.scenario.tenants[0].workload;
  const WorkloadSpec& b = again.scenario.tenants[0].workload;
  EXPECT_EQ(b.scheduler, BatchScheduler::sarathi);
  EXPECT_EQ(b.chunk_size, 256);
  EXPECT_EQ(b.max_tokens_in_batch, 1024);
  EXPECT_EQ(b.kv_block, 32);
  ASSERT_TRUE(b.llm);
  EXPECT_EQ(b.llm->model, "mistral-7b");
  EXPECT_EQ(b.llm->dtype, "bf16");
  EXPECT_EQ(b.llm->gemm_efficiency, 0.6);
  EXPECT_EQ(b.memory_per_token, a.memory_per_token);
  EXPECT_EQ(again.scenario.tenants[0].memory, first.scenario.tenants[0].memory);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].roofline.nanos(100, 4, 5000), b.kernels[i].roofline.nanos(100, 4, 5000));
  }
}

// --- the engine's CPU time per iteration (models/workload/engine_cpu.hpp) ------------------

// Latency of each completed request, ns, in arrival order.
std::vector<std::int64_t> latencies(const RunResult& r) {
  std::vector<std::int64_t> out;
  for (const RequestRecord& q : r.requests) {
    if (q.status == RequestStatus::completed) out.push_back(q.finish_ns - q.arrival_ns);
  }
  return out;
}

TEST(EngineCpu, EachIterationWaitsItsCpuTimeBeforeItsKernels) {
  // Requests 5 s apart run alone: a 2048-token prompt in one vllm iteration, then 2 decode
  // iterations, each of one sequence, so each request pays 3 x (1 ms + 1 x 100 us) more.
  const std::string tokens = "{input: 2048, output: 3}";
  const std::string arrivals = "{process: constant, rate: 0.2/s}";
  const RunResult plain = run_text(serving("{max_batch: 8, scheduler: vllm}", tokens, arrivals));
  const RunResult engine =
      run_text(serving("{max_batch: 8, scheduler: vllm, engine_cpu: {per_iteration: 1ms, "
                       "per_sequence: 100us}}",
                       tokens, arrivals));
  const std::vector<std::int64_t> a = latencies(plain), b = latencies(engine);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i] - a[i], 3 * 1'100'000) << i;
  // Each iteration's kernel starts 1.1 ms after the previous iteration's ended (its CPU time).
  ASSERT_EQ(engine.kernels.size(), 2u * 3);
  for (std::size_t k = 1; k < 3; ++k) {
    EXPECT_EQ(engine.kernels[k].start_ns - engine.kernels[k - 1].finish_ns,
              plain.kernels[k].start_ns - plain.kernels[k - 1].finish_ns + 1'100'000);
  }
  // The solo latency counts it too: a request alone is slowed by nothing.
  EXPECT_NEAR(engine.tenants[0].slowdown_mean, 1.0, 1e-9);
  EXPECT_NEAR(plain.tenants[0].slowdown_mean, 1.0, 1e-9);
}

TEST(EngineCpu, PerSequenceTermGrowsWithTheBatch) {
  // 4 requests arrive together: one prefill iteration of 4 sequences, then decodes of 4. The
  // per-sequence term is paid once per sequence in each iteration: 3 iterations x 4 x 50 us.
  const std::string tokens = "{input: 64, output: 3}";
  const auto run_burst = [&](const std::string& batching) {
    std::string text = serving(batching, tokens, "{process: constant, rate: 1/s}");
    // Four at once: a closed loop of 4 clients, each thinking 5 s after its reply.
    const std::string from = "arrivals: {process: constant, rate: 1/s}";
    text.replace(text.find(from), from.size(),
                 "arrivals: {process: closed, concurrency: 4, think: 5s}");
    return run_text(text);
  };
  const RunResult plain = run_burst("{max_batch: 8, scheduler: vllm}");
  const RunResult engine =
      run_burst("{max_batch: 8, scheduler: vllm, engine_cpu: {per_sequence: 50us}}");
  const std::vector<std::int64_t> a = latencies(plain), b = latencies(engine);
  ASSERT_GE(a.size(), 4u);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(b[i] - a[i], 3 * 4 * 50'000) << i;
}

// A trainer beside a batched engine on one time-sliced GPU. The engine spends 3 ms per
// iteration either on its CPU (engine_cpu) or in a 3 ms kernel: alone both take as long, but the
// CPU time is GPU time the trainer gets, and the engine does not wait for a slice to spend it.
TEST(EngineCpu, ANeighbourFillsTheEnginesCpuTimeNotItsKernelTime) {
  const auto run_pair = [](const std::string& engine, const std::string& kernel) {
    std::ostringstream y;
    y << "name: fill\nseed: 5\nduration: 4s\n"
      << "gpus:\n  - {name: gpu0, model: a100-80gb, sharing: {mode: time-slicing}}\n"
      << "tenants:\n  - name: llm\n    device: gpu0\n    memory: 1GiB\n"
      << "    workload:\n      arrivals: {process: poisson, rate: 20/s}\n"
      << "      batching: {max_batch: 8, scheduler: vllm" << engine << "}\n"
      << "      tokens: {input: 32, output: 16}\n      memory_per_token: 1KiB\n"
      << "      request:\n        kernels:\n"
      << kernel << "          - {name: prefill, duration: 10us, per_token: input}\n"
      << "          - {name: decode, duration: 2ms, repeat: output_tokens}\n"
      << "  - name: trainer\n    device: gpu0\n    memory: 1GiB\n"
      << "    workload:\n      arrivals: {process: closed, concurrency: 1}\n"
      << "      request:\n        kernels:\n          - {name: step, duration: 200us}\n";
    return run_text(y.str());
  };
  const RunResult cpu = run_pair(", engine_cpu: {per_iteration: 3ms}", "");
  const RunResult gpu = run_pair("", "          - {name: engine, duration: 3ms}\n");
  EXPECT_GT(cpu.tenants[1].completed, gpu.tenants[1].completed * 1.2);
  EXPECT_LT(cpu.tenants[0].latency.p50, gpu.tenants[0].latency.p50);
  // Alone, the two engines are the same: their solo latencies (slowdown's divisor) agree.
  EXPECT_NEAR(cpu.tenants[0].latency.p50 / cpu.tenants[0].slowdown_mean,
              gpu.tenants[0].latency.p50 / gpu.tenants[0].slowdown_mean,
              0.25 * cpu.tenants[0].latency.p50 / cpu.tenants[0].slowdown_mean);
}

TEST(EngineCpu, LlmCardsRunVllmsEngineWhenTheyNameIt) {
  const auto resolved = [](const std::string& extra, int tp) {
    const std::string text =
        std::string("name: card\nseed: 1\nduration: 1s\ngpus:\n") +
        "  - {name: gpu0, model: a100-80gb, sharing: {mode: exclusive}}\n" +
        "  - {name: gpu1, model: a100-80gb, sharing: {mode: exclusive}}\n" +
        "tenants:\n  - name: llm\n    device: " + (tp == 1 ? "gpu0" : "[gpu0, gpu1]") +
        "\n    workload:\n      arrivals: {process: poisson, rate: 5/s}\n" +
        "      batching: {max_batch: 32, scheduler: vllm" + extra + "}\n" +
        "      tokens: {input: 512, output: 64}\n" +
        "      llm: {model: llama-2-7b, dtype: fp16, tp: " + std::to_string(tp) + "}\n";
    return resolve_scenario(load_scenario_text(text, "card.yaml"));
  };
  const EngineCpu unnamed = resolved("", 1).scenario.tenants[0].workload.engine_cpu;
  EXPECT_EQ(unnamed.per_iteration, 0);
  EXPECT_EQ(unnamed.per_sequence, 0);
  const EngineCpu one =
      resolved(", engine_cpu: vllm-v0", 1).scenario.tenants[0].workload.engine_cpu;
  EXPECT_EQ(one.name, "vllm-v0");
  EXPECT_EQ(one.origin, ParamOrigin::user);
  EXPECT_EQ(one.per_iteration, kVllmV0PerIterationTp1);
  EXPECT_EQ(one.per_sequence, kVllmV0PerSequenceTp1);
  const EngineCpu two =
      resolved(", engine_cpu: vllm-v0", 2).scenario.tenants[0].workload.engine_cpu;
  EXPECT_EQ(two.per_iteration, kVllmV0PerIterationTp);
  EXPECT_EQ(two.per_sequence, kVllmV0PerSequenceTp);
  const EngineCpu none = resolved(", engine_cpu: none", 1).scenario.tenants[0].workload.engine_cpu;
  EXPECT_EQ(none.per_iteration, 0);
  EXPECT_EQ(none.per_sequence, 0);
  EXPECT_EQ(none.origin, ParamOrigin::user);
  // A step of the card costs more with the engine than without it (same seed, same requests).
  const RunResult with = simulate(resolved(", engine_cpu: vllm-v0", 1));
  const RunResult without = simulate(resolved(", engine_cpu: none", 1));
  EXPECT_GT(with.tenants[0].latency.p50, without.tenants[0].latency.p50);
}

TEST(EngineCpu, EmittedScenarioKeepsTheEngine) {
  for (const std::string engine :
       {"vllm-v0", "none", "{per_iteration: 1234567ns, per_sequence: 89us}"}) {
    const std::string text = serving("{max_batch: 8, scheduler: vllm, engine_cpu: " + engine + "}",
                                     "{input: 16, output: 4}", "{process: poisson, rate: 5/s}");
    const ResolvedScenario first = resolve_scenario(load_scenario_text(text, "e.yaml"));
    const ResolvedScenario again =
        resolve_scenario(load_scenario_text(emit_scenario_yaml(first.scenario), "e.yaml"));
    const EngineCpu& a = first.scenario.tenants[0].workload.engine_cpu;
    const EngineCpu& b = again.scenario.tenants[0].workload.engine_cpu;
    EXPECT_EQ(b.name, a.name) << engine;
    EXPECT_EQ(b.per_iteration, a.per_iteration) << engine;
    EXPECT_EQ(b.per_sequence, a.per_sequence) << engine;
  }
}

TEST(EngineCpu, BadValuesNameTheKey) {
  const auto message = [](const std::string& engine) {
    try {
      load_scenario_text(serving("{max_batch: 8, scheduler: vllm, engine_cpu: " + engine + "}",
                                 "{input: 16, output: 4}", "{process: poisson, rate: 5/s}"),
                         "e.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("vllm").find("engine_cpu: unknown engine_cpu engine 'vllm'; use one of: "
                                 "vllm-v0, none"),
            std::string::npos)
      << message("vllm");
  EXPECT_NE(message("{per_iteration: 11s}").find("per_iteration above 10s"), std::string::npos);
  EXPECT_NE(message("{per_iteration: 1ms, per_token: 1us}").find("per_token"), std::string::npos);
  EXPECT_NE(message("{per_sequence: -1ms}").find("e.yaml"), std::string::npos);
}

}  // namespace
}  // namespace gpumux
