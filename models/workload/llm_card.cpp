// LLM model cards: the catalog (embedded calibration/workloads/llm/*.yaml), the derived sizes
// and the roofline kernels (llm_card.hpp has the laws).
#include "models/workload/llm_card.hpp"

#include "models/workload/catalog_model.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "models/config/input_error.hpp"
#include "models/workload/workload_catalog.hpp"
#include "models/config/yaml_reader.hpp"
#include "models/workload/kernel_trace_model.hpp"
#include "sim/util/checked.hpp"
#include "sim/util/strings.hpp"

namespace gpumux {
namespace {

/// The most experts (routed or shared) a card may give: far above published models (DeepSeek-V3
/// 256, Qwen3 128), low enough for exact weights in 64-bit bytes.
constexpr int kLlmMaxExperts = 1 << 12;

}  // namespace

// Generated at build time by scripts/embed_profiles.cmake from calibration/workloads/llm/*.yaml.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_llm_cards();

std::vector<std::string> llm_card_names() {
  std::vector<std::string> names;
  for (const auto& [stem, text] : embedded_llm_cards()) names.emplace_back(stem);
  std::sort(names.begin(), names.end());
  return names;
}

void load_llm_card(const std::string& name, LlmCard& card) {
  const auto& cards = embedded_llm_cards();
  const auto it = std::find_if(cards.begin(), cards.end(),
                               [&](const auto& entry) { return entry.first == name; });
  if (it == cards.end()) {
    throw InputError(card.where, "unknown LLM model card '" + name +
                                     "'; known: " + join(llm_card_names(), ", ") +
                                     " (or give an inline card: layers, hidden, heads, ...)");
  }
  const std::string file = "calibration/workloads/llm/" + std::string(it->first) + ".yaml";
  std::map<std::string, SourceLocation> locations;
  yaml::Context ctx(file, locations);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(it->second));
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLocation{file, 0, 0, ""}, e.what());
  }
  const yaml::MapReader map(
      ctx, yaml::Field{root, "", root.Mark()},
      {"name", "display_name", "source", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn",
       "vocabulary", "gated_ffn", "positions", "experts", "experts_per_token", "expert_ffn",
       "shared_experts", "sliding_window"});
  card.model = name;
  card.source = yaml::non_empty_text(ctx, map.require("source"));
  card.layers = yaml::int_of(ctx, map.require("layers"), 1);
  card.hidden = yaml::integer_of(ctx, map.require("hidden"), 1);
  card.heads = yaml::int_of(ctx, map.require("heads"), 1);
  card.kv_heads = yaml::int_of(ctx, map.require("kv_heads"), 1);
  if (const auto f = map.get("head_dim")) card.head_dim = yaml::integer_of(ctx, *f, 1);
  if (const auto f = map.get("experts")) {
    card.experts = yaml::int_of(ctx, *f, 1);
    card.experts_per_token = yaml::int_of(ctx, map.require("experts_per_token"), 1);
    card.expert_ffn = yaml::integer_of(ctx, map.require("expert_ffn"), 1);
    if (const auto s = map.get("shared_experts")) card.shared_experts = yaml::int_of(ctx, *s, 0);
  }
  if (const auto f = map.get("sliding_window")) card.sliding_window = yaml::integer_of(ctx, *f, 1);
  card.ffn = card.experts > 0 && !map.get("ffn") ? 0 : yaml::integer_of(ctx, map.require("ffn"), 1);
  card.vocabulary = yaml::integer_of(ctx, map.require("vocabulary"), 1);
  card.gated_ffn = yaml::bool_of(ctx, map.require("gated_ffn"));
  yaml::integer_of(ctx, map.require("positions"), 1);  // checked here, read by llm_card_positions
}

