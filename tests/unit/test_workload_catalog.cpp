// The workload catalog (models/workload/workload_catalog.hpp, models/workload/catalog_model.hpp):
// the layer tables against the published parameter and FLOP counts, L2 reuse between kernels,
// batch and MIG scaling, and the errors of the files and scenario keys. Kernel timing:
// test_catalog_timing.cpp; runtimes and training options: test_catalog_runtime.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/workload/workload_catalog.hpp"
#include "models/gpu/contention_law.hpp"
#include "models/scenario/catalog_tenant.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/unfitted_profile.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

const DeviceProfile& a100() { return unfitted_profile("a100-80gb"); }

TEST(CatalogLayers, PublishedParameterAndFlopCounts) {
  struct Case {
    const char* model;
    double params;  // published
    double tolerance;
  };
  // ResNet-50 25.56 M (torchvision); BERT-base 109.5 M / large 335 M (HF bert-*-uncased);
  // ViT-B/16 86.6 M (timm vit_base_patch16_224), ViT-L/16 304.3 M (timm vit_large_patch16_224;
  // the paper's Table 1 rounds it to 307 M); all-MiniLM-L6-v2 22.7 M; GPT-2 124.4 M.
  // GPT-2 large 774.0 M (HF gpt2-large); Whisper large-v3 1543.5 M and small 241.7 M (HF
  // openai/whisper-*); PointNet classification 3.5 M (Qi et al. 2017, table 6).
  for (const Case& c : {Case{"resnet50", 25.557e6, 0.01}, Case{"bert-base", 109.48e6, 0.01},
                        Case{"bert-large", 335.1e6, 0.01}, Case{"vit-b16", 86.57e6, 0.01},
                        Case{"vit-l16", 304.33e6, 0.01}, Case{"minilm-l6", 22.71e6, 0.01},
                        Case{"gpt2", 124.44e6, 0.01}, Case{"gpt2-large", 774.03e6, 0.01},
                        Case{"whisper-large-v3", 1543.5e6, 0.01},
                        Case{"whisper-small", 241.7e6, 0.01}, Case{"pointnet", 3.5e6, 0.05}}) {
    const CatalogEntry& e = load_catalog_entry(c.model);
    const CatalogLayers l = catalog_layers(e, 1, e.default_seq_len, "fp16", false);
    EXPECT_NEAR(l.params / c.params, 1.0, c.tolerance) << c.model << " " << l.params;
    EXPECT_EQ(l.weight_bytes, 2 * l.params) << c.model;
  }
  // ResNet-50 at 224 x 224: 4.09 GMAC (torchvision's reported 4.09 GFLOPS are MACs).
  const CatalogLayers r = catalog_layers(load_catalog_entry("resnet50"), 1, 0, "fp16", false);
  double macs = 0;
  for (const LayerWork& w : r.layers) {
    if (w.kind == LayerWork::Kind::gemm) macs += w.flops / 2;
  }
  EXPECT_NEAR(macs / 4.09e9, 1.0, 0.01) << macs;
}

