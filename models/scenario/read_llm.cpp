// Reads a serving engine's model: an `llm:` card (a named one's architecture from the
// catalog) and `batching: {engine_cpu: ...}`. Part of the scenario loader (loader_parts.hpp).
#include <cctype>
#include <string>

#include "models/workload/workload_catalog.hpp"
#include "models/workload/llm_card.hpp"
#include "models/workload/engine_cpu.hpp"
#include "models/scenario/loader_parts.hpp"
#include "sim/util/units.hpp"

namespace gpumux::scenario_detail {

using namespace yaml;

// `llm: {model: NAME | layers: ..., hidden: ..., ..., dtype: fp16, tp: 1, <assumptions>}`
// (models/workload/llm_card.hpp). A named card's architecture comes from the catalog here.
LlmCard llm_card_of(Context& ctx, const Field& field) {
  const MapReader map(ctx, field,
                      {"model",
                       "layers",
                       "hidden",
                       "heads",
                       "kv_heads",
                       "head_dim",
                       "ffn",
                       "vocabulary",
                       "gated_ffn",
                       "experts",
                       "experts_per_token",
                       "expert_ffn",
                       "shared_experts",
                       "sliding_window",
                       "dtype",
                       "tp",
                       "gemm_efficiency",
                       "attention_efficiency",
                       "memory_efficiency",
                       "interconnect",
                       "activation_reserve",
                       "cuda_graph",
                       "host_per_op"});
  LlmCard c;
  c.where = ctx.at(field.path, field.mark);
  const char* architecture[] = {
      "layers",     "hidden",         "heads",         "kv_heads", "head_dim",
      "ffn",        "vocabulary",     "gated_ffn",     "experts",  "experts_per_token",
      "expert_ffn", "shared_experts", "sliding_window"};
  if (const auto model = map.get("model")) {
    for (const char* key : architecture) {
      if (const auto f = map.get(key)) {
        ctx.fail(*f, std::string("give model or an inline card, not both ('") + key +
                         "' with model: " + text_of(ctx, *model) + ")");
      }
    }
    const SourceLocation saved = c.where;
    c.where = ctx.at(model->path, model->mark);
    load_llm_card(non_empty_text(ctx, *model), c);
    c.where = saved;
  } else {
    c.layers = int_of(ctx, map.require("layers"), 1);
    c.hidden = integer_of(ctx, map.require("hidden"), 1);
    const Field heads = map.require("heads");
    c.heads = int_of(ctx, heads, 1);
    if (const auto f = map.get("head_dim")) c.head_dim = integer_of(ctx, *f, 1);
    if (c.head_dim == 0 && c.hidden % c.heads != 0) {
      ctx.fail(heads, "hidden " + std::to_string(c.hidden) + " is not a multiple of heads " +
                          std::to_string(c.heads));
    }
    c.kv_heads = c.heads;
    if (const auto f = map.get("kv_heads")) {
      c.kv_heads = int_of(ctx, *f, 1);
      if (c.heads % c.kv_heads != 0) {
        ctx.fail(*f, "heads " + std::to_string(c.heads) + " is not a multiple of kv_heads " +
                         std::to_string(c.kv_heads));
      }
    }
    if (const auto f = map.get("experts")) {
      // A mixture of experts (llm_card.hpp): top-k of E experts of width expert_ffn.
      c.experts = int_of(ctx, *f, 1);
      const Field top = map.require("experts_per_token");
      c.experts_per_token = int_of(ctx, top, 1);
      if (c.experts_per_token > c.experts) {
        ctx.fail(top, "experts_per_token " + std::to_string(c.experts_per_token) +
                          " exceeds experts " + std::to_string(c.experts) +
                          " (each token picks its top k of the experts)");
      }
      c.expert_ffn = integer_of(ctx, map.require("expert_ffn"), 1);
      if (const auto s = map.get("shared_experts")) c.shared_experts = int_of(ctx, *s, 0);
    } else {
      for (const char* key : {"experts_per_token", "expert_ffn", "shared_experts"}) {
        if (const auto f = map.get(key)) {
          ctx.fail(*f, std::string(key) + " needs experts: E (a mixture of experts)");
        }
      }
    }
    if (c.experts == 0 || map.get("ffn")) c.ffn = integer_of(ctx, map.require("ffn"), 1);
    if (const auto f = map.get("sliding_window")) c.sliding_window = integer_of(ctx, *f, 1);
    c.vocabulary = integer_of(ctx, map.require("vocabulary"), 1);
    if (const auto f = map.get("gated_ffn")) c.gated_ffn = bool_of(ctx, *f);
    c.source = "inline";
  }
  if (const auto f = map.get("dtype")) {
    c.dtype = choice_of<std::string>(
        ctx, *f, {{"fp16", "fp16"}, {"bf16", "bf16"}, {"fp8", "fp8"}, {"int8", "int8"}},
        {"fp16", "bf16", "fp8", "int8"}, "dtype");
  }
  if (const auto f = map.get("tp")) c.tp = int_of(ctx, *f, 1);
  if (const auto f = map.get("gemm_efficiency")) {
    c.gemm_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("attention_efficiency")) {
    c.attention_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("memory_efficiency")) {
    c.memory_efficiency = fraction_of(ctx, *f, 0, true, 1);
  }
  if (const auto f = map.get("interconnect")) {
    c.interconnect = with_unit(ctx, *f, units::parse_bandwidth_bytes_per_s);
    if (!(c.interconnect > 0)) ctx.fail(*f, "must be > 0, e.g. 300GB/s");
  }
  if (const auto f = map.get("activation_reserve")) c.activation_reserve = size_of(ctx, *f);
  if (const auto f = map.get("cuda_graph")) c.cuda_graph = bool_of(ctx, *f);
  if (const auto f = map.get("host_per_op")) {
    // A named engine's fitted dispatch cost (models/workload/engine_cpu.hpp), else a duration.
    if (f->node.IsScalar() && f->node.Scalar() == "vllm-v0") {
      c.host_per_op = static_cast<double>(kVllmV0HostPerOp) * 1e-9;
      c.host_per_op_named = true;
    } else if (f->node.IsScalar() && !f->node.Scalar().empty() &&
               std::isalpha(static_cast<unsigned char>(f->node.Scalar()[0]))) {
      ctx.fail(*f, "unknown engine '" + f->node.Scalar() +
                       "' for host_per_op: vllm-v0, or a duration such as 10us");
    } else {
      c.host_per_op = static_cast<double>(duration_of(ctx, *f)) * 1e-9;
    }
  }
  return c;
}

/// `engine_cpu:` — a named engine (models/workload/engine_cpu.hpp; its numbers are filled in at
/// resolve, where the tenant's tp is known) or `{per_iteration: D, per_sequence: D}`, each at
/// most 10 s (an engine's step is milliseconds; the bound keeps t_cpu far from overflow).
EngineCpu engine_cpu_of(Context& ctx, const Field& field) {
  EngineCpu e;
  e.origin = ParamOrigin::user;
  if (field.node.IsScalar()) {
    e.name = choice_of<std::string>(ctx, field, {{"vllm-v0", "vllm-v0"}, {"none", "none"}},
                                    {"vllm-v0", "none"}, "engine_cpu engine");
    return e;
  }
  const MapReader terms(ctx, field, {"per_iteration", "per_sequence"});
  e.name = "custom";
  constexpr Nanos kMost = Nanos{10} * 1'000'000'000;
  const auto bounded = [&](const char* key) -> Nanos {
    const auto f = terms.get(key);
    if (!f) return 0;
    const Nanos t = duration_of(ctx, *f);
    if (t > kMost)
      ctx.fail(*f,
               std::string(key) + " above 10s: an engine's CPU time per iteration is milliseconds");
    return t;
  };
  e.per_iteration = bounded("per_iteration");
  e.per_sequence = bounded("per_sequence");
  return e;
}

}  // namespace gpumux::scenario_detail