std::int64_t llm_card_positions(const LlmCard& card) {
  if (card.model.empty()) return 0;
  const auto& cards = embedded_llm_cards();
  const auto it = std::find_if(cards.begin(), cards.end(),
                               [&](const auto& entry) { return entry.first == card.model; });
  if (it == cards.end()) return 0;
  return YAML::Load(std::string(it->second))["positions"].as<std::int64_t>();
}

void check_llm_card(const LlmCard& card,
                    const std::function<SourceLocation(const std::string& key)>& locate) {
  auto above = [&](const char* key, double value, double limit, const std::string& why) {
    if (value > limit) {
      throw InputError(locate(key), fmt::format("{} is above {}, {}", value, limit, why));
    }
  };
  const std::string architecture = "the largest an LLM card takes (docs/llm-serving.md)";
  above("layers", card.layers, kLlmMaxLayers, architecture);
  above("hidden", static_cast<double>(card.hidden), static_cast<double>(kLlmMaxHidden),
        architecture);
  above("ffn", static_cast<double>(card.ffn), static_cast<double>(kLlmMaxFfn), architecture);
  above("expert_ffn", static_cast<double>(card.expert_ffn), static_cast<double>(kLlmMaxFfn),
        architecture);
  above("experts", card.experts, kLlmMaxExperts, architecture);
  above("shared_experts", card.shared_experts, kLlmMaxExperts, architecture);
  if (card.experts > 0 && card.experts_per_token > card.experts) {
    throw InputError(locate("experts_per_token"),
                     fmt::format("experts_per_token {} exceeds experts {} (each token picks its "
                                 "top k of the experts)",
                                 card.experts_per_token, card.experts));
  }
  above("vocabulary", static_cast<double>(card.vocabulary), static_cast<double>(kLlmMaxVocabulary),
        architecture);
  if (card.host_per_op > kLlmMaxHostPerOp) {
    throw InputError(locate("host_per_op"),
                     fmt::format("{} s of host time per launch is above the {} s an LLM card "
                                 "takes",
                                 card.host_per_op, kLlmMaxHostPerOp));
  }
  const std::pair<const char*, double> efficiencies[] = {
      {"gemm_efficiency", card.gemm_efficiency},
      {"attention_efficiency", card.attention_efficiency},
      {"memory_efficiency", card.memory_efficiency}};
  for (const auto& entry : efficiencies) {
    if (!(entry.second >= kLlmMinEfficiency)) {
      throw InputError(locate(entry.first),
                       fmt::format("{} is below {}: the kernels would take longer than a run can "
                                   "represent",
                                   entry.second, kLlmMinEfficiency));
    }
  }
  if (card.interconnect != 0 && !(card.interconnect >= kLlmMinInterconnect)) {
    throw InputError(locate("interconnect"),
                     fmt::format("{} B/s is below the {} B/s an LLM card takes", card.interconnect,
                                 kLlmMinInterconnect));
  }
}

int llm_dtype_bytes(const LlmCard& card) {
  return card.dtype == "fp8" || card.dtype == "int8" ? 1 : 2;
}

double llm_peak_throughput(const LlmCard& card, const DeviceProfile& gpu) {
  const ComputeThroughput& c = gpu.compute;
  if (card.dtype == "bf16") return c.bf16_tensor;
  if (card.dtype == "fp8") return c.fp8_tensor;
  if (card.dtype == "int8") return c.int8_tensor;
  return c.fp16_tensor;
}

