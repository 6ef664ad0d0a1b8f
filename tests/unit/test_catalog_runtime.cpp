// The workload catalog's runtimes and training options (models/workload/catalog_model.hpp
// "Runtime", "Host", "Memory"): eager PyTorch's separate kernels and launch pacing, autocast,
// host-bound requests, NCHW transposes, gradient checkpointing, and located errors for runtimes.
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
#include "models/scenario/emit.hpp"
#include "models/workload/catalog_model.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/unfitted_profile.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

ResolvedScenario resolve_catalog(const std::string& keys, const std::string& gpu = "a100-80gb") {
  return resolve_scenario(
      load_scenario_text("name: t\nduration: 1s\ngpus: [{name: g, model: " + gpu +
                             "}]\n"
                             "tenants:\n  - name: a\n    device: g\n    workload:\n"
                             "      arrivals: {process: closed, concurrency: 1}\n" +
                             keys,
                         "test.yaml"));
}

TEST(CatalogRuntime, EagerPyTorchSplitsTheLayersAndPacesTheLaunches) {
  const KernelFamilies& f = load_kernel_families();
  const CatalogEntry& e = load_catalog_entry("bert-base");
  LayerFusion eager;
  eager.fused_attention = eager.fused_activation = eager.fused_residual_norm =
      eager.folded_batchnorm = false;
  eager.separate_qkv_projections = eager.qkv_head_views = true;  // `qkv_projection: separate_views`
  const CatalogLayers fused = catalog_layers(e, 1, 128, "fp32", false);
  const CatalogLayers split = catalog_layers(e, 1, 128, "fp32", false, eager);
  const auto count = [](const CatalogLayers& l, const std::string& prefix) {
    int n = 0;
    for (const LayerWork& w : l.layers) n += w.name.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  };
  // TensorRT: qkv, fused attention, out, skip-LN, ffn1 (+GELU), ffn2, skip-LN = 7 per layer;
  // eager: q, k, v (three nn.Linear; at batch 1 no head-split copy), scores, scale, mask,
  // softmax, context, merge-heads copy, out, add, LN, ffn1, GELU, ffn2, add, LN = 17.
  EXPECT_EQ(count(fused, "layer."), 12 * 7);
  EXPECT_EQ(count(split, "layer."), 12 * 17);
  // The same parameters; the projections' FLOPs are the same and attention adds its two GEMMs
  // (4 L^2 d per head, as the fused kernel).
  EXPECT_EQ(fused.params, split.params);
  double f_fused = 0, f_split = 0, ops = 0;
  for (const LayerWork& w : fused.layers) {
    if (w.kind != LayerWork::Kind::elementwise) f_fused += w.flops;
  }
  for (const LayerWork& w : split.layers) {
    if (w.kind != LayerWork::Kind::elementwise) f_split += w.flops;
    ops += w.host_ops;
  }
  EXPECT_NEAR(f_split / f_fused, 1.0, 1e-12);
  // The tenant's host gap is the runtime's dispatch time per kernel; a CUDA graph has none.
  // (fp32: no autocast casts, so the tenant's kernels are the layers above.)
  const ResolvedScenario r =
      resolve_catalog("      model: bert-base\n      runtime: pytorch\n      dtype: fp32\n");
  const WorkloadSpec& w = r.scenario.tenants[0].workload;
  std::size_t reductions = 0;
  for (const KernelSpec& k : w.kernels) {
    reductions += k.name.find(".splitk_reduce") != std::string::npos ? 1 : 0;
  }
  ASSERT_EQ(w.kernels.size() - reductions, split.layers.size());
  EXPECT_EQ(w.host_gap, std::llround(ops * f.runtime("pytorch")->host_per_op.value * 1e9 /
                                     static_cast<double>(w.kernels.size())));
  EXPECT_EQ(w.host_gap_origin, ParamOrigin::catalog);
  EXPECT_EQ(w.catalog->runtime, "pytorch");
  EXPECT_EQ(resolve_catalog("      model: bert-base\n").scenario.tenants[0].workload.host_gap, 0);
  EXPECT_EQ(
      resolve_catalog("      model: bert-base\n      runtime: pytorch\n      cuda_graph: true\n")
          .scenario.tenants[0]
          .workload.host_gap,
      0);
}

TEST(CatalogRuntime, TensorRtRunsOneAttentionBlockPerBatchAndHead) {
  // kernel-families: tensorrt has `attention_grid: per_head` (its fused MHA plugin's grid of heads
  // x batch blocks), pytorch-sdpa none (FlashAttention's 128-row tiles).
  const KernelFamilies& f = load_kernel_families();
  EXPECT_TRUE(f.runtime("tensorrt")->attention_per_head);
  EXPECT_FALSE(f.runtime("pytorch-sdpa")->attention_per_head);
  EXPECT_FALSE(f.runtime("onnxruntime")->attention_per_head);
  const auto attention_blocks = [](const std::string& runtime, const std::string& gpu) {
    const ResolvedScenario r = resolve_catalog(
        "      model: bert-large\n      batch: 2\n      seq_len: 384\n      dtype: fp16\n"
        "      runtime: " +
            runtime + "\n",
        gpu);
    for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
      if (k.name == "layer.attention") return k.blocks;
    }
    return -1;
  };
  // BERT-large, 16 heads, batch 2, S 384: 32 blocks per head, 96 tiled.
  EXPECT_EQ(attention_blocks("tensorrt", "a100-80gb"), 32);
  EXPECT_EQ(attention_blocks("pytorch-sdpa", "a100-80gb"), 96);
  // The L40S cannot hold the sm80 S-384 block (112 KiB) but runs TensorRT's GA10x one (64 KiB)
  // on the same per-head grid; FlashAttention's tiles there as anywhere.
  EXPECT_EQ(attention_blocks("tensorrt", "l40s-48gb"), 32);
  EXPECT_EQ(attention_blocks("pytorch-sdpa", "l40s-48gb"), 96);
}

