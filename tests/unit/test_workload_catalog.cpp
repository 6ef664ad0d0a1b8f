// The workload catalog (models/workload/workload_catalog.hpp, models/workload/catalog_model.hpp):
// the roofline in closed form, grid and waves, batch scaling, the layer tables against the
// published parameter and FLOP counts, and the errors of the files and scenario keys.
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

// The A100's memory latencies as kernel-families.yaml states them (checked against the
// measurements below).
double dram_latency() { return load_kernel_families().latency("a100-80gb").dram.value; }
double l2_latency() { return load_kernel_families().latency("a100-80gb").l2.value; }

// The critical path of `per_sm` blocks, `resident` at a time, of catalog_model.hpp ("Latency
// floor"), restated: rounds of b blocks each cost fill + b fill_pb + iterations x max(b c /
// iterations, lat) + epi + b epi_pb.
double rounds_time(double per_sm, double resident, double iterations, double c, double lat,
                   double fill, double fill_pb, double epi, double epi_pb) {
  const double r = std::max(1.0, std::min(resident, per_sm));
  const auto round = [&](double b) {
    return fill + b * fill_pb + iterations * std::max(b * c / iterations, lat) + epi + b * epi_pb;
  };
  const double full = std::floor(per_sm / r);
  const double rest = per_sm - full * r;
  return full * round(r) + (rest > 0 ? round(rest) : 0.0);
}

// The GEMM selection law of catalog_model.hpp, restated independently: the predicted time of a
// (tile, split) on `sms` SMs of the A100: max(critical path, HBM traffic), and under split-K
// the reduction kernel's launch and max(its traffic, its floor).
double gemm_time(const LayerWork& w, const GemmTile& t, int split, int sms, double* blocks_out) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  const auto cdiv = [](double a, double b) { return std::ceil(a / b); };
  const double blocks = double(w.count) * cdiv(w.m, t.m) * cdiv(w.n, t.n) * split;
  const double intensity = 2.0 * t.m * t.n / ((t.m + t.n) * w.element_bytes);
  const double eff = std::min(1.0, intensity * gpu.l2_bandwidth / peak);
  const double depth = cdiv(w.k, split);
  const double block_compute =
      2.0 * t.m * t.n * depth / (f.gemm_efficiency.value * eff * peak / gpu.sms);
  // Resident blocks: the A100's 64K registers, 164 KiB of shared memory (+1 KiB reserved per
  // block), 2048 threads, 32 blocks per SM.
  const double resident = std::min({std::floor(65536.0 / (t.registers * t.threads)),
                                    std::floor(164.0 * 1024 / (t.shared_memory + 1024.0)),
                                    std::floor(2048.0 / t.threads), 32.0});
  const double l2_share = gpu.l2_bandwidth / gpu.sms;
  const double t_lat = rounds_time(
      cdiv(blocks, sms), resident, cdiv(depth, t.k), block_compute, dram_latency() / (t.stages - 1),
      dram_latency(), (t.m + t.n) * t.k * w.element_bytes / l2_share, l2_latency(),
      double(t.m) * t.n * (split > 1 ? 4.0 : w.element_bytes) / l2_share);
  const double outputs = double(w.count) * double(w.m) * w.n;
  const double rate = bandwidth(gpu) * sms / gpu.sms;
  const double t_m = (w.bytes + (split > 1 ? outputs * (4.0 * split - w.element_bytes) : 0)) / rate;
  double reduce = 0;
  if (split > 1) {
    // 1024 outputs per block, 8 blocks per SM: one DRAM load and one L2 store per round.
    const double rounds = cdiv(cdiv(cdiv(outputs, 1024), sms), 8);
    reduce = gpu.launch_overhead * 1e-9 + std::max(outputs * (4.0 * split + w.element_bytes) / rate,
                                                   rounds * (dram_latency() + l2_latency()));
  }
  if (blocks_out) *blocks_out = blocks;
  return std::max(t_lat, t_m) + reduce;
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
      EXPECT_NEAR(c.time(gpu) / t, 1.0, 1e-9) << w.m << "x" << w.n << "x" << w.k;
      // The critical path is never shorter than the busiest SM's tensor work.
      EXPECT_GE(c.t_latency, c.t_compute * (1 - 1e-12));
      EXPECT_EQ(static_cast<double>(c.blocks), blocks);
      EXPECT_TRUE(c.split == 1 || double(w.k) / c.split >= f.gemm_split_k_min_depth.value);
    }
  }
}

