#pragma once
// LLM serving from a model card (`workload: {llm: {model: llama-2-7b, tp: 1, dtype: fp16}}` or an
// inline card; docs/llm-serving.md): the architecture numbers give the serving
// engine's kernels as rooflines on the tenant's GPU, its KV-cache bytes per token and its
// weights. Per GPU of a TP group of t GPUs, with d = hidden, h = heads, g = kv_heads,
// e = head_dim (default d / h), q = h e (the query width, = d by default), f = ffn,
// V = vocabulary, L = layers, b = bytes per element of the dtype:
//
//   GEMM weights per layer  W = d (q + 2 g e) + q d + (3 or 2) d f         (QKV, O, FFN)
//   weights                 b (L W + 2 V d) / t   (embedding + LM head, untied as in Llama)
//   KV bytes per token      2 L max(1, g / t) e b  (K and V of every layer; Llama-2-7B fp16 at
//                           t = 1: 2 x 32 x 32 x 128 x 2 = 524,288 B)
//   largest batch           floor((M - weights - reserve) / (KV bytes per token x tokens))
//
// Mixture of experts (`experts: E`, `experts_per_token: k`, `expert_ffn: f_e`, `shared_experts:
// s`; Mixtral, Qwen3-MoE): the FFN of a layer is a router (d x E) and E experts, each a (gated)
// FFN of width f_e; every token goes to its top k experts and to the s shared ones. Routing is
// assumed uniform and independent per token, so at a launch over n tokens the expected number of
// experts that receive at least one token is
//   A(n) = E (1 - (1 - k / E)^n)               (A(1) = k, A(n) -> E as n grows)
// and each touched expert's FFN runs as one grouped GEMM (count C = max(k, round(A(n))) products)
// over about r = ceil(n k / C) rows, reading that expert's weights once; the shared experts are
// a dense FFN of width s f_e over all n rows. So
//   FFN weights per layer   E (up_e + f_e) d + E d + s (up_e + f_e) d   (memory: all experts,
//                           router; up_e = 2 f_e gated)
//   active per layer        (k + s) (up_e + f_e) d + E d                (what one token uses)
// The GEMM roofline's shape (memory_bound, grid) takes the active weights; its time is the
// grouped GEMMs' at each n.
//
// Sliding-window attention (`sliding_window: N`, Mistral): a token attends to at most the N
// tokens before it (itself included), so a prompt of p tokens computes sum_j min(j, N) (query,
// key) pairs, a decode step reads min(context, N) tokens' K and V, and a sequence's KV cache
// holds at most N tokens (the tenant's attention_window caps memory_per_token's count).
//
// Kernels of an iteration (scaling: models/workload/batching_policy.hpp), each t = max(F / (P
// x eff), B / BW) with P the profile's peak dense throughput of the dtype (`compute_throughput:`)
// and BW the measured HBM bandwidth (else datasheet x memory_efficiency), except `gemm` and
// `lm-head`, whose time is the workload catalog's (catalog_model.hpp) at the launch's rows:
//   gemm(n) = L x [sum over QKV (n x (d + 2 g e) / t x d per GPU), O (n x d x d / t),
//             gate/up (n x up/t x d), down (n x d x f/t) of the (tile, split-K) of least time
//             with its latency floor and split-K reduction, + the layer's elementwise kernels
//             with their floors: 2 fused residual-add + RMSNorm (4 passes of n d), rotary on Q
//             and K, SiLU-and-mul (3 passes of n f / t)], at eff = gemm_efficiency;
//   lm-head(s) = the chosen GEMM s x V/t x d;
// tabulated at n = 1, 1.5, 2, 3, 4, 6, ... 65,536 (s = 1, 2, 4, ... 4096) and linear between
// (KernelRoofline::table_rows):
//   gemm              per_token: batch_tokens   F = 2 L W n / t, B = b L W / t + activations
//                     (each GEMM reads its input rows and writes its output rows, b per value)
//   lm-head           once per iteration        F = 2 V d s / t, B = b V d / t (one row of
//                     logits per sequence that samples a token: vLLM computes only those)
//   attention-prompt  per_token: input          F = 4 L d p / t over the prompt's causal
//                     (query, key) pairs p; B = b L (2 d + 2 g e) n / t (FlashAttention reads
//                     Q, K, V and writes O once)
//   attention-decode  repeat: output_tokens     F = 4 L d c / t over the c KV tokens the
//                     decoding sequences read, B = KV bytes per token x c (every cached K and V
//                     read once: decode cost grows with the KV length)
//   allreduce         per_token: batch_tokens, collective (t > 1): two ring all-reduces per
//                     layer of d b bytes per token (Megatron-LM tensor parallelism: after the
//                     attention and after the MLP), 2 (t - 1) / t of it over the interconnect;
//                     each all-reduce of M = n d b bytes takes, as NCCL's tuning model picks its
//                     protocol (the least predicted time; NVIDIA/nccl src/graph/tuning.cc):
//                       min over p of  lat_p + 2 (t - 1) hop_p + 2 (t - 1) / t M / bw_p
//                     LL: lat, hop = kernel-families collective (3.6 us, 0.47 us), bw = half the
//                     interconnect (a 16-byte line carries 8 data bytes), at most NCCL's llMaxBw
//                     (87.7 GB/s on compute capability 8.x, 141 GB/s on 9.x); LL128: 14.0 us,
//                     1.9 us per NVLink ring step, 0.92 of it (120 of 128 bytes); Simple: 8.4 us,
//                     3.4 us per step, all of it (kNccl* below). So the 16 KB of a 70B model's
//                     decode step stay on LL (latency) and its 8 MB of prefill at 512 tokens go
//                     by LL128 or Simple, whose per-step latency a TP-8 ring pays 14 times
// Grid: the GEMMs and prompt attention tile 128 rows of tokens (ceil(n / 128) row tiles) by 128
// output columns; decode attention runs one block per (sequence, KV head) pair. sm_fraction =
// min(1, blocks / SMs), waves = max(1, blocks / (blocks per SM x SMs)) with blocks per SM from the
// profile's sm_limits (kernel_trace_model.hpp, blocks_per_sm) for the assumed block shape, and
// memory_bound = t_memory / (t_memory + t_compute), per launch.
// Launches: each aggregate stands for n real kernels (gemm 8 L: 2 RMSNorms, 4 GEMMs, rotary,
// activation; attention-prompt / attention-decode 2 L: KV-cache write and attention; allreduce
// 2 L; lm-head 6: embedding, final norm, LM head, 3 sampling kernels), so a launch lasts
//   max(roofline + (n - 1) x launch overhead [the all-reduce's roofline: n x its protocol
//       time above],  n x host_per_op)
// with the profile's launch_overhead (graph_launch_overhead and no host floor under
// `cuda_graph: true`) and host_per_op = kernel-families.yaml runtimes.pytorch (10 us) unless set
// (`host_per_op: vllm-v0`: the eager vLLM engine's fitted 46.4 us), both the reference host's and
// divided by the host CPU's speed (models/gpu/host_cpu.hpp; a duration the user writes is
// theirs, used as given; engine_cpu.hpp). The host
// floor does not shrink with TP (every TP worker dispatches every kernel of its shard) while
// the roofline does, so past the TP degree where n x host_per_op exceeds the GPU time the step
// is the dispatch: flat in TP (Splitwise's Llama-2-70B TPOT, docs/llm-serving.md), and at t = 1
// there is no all-reduce launch (nor its NCCL latency).
//
// Assumptions (parameters of the `llm:` block, defaults here): gemm_efficiency 0.7 and
// attention_efficiency 0.5 of peak (kLlm*), memory_efficiency 0.8 of the datasheet bandwidth
// when the profile has no measured one, interconnect 300 GB/s per GPU per direction, activation
// reserve = max_tokens x (4 d + 2 f) b / t + max_batch x V x 4 (activations of the largest
// iteration and fp32 logits), block shape 256 threads, 128 registers per thread, 48 KiB shared.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"
#include "models/workload/workload_spec.hpp"