namespace {

double head_dim(const LlmCard& c) {
  return c.head_dim > 0 ? static_cast<double>(c.head_dim)
                        : static_cast<double>(c.hidden) / static_cast<double>(c.heads);
}

// The query (and attention output) width: heads x head_dim (= hidden unless head_dim is set).
double query_dim(const LlmCard& c) { return static_cast<double>(c.heads) * head_dim(c); }

// KV heads each GPU holds: split by TP, replicated when there are fewer than GPUs.
double kv_heads_per_gpu(const LlmCard& c) {
  return std::max(1.0, static_cast<double>(c.kv_heads) / static_cast<double>(c.tp));
}

// The GEMMs of one layer: (output columns N, weight elements) of QKV, O, gate+up, down; a
// mixture of experts has the router and, for `routed` of its experts and its shared ones, the
// gate+up and down of width expert_ffn (llm_card.hpp).
std::vector<std::pair<double, double>> layer_gemms(const LlmCard& c, double routed) {
  const double d = static_cast<double>(c.hidden);
  const double q = query_dim(c);
  const double kv = 2.0 * static_cast<double>(c.kv_heads) * head_dim(c);
  if (c.experts == 0) {
    const double f = static_cast<double>(c.ffn);
    const double up = c.gated_ffn ? 2.0 * f : f;
    return {{q + kv, d * (q + kv)}, {d, q * d}, {up, d * up}, {d, f * d}};
  }
  const double E = static_cast<double>(c.experts);
  const double x = routed + static_cast<double>(c.shared_experts);  // experts counted
  const double f = static_cast<double>(c.expert_ffn);
  const double up = c.gated_ffn ? 2.0 * f : f;
  return {{q + kv, d * (q + kv)}, {d, q * d}, {E, d * E}, {up * x, d * up * x}, {d, f * d * x}};
}

// The FFN width one token's activations span: ffn, or (k + s) expert_ffn.
double active_ffn(const LlmCard& c) {
  return c.experts == 0 ? static_cast<double>(c.ffn)
                        : static_cast<double>(c.experts_per_token + c.shared_experts) *
                              static_cast<double>(c.expert_ffn);
}

}  // namespace

double llm_layer_weights(const LlmCard& card) {
  double w = 0;
  for (const auto& [columns, weights] : layer_gemms(card, card.experts)) w += weights;
  return w;
}

double llm_active_layer_weights(const LlmCard& card) {
  double w = 0;
  for (const auto& [columns, weights] : layer_gemms(card, card.experts_per_token)) w += weights;
  return w;
}

double llm_touched_experts(const LlmCard& card, double tokens) {
  if (card.experts == 0) return 0;
  const double E = static_cast<double>(card.experts);
  const double k = static_cast<double>(card.experts_per_token);
  return E * (1.0 - std::pow(1.0 - k / E, tokens));
}

double llm_parameters(const LlmCard& card, bool active) {
  return static_cast<double>(card.layers) *
             (active ? llm_active_layer_weights(card) : llm_layer_weights(card)) +
         2.0 * static_cast<double>(card.vocabulary) * static_cast<double>(card.hidden);
}

std::int64_t llm_weight_bytes(const LlmCard& card) {
  return static_cast<std::int64_t>(std::ceil(llm_parameters(card, false) * llm_dtype_bytes(card) /
                                             static_cast<double>(card.tp)));
}

std::int64_t llm_kv_bytes_per_token(const LlmCard& card) {
  return static_cast<std::int64_t>(std::llround(2.0 * card.layers * kv_heads_per_gpu(card) *
                                                head_dim(card) * llm_dtype_bytes(card)));
}

std::int64_t llm_activation_reserve(const LlmCard& card, std::int64_t max_tokens_in_batch,
                                    int max_batch) {
  if (card.activation_reserve > 0) return card.activation_reserve;
  const double d = static_cast<double>(card.hidden);
  const double f = active_ffn(card);
  const double tokens = static_cast<double>(std::max<std::int64_t>(1, max_tokens_in_batch));
  const double activations =
      tokens * (4 * d + 2 * f) * llm_dtype_bytes(card) / static_cast<double>(card.tp);
  const double logits =
      static_cast<double>(std::max(1, max_batch)) * static_cast<double>(card.vocabulary) * 4.0;
  return static_cast<std::int64_t>(std::ceil(activations + logits));
}

