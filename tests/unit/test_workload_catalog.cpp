// The workload catalog (models/config/workload_catalog.hpp, models/scenario/catalog_model.hpp):
// the roofline in closed form, grid and waves, batch scaling, the layer tables against the
// published parameter and FLOP counts, and the errors of the files and scenario keys.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/config/workload_catalog.hpp"
#include "models/scenario/catalog_model.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

const DeviceProfile& a100() { return load_device_profile("a100-80gb"); }
double bandwidth(const DeviceProfile& g) {
  return g.hbm_bandwidth_measured > 0 ? g.hbm_bandwidth_measured : g.hbm_bandwidth;
}

LayerWork gemm(std::int64_t m, std::int64_t n, std::int64_t k, double dt = 2) {
  LayerWork w;
  w.kind = LayerWork::Kind::gemm;
  w.name = "gemm";
  w.m = m;
  w.n = n;
  w.k = k;
  w.flops = 2.0 * m * n * k;
  w.bytes = (double(m) * k + double(k) * n + double(m) * n) * dt;
  w.working_set = (double(m) * k + double(k) * n) * dt;
  return w;
}

// The GEMM selection law of catalog_model.hpp, restated independently: the predicted time of a
// (tile, split) on `sms` SMs of the A100.
double gemm_time(const LayerWork& w, const GemmTile& t, int split, int sms, double* blocks_out) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  const auto cdiv = [](double a, double b) { return std::ceil(a / b); };
  const double blocks = double(w.count) * cdiv(w.m, t.m) * cdiv(w.n, t.n) * split;
  const double intensity = 2.0 * t.m * t.n / ((t.m + t.n) * w.element_bytes);
  const double eff = std::min(1.0, intensity * gpu.l2_bandwidth / peak);
  const double t_c = cdiv(blocks, sms) * 2.0 * t.m * t.n * cdiv(w.k, split) /
                     (f.gemm_efficiency.value * eff * peak / gpu.sms);
  const double partials = split > 1 ? 2.0 * split * w.count * double(w.m) * w.n * 4 : 0;
  const double rate = bandwidth(gpu) * sms / gpu.sms;
  if (blocks_out) *blocks_out = blocks;
  return std::max(t_c, w.bytes / rate) + partials / rate;
}

// The least predicted time over every tile and split factor the library may use.
double best_gemm_time(const LayerWork& w, int sms) {
  const KernelFamilies& f = load_kernel_families();
  double best = 1e30;
  for (const GemmTile& t : f.gemm_tiles) {
    for (int s : f.gemm_split_k) {
      if (s > 1 && double(w.k) / s < f.gemm_split_k_min_depth.value) break;
      best = std::min(best, gemm_time(w, t, s, sms, nullptr));
    }
  }
  return best;
}