TEST(CatalogLayers, TensorRtSumsTheResNetShortcutInTheLastConvolutionsEpilogue) {
  // He et al. 2016 Table 1 (ResNet-50 at 224 x 224): 3, 4, 6 and 3 bottleneck blocks whose
  // outputs are 56 x 56 x 256, 28 x 28 x 512, 14 x 14 x 1024 and 7 x 7 x 2048 per image. With
  // conv_residual fused (TensorRT) each block's x + shortcut and ReLU read the shortcut map in
  // the epilogue of its last convolution: no add_relu kernel, the same GEMM FLOPs, and per block
  // one more map read and two epilogue operations (add, max) per output element of that
  // convolution (LayerWork::epilogue_flops counts per output element).
  const CatalogEntry& e = load_catalog_entry("resnet50");
  LayerFusion fused;
  fused.fused_conv_residual = true;
  for (const int batch : {1, 8}) {
    const CatalogLayers separate = catalog_layers(e, batch, 0, "fp16", false);
    const CatalogLayers epilogue = catalog_layers(e, batch, 0, "fp16", false, fused);
    const auto sums = [](const CatalogLayers& l) {
      struct {
        int add_relu = 0, gemms = 0;
        double gemm_flops = 0, gemm_bytes = 0, epilogue = 0, add_relu_elements = 0;
      } t;
      for (const LayerWork& w : l.layers) {
        if (w.kind == LayerWork::Kind::gemm) {
          ++t.gemms;
          t.gemm_flops += w.flops;
          t.gemm_bytes += w.bytes;
          t.epilogue += w.epilogue_flops;
        } else if (w.name.find(".add_relu") != std::string::npos) {
          ++t.add_relu;
          t.add_relu_elements += static_cast<double>(w.elements);
        }
      }
      return t;
    };
    const auto a = sums(separate);
    const auto b = sums(epilogue);
    const double maps = batch * (3 * 56.0 * 56 * 256 + 4 * 28.0 * 28 * 512 + 6 * 14.0 * 14 * 1024 +
                                 3 * 7.0 * 7 * 2048);
    EXPECT_EQ(a.add_relu, 16);
    EXPECT_DOUBLE_EQ(a.add_relu_elements, maps);
    EXPECT_EQ(b.add_relu, 0);
    EXPECT_EQ(separate.layers.size() - epilogue.layers.size(), 16u);
    EXPECT_EQ(a.gemms, b.gemms);
    EXPECT_DOUBLE_EQ(a.gemm_flops, b.gemm_flops);
    EXPECT_DOUBLE_EQ(b.gemm_bytes - a.gemm_bytes, maps * 2);  // fp16 shortcut reads
    EXPECT_DOUBLE_EQ(b.epilogue - a.epilogue, 2 * 16);        // per output element, 16 convolutions
    EXPECT_EQ(separate.params, epilogue.params);
    // The convolutions keep their GEMM shapes (so their tiles and grids): the same (m, n, k)
    // in the same order.
    std::vector<const LayerWork*> ga, gb;
    for (const LayerWork& w : separate.layers) {
      if (w.kind == LayerWork::Kind::gemm) ga.push_back(&w);
    }
    for (const LayerWork& w : epilogue.layers) {
      if (w.kind == LayerWork::Kind::gemm) gb.push_back(&w);
    }
    ASSERT_EQ(ga.size(), gb.size());
    for (std::size_t i = 0; i < ga.size(); ++i) {
      EXPECT_EQ(ga[i]->name, gb[i]->name);
      EXPECT_EQ(ga[i]->m, gb[i]->m);
      EXPECT_EQ(ga[i]->n, gb[i]->n);
      EXPECT_EQ(ga[i]->k, gb[i]->k);
    }
  }
  // A training step keeps its add and ReLU kernels (the ReLU's backward reads the sum).
  EXPECT_EQ(catalog_layers(e, 8, 0, "fp16", true, fused).layers.size(),
            catalog_layers(e, 8, 0, "fp16", true).layers.size());
  // Resolved: TensorRT (conv_residual: fused in kernel-families.yaml) launches no add_relu
  // kernel, ONNX Runtime (the key absent: separate) one per block; a BERT request is unchanged.
  const auto kernels = [](const std::string& model, const std::string& runtime) {
    return resolve_scenario(
               load_scenario_text("name: t\nduration: 1s\ngpus: [{name: g, model: a100-80gb}]\n"
                                  "tenants:\n  - name: a\n    device: g\n    workload:\n"
                                  "      arrivals: {process: closed, concurrency: 1}\n"
                                  "      model: " +
                                      model + "\n      batch: 1\n      runtime: " + runtime + "\n",
                                  "test.yaml"))
        .scenario.tenants[0]
        .workload.kernels;
  };
  const auto add_relus = [](const std::vector<KernelSpec>& k) {
    return std::count_if(k.begin(), k.end(), [](const KernelSpec& x) {
      return x.name.find(".add_relu") != std::string::npos;
    });
  };
  EXPECT_EQ(add_relus(kernels("resnet50", "tensorrt")), 0);
  EXPECT_EQ(add_relus(kernels("resnet50", "onnxruntime")), 16);
  const KernelFamilies& f = load_kernel_families();
  EXPECT_TRUE(f.runtime("tensorrt")->fused_conv_residual);
  EXPECT_FALSE(f.runtime("tensorrt")->conv_residual_source.empty());
  EXPECT_FALSE(f.runtime("onnxruntime")->fused_conv_residual);
  EXPECT_FALSE(f.runtime("pytorch")->fused_conv_residual);
}

