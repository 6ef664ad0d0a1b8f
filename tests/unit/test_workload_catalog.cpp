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

TEST(CatalogRoofline, GemmOfKnownShapeGivesTheClosedFormTime) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  ASSERT_EQ(peak, 312e12);
  // 4096^3: 32 x 32 = 1024 tiles of 128 x 128 on 108 SMs; the busiest SM computes ceil(1024 /
  // 108) = 10 tiles.
  const KernelSpec k = roofline_kernel(gemm(4096, 4096, 4096), f, gpu, peak);
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const double t_c = flops / (f.gemm_efficiency.value * peak) * 108.0 * 10.0 / 1024.0;
  const double t_m = 3.0 * 4096.0 * 4096.0 * 2.0 / bandwidth(gpu);
  EXPECT_EQ(k.duration.value, std::llround(std::max(t_c, t_m) * 1e9));
  EXPECT_DOUBLE_EQ(k.memory_bound, t_m / (t_c + t_m));
  EXPECT_DOUBLE_EQ(k.sm_fraction, 1.0);
  // 232 registers x 128 threads: 7424 per warp -> 8 warps = 2 blocks per SM (48 KiB shared: 3).
  EXPECT_DOUBLE_EQ(k.waves, 1024.0 / (2.0 * 108.0));
  EXPECT_EQ(k.working_set, std::llround(2.0 * 4096 * 4096 * 2));
}

TEST(CatalogRoofline, MemoryBoundGemvIsTheBandwidthTerm) {
  const DeviceProfile& gpu = a100();
  // M = 1 (batch-1 GEMV): 1 x 64 tiles; bytes dominated by the 8192 x 8192 weight.
  const KernelSpec k =
      roofline_kernel(gemm(1, 8192, 8192), load_kernel_families(), gpu, gpu.compute.fp16_tensor);
  const double bytes = (8192.0 + 8192.0 * 8192.0 + 8192.0) * 2;
  EXPECT_EQ(k.duration.value, std::llround(bytes / bandwidth(gpu) * 1e9));
  EXPECT_GT(k.memory_bound, 0.5);
  EXPECT_DOUBLE_EQ(k.sm_fraction, 64.0 / 108.0);
  EXPECT_DOUBLE_EQ(k.waves, 1.0);
}

TEST(CatalogRoofline, ComputeTimeIsLinearInWholeWavesAndNarrowGridsUseFewSms) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  // M = 128 x 108 rows: every SM gets the same number of tiles, so doubling M doubles t_c.
  const KernelSpec one = roofline_kernel(gemm(128 * 108, 8192, 8192), f, gpu, peak);
  const KernelSpec two = roofline_kernel(gemm(2 * 128 * 108, 8192, 8192), f, gpu, peak);
  EXPECT_LT(one.memory_bound, 0.5);
  EXPECT_NEAR(static_cast<double>(two.duration.value) / one.duration.value, 2.0, 1e-3);
  // A grid of 16 tiles computes on 16 SMs: its compute time is that of 108/16 more work.
  const KernelSpec narrow = roofline_kernel(gemm(128, 2048, 8192), f, gpu, peak);
  EXPECT_DOUBLE_EQ(narrow.sm_fraction, 16.0 / 108.0);
  const double t_c = 2.0 * 128 * 2048 * 8192 / (f.gemm_efficiency.value * peak) * 108.0 / 16.0;
  const double t_m = (128.0 * 8192 + 8192.0 * 2048 + 128.0 * 2048) * 2 / bandwidth(gpu);
  EXPECT_EQ(narrow.duration.value, std::llround(std::max(t_c, t_m) * 1e9));
}

TEST(CatalogLayers, PublishedParameterAndFlopCounts) {
  struct Case {
    const char* model;
    double params;  // published
    double tolerance;
  };
  // ResNet-50 25.56 M (torchvision); BERT-base 109.5 M / large 335 M (HF bert-*-uncased);
  // ViT-B/16 86.6 M (timm vit_base_patch16_224); all-MiniLM-L6-v2 22.7 M; GPT-2 124.4 M.
  for (const Case& c : {Case{"resnet50", 25.557e6, 0.01}, Case{"bert-base", 109.48e6, 0.01},
                        Case{"bert-large", 335.1e6, 0.01}, Case{"vit-b16", 86.57e6, 0.01},
                        Case{"minilm-l6", 22.71e6, 0.01}, Case{"gpt2", 124.44e6, 0.01}}) {
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
  EXPECT_LT(f1 / one.size(), 0.5);
  EXPECT_GT(f256 / big.size(), 0.95);
  // conv5_x.conv3 at batch 1: M = 7 x 7 = 49 rows (1 tile), N = 2048 (16 tiles).
  for (const KernelSpec& k : one) {
    if (k.name == "conv5_x.conv3") {
      EXPECT_DOUBLE_EQ(k.sm_fraction, 16.0 / 108.0);
    }
    if (k.name == "fc") {
      EXPECT_DOUBLE_EQ(k.sm_fraction, 8.0 / 108.0);
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
    parse_kernel_families("gemm: {tile_m: 128}\n", "k.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k.yaml:1:16: gemm.tile_m: expected a mapping"),
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