TEST(CatalogRoofline, GemmSelectionIsTheLeastPredictedTimeOnRandomShapes) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  ASSERT_EQ(gpu.compute.fp16_tensor, 312e12);
  ASSERT_GT(gpu.l2_bandwidth, 0);
  std::uint64_t x = 12345;
  const auto next = [&](int lo, int hi) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((x >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (int i = 0; i < 200; ++i) {
    const LayerWork w = gemm(next(1, 20000), next(1, 12000), next(1, 300000));
    for (const int sms : {108, 14, 42}) {
      const GemmChoice c = choose_gemm(w, f, gpu, gpu.compute.fp16_tensor, sms);
      double blocks = 0;
      const double t = gemm_time(w, c.tile, c.split, sms, &blocks);
      // The chosen (tile, split) is the cheapest, its grid as the law says.
      EXPECT_NEAR(t / best_gemm_time(w, sms), 1.0, 1e-9) << w.m << "x" << w.n << "x" << w.k;
      EXPECT_EQ(static_cast<double>(c.blocks), blocks);
      EXPECT_TRUE(c.split == 1 || double(w.k) / c.split >= f.gemm_split_k_min_depth.value);
    }
  }
}

TEST(CatalogRoofline, KernelTimeIsTheChosenGemmOnTheWholeGpu) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  // 4096^3: the 256x128 and 128x128 tiles both reach the full peak (their L2 intensity 85 and
  // 64 FLOP/B exceed 312 TFLOP/s / 5.4 TB/s = 58); 512 or 1024 blocks leave the busiest SM 5
  // or 10 tiles, the same time: the earlier tile wins the tie; a split-K of 4 would cut the
  // last wave's waste (19 of 2048) but its 537 MB reduction costs more.
  std::string detail;
  const KernelSpec k = roofline_kernel(gemm(4096, 4096, 4096), f, gpu, peak, 0, 1, 0, &detail);
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const double t_c = flops / (f.gemm_efficiency.value * peak) * 108.0 * 5.0 / 512.0;
  const double t_m = 3.0 * 4096.0 * 4096.0 * 2.0 / bandwidth(gpu);
  EXPECT_EQ(detail, "gemm 256x128");
  EXPECT_EQ(k.duration.value, std::llround(std::max(t_c, t_m) * 1e9));
  EXPECT_DOUBLE_EQ(k.memory_bound, t_m / (t_c + t_m));
  EXPECT_DOUBLE_EQ(k.sm_fraction, 1.0);
  // 232 registers x 256 threads: one 256x128 block per SM.
  EXPECT_EQ(k.blocks, 512);
  EXPECT_EQ(k.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(k.waves, 512.0 / 108.0);
  EXPECT_EQ(k.working_set, std::llround(2.0 * 4096 * 4096 * 2));
}

TEST(CatalogRoofline, SmallGemmsSplitKAndSmallTilesToFillTheGpu) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  // BERT-base batch 1 x 128 tokens, QKV: one 128-row tile by 18 of 128 columns = 18 blocks on
  // 108 SMs with the single 128x128 tile; the selection spreads it wider and is faster.
  const LayerWork qkv = gemm(128, 2304, 768);
  const GemmChoice c = choose_gemm(qkv, f, gpu, peak);
  EXPECT_GT(c.blocks, 18);
  double one_tile = 0;
  const GemmTile t128{128, 128, 128, 232, 48 * 1024};
  EXPECT_LT(std::max(c.t_compute, c.t_memory) + c.t_reduce,
            gemm_time(qkv, t128, 1, 108, &one_tile));
  // A ResNet-50 weight gradient (conv2_x 1x1, 64 -> 64 at batch 256: K = 256 x 56 x 56) has one
  // 64x64 output tile: split-K spreads it until the operands' HBM read bounds it (one block
  // would compute for 10x longer).
  const LayerWork wgrad = gemm(64, 64, 256 * 56 * 56);
  const GemmChoice w = choose_gemm(wgrad, f, gpu, peak);
  EXPECT_GT(w.split, 1);
  const double t_w = std::max(w.t_compute, w.t_memory) + w.t_reduce;
  EXPECT_NEAR(t_w / (wgrad.bytes / bandwidth(gpu)), 1.0, 0.05);
  const GemmTile t64{64, 64, 128, 136, 24 * 1024};
  EXPECT_LT(10 * t_w, gemm_time(wgrad, t64, 1, 108, nullptr));
  // A batch-1 GEMV (M = 1) is the weight read: the bandwidth term (split-K partials are a few
  // KB).
  const KernelSpec gemv = roofline_kernel(gemm(1, 8192, 8192), f, gpu, peak);
  const double bytes = (8192.0 + 8192.0 * 8192.0 + 8192.0) * 2;
  EXPECT_NEAR(gemv.duration.value / (bytes / bandwidth(gpu) * 1e9), 1.0, 0.01);
  EXPECT_GT(gemv.memory_bound, 0.5);
}

TEST(CatalogRoofline, ATileThatCannotDrawItsOperandsFromL2ComputesSlower) {
  const DeviceProfile& gpu = a100();
  // 64x64 fp16: 2 x 64 x 64 / (128 x 2) = 32 FLOP/B; the A100 needs 312e12 / 5.4e12 = 57.8, so
  // it reaches 32 / 57.8 = 55 % of the peak; 128x128 (64 FLOP/B) reaches all of it.
  const LayerWork w = gemm(128 * 108, 128 * 4, 65536);
  const GemmTile small{64, 64, 128, 136, 24 * 1024};
  const GemmTile big{128, 128, 128, 232, 48 * 1024};
  double b1 = 0, b2 = 0;
  const double t_small = gemm_time(w, small, 1, 108, &b1);
  const double t_big = gemm_time(w, big, 1, 108, &b2);
  // Same work per SM (4x the blocks of a quarter of the FLOPs): the ratio is the efficiency.
  EXPECT_NEAR(t_small / t_big, 312e12 / (32 * gpu.l2_bandwidth), 1e-9);
}