TEST(CatalogRoofline, KernelTimeIsTheChosenGemmOnTheWholeGpu) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  // 4096^3: the 256x128 and 128x128 tiles reach the full peak (their L2 intensity 85 and 64
  // FLOP/B exceed 312 TFLOP/s / 5.4 TB/s = 58) and leave the busiest SM the same tensor work;
  // 128x128 wins on the critical path: 1024 blocks leave the busiest SM 10, two resident (80 KiB
  // of shared memory each), so 5 rounds that each pay one fill and one store for two blocks,
  // where 256x128 (144 KiB: one resident) pays 5 fills and stores for one. A round of two:
  // a DRAM latency and both blocks' first 32-deep k-slice through the SM's L2 share, 128
  // iterations of 32 (compute-bound: two blocks share the SM), an L2 latency and both 128x128
  // tiles' store.
  std::string detail;
  const KernelSpec k = roofline_kernel(gemm(4096, 4096, 4096), f, gpu, peak, 0, 1, 0, &detail);
  const double block = 2.0 * 128 * 128 * 4096 / (f.gemm_efficiency.value * peak / 108.0);
  const double share = gpu.l2_bandwidth / 108.0;
  const double round = dram_latency() + 2 * 256.0 * 32 * 2 / share + 2 * block + l2_latency() +
                       2 * 128.0 * 128 * 2 / share;
  const double t_c = 5 * round;
  const double t_m = 3.0 * 4096.0 * 4096.0 * 2.0 / bandwidth(gpu);
  EXPECT_EQ(detail, "gemm 128x128");
  EXPECT_EQ(k.duration.value, std::llround(std::max(t_c, t_m) * 1e9));
  // Overlapped phases (contention law 2): each phase's time over the longer one.
  EXPECT_DOUBLE_EQ(k.memory_bound, t_m / std::max(t_c, t_m));
  EXPECT_DOUBLE_EQ(k.busy_share, t_c / std::max(t_c, t_m));
  // The fills and stores cost this large GEMM 2.2 %: its throughput roofline stands.
  EXPECT_NEAR(t_c / (10 * block), 1.0, 0.025);
  EXPECT_DOUBLE_EQ(k.sm_fraction, 1.0);
  // 232 registers x 128 threads: two 128x128 blocks per SM.
  EXPECT_EQ(k.blocks, 1024);
  EXPECT_EQ(k.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(k.waves, 1024.0 / 216.0);
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
  const GemmTile t128{128, 128, 32, 5, 128, 232, 80 * 1024};
  EXPECT_LT(c.time(gpu), gemm_time(qkv, t128, 1, 108, &one_tile));
  // A ResNet-50 weight gradient (conv2_x 1x1, 64 -> 64 at batch 256: K = 256 x 56 x 56) has one
  // 64x64 output tile: split-K spreads it until the operands' HBM read bounds it (one block
  // would compute for 10x longer). Each SM draws at most the profile's sm_bandwidth, so the
  // read reaches the HBM bandwidth only on a grid of at least B / s blocks (41 on the A100);
  // the reduction kernel (its launch and time) comes after it.
  const LayerWork wgrad = gemm(64, 64, 256 * 56 * 56);
  const GemmChoice w = choose_gemm(wgrad, f, gpu, peak);
  EXPECT_GT(w.split, 1);
  EXPECT_GE(static_cast<double>(w.blocks), bandwidth(gpu) / gpu.sm_bandwidth);
  EXPECT_NEAR(w.t_memory / (wgrad.bytes / bandwidth(gpu)), 1.0, 0.01);
  EXPECT_GE(w.t_memory, w.t_latency);
  const double t_w = w.time(gpu);
  EXPECT_DOUBLE_EQ(t_w, w.t_memory + static_cast<double>(gpu.launch_overhead) * 1e-9 + w.t_reduce);
  const GemmTile t64{64, 64, 64, 5, 128, 136, 80 * 1024};
  EXPECT_LT(10 * t_w, gemm_time(wgrad, t64, 1, 108, nullptr));
  // A batch-1 GEMV (M = 1) is the weight read: the bandwidth term (split-K partials are a few
  // KB).
  const KernelSpec gemv = roofline_kernel(gemm(1, 8192, 8192), f, gpu, peak);
  const double bytes = (8192.0 + 8192.0 * 8192.0 + 8192.0) * 2;
  EXPECT_NEAR(gemv.duration.value / (bytes / bandwidth(gpu) * 1e9), 1.0, 0.01);
  EXPECT_GT(gemv.memory_bound, 0.5);
}