std::int64_t llm_max_batch_for_memory(const LlmCard& card, std::int64_t memory,
                                      std::int64_t reserve, double tokens_per_request) {
  const double free = static_cast<double>(memory) - static_cast<double>(llm_weight_bytes(card)) -
                      static_cast<double>(reserve);
  const double per_request =
      static_cast<double>(llm_kv_bytes_per_token(card)) * std::max(1.0, tokens_per_request);
  if (free <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(free / per_request));
}

std::vector<KernelSpec> llm_kernels(const LlmCard& card, const DeviceProfile& gpu) {
  const double peak = llm_peak_throughput(card, gpu);
  if (!(peak > 0)) {
    throw InputError(card.where, "GPU model " + gpu.name + " has no compute_throughput." +
                                     (card.dtype == "fp16" ? std::string("fp16") : card.dtype) +
                                     "_tensor in its profile: the " + card.dtype +
                                     " roofline needs it (another dtype, or a profile with it)");
  }
  const double t = static_cast<double>(card.tp);
  const double b = llm_dtype_bytes(card);
  const double L = static_cast<double>(card.layers);
  const double d = static_cast<double>(card.hidden);
  const double e = head_dim(card);
  const double kv_dim = kv_heads_per_gpu(card) * e;  // per GPU
  const double V = static_cast<double>(card.vocabulary);
  const double bandwidth = achievable_hbm_bandwidth(gpu, card.memory_efficiency);
  const double sms = static_cast<double>(gpu.sms);
  // The assumed block shape (llm_card.hpp) on the profile's per-SM limits.
  TraceKernel block_shape;
  block_shape.block[0] = 256;
  block_shape.registers_per_thread = 128;
  block_shape.shared_memory = 48 * 1024;
  const double resident = std::max(1, blocks_per_sm(block_shape, gpu.sm_limits));

  auto base = [&](const char* name) {
    KernelSpec k;
    k.name = name;
    k.duration.value = 0;
    k.roofline.sms = sms;
    k.roofline.blocks_per_sm = resident;
    k.roofline.byte_rate = bandwidth;
    return k;
  };
  std::vector<KernelSpec> kernels;

  KernelSpec gemm = base("gemm");
  gemm.duration_per_token = TokenCount::batch;
  double weights = 0, activations = 0, column_blocks = 0;
  // The shape's weights are those one token uses (a mixture of experts: its k experts).
  const std::vector<std::pair<double, double>> gemms = layer_gemms(card, card.experts_per_token);
  for (const auto& [columns, w] : gemms) {
    weights += w;
    activations += (w / columns + columns) / t;  // input row (K) + output row (N / t)
  }
  for (const auto& [columns, w] : gemms) {
    // Each GEMM's output columns split by TP, weighted by its share of the weights (its time).
    column_blocks += w / weights * std::ceil(columns / t / kLlmTileColumns);
  }
  gemm.roofline.flops_per_token = 2 * L * weights / t;
  gemm.roofline.bytes_fixed = b * L * weights / t;
  gemm.roofline.bytes_per_token = b * L * activations;
  gemm.roofline.flop_rate = peak * card.gemm_efficiency;
  gemm.roofline.tile_rows = kLlmTileRows;
  gemm.roofline.column_blocks = column_blocks;
  // Its time per launch from the workload catalog's kernels (catalog_model.hpp): per layer the
  // four GEMMs on each GPU's slice (QKV and gate/up split their columns by TP, O and down
  // their rows of K), each the (tile, split-K) of least time with its latency floor, and the
  // layer's elementwise kernels with theirs (vLLM's Llama layer: two fused residual-add +
  // RMSNorm, rotary on Q and K, SiLU-and-mul), at the card's gemm_efficiency.
  KernelFamilies families_at_card = load_kernel_families();
  families_at_card.gemm_efficiency.value = card.gemm_efficiency;
  DeviceProfile gpu_at_card = gpu;  // the card's bandwidth (measured, else x memory_efficiency)
  gpu_at_card.hbm_bandwidth_measured = bandwidth;
  // `count` independent GEMMs of rows x n x k (a mixture of experts' grouped GEMM: each touched
  // expert's rows against its own weights).
  const auto gemm_work = [&](double rows, double n, double k, double count = 1) {
    LayerWork w;
    w.kind = LayerWork::Kind::gemm;
    w.m = static_cast<std::int64_t>(rows);
    w.n = static_cast<std::int64_t>(std::ceil(n));
    w.k = static_cast<std::int64_t>(std::ceil(k));
    w.count = static_cast<std::int64_t>(count);
    w.flops = 2.0 * rows * n * k * count;
    w.bytes = (rows * k + k * n + rows * n) * b * count;
    w.working_set = (rows * k + k * n) * b * count;
    w.element_bytes = b;
    return w;
  };
  const auto elementwise_ns = [&](double elements, double passes) {
    LayerWork w;
    w.kind = LayerWork::Kind::elementwise;
    w.elements = static_cast<std::int64_t>(elements);
    w.flops = elements * 4;
    w.bytes = elements * passes * b;
    w.element_bytes = b;
    return static_cast<double>(
        roofline_kernel(w, families_at_card, gpu_at_card, peak).duration.value);
  };
  const double f_dim = static_cast<double>(card.ffn);
  const double up = card.gated_ffn ? 2.0 * f_dim : f_dim;
  const double qd = query_dim(card);
  const double q_kv = qd / t + kv_dim;  // Q and K/V columns on each GPU (K and V: kv_dim each)
  const auto gemm_ns = [&](const LayerWork& w) {
    return choose_gemm(w, families_at_card, gpu_at_card, peak).time(gpu_at_card) * 1e9;
  };
  // A mixture of experts' FFN over `rows` tokens (llm_card.hpp): the router, the touched
  // experts' grouped GEMMs of about rows k / C rows each, the shared experts over every row, and
  // the routing's elementwise kernels (top-k softmax over the E scores, permuting the k copies
  // of each token's row to its experts and combining them back).
  const auto moe_ns = [&](double rows) {
    const double E = static_cast<double>(card.experts);
    const double k = static_cast<double>(card.experts_per_token);
    const double fe = static_cast<double>(card.expert_ffn);
    const double up_e = card.gated_ffn ? 2.0 * fe : fe;
    const double s = static_cast<double>(card.shared_experts);
    const double touched = std::max(k, std::round(llm_touched_experts(card, rows)));
    const double expert_rows = std::ceil(rows * k / touched);
    double ns = gemm_ns(gemm_work(rows, E, d));
    ns += gemm_ns(gemm_work(expert_rows, up_e / t, d, touched));
    ns += gemm_ns(gemm_work(expert_rows, d, fe / t, touched));
    if (s > 0) {
      ns += gemm_ns(gemm_work(rows, s * up_e / t, d));
      ns += gemm_ns(gemm_work(rows, d, s * fe / t));
    }
    ns += elementwise_ns(rows * E, 2);                                      // top-k softmax
    ns += 2 * elementwise_ns(rows * k * d, 2);                              // permute, combine
    ns += elementwise_ns(rows * (k + s) * fe / t, card.gated_ffn ? 3 : 2);  // SiLU(gate) x up
    return ns;
  };
  const auto layer_ns = [&](double rows) {
    double ns = gemm_ns(gemm_work(rows, q_kv + kv_dim, d)) + gemm_ns(gemm_work(rows, d, qd / t));
    if (card.experts == 0) {
      ns += gemm_ns(gemm_work(rows, up / t, d));
      ns += gemm_ns(gemm_work(rows, d, f_dim / t));
    }
    ns += 2 * elementwise_ns(rows * d, 4);             // x + residual, norm: r 2, w 2
    ns += elementwise_ns(rows * (d / t + kv_dim), 2);  // rotary on Q and K, in place
    if (card.experts == 0) {
      ns += elementwise_ns(rows * f_dim / t, card.gated_ffn ? 3 : 2);  // SiLU(gate) x up
    } else {
      ns += moe_ns(rows);
    }
    return ns;
  };
  for (double rows = 1; rows <= 65536; rows *= 2) {
    for (const double r : {rows, rows * 1.5}) {
      if (r != std::floor(r) || r > 65536) continue;
      gemm.roofline.table_rows.push_back(r);
      gemm.roofline.table_ns.push_back(L * layer_ns(r));
    }
  }
  kernels.push_back(gemm);

  KernelSpec head = base("lm-head");
  head.roofline.flops_per_sequence = 2 * V * d / t;
  head.roofline.bytes_fixed = b * V * d / t;
  head.roofline.bytes_per_sequence = 4 * V / t;  // fp32 logits row
  head.roofline.flop_rate = peak * card.gemm_efficiency;
  head.roofline.rows_are_sequences = true;
  head.roofline.column_blocks = std::ceil(V / t / kLlmTileColumns);
  for (double rows = 1; rows <= 4096; rows *= 2) {
    head.roofline.table_rows.push_back(rows);
    head.roofline.table_ns.push_back(
        choose_gemm(gemm_work(rows, V / t, d), families_at_card, gpu_at_card, peak)
            .time(gpu_at_card) *
        1e9);
  }
  kernels.push_back(head);

  KernelSpec prompt = base("attention-prompt");
  prompt.duration_per_token = TokenCount::input;
  prompt.roofline.flops_per_context = 4 * L * query_dim(card) / t;
  prompt.roofline.bytes_per_token = b * L * (2 * query_dim(card) / t + 2 * kv_dim);
  prompt.roofline.flop_rate = peak * card.attention_efficiency;
  prompt.roofline.column_blocks = static_cast<double>(card.heads) / t;
  kernels.push_back(prompt);

  KernelSpec decode = base("attention-decode");
  decode.repeat_per_token = TokenCount::output;
  decode.roofline.flops_per_context = 4 * L * query_dim(card) / t;
  decode.roofline.bytes_per_context = static_cast<double>(llm_kv_bytes_per_token(card));
  decode.roofline.bytes_per_sequence = b * L * 2 * query_dim(card) / t;  // query, output rows
  decode.roofline.flop_rate = peak * card.attention_efficiency;
  decode.roofline.rows_are_sequences = true;
  decode.roofline.tile_rows = 1;
  decode.roofline.column_blocks = kv_heads_per_gpu(card);
  kernels.push_back(decode);

  if (card.tp > 1) {
    KernelSpec reduce = base("allreduce");
    reduce.duration_per_token = TokenCount::batch;
    reduce.collective = true;
    const double interconnect = card.interconnect > 0 ? card.interconnect : kLlmInterconnect;
    reduce.roofline.byte_rate = interconnect;
    reduce.roofline.bytes_per_token = 2 * L * d * b * 2 * (t - 1) / t;
    reduce.roofline.column_blocks = 1;
    // Each of the 2 L all-reduces of n tokens moves n d b bytes per rank, by the protocol NCCL
    // picks (its latency included here, not as a fixed term).
    const KernelFamilies& fam = load_kernel_families();
    const std::string& cc = gpu_at_card.compute_capability;
    const double ll_max = cc.rfind("8.", 0) == 0   ? kNcclLlMaxAmpere
                          : cc.rfind("9.", 0) == 0 ? kNcclLlMaxHopper
                                                   : 0.0;
    for (double rows = 1; rows <= 65536; rows *= 2) {
      for (const double r : {rows, rows * 1.5}) {
        if (r != std::floor(r) || r > 65536) continue;
        reduce.roofline.table_rows.push_back(r);
        reduce.roofline.table_ns.push_back(
            2 * L *
            nccl_ring_allreduce_seconds(r * d * b, card.tp, interconnect,
                                        fam.collective_latency.value,
                                        fam.collective_latency_per_hop.value, ll_max) *
            1e9);
      }
    }
    kernels.push_back(reduce);
  }
  // The real kernels each aggregate stands for (per layer, vLLM's eager Llama layer: 2 RMSNorms,
  // 4 GEMMs, rotary, activation; the KV-cache write and the attention kernel; 2 all-reduces
  // under TP; per iteration embedding, final norm, LM head and 3 sampling kernels): every one
  // but the first pays the launch overhead (the runner charges one), the all-reduces NCCL's
  // latency, and eagerly the host dispatches each (a floor when slower than the GPU).
  // The model's dispatch cost (vllm-v0's or runtimes.pytorch's) is the reference host's, scaled
  // to the tenant's host CPU (host_cpu.hpp); a duration the user wrote is used as given.
  const KernelFamilies& families = load_kernel_families();
  const double host_speed = card.host_cpu_speed > 0 ? card.host_cpu_speed : gpu.host_cpu_speed;
  const bool measured = card.host_per_op >= 0 && !card.host_per_op_named;
  const double host_ref =
      card.host_per_op >= 0 ? card.host_per_op : families.runtime("pytorch")->host_per_op.value;
  const double host = card.cuda_graph ? 0.0
                      : measured      ? host_ref
                                      : host_cpu_seconds(host_ref, 1.0, host_speed);
  const double gap = static_cast<double>(gpu.modelled_launch(card.cuda_graph));
  const double alpha =
      families.collective_latency.value + 2.0 * (t - 1) * families.collective_latency_per_hop.value;
  for (KernelSpec& k : kernels) {
    // A mixture of experts launches per layer 4 more (router, top-k, permute, combine), 2 more
    // with shared experts.
    const double moe_launches = card.experts == 0 ? 0 : (card.shared_experts > 0 ? 6 : 4) * L;
    const double launches = k.name == "gemm" ? 8 * L + moe_launches
                            : k.name == "attention-prompt" || k.name == "attention-decode" ? 2 * L
                            : k.name == "allreduce"                                        ? 2 * L
                                                                                           : 6;
    // A collective's latency is in its table (nccl_ring_allreduce_seconds); alpha where not.
    const bool latency_in_table = k.collective && !k.roofline.table_rows.empty();
    k.roofline.fixed_ns =
        (launches - 1) * gap + (k.collective && !latency_in_table ? launches * alpha * 1e9 : 0.0);
    k.roofline.floor_ns = launches * host * 1e9;
  }
  for (KernelSpec& k : kernels) {
    // Whole-GPU defaults; every launch carries its own shape (KernelRoofline::shape).
    k.roofline.shape(1, 1, 0, k.sm_fraction, k.waves, k.memory_bound, k.busy_share);
  }
  return kernels;
}

double nccl_ring_allreduce_seconds(double bytes, int ranks, double bus_bytes_per_s,
                                   double ll_latency, double ll_latency_per_step, double ll_max) {
  if (ranks < 2 || !(bytes > 0) || !(bus_bytes_per_s > 0)) return 0.0;
  const double steps = 2.0 * (ranks - 1);
  const double bus_bytes = steps / ranks * bytes;
  const double ll_bw = ll_max > 0 ? std::min(ll_max, kNcclLlEfficiency * bus_bytes_per_s)
                                  : kNcclLlEfficiency * bus_bytes_per_s;
  const double ll = ll_latency + steps * ll_latency_per_step + bus_bytes / ll_bw;
  const double ll128 = kNcclLl128Latency + steps * kNcclLl128LatencyPerStep +
                       bus_bytes / (kNcclLl128Efficiency * bus_bytes_per_s);
  const double simple =
      kNcclSimpleLatency + steps * kNcclSimpleLatencyPerStep + bus_bytes / bus_bytes_per_s;
  return std::min({ll, ll128, simple});
}

}  // namespace gpumux
