// The pytorch and pytorch-sdpa runtimes' self-attention projections (kernel-families.yaml
// `qkv_projection: separate_views`; docs/workloads.md, "PyTorch's Q, K and V"): Hugging Face's
// BertSelfAttention runs three nn.Linear (query, key, value), each head split a view + permute;
// torch.matmul copies the permuted Q, K and V only when batch > 1 (batch and heads then do not
// merge into one strided batch dimension); scaled_dot_product_attention reads them in place;
// GPT-2's c_attn is one GEMM of 3 x hidden outputs whatever the runtime.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/config/profile_loader.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/loader.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/workload/workload_catalog.hpp"

namespace gpumux {
namespace {

CatalogWorkload build(const std::string& model, int batch, int seq, const std::string& runtime) {
  CatalogRequestSpec request;
  request.model = model;
  request.batch = batch;
  request.seq_len = seq;
  request.dtype = "fp16";
  request.phase = "inference";
  request.runtime = runtime;
  request.runtime_from_user = true;
  return build_catalog_workload(Scenario{}, request, "t", load_device_profile("a100-sxm4-40gb"), 1);
}

std::int64_t count_named(const std::vector<LayerWork>& layers, const std::string& name) {
  std::int64_t n = 0;
  for (const LayerWork& w : layers) n += w.name == name ? 1 : 0;
  return n;
}

// Batch 1: per layer three GEMMs of tokens x hidden x hidden in the order query, key, value, each
// dispatched by three operators (linear, view, permute: the fused GEMM's nine), doing together the
// FLOPs of ONNX Runtime's one QKV GEMM of the same model; no head-split kernel, no QKV GEMM.
TEST(PytorchRuntime, BertProjectsQueryKeyAndValueAsThreeGemmsWithViewHeadSplitsAtBatchOne) {
  const int seq = 384;
  for (const std::string model : {"bert-base", "bert-large"}) {
    const CatalogEntry& entry = load_catalog_entry(model);
    const std::int64_t h = entry.dim("hidden");
    const std::int64_t layers = entry.dim("layers");
    double qkv_flops = 0;
    for (const LayerWork& g : build(model, 1, seq, "onnxruntime").layers.layers) {
      if (g.name == "layer.qkv") qkv_flops += g.flops;
    }
    ASSERT_GT(qkv_flops, 0) << model;
    for (const std::string runtime : {"pytorch", "pytorch-sdpa"}) {
      const std::vector<LayerWork>& l = build(model, 1, seq, runtime).layers.layers;
      EXPECT_EQ(count_named(l, "layer.qkv"), 0) << runtime;
      double projection_flops = 0;
      std::int64_t triples = 0;
      for (std::size_t i = 0; i + 2 < l.size(); ++i) {
        if (l[i].name != "layer.q") continue;
        ++triples;
        const char* names[] = {"layer.q", "layer.k", "layer.v"};
        for (std::size_t j = 0; j < 3; ++j) {
          const LayerWork& g = l[i + j];
          ASSERT_EQ(g.name, names[j]) << runtime;
          EXPECT_EQ(g.kind, LayerWork::Kind::gemm) << g.name;
          EXPECT_EQ(g.m, seq) << g.name;
          EXPECT_EQ(g.n, h) << g.name;
          EXPECT_EQ(g.k, h) << g.name;
          EXPECT_DOUBLE_EQ(g.host_ops, 3) << g.name;
          projection_flops += g.flops;
        }
      }
      EXPECT_EQ(triples, layers) << runtime;
      EXPECT_DOUBLE_EQ(projection_flops, qkv_flops) << runtime;
      for (const LayerWork& w : l) {
        EXPECT_FALSE(w.name.ends_with("_split_heads")) << runtime << " " << w.name;
      }
    }
  }
}

// Batch > 1 with the unfused attention: Q and K copied just before the scores GEMM, V just before
// the context GEMM, each a copy of batch x tokens x hidden elements (read once, written once, no
// FLOP) launched inside torch.matmul (no operator of its own); pytorch-sdpa's fused attention
// copies none of them.
TEST(PytorchRuntime, BatchedMatmulCopiesTheHeadSplitsOnlyWhenBatchExceedsOne) {
  const int batch = 8, seq = 128;
  const CatalogEntry& entry = load_catalog_entry("bert-base");
  const std::int64_t layers = entry.dim("layers");
  const double elements = static_cast<double>(batch * seq * entry.dim("hidden"));
  const double fp16 = 2;
  const std::vector<LayerWork>& l = build("bert-base", batch, seq, "pytorch").layers.layers;
  std::int64_t copies = 0;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (!l[i].name.ends_with("_split_heads")) continue;
    ++copies;
    const LayerWork& c = l[i];
    EXPECT_EQ(c.kind, LayerWork::Kind::elementwise) << c.name;
    EXPECT_DOUBLE_EQ(static_cast<double>(c.elements), elements) << c.name;
    EXPECT_DOUBLE_EQ(c.bytes, 2 * fp16 * elements) << c.name;
    EXPECT_DOUBLE_EQ(c.flops, 0) << c.name;
    EXPECT_DOUBLE_EQ(c.host_ops, 0) << c.name;
    ASSERT_LT(i + 1, l.size());
    if (c.name == "layer.q_split_heads") {
      EXPECT_EQ(l[i + 1].name, "layer.k_split_heads");
    } else if (c.name == "layer.k_split_heads") {
      EXPECT_EQ(l[i + 1].name, "layer.attention_scores");
    } else {
      EXPECT_EQ(c.name, "layer.v_split_heads");
      EXPECT_EQ(l[i + 1].name, "layer.attention_context");
    }
  }
  EXPECT_EQ(copies, 3 * layers);
  for (const LayerWork& w : build("bert-base", batch, seq, "pytorch-sdpa").layers.layers) {
    EXPECT_FALSE(w.name.ends_with("_split_heads")) << w.name;
  }
  for (const LayerWork& w : build("bert-base", 1, seq, "pytorch").layers.layers) {
    EXPECT_FALSE(w.name.ends_with("_split_heads")) << w.name;
  }
}

// GPT-2's attention projects Q, K and V with one Conv1D (c_attn, 3 x hidden outputs): one GEMM
// per layer under the runtimes that split BERT's, as under ONNX Runtime.
TEST(PytorchRuntime, Gpt2KeepsItsOneQkvGemm) {
  const CatalogEntry& entry = load_catalog_entry("gpt2");
  const std::int64_t h = entry.dim("hidden");
  for (const std::string runtime : {"pytorch", "pytorch-sdpa"}) {
    const std::vector<LayerWork>& l = build("gpt2", 4, 128, runtime).layers.layers;
    std::int64_t qkv = 0;
    for (const LayerWork& g : l) {
      if (g.name != "layer.qkv") continue;
      ++qkv;
      EXPECT_EQ(g.n, 3 * h) << runtime;
    }
    EXPECT_EQ(qkv, entry.dim("layers")) << runtime;
    EXPECT_EQ(count_named(l, "layer.q"), 0) << runtime;
    for (const LayerWork& w : l) EXPECT_FALSE(w.name.ends_with("_split_heads")) << w.name;
  }
}

}  // namespace
}  // namespace gpumux