TEST(CatalogRuntime, AutocastRunsSoftmaxAndLayerNormInFp32BetweenCasts) {
  // PyTorch's autocast (the pytorch runtimes' half precision): softmax and layer norm read and
  // write fp32, after a cast of their input up and before a cast of their output down; a
  // runtime that converts the model (tensorrt, onnxruntime) and an fp32 request have none.
  const CatalogEntry& e = load_catalog_entry("bert-base");
  LayerFusion eager;
  eager.fused_attention = eager.fused_activation = eager.fused_residual_norm =
      eager.folded_batchnorm = false;
  LayerFusion amp = eager;
  amp.autocast_fp32_ops = true;
  const CatalogLayers half = catalog_layers(e, 8, 128, "fp16", true, eager);
  const CatalogLayers mixed = catalog_layers(e, 8, 128, "fp16", true, amp);
  const auto find = [](const CatalogLayers& l, const std::string& name) -> const LayerWork* {
    for (const LayerWork& w : l.layers) {
      if (w.name == name) return &w;
    }
    return nullptr;
  };
  const LayerWork* softmax_half = find(half, "layer.softmax");
  const LayerWork* softmax_fp32 = find(mixed, "layer.softmax");
  const LayerWork* cast_up = find(mixed, "layer.softmax.to_fp32");
  const LayerWork* cast_down = find(mixed, "layer.softmax.to_half");
  ASSERT_TRUE(softmax_half && softmax_fp32 && cast_up && cast_down);
  EXPECT_EQ(find(half, "layer.softmax.to_fp32"), nullptr);
  // Scores of 8 x 12 heads x 128 x 128: read and written at 4 B instead of 2; each cast reads
  // one size and writes the other (6 B per element).
  const double scores = 8.0 * 12 * 128 * 128;
  EXPECT_DOUBLE_EQ(softmax_half->bytes, scores * 2 * 2);
  EXPECT_DOUBLE_EQ(softmax_fp32->bytes, scores * 2 * 4);
  EXPECT_DOUBLE_EQ(cast_up->bytes, scores * 6);
  EXPECT_DOUBLE_EQ(cast_down->bytes, scores * 6);
  // Every layer's softmax and its two layer norms gain two casts each (12 layers), plus the
  // embedding's norm, the MLM head's norm and the loss: forward and backward.
  EXPECT_EQ(mixed.layers.size() - half.layers.size(), 2u * 2 * (12 * 3 + 3));
  // The same GEMM FLOPs.
  double f_half = 0, f_mixed = 0;
  for (const LayerWork& w : half.layers) f_half += w.kind == LayerWork::Kind::gemm ? w.flops : 0;
  for (const LayerWork& w : mixed.layers) f_mixed += w.kind == LayerWork::Kind::gemm ? w.flops : 0;
  EXPECT_DOUBLE_EQ(f_half, f_mixed);
  // Resolved: the pytorch runtime autocasts fp16 and bf16, not fp32; tensorrt converts.
  const auto casts = [](const std::string& keys) {
    const ResolvedScenario r = resolve_catalog("      model: bert-base\n" + keys);
    int n = 0;
    for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
      n += k.name.find(".to_fp32") != std::string::npos ? 1 : 0;
    }
    return n;
  };
  EXPECT_GT(casts("      runtime: pytorch\n      dtype: bf16\n"), 0);
  EXPECT_EQ(casts("      runtime: pytorch\n      dtype: fp32\n"), 0);
  EXPECT_EQ(casts("      runtime: tensorrt\n      dtype: fp16\n"), 0);
  EXPECT_EQ(casts("      runtime: onnxruntime\n      dtype: fp16\n"), 0);
}

TEST(CatalogRuntime, HostBoundRequestLastsAtLeastItsDispatchTime) {
  // BERT-base at batch 1 in PyTorch eager: the GPU finishes each small kernel before the CPU
  // dispatches the next, so a request lasts at least (kernels - 1) x host_gap (issue_k >=
  // start + k host_gap) and, on a 1g.10gb slice, barely longer (MIGPerf's ~1.0 ratio).
  const auto run = [](const std::string& device, const std::string& gpu) {
    const RunResult r = testing::run_yaml(
        "name: t\nduration: 2s\ngpus: [" + gpu + "]\ntenants:\n  - name: a\n    device: " + device +
        "\n    workload:\n      arrivals: {process: closed, concurrency: 1}\n"
        "      model: bert-base\n      runtime: pytorch\n");
    return static_cast<double>(testing::tenant(r, "a").latency.p50);
  };
  const ResolvedScenario r = resolve_catalog("      model: bert-base\n      runtime: pytorch\n");
  const WorkloadSpec& w = r.scenario.tenants[0].workload;
  const double floor = static_cast<double>(w.kernels.size() - 1) * static_cast<double>(w.host_gap);
  const double whole = run("g", "{name: g, model: a100-80gb}");
  EXPECT_GE(whole, floor);
  const double slice = run("g/0", "{name: g, model: a100-80gb, mig: [1g.10gb]}");
  EXPECT_LT(slice / whole, 1.3);
  // The runner paces every launch at host_gap = dispatch time / kernels: the whole GPU's request
  // has a few more kernels (split-K reductions) and is paced (n - 1) / n of its dispatch time,
  // a hair longer than the slice's; beyond that the slice is never faster.
  EXPECT_GE(slice / whole, 0.995);
}