// The shipped kernel-families.yaml text.
std::string shipped_kernel_families() {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/calibration/workloads/kernel-families.yaml");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// `text` is refused with one located line naming `key` and saying `why`.
void expect_families_error(const std::string& text, const std::string& key,
                           const std::string& why) {
  try {
    parse_kernel_families(text, "k.yaml");
    ADD_FAILURE() << "no error for " << why;
  } catch (const InputError& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("k.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
  }
}

TEST(CatalogErrors, SerialSplitKIsATrueOrFalseWithItsProvenance) {
  // gemm.split_k_serial: optional (absent: off); a boolean with a source or an assumption.
  const std::string base = shipped_kernel_families();
  const std::size_t at = base.find("  split_k_serial:\n");
  const std::size_t end = base.find("  split_k_min_depth:\n");
  ASSERT_NE(at, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string before = base.substr(0, at), after = base.substr(end);
  EXPECT_FALSE(parse_kernel_families(before + after, "k.yaml").gemm_split_k_serial);
  const KernelFamilies on = parse_kernel_families(
      before + "  split_k_serial: {value: true, source: \"cuBLASLt INPLACE\"}\n" + after, "k.yaml");
  EXPECT_TRUE(on.gemm_split_k_serial);
  EXPECT_EQ(on.gemm_split_k_serial_provenance.provenance, "cuBLASLt INPLACE");
  EXPECT_FALSE(on.gemm_split_k_serial_provenance.assumed);
  expect_families_error(before + "  split_k_serial: {value: true}\n" + after, "split_k_serial",
                        "give exactly one of source or assumption");
  expect_families_error(before + "  split_k_serial: {value: maybe, assumption: x}\n" + after,
                        "maybe", "expected true or false");
}

TEST(CatalogErrors, AGemmLibraryNeedsItsTileSplitRuleAndProvenance) {
  const std::string base = shipped_kernel_families();
  const std::size_t from = base.find("\ngemm_libraries:\n");
  ASSERT_NE(from, std::string::npos);
  // The shipped file parses without it (the section is optional) and with it.
  EXPECT_TRUE(parse_kernel_families(base.substr(0, from + 1), "k.yaml").gemm_libraries.empty());
  EXPECT_EQ(parse_kernel_families(base, "k.yaml").gemm_library_names(),
            std::vector<std::string>{"tally-cutlass"});
  const std::string tile =
      "{m: 128, n: 128, k: 16, stages: 4, threads: 128, registers: 232, shared_memory: 32KiB}";
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{"  x:\n    tile: {value: " + tile +
                                                ", source: a}\n"
                                                "    split_below_tiles: {value: 60, source: a}\n",
                                            "split_depth"},
        {"  x:\n    tile: {value: " + tile +
             "}\n    split_below_tiles: {value: 60, source: a}\n"
             "    split_depth: {value: 128, source: a}\n",
         "give either source or assumption"},
        {"  x:\n    tile: {value: " + tile +
             ", source: a}\n"
             "    split_below_tiles: {value: 0, source: a}\n    split_depth: {value: 128, source: "
             "a}\n",
         "must be >= 1, got 0"},
        {"  x:\n    tile: {value: " + tile + ", source: a}\n    split: 3\n", "split"}}) {
    expect_families_error(base.substr(0, from) + "\ngemm_libraries:\n" + entry, "gemm_libraries.x",
                          why);
  }
}

TEST(CatalogErrors, ConvResidualIsFusedOrSeparateWithAProvenance) {
  const std::string base = shipped_kernel_families();
  // The tensorrt runtime's conv_residual block, replaced by each wrong one.
  const std::size_t from = base.find("    conv_residual:\n", base.find("\n  tensorrt:\n"));
  ASSERT_NE(from, std::string::npos);
  const std::size_t to = base.find("    half_precision:", from);
  ASSERT_NE(to, std::string::npos);
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{"    conv_residual: {value: fuzed, source: a}\n",
                                            "expected fused or separate, got 'fuzed'"},
        {"    conv_residual: {value: fused}\n", "give either source or assumption"}}) {
    expect_families_error(base.substr(0, from) + entry + base.substr(to),
                          "runtimes.tensorrt.conv_residual", why);
  }
}

