// The tensorrt-onnx runtime (kernel-families.yaml; docs/workloads.md, "TensorRT from ONNX"): a
// TensorRT 8.0 engine that TensorRT's ONNX parser built from a framework's ONNX export without
// demoBERT's plugins, as DeepLearningExamples' Triton BERT deployment runs it. Per encoder layer
// the exported graph's kernels in closed form (three projections, each with its head-split
// copy; the scores materialised; the softmax one kernel after the scale + mask kernel; both
// layer norms as two row reductions and one pointwise kernel; GELU after the GEMM), the same GEMM
// work as demoBERT's fused layers, no precision casts, the softmax-as-one-kernel law of
// fuse_elementwise_chains in closed form (other runtimes keep the row-reduction lowering), and an
// unknown runtime as a located one-line error that names it.
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
// after TensorRT's pointwise fusion): 21 kernels, against demoBERT's 7 (QKV GEMM, fused
// attention, output GEMM, skip layer norm, FFN1 with GELU, FFN2, skip layer norm): the scores'
// Div and mask Add one pointwise kernel, the SoftMax layer one kernel. The whole request: 21 per
// layer, the embedding's layer norm as three kernels, and the pooler's GEMM and tanh (demoBERT: 7
// per layer, one embedding kernel, the pooler's GEMM with tanh in its epilogue).
TEST(TensorrtOnnxRuntime, BertLayerRunsTheExportedGraphsKernelsInOrder) {
  const std::vector<std::string> expected{"layer.q",
                                          "layer.q_split_heads",
                                          "layer.k",
                                          "layer.k_split_heads",
                                          "layer.v",
                                          "layer.v_split_heads",
                                          "layer.attention_scores",
                                          "layer.attention_scale+layer.attention_mask",
                                          "layer.softmax",
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
    EXPECT_EQ(static_cast<std::int64_t>(onnx.layers.layers.size()), 21 * layers + 3 + 2) << batch;
    EXPECT_EQ(static_cast<std::int64_t>(plugins.layers.layers.size()), 7 * layers + 1 + 1) << batch;
  }
}

// The unfused attention does the fused kernel's FLOPs in its two batched GEMMs, and the three
// projections the QKV GEMM's: the engine's GEMM work is demoBERT's, GEMM for GEMM. The scores are
// materialised: the scale + mask kernel and the softmax kernel each cover batch x heads x seq^2
// elements, each reading them once and writing them once (2 x 2 B per element in fp16), the
// softmax 5 operations per element. The model is half throughout (`model.half()` before the
// export): no cast kernels.
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
    const double score_elements = static_cast<double>(scores);
    int softmax_kernels = 0, scale_mask_kernels = 0;
    for (const LayerWork& w : onnx.layers.layers) {
      EXPECT_NE(w.kind, LayerWork::Kind::attention) << w.name;
      EXPECT_EQ(w.name.find("to_fp32"), std::string::npos) << w.name;
      EXPECT_EQ(w.name.find("to_half"), std::string::npos) << w.name;
      const bool softmax = w.name == "layer.softmax";
      const bool scale_mask = w.name == "layer.attention_scale+layer.attention_mask";
      if (!softmax && !scale_mask) {
        EXPECT_EQ(w.name.find("softmax"), std::string::npos) << w.name;
        continue;
      }
      EXPECT_EQ(w.elements, scores) << w.name;
      EXPECT_DOUBLE_EQ(w.bytes, score_elements * (2 + 2)) << w.name;
      EXPECT_DOUBLE_EQ(w.flops, score_elements * (softmax ? 5 : 2)) << w.name;
      softmax_kernels += softmax;
      scale_mask_kernels += scale_mask;
    }
    EXPECT_EQ(softmax_kernels, entry.dim("layers")) << batch;
    EXPECT_EQ(scale_mask_kernels, entry.dim("layers")) << batch;
  }
}

LayerWork elementwise(const std::string& name, double bytes, double l2_input, double flops,
                      int row_reductions = 0, bool softmax = false) {
  LayerWork w;
  w.kind = LayerWork::Kind::elementwise;
  w.name = name;
  w.elements = 1000;
  w.bytes = bytes;
  w.input_bytes = l2_input;
  w.l2_input_bytes = l2_input;
  w.flops = flops;
  w.host_ops = 2;
  w.row_reductions = row_reductions;
  w.softmax = softmax;
  return w;
}

LayerWork gemm(const std::string& name) {
  LayerWork w;
  w.kind = LayerWork::Kind::gemm;
  w.name = name;
  w.m = w.n = w.k = 64;
  w.bytes = 3 * 64 * 64 * 2;
  return w;
}

// scores GEMM, scale, mask, softmax (two row reductions), context GEMM, then a residual add and a
// layer norm (two row reductions, not a softmax).
std::vector<LayerWork> attention_then_norm() {
  return {gemm("scores"),
          elementwise("scale", 4000, 2000, 1000),
          elementwise("mask", 4000, 2000, 1000),
          elementwise("softmax", 4000, 2000, 5000, 2, true),
          gemm("context"),
          elementwise("add", 6000, 2000, 1000),
          elementwise("norm", 4000, 2000, 8000, 2)};
}