TEST(CatalogRuntime, NchwTransposesAroundEveryConvolutionInAnEagerRuntimeOnly) {
  const auto kernels = [](const std::string& keys) {
    return resolve_catalog("      model: resnet50\n      batch: 32\n" + keys)
        .scenario.tenants[0]
        .workload.kernels;
  };
  const auto count = [](const std::vector<KernelSpec>& k, const std::string& suffix) {
    int n = 0;
    for (const KernelSpec& x : k) {
      n += x.name.size() > suffix.size() &&
                   x.name.compare(x.name.size() - suffix.size(), suffix.size(), suffix) == 0
               ? 1
               : 0;
    }
    return n;
  };
  const std::string eager = "      runtime: pytorch\n      phase: training\n";
  const auto nhwc = kernels(eager);
  const auto nchw = kernels(eager + "      memory_format: contiguous\n");
  // ResNet-50 has 53 convolutions: two transposes each in the forward pass and their transposed
  // gradients in the backward.
  EXPECT_EQ(count(nhwc, ".to_nhwc"), 0);
  EXPECT_EQ(count(nchw, ".to_nhwc"), 53);
  EXPECT_EQ(count(nchw, ".to_nchw"), 53);
  EXPECT_EQ(count(nchw, ".to_nhwc.backward"), 53);
  double t_nhwc = 0, t_nchw = 0;
  for (const KernelSpec& k : nhwc) t_nhwc += static_cast<double>(k.duration.value);
  for (const KernelSpec& k : nchw) t_nchw += static_cast<double>(k.duration.value);
  EXPECT_GT(t_nchw, 1.1 * t_nhwc);
  // TensorRT picks its own layout: the key changes nothing there.
  EXPECT_EQ(kernels("      memory_format: contiguous\n").size(), kernels("").size());
  try {
    kernels("      memory_format: nwhc\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tenants.0.workload.memory_format"), std::string::npos)
        << e.what();
  }
}

TEST(CatalogTraining, GradientCheckpointingRecomputesEachLayerAndSavesItsInputOnly) {
  // torch.utils.checkpoint per transformer layer: the step is the plain step plus one more
  // forward of every layer (placed before that layer's backward), and the saved activations are
  // the layers' inputs, the rest of the model and one layer's own.
  const CatalogEntry& e = load_catalog_entry("bert-base");
  const int layers = static_cast<int>(e.dim("layers"));
  const CatalogLayers plain = catalog_layers(e, 8, 128, "fp32", true);
  const CatalogLayers ckpt = catalog_layers(e, 8, 128, "fp32", true, LayerFusion{}, true);
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::vector<std::string> rest;
  double recompute_flops = 0;
  for (const LayerWork& w : ckpt.layers) {
    if (ends_with(w.name, ".recompute")) {
      recompute_flops += w.flops;
    } else {
      rest.push_back(w.name);
    }
  }
  std::vector<std::string> plain_names;
  double layer_forward_flops = 0;
  for (const LayerWork& w : plain.layers) plain_names.push_back(w.name);
  for (std::size_t i = 0; i < plain.layers.size() && plain.layers[i].name != "optimizer.adam";
       ++i) {
    const LayerWork& w = plain.layers[i];
    const bool backward = w.name.find("grad") != std::string::npos ||
                          ends_with(w.name, ".backward") || ends_with(w.name, ".grad_accumulate");
    if (!backward && w.name.rfind("layer.", 0) == 0) layer_forward_flops += w.flops;
  }
  EXPECT_EQ(rest, plain_names);  // nothing else changes, in the same order
  EXPECT_GT(layer_forward_flops, 0);
  EXPECT_DOUBLE_EQ(recompute_flops, layer_forward_flops);
  // Layer l's recomputed forward runs after layer l+1's backward: the first recomputed kernel
  // follows the loss and comes before any transformer layer's gradient.
  std::size_t first_recompute = 0, first_layer_grad = 0;
  for (std::size_t i = ckpt.layers.size(); i-- > 0;) {
    const std::string& n = ckpt.layers[i].name;
    if (ends_with(n, ".recompute")) first_recompute = i;
    if (n.rfind("layer.", 0) == 0 && (ends_with(n, ".dgrad") || ends_with(n, ".wgrad"))) {
      first_layer_grad = i;
    }
  }
  EXPECT_LT(first_recompute, first_layer_grad);
  // Saved: every layer's input (tokens x hidden) at least; less than saving every output.
  const std::int64_t input = 8LL * 128 * e.dim("hidden") * 4;
  EXPECT_GE(ckpt.activation_saved, layers * input);
  EXPECT_LT(ckpt.activation_saved, plain.activation_saved);
  EXPECT_EQ(ckpt.params, plain.params);
  // Inference is unchanged by the option.
  EXPECT_EQ(catalog_layers(e, 8, 128, "fp32", false, LayerFusion{}, true).layers.size(),
            catalog_layers(e, 8, 128, "fp32", false).layers.size());
}