// qkv_projection (optional, default fused) is fused, separate or separate_views with one
// provenance; absent it keeps the one QKV GEMM (ONNX Runtime, TensorRT), set it splits it (the
// TensorFlow runtimes with a transpose kernel each, PyTorch's with view head splits).
TEST(CatalogErrors, QkvProjectionIsSeparateOrFusedWithAProvenance) {
  const KernelFamilies& f = load_kernel_families();
  EXPECT_TRUE(f.runtime("tensorflow")->separate_qkv_projections);
  EXPECT_TRUE(f.runtime("tensorflow-xla")->separate_qkv_projections);
  EXPECT_FALSE(f.runtime("tensorflow-xla")->qkv_head_views);
  EXPECT_FALSE(f.runtime("tensorflow-xla")->qkv_projection_source.empty());
  EXPECT_FALSE(f.runtime("onnxruntime")->separate_qkv_projections);
  EXPECT_TRUE(f.runtime("onnxruntime")->qkv_projection_source.empty());
  for (const std::string runtime : {"pytorch", "pytorch-sdpa"}) {
    EXPECT_TRUE(f.runtime(runtime)->separate_qkv_projections) << runtime;
    EXPECT_TRUE(f.runtime(runtime)->qkv_head_views) << runtime;
    EXPECT_FALSE(f.runtime(runtime)->qkv_projection_source.empty()) << runtime;
  }
  const std::string base = shipped_kernel_families();
  // The tensorflow-xla runtime's qkv_projection block, replaced by each wrong one.
  const std::size_t from = base.find("    qkv_projection:\n", base.find("\n  tensorflow-xla:\n"));
  ASSERT_NE(from, std::string::npos);
  const std::size_t to = base.find("    elementwise_fusion:", from);
  ASSERT_NE(to, std::string::npos);
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{
            "    qkv_projection: {value: split, source: a}\n",
            "expected fused, separate or separate_views, got 'split'"},
        {"    qkv_projection: {value: separate}\n", "give either source or assumption"}}) {
    expect_families_error(base.substr(0, from) + entry + base.substr(to),
                          "runtimes.tensorflow-xla.qkv_projection", why);
  }
}