TEST(CatalogRoofline, ANarrowGridDrawsAtMostItsSmsShareOfTheBandwidth) {
  // Contention law 2's per-SM ceiling s in the catalog's solo time: a grid on h < B / s SMs
  // moves its bytes at h s, a full grid at B (the memory phase m x D = bytes / min(B, h s));
  // and on a MIG slice the law's stretch of that solo phase moves them at min(B_slice, held s),
  // never faster than the slice's bandwidth.
  const DeviceProfile& gpu = a100();
  ASSERT_GT(gpu.sm_bandwidth, 0);
  KernelFamilies f = load_kernel_families();
  f.gemm_tiles = {GemmTile{128, 128, 32, 5, 128, 232, 80 * 1024}};
  f.gemm_split_k = {1};
  DeviceGeometry slice;  // a 1g.10gb: 1/8 of the memory, 14 SMs
  slice.gpu_sms = gpu.sms;
  set_law_terms(slice, gpu, 1.0 / 8, default_contention_law());
  slice.bandwidth = 1.0 / 8;
  for (const std::int64_t blocks : {2, 4, 10, 30, 60, 108, 216}) {
    // A weight read of M = 1 row: blocks column tiles of 128, each reading 128 x 16384 weights.
    const LayerWork w = gemm(1, 128 * blocks, 16384);
    const KernelSpec k = roofline_kernel(w, f, gpu, gpu.compute.fp16_tensor);
    const double held = static_cast<double>(std::min<std::int64_t>(blocks, gpu.sms));
    const double draw = std::min(bandwidth(gpu), held * gpu.sm_bandwidth);
    const double seconds = static_cast<double>(k.duration.value) * 1e-9;
    EXPECT_NEAR(k.memory_bound * seconds / (w.bytes / draw), 1.0, 1e-3) << blocks;
    EXPECT_GE(seconds + 0.5e-9, w.bytes / draw) << blocks;  // (durations are whole ns)
    const double on_slice = std::min<double>(held, 14);
    const double beta = contention::memory_speed(k.sm_fraction, on_slice, slice);
    const double rate = w.bytes * beta / (k.memory_bound * seconds);
    EXPECT_LE(rate, bandwidth(gpu) / 8 * (1 + 1e-3)) << blocks;
    EXPECT_NEAR(rate / std::min(bandwidth(gpu) / 8, on_slice * gpu.sm_bandwidth), 1.0, 1e-3)
        << blocks;
  }
  // Under a law without the ceiling (fluid) the solo time keeps the whole bandwidth.
  Scenario fluid;
  fluid.contention_law = "fluid";
  const DeviceProfile timed = catalog_timing_profile(fluid, gpu);
  EXPECT_EQ(timed.sm_bandwidth, 0);
  const LayerWork narrow = gemm(1, 128 * 4, 16384);
  const KernelSpec k = roofline_kernel(narrow, f, timed, gpu.compute.fp16_tensor);
  EXPECT_NEAR(k.memory_bound * static_cast<double>(k.duration.value) * 1e-9 /
                  (narrow.bytes / bandwidth(gpu)),
              1.0, 1e-3);
  EXPECT_EQ(catalog_timing_profile(Scenario{}, gpu).sm_bandwidth, gpu.sm_bandwidth);
}