TEST(CatalogTraining, TallyWhisperStepFitsAnA100OnlyWithGradientCheckpointing) {
  // Tally's whisper trainer (train_whisper.py: whisper-small, batch 16, fp32,
  // gradient_checkpointing=True) ran in 9.7 GB on an A100 (its single-job table). Every
  // layer's fp32 attention scores over 1500 audio positions (16 x 12 x 1500^2 x 4 B = 1.7 GB
  // each) do not fit 80 GB when all are kept; one layer's at a time does.
  const std::string keys =
      "      model: whisper-small\n      batch: 16\n      dtype: fp32\n"
      "      phase: training\n      runtime: pytorch\n";
  const std::int64_t kept = resolve_catalog(keys).scenario.tenants[0].memory;
  const std::int64_t ckpt =
      resolve_catalog(keys + "      gradient_checkpointing: true\n").scenario.tenants[0].memory;
  const std::int64_t a100 = 80LL << 30;
  EXPECT_GT(kept, a100);
  EXPECT_LT(ckpt, a100 / 4);
  for (const std::string& bad :
       {std::string("      model: bert-base\n      gradient_checkpointing: true\n"),
        std::string("      model: resnet50\n      phase: training\n"
                    "      gradient_checkpointing: true\n")}) {
    try {
      resolve_catalog(bad);
      FAIL() << "no error for " << bad;
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find("tenants.0.workload.gradient_checkpointing"),
                std::string::npos)
          << err.what();
    }
  }
}

TEST(CatalogRuntime, UnknownRuntimeAndTrainingOnTensorRtAreLocatedErrors) {
  const auto error = [](const std::string& keys) {
    try {
      resolve_catalog(keys);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("      model: bert-base\n      runtime: pytroch\n")
                .find("test.yaml:10:16: tenants.0.workload.runtime: unknown runtime 'pytroch' "
                      "(did you mean 'pytorch'?)"),
            std::string::npos)
      << error("      model: bert-base\n      runtime: pytroch\n");
  // The inference engines (tensorrt-onnx and fastertransformer training steps were simulated
  // until 2026-12-08, test_fuzz_round3.py); the frameworks train.
  for (const std::string runtime : {"tensorrt", "tensorrt-onnx", "fastertransformer"}) {
    EXPECT_NE(
        error("      model: bert-base\n      phase: training\n      runtime: " + runtime + "\n")
            .find("tenants.0.workload.runtime: " + runtime + " runs inference only"),
        std::string::npos)
        << runtime;
  }
  for (const std::string runtime : {"pytorch", "onnxruntime", "tensorflow"}) {
    EXPECT_EQ(
        error("      model: bert-base\n      phase: training\n      runtime: " + runtime + "\n"),
        "no error")
        << runtime;
  }
}

// conv_library: native (catalog_model.hpp, "Native convolution"): PyTorch's slow_conv2d loop.
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(CatalogNativeConvolution, ResNetRunsPerSampleKernelsWithTheImplicitGemmsFlops) {
  // ResNet-50 (He et al. 2016 Table 1, v1.5): 53 convolutions (the stem, 16 blocks of three,
  // 4 downsamples); 20 need im2col (the 7x7 stem, the 16 3x3s, the 3 stride-2 downsamples;
  // stage 2's downsample is 1x1 stride 1). So per sample 53 + 20 forward launches and, the
  // stem having no input gradient, 2 x 52 + 53 + 20 backward ones.
  const CatalogEntry& e = load_catalog_entry("resnet50");
  LayerFusion eager;
  eager.folded_batchnorm = false;
  LayerFusion native = eager;
  native.native_convolution = true;
  for (const int batch : {1, 3, 8}) {
    const CatalogLayers implicit = catalog_layers(e, batch, 0, "fp32", true, eager);
    const CatalogLayers looped = catalog_layers(e, batch, 0, "fp32", true, native);
    std::int64_t per_sample = 0, fills = 0, im2col = 0, col2im = 0;
    double gemm_flops[2] = {0, 0};  // implicit, looped: every GEMM launch of a convolution
    const auto conv_gemm = [](const LayerWork& w) {
      return w.kind == LayerWork::Kind::gemm && w.name.rfind("fc", 0) != 0;
    };
    for (const LayerWork& w : implicit.layers) {
      EXPECT_EQ(w.repeat, 1) << w.name;
      if (conv_gemm(w)) gemm_flops[0] += w.flops;
    }
    for (const LayerWork& w : looped.layers) {
      if (w.repeat > 1 || batch == 1) {
        if (w.kind == LayerWork::Kind::gemm && conv_gemm(w)) {
          EXPECT_EQ(w.repeat, batch) << w.name;
          EXPECT_EQ(w.count, 1) << w.name;
          // One launch's FLOPs are one sample's product.
          EXPECT_DOUBLE_EQ(w.flops, 2.0 * static_cast<double>(w.m) * static_cast<double>(w.n) *
                                        static_cast<double>(w.k))
              << w.name;
        }
      }
      if (conv_gemm(w)) {
        gemm_flops[1] += w.flops * static_cast<double>(w.repeat);
        per_sample += w.repeat;
      }
      if (ends_with(w.name, "im2col")) {
        im2col += w.repeat;
        per_sample += w.repeat;
      }
      if (ends_with(w.name, ".col2im")) {
        col2im += w.repeat;
        per_sample += w.repeat;
      }
      if (ends_with(w.name, ".zero")) ++fills;
      if (ends_with(w.name, ".wgrad_zero")) ++fills;
    }
    EXPECT_EQ(per_sample, static_cast<std::int64_t>(batch) * ((53 + 20) + (2 * 52 + 53 + 20)));
    EXPECT_EQ(im2col, static_cast<std::int64_t>(batch) * 2 * 20);
    EXPECT_EQ(col2im, static_cast<std::int64_t>(batch) * 52);
    EXPECT_EQ(fills, 2 * 53);
    // FLOPs preserved: the loop's GEMMs do the implicit GEMMs' work, forward and backward.
    EXPECT_NEAR(gemm_flops[1], gemm_flops[0], 1e-9 * gemm_flops[0]);
    EXPECT_EQ(looped.params, implicit.params);
    EXPECT_EQ(looped.activation_saved, implicit.activation_saved);
  }
}

TEST(CatalogNativeConvolution, OneByOneConvolutionsSkipIm2colButNotCol2im) {
  // PointNet's Conv1d(k = 1) layers: no im2col (1x1, stride 1, unpadded), but slow_conv2d's
  // input gradient runs col2im for every sample whatever the kernel; each has a bias, whose
  // gradient is one sum over the batch.
  const CatalogEntry& e = load_catalog_entry("pointnet");
  LayerFusion native;
  native.folded_batchnorm = false;
  native.native_convolution = true;
  const int batch = 5;
  const CatalogLayers l = catalog_layers(e, batch, 0, "fp32", true, native);
  int convs = 0, col2im = 0, grad_bias = 0, im2col = 0;
  for (const LayerWork& w : l.layers) {
    if (w.native_conv.samples > 0) {
      ++convs;
      EXPECT_FALSE(w.native_conv.unfold) << w.name;
      EXPECT_EQ(w.m, e.dim("points")) << w.name;
    }
    col2im += ends_with(w.name, ".col2im") ? 1 : 0;
    grad_bias += ends_with(w.name, ".grad_bias") ? 1 : 0;
    im2col += ends_with(w.name, "im2col") ? 1 : 0;
    if (ends_with(w.name, ".col2im")) {
      EXPECT_EQ(w.repeat, batch);
    }
  }
  ASSERT_GT(convs, 0);
  EXPECT_EQ(im2col, 0);
  EXPECT_EQ(grad_bias, convs);
  EXPECT_EQ(col2im, convs - 1);  // the first convolution has no input gradient
}

TEST(CatalogNativeConvolution, AWorkloadNamesItAndABadValueIsALocatedError) {
  const auto resolve = [](const std::string& keys) {
    return resolve_scenario(load_scenario_text(
        "name: t\nduration: 1s\ngpus: [{name: g, model: a100-sxm4-40gb}]\n"
        "tenants:\n  - name: a\n    device: g\n    workload:\n"
        "      arrivals: {process: closed, concurrency: 1}\n"
        "      model: resnet50\n      batch: 4\n      phase: training\n      dtype: fp32\n" +
            keys,
        "test.yaml"));
  };
  const ResolvedScenario plain = resolve("");
  const ResolvedScenario cudnn = resolve("      conv_library: cudnn\n");
  const ResolvedScenario native = resolve("      conv_library: native\n");
  const WorkloadSpec& p = plain.scenario.tenants[0].workload;
  const WorkloadSpec& c = cudnn.scenario.tenants[0].workload;
  const WorkloadSpec& n = native.scenario.tenants[0].workload;
  // cudnn is the default: the same kernels.
  ASSERT_EQ(p.kernels.size(), c.kernels.size());
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    EXPECT_EQ(p.kernels[i].name, c.kernels[i].name);
    EXPECT_EQ(p.kernels[i].duration.value, c.kernels[i].duration.value);
  }
  EXPECT_EQ(n.catalog->conv_library, "native");
  std::int64_t launches[2] = {0, 0};
  for (const KernelSpec& k : p.kernels) launches[0] += k.repeat;
  for (const KernelSpec& k : n.kernels) launches[1] += k.repeat;
  EXPECT_GT(launches[1], 4 * (53 + 20 + 2 * 52 + 53 + 20));
  // The operators' host time is the same, spread over every launch.
  ASSERT_GT(p.host_gap, 0);
  EXPECT_NEAR(static_cast<double>(n.host_gap * launches[1]),
              static_cast<double>(p.host_gap * launches[0]),
              0.5 * static_cast<double>(launches[0] + launches[1]));
  try {
    resolve("      conv_library: cudnnn\n");
    ADD_FAILURE() << "no error for an unknown convolution library";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.yaml:13:21: tenants.0.workload.conv_library: unknown convolution "
                        "library 'cudnnn'"),
              std::string::npos)
        << what;
  }
}