// dense_bias (optional, default fused) is fused, separate or broadcast with one provenance: the
// TensorFlow graph executor's BiasAdd kernel, NGC 20.06's XLA broadcast + GEMM beta 1.
TEST(CatalogErrors, DenseBiasIsFusedSeparateOrBroadcastWithAProvenance) {
  const KernelFamilies& f = load_kernel_families();
  EXPECT_TRUE(f.runtime("tensorflow")->dense_bias_kernel);
  EXPECT_FALSE(f.runtime("tensorflow")->dense_bias_broadcast);
  EXPECT_TRUE(f.runtime("tensorflow-xla")->dense_bias_broadcast);
  EXPECT_FALSE(f.runtime("tensorflow-xla")->dense_bias_kernel);
  for (const char* other : {"onnxruntime", "pytorch", "tensorrt"}) {
    EXPECT_FALSE(f.runtime(other)->dense_bias_kernel || f.runtime(other)->dense_bias_broadcast)
        << other;
  }
  const std::string base = shipped_kernel_families();
  const std::size_t from = base.find("    dense_bias:\n", base.find("\n  tensorflow-xla:\n"));
  ASSERT_NE(from, std::string::npos);
  const std::size_t to = base.find("    elementwise_fusion:", from);
  ASSERT_NE(to, std::string::npos);
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{"    dense_bias: {value: beta, source: a}\n",
                                            "expected fused, separate or broadcast, got 'beta'"},
        {"    dense_bias: {value: broadcast}\n", "give either source or assumption"}}) {
    expect_families_error(base.substr(0, from) + entry + base.substr(to),
                          "runtimes.tensorflow-xla.dense_bias", why);
  }
}

// softmax (optional, default row_reductions) is one_kernel or row_reductions with one
// provenance: only tensorrt-onnx sets it (TensorRT's SoftMax layer).
TEST(CatalogErrors, SoftmaxIsOneKernelOrRowReductionsWithAProvenance) {
  const KernelFamilies& f = load_kernel_families();
  EXPECT_TRUE(f.runtime("tensorrt-onnx")->softmax_one_kernel);
  EXPECT_FALSE(f.runtime("tensorflow-xla")->softmax_one_kernel);
  const std::string base = shipped_kernel_families();
  const std::size_t from = base.find("    softmax:\n", base.find("\n  tensorrt-onnx:\n"));
  ASSERT_NE(from, std::string::npos);
  // The runtime's last key: the block runs to the serving section.
  const std::size_t to = base.find("\nserving:", from);
  ASSERT_NE(to, std::string::npos);
  for (const auto& [entry, why] :
       {std::pair<std::string, std::string>{"    softmax: {value: fused, source: a}\n",
                                            "expected one_kernel or row_reductions, got 'fused'"},
        {"    softmax: {value: one_kernel}\n", "give either source or assumption"}}) {
    expect_families_error(base.substr(0, from) + entry + base.substr(to + 1),
                          "runtimes.tensorrt-onnx.softmax", why);
  }
}

TEST(CatalogLayers, TrainingTriplesGemmFlopsAndBatchScalesThem) {
  const CatalogEntry& e = load_catalog_entry("bert-base");
  const auto gemm_flops = [](const CatalogLayers& l) {
    double f = 0;
    for (const LayerWork& w : l.layers) {
      if (w.kind == LayerWork::Kind::gemm) f += w.flops;
    }
    return f;
  };
  const CatalogLayers inf8 = catalog_layers(e, 8, 128, "fp16", false);
  const CatalogLayers inf16 = catalog_layers(e, 16, 128, "fp16", false);
  // Inference FLOPs are linear in the batch (the pooler too: M = batch).
  EXPECT_DOUBLE_EQ(gemm_flops(inf16), 2 * gemm_flops(inf8));
  // Every GEMM has a data and a weight gradient of its FLOPs (the MLM head replaces the pooler).
  const CatalogLayers train = catalog_layers(e, 8, 128, "fp16", true);
  double forward = 0;
  for (const LayerWork& w : train.layers) {
    if (w.kind == LayerWork::Kind::gemm && w.name.find("grad") == std::string::npos) {
      forward += w.flops;
    }
  }
  EXPECT_DOUBLE_EQ(gemm_flops(train), 3 * forward);
  EXPECT_EQ(train.layers.back().name, "optimizer.adam");
}