TEST(CatalogRoofline, FusedAttentionAndCollectiveClosedForms) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  // 32 x 16 heads, 384 x 384, d = 64: 4 x 512 x 384^2 x 64 FLOPs; 512 x 3 = 1536 blocks of 128
  // query rows.
  LayerWork a;
  a.kind = LayerWork::Kind::attention;
  a.name = "attention";
  a.count = 512;
  a.m = a.n = 384;
  a.k = 64;
  a.flops = 4.0 * 512 * 384 * 384 * 64;
  a.bytes = 512.0 * (4 * 384 * 64) * 2;
  const KernelSpec k = roofline_kernel(a, f, gpu, peak);
  EXPECT_EQ(k.blocks, 1536);
  const double t_c = a.flops / (f.attention_efficiency.value * peak) * 108.0 * 15.0 / 1536.0;
  EXPECT_EQ(k.duration.value, std::llround(std::max(t_c, a.bytes / bandwidth(gpu)) * 1e9));
  // NCCL ring all-reduce of 100 MB over 8 GPUs: alpha + 2 (n-1) hops + 2 (n-1)/n bytes / busbw.
  LayerWork r;
  r.kind = LayerWork::Kind::collective;
  r.bytes = 100e6;
  const KernelSpec c = roofline_kernel(r, f, gpu, peak, 0, 8);
  const double t = f.collective_latency.value + 14 * f.collective_latency_per_hop.value +
                   2.0 * 7 / 8 * 100e6 / f.collective_bus_bandwidth.value;
  EXPECT_EQ(c.duration.value, std::llround(t * 1e9));
  EXPECT_TRUE(c.collective);
  EXPECT_DOUBLE_EQ(c.memory_bound, 1.0);
}

TEST(CatalogLayers, PublishedParameterAndFlopCounts) {
  struct Case {
    const char* model;
    double params;  // published
    double tolerance;
  };
  // ResNet-50 25.56 M (torchvision); BERT-base 109.5 M / large 335 M (HF bert-*-uncased);
  // ViT-B/16 86.6 M (timm vit_base_patch16_224); all-MiniLM-L6-v2 22.7 M; GPT-2 124.4 M.
  // GPT-2 large 774.0 M (HF gpt2-large); Whisper large-v3 1543.5 M and small 241.7 M (HF
  // openai/whisper-*); PointNet classification 3.5 M (Qi et al. 2017, table 6).
  for (const Case& c :
       {Case{"resnet50", 25.557e6, 0.01}, Case{"bert-base", 109.48e6, 0.01},
        Case{"bert-large", 335.1e6, 0.01}, Case{"vit-b16", 86.57e6, 0.01},
        Case{"minilm-l6", 22.71e6, 0.01}, Case{"gpt2", 124.44e6, 0.01},
        Case{"gpt2-large", 774.03e6, 0.01}, Case{"whisper-large-v3", 1543.5e6, 0.01},
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
  const auto one = kernels(1);
  const auto big = kernels(256);
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
  const CatalogLayers fused = catalog_layers(e, 1, 128, "fp16", false);
  const CatalogLayers split = catalog_layers(e, 1, 128, "fp16", false, eager);
  const auto count = [](const CatalogLayers& l, const std::string& prefix) {
    int n = 0;
    for (const LayerWork& w : l.layers) n += w.name.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  };
  // TensorRT: qkv, fused attention, out, skip-LN, ffn1 (+GELU), ffn2, skip-LN = 7 per layer;
  // eager: qkv, scores, scale, mask, softmax, context, merge-heads copy, out, add, LN, ffn1,
  // GELU, ffn2, add, LN = 15.
  EXPECT_EQ(count(fused, "layer."), 12 * 7);
  EXPECT_EQ(count(split, "layer."), 12 * 15);
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
  const ResolvedScenario r = resolve_catalog("      model: bert-base\n      runtime: pytorch\n");
  const WorkloadSpec& w = r.scenario.tenants[0].workload;
  ASSERT_EQ(w.kernels.size(), split.layers.size());
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
  EXPECT_GE(slice / whole, 1.0);
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
  EXPECT_NE(error("      model: bert-base\n      phase: training\n      runtime: tensorrt\n")
                .find("tenants.0.workload.runtime: tensorrt runs inference only"),
            std::string::npos);
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