// attention_seq_len (catalog_model.hpp, "Attention grid"): an encoder's fused attention kernel
// built for N tokens runs the sequence padded to N on TensorRT's variable-length noloop grid.
TEST(CatalogAttentionSeqLen, TheKernelRunsTheSequencePaddedToItsBuiltLength) {
  const CatalogEntry& e = load_catalog_entry("bert-large");
  LayerFusion own;
  own.attention_per_head = true;
  LayerFusion built = own;
  built.attention_key_rows = 384;
  const std::int64_t heads = e.dim("heads");
  const std::int64_t d = e.dim("hidden") / heads;
  for (const int batch : {1, 8, 9}) {
    for (const int seq : {64, 178, 384}) {
      const CatalogLayers a = catalog_layers(e, batch, seq, "int8", false, own);
      const CatalogLayers b = catalog_layers(e, batch, seq, "int8", false, built);
      ASSERT_EQ(a.layers.size(), b.layers.size());
      int attentions = 0;
      for (std::size_t i = 0; i < a.layers.size(); ++i) {
        const LayerWork& x = a.layers[i];
        const LayerWork& y = b.layers[i];
        ASSERT_EQ(x.name, y.name);
        if (x.kind != LayerWork::Kind::attention) {
          // Every other layer is the sequence's own work.
          EXPECT_DOUBLE_EQ(x.flops, y.flops) << x.name;
          EXPECT_DOUBLE_EQ(x.bytes, y.bytes) << x.name;
          continue;
        }
        ++attentions;
        EXPECT_EQ(x.m, seq);
        EXPECT_EQ(x.n, seq);
        EXPECT_EQ(x.block_rows, seq);  // the runtime's per-head grid
        EXPECT_EQ(y.m, 384);           // rows and keys padded to the kernel's length
        EXPECT_EQ(y.n, 384);
        EXPECT_EQ(y.count, batch * heads);
        // int8 at 384: the noloop grid's 32 rows a block up to batch 8, then the loop kernel.
        EXPECT_EQ(y.block_rows, batch <= 8 ? 32 : 384);
        EXPECT_DOUBLE_EQ(y.flops, 4.0 * static_cast<double>(batch * heads) * 384.0 * 384.0 *
                                      static_cast<double>(d));
        EXPECT_DOUBLE_EQ(y.flops / x.flops, (384.0 * 384.0) / (seq * seq));
      }
      EXPECT_EQ(attentions, e.dim("layers"));
    }
  }
  // fp16: the noloop grid up to batch 4; int8 at 128: 16 rows a block.
  LayerFusion short_kernel = built;
  short_kernel.attention_key_rows = 128;
  for (const LayerWork& w : catalog_layers(e, 4, 100, "int8", false, short_kernel).layers) {
    if (w.kind == LayerWork::Kind::attention) {
      EXPECT_EQ(w.block_rows, 16);
    }
  }
  for (const LayerWork& w : catalog_layers(e, 5, 100, "fp16", false, built).layers) {
    if (w.kind == LayerWork::Kind::attention) {
      EXPECT_EQ(w.block_rows, 384);
    }
  }
  for (const LayerWork& w : catalog_layers(e, 4, 100, "fp16", false, built).layers) {
    if (w.kind == LayerWork::Kind::attention) {
      EXPECT_EQ(w.block_rows, 32);
    }
  }
}