namespace gpumux {

// Assumptions (documented above; each is an `llm:` key).
inline constexpr double kLlmGemmEfficiency = 0.7;
inline constexpr double kLlmAttentionEfficiency = 0.5;
inline constexpr double kLlmMemoryEfficiency = 0.8;
inline constexpr double kLlmInterconnect = 300e9;  ///< bytes/s per GPU and direction
// NCCL's ring all-reduce protocols over NVLink (source: NVIDIA/nccl src/graph/tuning.cc,
// ncclTunerConstantsDefaults: baseLatencies[Ring] = {6.6, 14.0, 8.4} us for LL / LL128 /
// Simple, hwLatencies[NVLINK][Ring] = {0.6, 1.9, 3.4} us per step; the LL128 bus bandwidth is
// 0.92 of Simple's (120.0 / 128.0) and LL's half of it, capped at llMaxBws N1 = 87.7 GB/s on
// Ampere, 141.0 GB/s on Hopper; LL128 is enabled on NVLink from compute capability 7.0). LL's
// latencies are kernel-families.yaml's collective: ones (an older NCCL's, the catalog's).
inline constexpr double kNcclLl128Latency = 14.0e-6;         ///< s per all-reduce
inline constexpr double kNcclLl128LatencyPerStep = 1.9e-6;   ///< s per ring step (NVLink)
inline constexpr double kNcclLl128Efficiency = 0.92;         ///< of the bus bandwidth
inline constexpr double kNcclSimpleLatency = 8.4e-6;         ///< s per all-reduce
inline constexpr double kNcclSimpleLatencyPerStep = 3.4e-6;  ///< s per ring step (NVLink)
inline constexpr double kNcclLlEfficiency = 0.5;             ///< of the bus bandwidth
inline constexpr double kNcclLlMaxAmpere = 87.7e9;           ///< bytes/s, compute capability 8.x
inline constexpr double kNcclLlMaxHopper = 141.0e9;          ///< bytes/s, compute capability 9.x
/// Seconds of one ring all-reduce of `bytes` per rank over `ranks` GPUs at bus bandwidth
/// `bus_bytes_per_s`, as NCCL's tuning model picks its protocol (LL, LL128 or Simple: the least
/// time; formula above); `ll_latency` and `ll_latency_per_step` the LL protocol's, `ll_max` its
/// bandwidth cap (0: none). O(1).
double nccl_ring_allreduce_seconds(double bytes, int ranks, double bus_bytes_per_s,
                                   double ll_latency, double ll_latency_per_step, double ll_max);
inline constexpr int kLlmTileRows = 128;
inline constexpr int kLlmTileColumns = 128;

/// The largest architecture numbers a card may give (inline or catalog): far above every
/// published model (d 25,600, FFN 102,400, 256k vocabulary, 160 layers), low
/// enough that weights, GEMM work and KV bytes stay exact in 64-bit bytes and nanoseconds.
inline constexpr std::int64_t kLlmMaxHidden = std::int64_t{1} << 20;
inline constexpr std::int64_t kLlmMaxFfn = std::int64_t{1} << 22;
inline constexpr std::int64_t kLlmMaxVocabulary = std::int64_t{1} << 24;
inline constexpr int kLlmMaxLayers = 1 << 14;
/// The card's assumptions kept physical: at most 1 s of host time per launch, an efficiency of
/// at least 0.1 % of the peak, an interconnect of at least 1 MB/s.
inline constexpr double kLlmMaxHostPerOp = 1.0;
inline constexpr double kLlmMinEfficiency = 1e-3;
inline constexpr double kLlmMinInterconnect = 1e6;

/// Refuses a card whose numbers leave the ranges above (so its weights, work and times would
/// overflow or turn meaningless): InputError at LOCATE(KEY), KEY the card's key ("hidden",
/// "host_per_op") as the user wrote it.
void check_llm_card(const LlmCard& card,
                    const std::function<SourceLocation(const std::string& key)>& locate);

/// The positions a catalog card's model was trained for (its config.json
/// max_position_embeddings, the card's `positions:`): a request's input + output tokens must
/// fit. 0 for an inline card (not checked).
std::int64_t llm_card_positions(const LlmCard& card);

/// The catalog's card names (calibration/workloads/llm/*.yaml, embedded at build time).
std::vector<std::string> llm_card_names();

/// The catalog card `name`'s architecture into `card` (its other fields are kept). Throws
/// InputError naming the card (with the known names) when there is none.
void load_llm_card(const std::string& name, LlmCard& card);

/// Bytes per element of the card's dtype (fp16, bf16: 2; fp8, int8: 1).
int llm_dtype_bytes(const LlmCard& card);
/// The profile's peak dense throughput for the card's dtype, FLOP/s; 0 = the profile lacks it.
double llm_peak_throughput(const LlmCard& card, const DeviceProfile& gpu);
/// GEMM weights of one layer (elements, the whole model: not divided by TP); a mixture of
/// experts counts every expert and the router.
double llm_layer_weights(const LlmCard& card);
/// GEMM weights one token uses in a layer: = llm_layer_weights for a dense card; a mixture of
/// experts counts its k routed and s shared experts and the router.
double llm_active_layer_weights(const LlmCard& card);
/// A(n) = E (1 - (1 - k / E)^n): the expected experts of a layer that n tokens touch (the law
/// above); 0 for a dense card. O(1).
double llm_touched_experts(const LlmCard& card, double tokens);
/// Parameters of the whole model (not divided by TP): every layer's GEMM weights and the
/// embedding and LM head; `active` = those one token uses (llm_active_layer_weights).
double llm_parameters(const LlmCard& card, bool active);
/// Weight bytes each GPU of the TP group holds.
std::int64_t llm_weight_bytes(const LlmCard& card);
/// KV-cache bytes per token on each GPU of the TP group.
std::int64_t llm_kv_bytes_per_token(const LlmCard& card);
/// Activation memory kept per GPU (`activation_reserve:`, else the formula above).
std::int64_t llm_activation_reserve(const LlmCard& card, std::int64_t max_tokens_in_batch,
                                    int max_batch);
/// The most requests of `tokens_per_request` (prompt + output) tokens whose KV cache fits in
/// `memory` beside the weights and the reserve; 0 when the weights alone do not fit.
std::int64_t llm_max_batch_for_memory(const LlmCard& card, std::int64_t memory,
                                      std::int64_t reserve, double tokens_per_request);

/// The serving engine's kernels for `card` on `gpu` (whole-GPU solo times, as every kernel
/// list). Throws InputError at card.where when the profile has no throughput for the dtype.
std::vector<KernelSpec> llm_kernels(const LlmCard& card, const DeviceProfile& gpu);

}  // namespace gpumux
