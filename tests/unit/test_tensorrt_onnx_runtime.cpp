// The tensorrt-onnx runtime (kernel-families.yaml; docs/workloads.md, "TensorRT from ONNX"): a
// TensorRT 8.0 engine that TensorRT's ONNX parser built from a framework's ONNX export without
// demoBERT's plugins, as DeepLearningExamples' Triton BERT deployment runs it. Per encoder layer
// the exported graph's kernels in closed form (three projections, each with its head-split
// copy; the scores materialised; softmax and both layer norms as two row reductions and one
// pointwise kernel; GELU after the GEMM), the same GEMM work as demoBERT's fused layers, no
// precision casts, and an unknown runtime as a located one-line error that names it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/workload/workload_catalog.hpp"

namespace gpumux {
namespace {

CatalogWorkload build(int batch, const std::string& runtime) {
  CatalogRequestSpec request;
  request.model = "bert-large";
  request.batch = batch;
  request.seq_len = 384;
  request.dtype = "fp16";
  request.phase = "inference";
  request.runtime = runtime;
  request.runtime_from_user = true;
  return build_catalog_workload(Scenario{}, request, "t", load_device_profile("a100-sxm4-40gb"), 1);
}

// The kernels of one encoder layer, in launch order: from the first kernel named `first` to the
// next one of that name.
std::vector<const LayerWork*> first_layer(const std::vector<LayerWork>& layers,
                                          const std::string& first) {
  std::vector<const LayerWork*> out;
  for (const LayerWork& w : layers) {
    if (w.name == first && !out.empty()) break;
    if (w.name == first || !out.empty()) out.push_back(&w);
  }
  return out;
}

double gemm_flops(const std::vector<LayerWork>& layers) {
  double flops = 0;
  for (const LayerWork& w : layers) flops += w.kind == LayerWork::Kind::gemm ? w.flops : 0;
  return flops;
}

// Closed form of one encoder layer (modeling.py's BertLayer as torch.onnx writes it at opset 13,
// after TensorRT's pointwise fusion): 22 kernels, against demoBERT's 7 (QKV GEMM, fused
// attention, output GEMM, skip layer norm, FFN1 with GELU, FFN2, skip layer norm). The whole
// request: 22 per layer, the embedding's layer norm as three kernels, and the pooler's GEMM and
// tanh (demoBERT: 7 per layer, one embedding kernel, the pooler's GEMM with tanh in its epilogue).
TEST(TensorrtOnnxRuntime, BertLayerRunsTheExportedGraphsKernelsInOrder) {
  const std::vector<std::string> expected{
      "layer.q",
      "layer.q_split_heads",
      "layer.k",
      "layer.k_split_heads",
      "layer.v",
      "layer.v_split_heads",
      "layer.attention_scores",
      "layer.softmax.reduce1",
      "layer.softmax.reduce2",
      "layer.attention_scale+layer.attention_mask+layer.softmax",
      "layer.attention_context",
      "layer.attention_merge_heads",
      "layer.attention_out",
      "layer.add_layernorm1.norm.reduce1",
      "layer.add_layernorm1.norm.reduce2",
      "layer.add_layernorm1.add+layer.add_layernorm1.norm",
      "layer.ffn1",
      "layer.gelu",
      "layer.ffn2",
      "layer.add_layernorm2.norm.reduce1",
      "layer.add_layernorm2.norm.reduce2",
      "layer.add_layernorm2.add+layer.add_layernorm2.norm"};
  const std::int64_t layers = load_catalog_entry("bert-large").dim("layers");
  for (const int batch : {1, 8}) {
    const CatalogWorkload onnx = build(batch, "tensorrt-onnx");
    const CatalogWorkload plugins = build(batch, "tensorrt");
    EXPECT_EQ(onnx.runtime, "tensorrt-onnx");
    const std::vector<const LayerWork*> layer = first_layer(onnx.layers.layers, "layer.q");
    ASSERT_EQ(layer.size(), expected.size()) << batch;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(layer[i]->name, expected[i]) << batch;
    }
    EXPECT_EQ(static_cast<std::int64_t>(onnx.layers.layers.size()), 22 * layers + 3 + 2) << batch;
    EXPECT_EQ(static_cast<std::int64_t>(plugins.layers.layers.size()), 7 * layers + 1 + 1) << batch;
  }
}

// The unfused attention does the fused kernel's FLOPs in its two batched GEMMs, and the three
// projections the QKV GEMM's: the engine's GEMM work is demoBERT's, GEMM for GEMM. The scores are
// materialised: the softmax's reductions and pointwise pass each cover batch x heads x seq^2
// elements. The model is half throughout (`model.half()` before the export): no cast kernels.
TEST(TensorrtOnnxRuntime, SameGemmWorkAsThePluginsWithTheScoresMaterialisedAndNoCasts) {
  const CatalogEntry& entry = load_catalog_entry("bert-large");
  const std::int64_t heads = entry.dim("heads");
  for (const int batch : {1, 8}) {
    const CatalogWorkload onnx = build(batch, "tensorrt-onnx");
    const CatalogWorkload plugins = build(batch, "tensorrt");
    double fused_attention_flops = 0;
    for (const LayerWork& w : plugins.layers.layers) {
      if (w.kind == LayerWork::Kind::attention) fused_attention_flops += w.flops;
    }
    EXPECT_GT(fused_attention_flops, 0);
    EXPECT_NEAR(gemm_flops(onnx.layers.layers),
                gemm_flops(plugins.layers.layers) + fused_attention_flops,
                1e-9 * gemm_flops(onnx.layers.layers))
        << batch;
    const std::int64_t scores = static_cast<std::int64_t>(batch) * heads * 384 * 384;
    int softmax_kernels = 0;
    for (const LayerWork& w : onnx.layers.layers) {
      EXPECT_NE(w.kind, LayerWork::Kind::attention) << w.name;
      EXPECT_EQ(w.name.find("to_fp32"), std::string::npos) << w.name;
      EXPECT_EQ(w.name.find("to_half"), std::string::npos) << w.name;
      if (w.name.find("softmax") == std::string::npos) continue;
      EXPECT_EQ(w.elements, scores) << w.name;
      ++softmax_kernels;
    }
    EXPECT_EQ(softmax_kernels, 3 * entry.dim("layers")) << batch;
  }
}

// A misspelt runtime is a one-line error at the key's line and column that lists tensorrt-onnx
// among the runtimes kernel-families.yaml knows.
TEST(TensorrtOnnxRuntime, AnUnknownRuntimeIsALocatedErrorNamingTensorrtOnnx) {
  try {
    (void)resolve_scenario(
        load_scenario_text("name: t\nseed: 1\nduration: 200ms\nwarmup: 0s\n"
                           "gpus: [{name: g, model: a100-sxm4-40gb, sharing: {mode: exclusive}}]\n"
                           "tenants:\n  - name: a\n    device: g\n    workload:\n"
                           "      arrivals: {process: closed, concurrency: 1, think: 1us}\n"
                           "      model: bert-large\n      runtime: tensorrt-onx\n",
                           "test.yaml"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.yaml:12:16: tenants.0.workload.runtime: unknown runtime "
                        "'tensorrt-onx'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("tensorrt-onnx"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gpumux