// One closed-loop int8 TensorRT tenant of `model` at batch 1 on an A100-80GB, `keys` appended
// to its workload (line 13 of "test.yaml" is the first of them).
ResolvedScenario resolve_int8_tensorrt_tenant(const std::string& model, const std::string& keys) {
  return resolve_scenario(load_scenario_text(
      "name: t\nduration: 1s\ngpus: [{name: g, model: a100-80gb}]\n"
      "tenants:\n  - name: a\n    device: g\n    workload:\n"
      "      arrivals: {process: closed, concurrency: 1}\n"
      "      model: " +
          model + "\n      batch: 1\n      dtype: int8\n      runtime: tensorrt\n" + keys,
      "test.yaml"));
}

// The duration of the tenant's first attention kernel (not attention_out); -1 ns if none.
Nanos attention_kernel_time(const ResolvedScenario& r) {
  for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
    if (k.name.find("attention") != std::string::npos &&
        k.name.find("attention_out") == std::string::npos) {
      return k.duration.value;
    }
  }
  return Nanos{-1};
}

TEST(CatalogAttentionSeqLen, AScenarioNamesItAndBadValuesAreLocatedErrors) {
  const auto resolve = resolve_int8_tensorrt_tenant;
  const auto attention = attention_kernel_time;
  // The kernel runs the padded sequence: its time is the same for every length below N.
  const ResolvedScenario short_seq =
      resolve("bert-large", "      seq_len: 128\n      attention_seq_len: 384\n");
  const ResolvedScenario long_seq =
      resolve("bert-large", "      seq_len: 300\n      attention_seq_len: 384\n");
  EXPECT_GT(attention(short_seq), 0);
  EXPECT_EQ(attention(short_seq), attention(long_seq));
  EXPECT_NE(attention(short_seq), attention(resolve("bert-large", "      seq_len: 128\n")));
  EXPECT_EQ(short_seq.scenario.tenants[0].workload.catalog->attention_seq_len, 384);
  const auto error = [&](const std::string& model, const std::string& keys) {
    try {
      resolve(model, keys);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("bert-large", "      seq_len: 128\n      attention_seq_len: 100\n")
                .find("tenants.0.workload.attention_seq_len: attention_seq_len 100 is shorter "
                      "than seq_len 128"),
            std::string::npos);
  EXPECT_NE(error("bert-large", "      seq_len: 128\n      attention_seq_len: 1024\n")
                .find("tenants.0.workload.attention_seq_len: bert-large has 512 positions"),
            std::string::npos);
  EXPECT_NE(error("resnet50", "      attention_seq_len: 384\n")
                .find("tenants.0.workload.attention_seq_len: resnet50 is not a text encoder"),
            std::string::npos);
  const std::string zero = error("bert-large", "      attention_seq_len: 0\n");
  EXPECT_NE(zero.find("test.yaml:13:"), std::string::npos) << zero;
  EXPECT_NE(zero.find("attention_seq_len"), std::string::npos) << zero;
}

// attention_seq_len: bucket (catalog_model.hpp, "Attention grid"): TensorRT's variable-length
// plugin runs the smallest of its kernels that holds the sequence (qkvToContextPlugin.cpp,
// QKVToContextVarSeqlenPlugin::enqueue).
TEST(CatalogAttentionBucket, TheKernelIsTheSmallestOfThePluginsLengthsThatHoldsTheSequence) {
  const std::vector<std::int64_t> int8_kernels = {128, 192, 256, 384};
  const std::vector<std::int64_t> fp16_kernels = {64, 96, 128, 256, 384};
  for (const bool one_byte : {true, false}) {
    const std::vector<std::int64_t>& kernels = one_byte ? int8_kernels : fp16_kernels;
    std::int64_t previous = 0;
    for (std::int64_t length = 1; length <= 384; ++length) {
      const std::int64_t k = varseqlen_kernel_length(length, one_byte);
      // One of the plugin's lengths, holding the sequence, and no smaller one would.
      EXPECT_NE(std::find(kernels.begin(), kernels.end(), k), kernels.end()) << length;
      EXPECT_GE(k, length);
      for (const std::int64_t other : kernels) {
        if (other < k) {
          EXPECT_LT(other, length) << length << " fits " << other;
        }
      }
      EXPECT_GE(k, previous);  // monotone in the length
      previous = k;
    }
    for (const std::int64_t beyond : {385, 512, 4096}) {
      EXPECT_EQ(varseqlen_kernel_length(beyond, one_byte), 0) << beyond;
    }
  }
  // The two tables differ where the plugin's do: 192 is int8 only, 64 and 96 fp16 only.
  EXPECT_EQ(varseqlen_kernel_length(150, true), 192);
  EXPECT_EQ(varseqlen_kernel_length(150, false), 256);
  EXPECT_EQ(varseqlen_kernel_length(60, true), 128);
  EXPECT_EQ(varseqlen_kernel_length(60, false), 64);
}

TEST(CatalogAttentionBucket, EachLengthRunsTheKernelBuiltForItsBucket) {
  const CatalogEntry& e = load_catalog_entry("bert-large");
  LayerFusion bucket;
  bucket.attention_per_head = true;
  bucket.attention_bucket = true;
  for (const std::string dtype : {"int8", "fp16"}) {
    for (const int batch : {1, 8}) {
      for (const int seq : {45, 128, 129, 178, 256, 300, 384}) {
        LayerFusion fixed = bucket;
        fixed.attention_bucket = false;
        fixed.attention_key_rows = varseqlen_kernel_length(seq, dtype == "int8");
        LayerFusion own = bucket;
        own.attention_bucket = false;
        const CatalogLayers a = catalog_layers(e, batch, seq, dtype, false, bucket);
        const CatalogLayers b = catalog_layers(e, batch, seq, dtype, false, fixed);
        const CatalogLayers c = catalog_layers(e, batch, seq, dtype, false, own);
        ASSERT_EQ(a.layers.size(), b.layers.size());
        ASSERT_EQ(a.layers.size(), c.layers.size());
        for (std::size_t i = 0; i < a.layers.size(); ++i) {
          const LayerWork& x = a.layers[i];
          // As if the kernel's length were given (attention_seq_len: N) ...
          EXPECT_EQ(x.m, b.layers[i].m) << x.name;
          EXPECT_EQ(x.n, b.layers[i].n) << x.name;
          EXPECT_EQ(x.block_rows, b.layers[i].block_rows) << x.name;
          EXPECT_DOUBLE_EQ(x.flops, b.layers[i].flops) << x.name;
          if (x.kind == LayerWork::Kind::attention) {
            EXPECT_EQ(x.n, fixed.attention_key_rows);
            EXPECT_GE(x.flops, c.layers[i].flops);
          } else {
            // ... and every other layer the sequence's own work.
            EXPECT_DOUBLE_EQ(x.flops, c.layers[i].flops) << x.name;
            EXPECT_DOUBLE_EQ(x.bytes, c.layers[i].bytes) << x.name;
          }
        }
      }
    }
  }
}

TEST(CatalogAttentionBucket, AScenarioNamesItAndBadValuesAreLocatedErrors) {
  const auto resolve = resolve_int8_tensorrt_tenant;
  const auto attention = attention_kernel_time;
  const auto at = [&](int seq, const std::string& extra) {
    return attention(resolve("bert-large", "      seq_len: " + std::to_string(seq) + "\n" + extra));
  };
  const std::string bucket = "      attention_seq_len: bucket\n";
  // 129 and 192 share the int8 192 kernel, 128 has its own; each the fixed kernel's time.
  EXPECT_GT(at(129, bucket), 0);
  EXPECT_EQ(at(129, bucket), at(192, bucket));
  EXPECT_NE(at(128, bucket), at(129, bucket));
  EXPECT_EQ(at(129, bucket), at(129, "      attention_seq_len: 192\n"));
  EXPECT_EQ(at(300, bucket), at(300, "      attention_seq_len: 384\n"));
  const ResolvedScenario r = resolve("bert-large", "      seq_len: 200\n" + bucket);
  EXPECT_TRUE(r.scenario.tenants[0].workload.catalog->attention_bucket);
  EXPECT_EQ(r.scenario.tenants[0].workload.catalog->attention_seq_len, 0);
  // It survives emit (gpumux plan -o) and reads back the same.
  const std::string yaml = emit_scenario_yaml(r.scenario);
  const Scenario again = load_scenario_text(yaml, "again.yaml");
  EXPECT_TRUE(again.tenants[0].workload.catalog->attention_bucket);
  EXPECT_EQ(again.tenants[0].workload.catalog->attention_seq_len, 0);
  EXPECT_EQ(emit_scenario_yaml(again), yaml);
  const auto error = [&](const std::string& model, const std::string& keys) {
    try {
      resolve(model, keys);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("bert-large", "      seq_len: 400\n" + bucket)
                .find("tenants.0.workload.attention_seq_len: attention_seq_len: bucket: "
                      "TensorRT's variable-length attention kernels hold at most 384 tokens; "
                      "seq_len 400"),
            std::string::npos);
  EXPECT_NE(error("resnet50", bucket)
                .find("tenants.0.workload.attention_seq_len: resnet50 is not a text encoder"),
            std::string::npos);
  const std::string word = error("bert-large", "      attention_seq_len: buckets\n");
  EXPECT_NE(word.find("test.yaml:13:"), std::string::npos) << word;
  EXPECT_NE(word.find("bucket"), std::string::npos) << word;
}

}  // namespace

// The request's kernels by name: their summed duration (0 when none has the name).
Nanos kernel_time(const ResolvedScenario& r, const std::string& name) {
  Nanos total{0};
  for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
    if (k.name == name) total += k.duration.value;
  }
  return total;
}