// Closed form of the softmax-as-one-kernel law (catalog_model.hpp fuse_elementwise_chains): the
// softmax joins no chain and stays one kernel of its own work as built (reads the scores once,
// writes once: 4000 B, 5000 operations; its producer the scale + mask kernel, 4000 + 4000 - 2 x
// 2000 B), nothing fuses into it, one launch; the scale and mask before it one kernel; the layer
// norm, not a softmax, still two reduction kernels and its pass. Per attention 2 kernels after the
// scores GEMM where the row-reduction lowering gives 3, the same four passes over the scores.
TEST(TensorrtSoftmax, OneKernelAfterTheScaleAndMaskKernelTheNormStillLowered) {
  std::vector<LayerWork> layers = attention_then_norm();
  fuse_elementwise_chains(layers, true);
  const std::vector<std::string> expected{"scores",       "scale+mask",   "softmax", "context",
                                          "norm.reduce1", "norm.reduce2", "add+norm"};
  ASSERT_EQ(layers.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(layers[i].name, expected[i]);
  const LayerWork& scale_mask = layers[1];
  const LayerWork& softmax = layers[2];
  EXPECT_DOUBLE_EQ(scale_mask.bytes, 4000 + 4000 - 2 * 2000);
  EXPECT_DOUBLE_EQ(scale_mask.flops, 2000);
  EXPECT_DOUBLE_EQ(softmax.bytes, 4000);
  EXPECT_DOUBLE_EQ(softmax.flops, 5000);
  EXPECT_DOUBLE_EQ(softmax.l2_input_bytes, 2000);
  EXPECT_DOUBLE_EQ(softmax.l2_input_producer_bytes, scale_mask.bytes);
  EXPECT_TRUE(softmax.reduction_root);
  EXPECT_EQ(softmax.row_reductions, 0);
  EXPECT_EQ(softmax.host_ops, 1);
  EXPECT_TRUE(layers[4].reduction_root && layers[5].reduction_root);
  // The passes over the scores: scale + mask and softmax each read and write them once, as many
  // bytes as the row-reduction lowering's two re-reads and its read-and-write pass.
  std::vector<LayerWork> lowered = attention_then_norm();
  fuse_elementwise_chains(lowered, false);
  ASSERT_EQ(lowered.size(), expected.size() + 1);
  EXPECT_EQ(lowered[3].name, "scale+mask+softmax");
  EXPECT_DOUBLE_EQ(lowered[1].bytes + lowered[2].bytes + lowered[3].bytes,
                   scale_mask.bytes + softmax.bytes);
  // Fusing again changes nothing: nothing joins the softmax kernel.
  const std::vector<LayerWork> once = layers;
  fuse_elementwise_chains(layers, true);
  ASSERT_EQ(layers.size(), once.size());
  for (std::size_t i = 0; i < layers.size(); ++i) EXPECT_EQ(layers[i].name, once[i].name);
}

// Property over the catalog: the choice changes nothing where no layer is a softmax (the flag
// alone lowers no norm differently), and every runtime but tensorrt-onnx keeps the row-reduction
// lowering (softmax unset: default row_reductions), so their requests are the same kernels as
// the law without the flag gives; under tensorrt-onnx the request has one kernel per softmax
// fewer than the row-reduction lowering of the same layers.
TEST(TensorrtSoftmax, OnlyTensorrtOnnxChoosesItAndOnlySoftmaxesMove) {
  const KernelFamilies& families = load_kernel_families();
  for (const CatalogRuntime& r : families.runtimes) {
    EXPECT_EQ(r.softmax_one_kernel, r.name == "tensorrt-onnx") << r.name;
    EXPECT_EQ(r.softmax_source.empty(), r.name != "tensorrt-onnx") << r.name;
  }
  LayerFusion fusion;
  fusion.fused_attention = fusion.fused_activation = fusion.fused_residual_norm = false;
  for (const std::string model : {"bert-base", "bert-large", "gpt2", "vit-b16"}) {
    const CatalogEntry& e = load_catalog_entry(model);
    const std::vector<LayerWork> built =
        catalog_layers(e, 2, e.default_seq_len, "fp16", false, fusion).layers;
    std::vector<LayerWork> unmarked = built;
    int softmaxes = 0;
    for (LayerWork& w : unmarked) {
      softmaxes += w.softmax;
      w.softmax = false;
    }
    EXPECT_EQ(softmaxes, e.dim("layers")) << model;  // one per attention
    std::vector<LayerWork> lowered = built, one_kernel = built, flag_only = unmarked;
    fuse_elementwise_chains(lowered, false);
    fuse_elementwise_chains(one_kernel, true);
    fuse_elementwise_chains(flag_only, true);
    ASSERT_EQ(flag_only.size(), lowered.size()) << model;
    for (std::size_t i = 0; i < lowered.size(); ++i) {
      EXPECT_EQ(flag_only[i].name, lowered[i].name) << model;
      EXPECT_DOUBLE_EQ(flag_only[i].bytes, lowered[i].bytes) << model;
    }
    EXPECT_EQ(one_kernel.size() + static_cast<std::size_t>(softmaxes), lowered.size()) << model;
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