TEST(CatalogLayers, AKernelReadsFromL2WhatTheKernelBeforeItWrote) {
  // BERT-base, batch 1 x 128 tokens, fp16, TensorRT fusions: the QKV projection reads the
  // embedding LayerNorm's output (128 x 768), FFN2 reads FFN1's (128 x 3072, GELU fused into
  // its epilogue); the weights are never an earlier kernel's output.
  const CatalogEntry& e = load_catalog_entry("bert-base");
  const CatalogLayers l = catalog_layers(e, 1, 128, "fp16", false);
  ASSERT_FALSE(l.layers.empty());
  EXPECT_EQ(l.layers.front().l2_input_bytes, 0);
  const auto find = [&](const CatalogLayers& layers, const std::string& name) {
    const auto it = std::find_if(layers.layers.begin(), layers.layers.end(),
                                 [&](const LayerWork& w) { return w.name == name; });
    EXPECT_NE(it, layers.layers.end()) << name;
    return *it;
  };
  EXPECT_DOUBLE_EQ(find(l, "layer.qkv").l2_input_bytes, 128.0 * 768 * 2);
  EXPECT_DOUBLE_EQ(find(l, "layer.ffn2").l2_input_bytes, 128.0 * 3072 * 2);
  for (const LayerWork& w : l.layers) {
    EXPECT_LE(w.l2_input_bytes, w.bytes) << w.name;
    if (w.kind == LayerWork::Kind::gemm) {
      EXPECT_LE(w.l2_input_bytes, w.a_bytes) << w.name;
    }
  }
  // In training the backward reads saved activations and gradients from HBM.
  const CatalogLayers train = catalog_layers(e, 8, 128, "fp16", true);
  bool backward_seen = false;
  for (const LayerWork& w : train.layers) {
    const bool backward = w.name.find("grad") != std::string::npos ||
                          w.name.find(".backward") != std::string::npos ||
                          w.name.rfind("optimizer", 0) == 0;
    backward_seen = backward_seen || backward;
    if (backward) {
      EXPECT_EQ(w.l2_input_bytes, 0) << w.name;
    }
  }
  EXPECT_TRUE(backward_seen);
  // Built on a device whose L2 holds the output (the whole A100's 40 MB), a memory-bound
  // consumer moves only the rest through HBM; on one whose L2 cannot (1 byte), all of it. At
  // batch 32 the residual LayerNorm reads 2 x 6.3 MB (the attention output and the residual)
  // and writes 6.3 MB: alone on the whole GPU it is HBM-bound.
  CatalogRequestSpec request;
  request.model = "bert-base";
  request.batch = 32;
  request.seq_len = 128;
  const DeviceProfile& gpu = a100();
  const CatalogWorkload fits = build_catalog_workload(Scenario{}, request, "t", gpu, 1);
  const CatalogWorkload spills =
      build_catalog_workload(Scenario{}, request, "t", gpu, 1, false, 0, 1.0);
  ASSERT_EQ(fits.kernels.size(), spills.kernels.size());
  const auto norm = std::find_if(fits.kernels.begin(), fits.kernels.end(),
                                 [](const auto& k) { return k.name == "layer.add_layernorm1"; });
  ASSERT_NE(norm, fits.kernels.end());
  const std::size_t i = static_cast<std::size_t>(norm - fits.kernels.begin());
  ASSERT_DOUBLE_EQ(spills.kernels[i].memory_bound, 1.0);
  ASSERT_DOUBLE_EQ(fits.kernels[i].memory_bound, 1.0);
  const double tokens = 32.0 * 128 * 768 * 2;
  EXPECT_NEAR(static_cast<double>(fits.kernels[i].duration.value) /
                  static_cast<double>(spills.kernels[i].duration.value),
              2 * tokens / (3 * tokens), 1e-3);
  for (std::size_t k = 0; k < fits.kernels.size(); ++k) {
    EXPECT_LE(fits.kernels[k].duration.value, spills.kernels[k].duration.value)
        << fits.kernels[k].name;
  }
  // An L2 of half the bytes its producer (the attention output projection) moved keeps the
  // most recent half of them: half of the input is read from L2.
  const CatalogLayers b32 = catalog_layers(e, 32, 128, "fp16", false);
  const LayerWork producer = find(b32, "layer.attention_out");
  EXPECT_DOUBLE_EQ(find(b32, "layer.add_layernorm1").l2_input_producer_bytes, producer.bytes);
  const CatalogWorkload half =
      build_catalog_workload(Scenario{}, request, "t", gpu, 1, false, 0, producer.bytes / 2);
  EXPECT_NEAR(static_cast<double>(half.kernels[i].duration.value) /
                  static_cast<double>(spills.kernels[i].duration.value),
              2.5 * tokens / (3 * tokens), 1e-3);
}