bool has_kernel_containing(const ResolvedScenario& r, const std::string& part) {
  for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
    if (k.name.find(part) != std::string::npos) return true;
  }
  return false;
}

// kernel-families `fastertransformer` (FasterTransformer v5.0 FusedAttentionLayer and ViT.cc):
// the fp16 fused attention exists for 64, 96, 128, 256 and 384 tokens, so a sequence runs the
// kernel of the next length up; the QKV bias is a kernel of its own; a pre-LN layer's residual
// add and the next norm are one kernel.
TEST(CatalogFasterTransformer, AttentionRunsTheNextKernelLengthUpInFp16Only) {
  const auto attention = [](int seq, const std::string& dtype) {
    const ResolvedScenario r = resolve_catalog(
        "      model: bert-base\n      batch: 1\n"
        "      seq_len: " +
        std::to_string(seq) + "\n      dtype: " + dtype + "\n      runtime: fastertransformer\n");
    return kernel_time(r, "layer.attention");
  };
  // 129 to 256 tokens all run the 256 kernel: the same time whatever the length.
  const Nanos at256 = attention(256, "fp16");
  EXPECT_GT(at256, 0);
  EXPECT_EQ(attention(129, "fp16"), at256);
  EXPECT_EQ(attention(197, "fp16"), at256);
  // One token either side of a kernel's length changes the kernel.
  EXPECT_LT(attention(128, "fp16"), at256);
  EXPECT_GT(attention(257, "fp16"), at256);
  EXPECT_EQ(attention(257, "fp16"), attention(384, "fp16"));
  // Beyond the largest kernel the sequence runs at its own length.
  EXPECT_LT(attention(384, "fp16"), attention(500, "fp16"));
  // The fused kernels are fp16 only: a tf32 request runs its own length.
  EXPECT_LT(attention(129, "tf32"), attention(256, "tf32"));
}