TEST(CatalogRoofline, OnlyOperandsSeveralTilesReadAreAWorkingSet) {
  // A batch-1 projection (M = 128, one row of 128-row tiles) streams its weights once: only
  // its activations, read by every column tile, are re-read through L2.
  const GemmTile tile{128, 128, 32, 5, 128, 232, 80 * 1024};
  LayerWork w = gemm(128, 3072, 1024);
  w.a_bytes = 128.0 * 1024 * 2;
  w.b_bytes = 1024.0 * 3072 * 2;
  EXPECT_DOUBLE_EQ(gemm_reread_bytes(w, tile), w.a_bytes);
  // At 1024 rows (8 row tiles) every column of the weights is read 8 times.
  w.m = 1024;
  w.a_bytes = 1024.0 * 1024 * 2;
  EXPECT_DOUBLE_EQ(gemm_reread_bytes(w, tile), w.a_bytes + w.b_bytes);
  // One column tile (N <= 128): the left operand streams once.
  LayerWork narrow = gemm(1024, 64, 1024);
  narrow.a_bytes = 1024.0 * 1024 * 2;
  narrow.b_bytes = 1024.0 * 64 * 2;
  EXPECT_DOUBLE_EQ(gemm_reread_bytes(narrow, tile), narrow.b_bytes);
  // A 3x3 convolution's input map is smaller than its im2col matrix: the window re-reads it.
  narrow.a_bytes = 1024.0 * 1024 * 2 / 9;
  EXPECT_DOUBLE_EQ(gemm_reread_bytes(narrow, tile), narrow.a_bytes + narrow.b_bytes);
  // Operands unknown: the layer's working set as given.
  EXPECT_DOUBLE_EQ(gemm_reread_bytes(gemm(128, 3072, 1024), tile),
                   gemm(128, 3072, 1024).working_set);
}