TEST(CatalogWorkload, Batch1HoldsFewSmsAndBatch256FillsTheGpu) {
  const auto kernels = [](int batch) {
    const ResolvedScenario r = resolve_scenario(load_scenario_text(
        "name: t\nduration: 1s\ngpus: [{name: g, model: a100-80gb}]\n"
        "tenants:\n  - name: a\n    device: g\n    workload:\n"
        "      arrivals: {process: closed, concurrency: 1}\n      model: resnet50\n"
        "      batch: " +
            std::to_string(batch) + "\n",
        "test.yaml"));
    return r.scenario.tenants[0].workload.kernels;
  };
  // The layers' kernels (a split-K reduction exists where the selection splits, which depends
  // on the batch).
  const auto layers_only = [](std::vector<KernelSpec> k) {
    k.erase(std::remove_if(k.begin(), k.end(),
                           [](const KernelSpec& x) {
                             return x.name.find(".splitk_reduce") != std::string::npos;
                           }),
            k.end());
    return k;
  };
  const auto one = layers_only(kernels(1));
  const auto big = layers_only(kernels(256));
  ASSERT_EQ(one.size(), big.size());
  double f1 = 0, f256 = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    f1 += one[i].sm_fraction;
    f256 += big[i].sm_fraction;
    EXPECT_GE(big[i].duration.value, one[i].duration.value) << one[i].name;
  }
  EXPECT_LT(f1, f256);
  EXPECT_GT(f256 / big.size(), 0.95);
  // Every kernel's width is its grid's: min(1, blocks / 108), and its waves at the resident
  // blocks per SM.
  for (const auto* list : {&one, &big}) {
    for (const KernelSpec& k : *list) {
      ASSERT_GT(k.blocks, 0) << k.name;
      EXPECT_DOUBLE_EQ(k.sm_fraction, std::min(1.0, k.blocks / 108.0)) << k.name;
      EXPECT_DOUBLE_EQ(k.waves, std::max(1.0, k.blocks / (k.blocks_per_sm * 108.0))) << k.name;
    }
  }
}

TEST(CatalogWorkload, MigSliceSlowsBatch1FarLessThanBatch256) {
  const auto latency = [](int batch, bool mig) {
    const std::string gpu =
        mig ? "{name: g, model: a100-80gb, mig: [1g.10gb]}" : "{name: g, model: a100-80gb}";
    const RunResult r =
        testing::run_yaml("name: t\nduration: 2s\ngpus: [" + gpu +
                          "]\ntenants:\n  - name: a\n    device: " + (mig ? "g/0" : "g") +
                          "\n    workload:\n      arrivals: {process: closed, concurrency: 1}\n"
                          "      model: resnet50\n      batch: " +
                          std::to_string(batch) + "\n");
    return static_cast<double>(testing::tenant(r, "a").latency.p50);
  };
  const double small = latency(1, true) / latency(1, false);
  const double large = latency(256, true) / latency(256, false);
  // A 1g slice holds 14 of 108 SMs: a full-GPU compute-bound model is ~108/14 = 7.7x slower in
  // the fluid law; with whole waves (a known grid) a kernel of x blocks per SM-slot takes
  // ceil(x/14) / ceil(x/108) <= 108/14 + 1 times as long (at most one partial wave more), and the
  // slice's 1/8 of HBM bandwidth gives 8x to the memory-bound part. Batch-1 kernels hold few SMs,
  // so the slice costs much less.
  EXPECT_GT(large, 6.5);
  EXPECT_LT(large, (108.0 / 14.0 + 1.0) * 1.05);
  EXPECT_LT(small, 0.5 * large);
  EXPECT_GT(small, 1.0);
}