TEST(CatalogFasterTransformer, ViTLayerHasTheBiasTransposeAndOneResidualNormKernel) {
  const auto vit = [](const std::string& runtime) {
    return resolve_catalog(
        "      model: vit-b16\n      batch: 8\n      dtype: fp16\n"
        "      runtime: " +
        runtime + "\n");
  };
  const ResolvedScenario ft = vit("fastertransformer");
  const ResolvedScenario trt = vit("tensorrt");
  EXPECT_GT(kernel_time(ft, "layer.qkv_bias_transpose"), 0);
  EXPECT_GT(kernel_time(ft, "layer.residual1_norm2"), 0);
  EXPECT_EQ(kernel_time(ft, "layer.residual1"), 0);
  EXPECT_EQ(kernel_time(ft, "layer.norm2"), 0);
  EXPECT_GT(kernel_time(ft, "layer.norm1"), 0);  // the layer's first norm stays
  // The bias transpose reads and writes Q, K and V: longer than the fused add + norm, which
  // reads two tensors of a third of the size and writes two.
  EXPECT_GT(kernel_time(ft, "layer.qkv_bias_transpose"), kernel_time(ft, "layer.residual1_norm2"));
  // TensorRT's engine has neither (its GEMM adds the bias; add and norm stay two kernels).
  EXPECT_FALSE(has_kernel_containing(trt, "qkv_bias_transpose"));
  EXPECT_FALSE(has_kernel_containing(trt, "residual1_norm2"));
  EXPECT_GT(kernel_time(trt, "layer.norm2"), 0);
}

// `gemm_workspace: false`: cuBLASLt gets no workspace, so no GEMM splits K.
TEST(CatalogGemmWorkspace, WithoutWorkspaceNoGemmSplitsAndNoneIsFaster) {
  const std::string keys =
      "      model: vit-b16\n      batch: 1\n      dtype: fp16\n      runtime: fastertransformer\n";
  const ResolvedScenario with = resolve_catalog(keys);
  const ResolvedScenario without = resolve_catalog(keys + "      gemm_workspace: false\n");
  // At batch 1 the FFN's second GEMM (K = 3072 over 197 rows) splits K when it may.
  EXPECT_TRUE(has_kernel_containing(with, "splitk_reduce"));
  EXPECT_FALSE(has_kernel_containing(without, "splitk_reduce"));
  // The unsplit choice is one of the choices the library had with a workspace: never faster.
  EXPECT_GE(kernel_time(without, "layer.ffn2"),
            kernel_time(with, "layer.ffn2") + kernel_time(with, "layer.ffn2.splitk_reduce"));
  EXPECT_FALSE(without.scenario.tenants[0].workload.catalog->gemm_workspace);
  // The key survives the emit -> load round trip; the default is not written.
  const std::string emitted = emit_scenario_yaml(without.scenario);
  EXPECT_NE(emitted.find("gemm_workspace: false"), std::string::npos) << emitted;
  EXPECT_FALSE(
      load_scenario_text(emitted, "again.yaml").tenants[0].workload.catalog->gemm_workspace);
  EXPECT_EQ(emit_scenario_yaml(with.scenario).find("gemm_workspace"), std::string::npos);
  const auto error = [&](const std::string& extra) {
    try {
      resolve_catalog(keys + extra);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string not_bool = error("      gemm_workspace: 3\n");
  EXPECT_NE(not_bool.find("test.yaml:13:"), std::string::npos) << not_bool;
  const std::string with_library =
      error("      gemm_library: tally-cutlass\n      gemm_workspace: false\n");
  EXPECT_NE(with_library.find("gemm_workspace"), std::string::npos) << with_library;
  EXPECT_NE(with_library.find("tally-cutlass"), std::string::npos) << with_library;
}  // namespace
}  // namespace gpumux