TEST(CatalogRoofline, ATileThatCannotDrawItsOperandsFromL2ComputesSlower) {
  const DeviceProfile& gpu = a100();
  // 64x64 fp16: 2 x 64 x 64 / (128 x 2) = 32 FLOP/B; the A100 needs 312e12 / 5.4e12 = 57.8, so
  // it reaches 32 / 57.8 = 55 % of the peak; 128x128 (64 FLOP/B) reaches all of it.
  const LayerWork w = gemm(128 * 108, 128 * 4, 65536);
  const KernelFamilies& f = load_kernel_families();
  const GemmTile small{64, 64, 64, 5, 128, 136, 80 * 1024};
  const GemmTile big{128, 128, 32, 5, 128, 232, 80 * 1024};
  // Same work per SM (4x the blocks of a quarter of the FLOPs): the tensor work's ratio is the
  // efficiency (the deep main loop makes the latency terms negligible: 1024 iterations).
  KernelFamilies one_tile = f;
  one_tile.gemm_tiles = {small};
  one_tile.gemm_split_k = {1};
  const GemmChoice c_small = choose_gemm(w, one_tile, gpu, gpu.compute.fp16_tensor);
  one_tile.gemm_tiles = {big};
  const GemmChoice c_big = choose_gemm(w, one_tile, gpu, gpu.compute.fp16_tensor);
  EXPECT_NEAR(c_small.t_compute / c_big.t_compute, 312e12 / (32 * gpu.l2_bandwidth), 1e-9);
  EXPECT_NEAR(c_small.time(gpu) / c_big.time(gpu), 312e12 / (32 * gpu.l2_bandwidth), 0.01);
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
  EXPECT_EQ(k.blocks_per_sm, 2);  // 255 registers x 128 threads
  const double t_c = a.flops / (f.attention_efficiency.value * peak) * 108.0 * 15.0 / 1536.0;
  // The critical path: 15 blocks on the busiest SM, 2 at a time; each loads Q and the first K
  // and V tiles, iterates over 3 key tiles of 128 (compute-bound: the next tile in flight hides
  // a DRAM latency) and stores its O tile.
  const double share = gpu.l2_bandwidth / 108.0;
  const double t_lat = rounds_time(
      15, 2, 3, a.flops / 1536.0 / (f.attention_efficiency.value * peak / 108.0), dram_latency(),
      dram_latency(), (128.0 + 256.0) * 64 * 2 / share, l2_latency(), 128.0 * 64 * 2 / share);
  EXPECT_GT(t_lat, t_c);
  EXPECT_LT(t_lat, 1.3 * t_c);
  EXPECT_EQ(k.duration.value, std::llround(std::max({t_c, t_lat, a.bytes / bandwidth(gpu)}) * 1e9));
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

// Rows of a copied gpu-benches file (calibration/data/gpu-benches/): whitespace-separated numbers;
// lines that do not start with a number are skipped.
std::vector<std::vector<double>> bench_rows(const std::string& file) {
  std::ifstream in(std::string(GPUMUX_SOURCE_DIR) + "/calibration/data/gpu-benches/" + file);
  EXPECT_TRUE(in.good()) << file;
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<double> row;
    std::string word;
    while (words >> word) {
      if (word.back() == 'B') continue;  // the size column ("64kB")
      try {
        row.push_back(std::stod(word));
      } catch (const std::exception&) {
        break;
      }
    }
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

TEST(CatalogLatency, MemoryLatenciesAreTheCopiedMeasurements) {
  // gpu-latency: iterations, clock (MHz), footprint (kB), total ms, cycles per load. DRAM: the
  // 340,388 kB row; L2: every row between 0.3 MB and the first partition's end.
  struct Case {
    const char* file;
    const char* profile;
    double l2_from_kb, l2_to_kb;
  };
  const KernelFamilies& f = load_kernel_families();
  for (const Case& c : {Case{"gpu-latency__a100_80.txt", "a100-80gb", 300, 18200},
                        Case{"gpu-latency__a100_40.txt", "a100-sxm4-40gb", 300, 18200},
                        Case{"gpu-latency__h100_pcie.txt", "h100-pcie-80gb", 470, 15000}}) {
    const MemoryLatency& lat = f.latency(c.profile);
    bool dram = false;
    int l2_rows = 0;
    for (const auto& row : bench_rows(c.file)) {
      if (row.size() < 5) continue;
      const double ns = row[4] / row[1] * 1e3;
      if (row[2] == 340388) {
        EXPECT_NEAR(lat.dram.value * 1e9, ns, 1.0) << c.file;
        dram = true;
      }
      if (row[2] >= c.l2_from_kb && row[2] <= c.l2_to_kb) {
        EXPECT_NEAR(lat.l2.value * 1e9, ns, 2.0) << c.file << " " << row[2] << " kB";
        ++l2_rows;
      }
    }
    EXPECT_TRUE(dram) << c.file;
    EXPECT_GT(l2_rows, 10) << c.file;
    EXPECT_FALSE(lat.dram.assumed);
  }
  // A profile without a measurement takes the default, which says so.
  EXPECT_TRUE(f.latency("l40s-48gb").dram.assumed);
  EXPECT_DOUBLE_EQ(f.latency("l40s-48gb").dram.value, f.latency("default").dram.value);
}

TEST(CatalogLatency, TinyKernelFloorStaysBelowTheMeasuredTinyKernel) {
  // gpu-small-kernels: 10,000 back-to-back SCALE kernels of N doubles (read and write, 16 B per
  // element); the smallest N = 4096 takes N x 16 B / (best GB/s) each: 2.62 us in a stream, 1.34
  // us in a CUDA graph. The catalog's tiny kernel costs the launch overhead plus its floor (one
  // DRAM load, one L2 store): a floor must not exceed what is measured, and it explains most of
  // what the launch intercept leaves (the rest: block dispatch and the end-of-kernel flush, not
  // modelled).
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  LayerWork scale;
  scale.kind = LayerWork::Kind::elementwise;
  scale.name = "scale";
  scale.elements = 4096;
  scale.flops = 4096;
  scale.bytes = 4096 * 16.0;
  scale.element_bytes = 8;
  const KernelSpec k = roofline_kernel(scale, f, gpu, gpu.compute.fp16_tensor);
  // Four blocks of 1024 elements, one per SM: one load, a multiply per element, one store.
  EXPECT_EQ(k.duration.value,
            std::llround((dram_latency() + 1024 / (gpu.compute.fp32 / 108) + l2_latency()) * 1e9));
  for (const auto& [file, launch] :
       {std::pair<std::string, Nanos>{"gpu-small-kernels__a100_80.txt", gpu.launch_overhead},
        std::pair<std::string, Nanos>{"gpu-small-kernels__a100_80_graph.txt",
                                      gpu.graph_launch_overhead}}) {
    const auto rows = bench_rows(file);
    ASSERT_FALSE(rows.empty());
    ASSERT_EQ(rows[0][0], 4096);
    const double best = *std::max_element(rows[0].begin() + 1, rows[0].end());
    const double measured = 4096 * 16.0 / (best * 1e9);
    const double predicted = static_cast<double>(launch + k.duration.value) * 1e-9;
    EXPECT_LE(predicted, measured) << file;
    EXPECT_GT(predicted, 0.8 * measured) << file;
  }
}

TEST(CatalogLatency, ElementwiseFloorIsOneRoundTripPerRoundOfResidentBlocks) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  // 256 x 4 elements per block, 8 resident per SM: 3 rounds on the busiest SM of 108.
  LayerWork w;
  w.kind = LayerWork::Kind::elementwise;
  w.name = "add";
  w.elements = 1024 * 108 * 8 * 3;
  w.flops = 0;
  w.bytes = 1.0;  // no traffic: the floor alone
  const KernelSpec k = roofline_kernel(w, f, gpu, gpu.compute.fp16_tensor);
  EXPECT_EQ(k.blocks_per_sm, 8);
  EXPECT_EQ(k.duration.value, std::llround(3 * (dram_latency() + l2_latency()) * 1e9));
  // One block more: a fourth round on one SM.
  w.elements += 1024;
  EXPECT_EQ(roofline_kernel(w, f, gpu, gpu.compute.fp16_tensor).duration.value,
            std::llround(4 * (dram_latency() + l2_latency()) * 1e9));
}

TEST(CatalogLatency, TheReductionKernelsCostStopsSplitK) {
  // A split-K GEMM launches a reduction kernel: its launch overhead and floor are part of the
  // choice's time, a cost every split > 1 pays and no split 1 does. With that cost, the split
  // chosen on random small shapes is never deeper than with a free launch, and on some
  // shallower (a split of a few latency-bound rounds no longer pays off).
  const DeviceProfile& gpu = a100();
  DeviceProfile free_launch = gpu;
  free_launch.launch_overhead = 0;
  const KernelFamilies& f = load_kernel_families();
  std::uint64_t x = 777;
  const auto next = [&](int lo, int hi) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((x >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  int shallower = 0;
  for (int i = 0; i < 200; ++i) {
    const LayerWork w = gemm(next(1, 512), next(64, 4096), next(256, 8192));
    const GemmChoice with = choose_gemm(w, f, gpu, gpu.compute.fp16_tensor);
    const GemmChoice without = choose_gemm(w, f, free_launch, gpu.compute.fp16_tensor);
    EXPECT_LE(with.split, without.split) << w.m << "x" << w.n << "x" << w.k;
    shallower += with.split < without.split ? 1 : 0;
    // Every choice pays at least one DRAM latency before its main loop and an L2 latency after.
    EXPECT_GE(with.t_latency, dram_latency() + l2_latency());
    if (with.split > 1) {
      EXPECT_GT(with.reduce_blocks, 0);
      EXPECT_GE(with.t_reduce, dram_latency() + l2_latency());
    }
  }
  EXPECT_GT(shallower, 5);
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
  const CatalogLayers fused = catalog_layers(e, 1, 128, "fp32", false);
  const CatalogLayers split = catalog_layers(e, 1, 128, "fp32", false, eager);
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