TEST(CatalogErrors, UnknownModelNamesTheKeyWithAHint) {
  try {
    load_scenario_text(
        "name: t\nduration: 1s\ngpus: [{name: g, model: a100-80gb}]\n"
        "tenants:\n  - name: a\n    device: g\n    workload:\n"
        "      arrivals: {process: closed, concurrency: 1}\n      model: resnet5\n",
        "test.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test.yaml:9:14: tenants.0.workload.model: unknown workload model "
                     "'resnet5' (did you mean 'resnet50'?); known: bert-base"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

TEST(CatalogErrors, WrongUnitAndForeignKeysAreLocated) {
  const std::string head =
      "name: t\nduration: 1s\ngpus: [{name: g, model: a100-80gb}]\n"
      "tenants:\n  - name: a\n    device: g\n    workload:\n"
      "      arrivals: {process: closed, concurrency: 1}\n";
  const auto error = [&](const std::string& tail) {
    try {
      resolve_scenario(load_scenario_text(head + tail, "test.yaml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("      model: gpt2\n      phase: training\n      bus_bandwidth: 200GB\n")
                .find("test.yaml:11:22: tenants.0.workload.bus_bandwidth:"),
            std::string::npos);
  EXPECT_NE(error("      model: vit-b16\n      phase: training\n")
                .find("tenants.0.workload.phase: vit-b16 has no training phase"),
            std::string::npos);
  EXPECT_NE(error("      model: bert-base\n      seq_len: 1024\n")
                .find("test.yaml:10:16: tenants.0.workload.seq_len: bert-base has 512 positions"),
            std::string::npos);
  EXPECT_NE(error("      model: resnet50\n      dtype: fp8\n")
                .find("tenants.0.workload.dtype: the a100-80gb profile has no "
                      "compute_throughput.fp8_tensor"),
            std::string::npos);
  EXPECT_NE(error("      batch: 4\n      request: {kernels: [{duration: 1ms}]}\n")
                .find("tenants.0.workload.batch: 'batch' belongs to a catalog workload"),
            std::string::npos);
}

TEST(CatalogErrors, EntryFileMissingKeyAndBadFamilyAreLocated) {
  try {
    parse_catalog_entry(
        "display_name: X\nsource: paper\nphases: [inference]\n"
        "architecture: {layers: 2}\n",
        "calibration/workloads/x.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("calibration/workloads/x.yaml:1:1: family: missing "
                                         "required key 'family'"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_catalog_entry(
        "display_name: X\nfamily: encodr\nsource: paper\nphases: [inference]\n"
        "architecture: {layers: 2}\n",
        "x.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml:2:9: family: unknown family 'encodr' (did you "
                                         "mean 'encoder'?)"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_kernel_families("gemm: {tiles: 128}\n", "k.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k.yaml:1:15: gemm.tiles: expected a mapping"),
              std::string::npos)
        << e.what();
  }
}

TEST(CatalogFiles, EveryEmbeddedEntryLoadsAndBuildsOnEveryProfileWithThroughput) {
  ASSERT_GE(catalog_model_names().size(), 6u);
  for (const std::string& name : catalog_model_names()) {
    const CatalogEntry& e = load_catalog_entry(name);
    EXPECT_FALSE(e.source.empty()) << name;
    for (const std::string& phase : e.phases) {
      const CatalogLayers l = catalog_layers(e, e.default_batch, e.default_seq_len, e.default_dtype,
                                             phase == "training");
      EXPECT_GT(l.layers.size(), 10u) << name;
      EXPECT_GT(l.params, 1'000'000) << name;
    }
  }
}

}  // namespace
}  // namespace gpumux
