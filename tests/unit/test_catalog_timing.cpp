// The workload catalog's kernel timing (models/workload/catalog_timing.cpp, catalog_model.hpp
// "GEMM selection", "Latency floor", "Roofline"): GEMM tile and split-K choice, the grid's HBM
// draw, L2 working sets, fused attention and collective closed forms, and the latency floor
// against the copied measurements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
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
// with a reduction kernel its launch and max(its traffic, its floor); under serial split-K
// (`serial`) the critical path's s - 1 in-kernel steps of 2 L2 latencies and the output tile read
// and written through the SM's L2 share, and no partials.
double gemm_time(const LayerWork& w, const GemmTile& t, int split, int sms, double* blocks_out,
                 bool serial = false) {
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
      double(t.m) * t.n * (split > 1 && !serial ? 4.0 : w.element_bytes) / l2_share);
  const double chain =
      serial ? (split - 1) * (2 * l2_latency() + 2.0 * t.m * t.n * w.element_bytes / l2_share)
             : 0.0;
  const double outputs = double(w.count) * double(w.m) * w.n;
  const double rate = bandwidth(gpu) * sms / gpu.sms;
  const double t_m =
      (w.bytes + (split > 1 && !serial ? outputs * (4.0 * split - w.element_bytes) : 0)) / rate;
  double reduce = 0;
  if (split > 1 && !serial) {
    // 1024 outputs per block, 8 blocks per SM: one DRAM load and one L2 store per round.
    const double rounds = cdiv(cdiv(cdiv(outputs, 1024), sms), 8);
    reduce = gpu.launch_overhead * 1e-9 + std::max(outputs * (4.0 * split + w.element_bytes) / rate,
                                                   rounds * (dram_latency() + l2_latency()));
  }
  if (blocks_out) *blocks_out = blocks;
  return std::max(t_lat + chain, t_m) + reduce;
}

// The least predicted time over every tile, split factor and reduction scheme the library `f`
// may use.
double best_gemm_time(const LayerWork& w, int sms, const KernelFamilies& f) {
  double best = 1e30;
  for (const GemmTile& t : f.gemm_tiles) {
    for (int s : f.gemm_split_k) {
      if (s > 1 && double(w.k) / s < f.gemm_split_k_min_depth.value) break;
      best = std::min(best, gemm_time(w, t, s, sms, nullptr));
      // Serial split-K where the unsplit grid has fewer output tiles than SMs.
      const double tiles =
          double(w.count) * std::ceil(double(w.m) / t.m) * std::ceil(double(w.n) / t.n);
      if (s > 1 && f.gemm_split_k_serial && tiles < sms) {
        best = std::min(best, gemm_time(w, t, s, sms, nullptr, true));
      }
    }
  }
  return best;
}

TEST(CatalogRoofline, GemmSelectionIsTheLeastPredictedTimeOnRandomShapes) {
  const DeviceProfile& gpu = a100();
  ASSERT_EQ(gpu.compute.fp16_tensor, 312e12);
  ASSERT_GT(gpu.l2_bandwidth, 0);
  // The shipped menu (reduction kernel only) and the one with serial split-K.
  KernelFamilies serial_menu = load_kernel_families();
  serial_menu.gemm_split_k_serial = true;
  std::uint64_t x = 12345;
  const auto next = [&](int lo, int hi) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((x >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (int i = 0; i < 200; ++i) {
    const LayerWork w = gemm(next(1, 20000), next(1, 12000), next(1, 300000));
    const KernelFamilies& f = i % 2 == 0 ? load_kernel_families() : serial_menu;
    for (const int sms : {108, 14, 42}) {
      const GemmChoice c = choose_gemm(w, f, gpu, gpu.compute.fp16_tensor, sms);
      EXPECT_TRUE(!c.serial || f.gemm_split_k_serial);
      double blocks = 0;
      const double t = gemm_time(w, c.tile, c.split, sms, &blocks, c.serial);
      // The chosen (tile, split, scheme) is the cheapest, its grid as the law says.
      EXPECT_NEAR(t / best_gemm_time(w, sms, f), 1.0, 1e-9) << w.m << "x" << w.n << "x" << w.k;
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
  // the reduction kernel (its launch and time) comes after it. Reducing in the kernel instead
  // (serial split-K, when the menu has it) writes no fp32 partials and launches no reduction
  // kernel: the operands' read alone is its time.
  const LayerWork wgrad = gemm(64, 64, 256 * 56 * 56);
  const GemmChoice w = choose_gemm(wgrad, f, gpu, peak);
  EXPECT_GT(w.split, 1);
  EXPECT_GE(static_cast<double>(w.blocks), bandwidth(gpu) / gpu.sm_bandwidth);
  EXPECT_NEAR(w.t_memory / (wgrad.bytes / bandwidth(gpu)), 1.0, 0.01);
  EXPECT_GE(w.t_memory, w.t_latency);
  const double t_w = w.time(gpu);
  EXPECT_FALSE(w.serial);
  EXPECT_DOUBLE_EQ(t_w, w.t_memory + static_cast<double>(gpu.launch_overhead) * 1e-9 + w.t_reduce);
  KernelFamilies serial_menu = f;
  serial_menu.gemm_split_k_serial = true;
  const GemmChoice s = choose_gemm(wgrad, serial_menu, gpu, peak);
  EXPECT_GT(s.split, 1);
  EXPECT_TRUE(s.serial);
  EXPECT_DOUBLE_EQ(s.time(gpu), s.t_memory);
  EXPECT_LT(s.time(gpu), t_w);
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

TEST(CatalogRoofline, TheLawsSliceTimeIsTheCriticalPathOnTheSlicesSms) {
  // BERT-large's GEMMs at batch 1, seq 384, int8, on the 128x128 tile (two resident per SM):
  // timed on the whole A100 (one block per SM) with the throughput share tau, contention law
  // 2's sigma on the 14 SMs of a 1g.10gb gives the catalog's own critical path timed on 14
  // SMs (exact: the round law is affine through one and r = 2 blocks).
  const DeviceProfile& gpu = a100();
  KernelFamilies one_tile = load_kernel_families();
  one_tile.gemm_tiles = {GemmTile{128, 128, 32, 5, 128, 232, 80 * 1024}};
  one_tile.gemm_split_k = {1};
  const double peak = gpu.compute.int8_tensor;
  DeviceGeometry slice;
  slice.gpu_sms = gpu.sms;
  slice.sms = 14;
  slice.discrete_waves = true;
  for (const auto& [n, k] :
       std::vector<std::pair<int, int>>{{3072, 1024}, {1024, 1024}, {4096, 1024}, {1024, 4096}}) {
    LayerWork w = gemm(384, n, k, 1);
    w.element_bytes = 1;
    const GemmChoice whole = choose_gemm(w, one_tile, gpu, peak);
    const GemmChoice on14 = choose_gemm(w, one_tile, gpu, peak, 14);
    ASSERT_EQ(whole.blocks_per_sm, 2);
    ASSERT_LE(whole.blocks, gpu.sms);                         // one block per SM alone
    EXPECT_GT(whole.throughput_share, 0.5) << n << "x" << k;  // tensor work dominates
    EXPECT_LE(whole.throughput_share, 1.0);
    const double grid = static_cast<double>(whole.blocks) / whole.blocks_per_sm;
    const double f = std::min(1.0, static_cast<double>(whole.blocks) / gpu.sms);
    const double sigma = contention::compute_speed(
        f, grid, 14, slice, static_cast<double>(whole.blocks), whole.throughput_share);
    EXPECT_NEAR(whole.t_latency / sigma, on14.t_latency, 1e-9 * on14.t_latency) << n << "x" << k;
    // The rounds law alone (tau = 0) is short of it: the two resident blocks share the SM.
    EXPECT_LT(whole.t_latency / contention::compute_speed(f, grid, 14, slice), 0.8 * on14.t_latency)
        << n << "x" << k;
  }
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

// A per-head fused attention layer (TensorRT's fixed-length fused MHA, "Attention grid"): batch x
// heads blocks, each computing all L query rows against L keys of head dimension 64.
LayerWork per_head_attention(std::int64_t batch, std::int64_t heads, std::int64_t seq) {
  LayerWork a;
  a.kind = LayerWork::Kind::attention;
  a.name = "attention";
  a.count = batch * heads;
  a.m = a.n = seq;
  a.k = 64;
  a.block_rows = seq;
  a.flops = 4.0 * double(a.count) * double(seq) * double(seq) * 64;
  a.bytes = double(a.count) * (4.0 * double(seq) * 64) * 2;
  return a;
}

TEST(CatalogAttentionGrid, PerHeadSharedMemoryIsTensorRtsKernelTable) {
  // (2 L_k + 128) d s: TensorRT's sm80 fused MHA table (fused_multihead_attention.h) lists
  // 49152 B (fp16, S 128), 114688 B (fp16, S 384), 24576 B (int8, S 128), 57344 B (int8, S 384).
  EXPECT_DOUBLE_EQ(per_head_attention_shared_memory(128, 64, 2, 128), 49152);
  EXPECT_DOUBLE_EQ(per_head_attention_shared_memory(384, 64, 2, 128), 114688);
  EXPECT_DOUBLE_EQ(per_head_attention_shared_memory(128, 64, 1, 128), 24576);
  EXPECT_DOUBLE_EQ(per_head_attention_shared_memory(384, 64, 1, 128), 57344);
  // The A100 (164 KiB per SM, 1 KiB reserved) holds the 384 kernel; the L40S (100 KiB) does not.
  EXPECT_TRUE(per_head_attention_fits(a100().sm_limits, 114688));
  EXPECT_FALSE(per_head_attention_fits(unfitted_profile("l40s-48gb").sm_limits, 114688));
  EXPECT_TRUE(per_head_attention_fits(unfitted_profile("l40s-48gb").sm_limits, 49152));
}

TEST(CatalogAttentionGrid, PerHeadLaunchesOneBlockPerBatchAndHead) {
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  for (const std::int64_t seq : {128, 256, 384, 512}) {
    for (const std::int64_t batch : {1, 2, 8}) {
      LayerWork a = per_head_attention(batch, 16, seq);
      const KernelSpec k = roofline_kernel(a, f, gpu, peak);
      EXPECT_EQ(k.blocks, batch * 16) << seq << " " << batch;
      a.block_rows = 0;  // tiled: 128-row blocks
      EXPECT_EQ(roofline_kernel(a, f, gpu, peak).blocks, batch * 16 * ((seq + 127) / 128));
    }
  }
  // Closed form at batch 1, S 384 (BERT-large): 16 blocks on 16 SMs, one each; a block loads Q
  // (a 128-row tile) and its first K and V tiles, runs 3 key tiles of its whole 37.7 MFLOP at its
  // SM's share of the attention peak, and stores all 384 rows of O.
  const LayerWork a = per_head_attention(1, 16, 384);
  const KernelSpec k = roofline_kernel(a, f, gpu, peak);
  const double share = gpu.l2_bandwidth / 108.0;
  const double c = a.flops / 16.0 / (f.attention_efficiency.value * peak / 108.0);
  const double t_lat =
      rounds_time(1, 1, 3, c, dram_latency(), dram_latency(), (384.0 + 256.0) * 64 * 2 / share,
                  l2_latency(), 384.0 * 64 * 2 / share);
  EXPECT_EQ(k.duration.value, std::llround(std::max(t_lat, a.bytes / bandwidth(gpu)) * 1e9));
  // The block holds K and V of 384 keys: 112 KiB, one block per SM.
  EXPECT_EQ(k.blocks_per_sm, 1);
}

TEST(CatalogAttentionGrid, PerHeadTimeGrowsWithTheSquareOfTheSequenceAtSmallBatch) {
  // While batch x heads blocks fit the SMs, a per-head kernel's time is one block's: it grows
  // with the block's 4 L^2 d FLOPs (and more than the tiled kernel, whose blocks multiply with L).
  const DeviceProfile& gpu = a100();
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  double previous = 0;
  for (const std::int64_t seq : {128, 192, 256, 320, 384}) {
    LayerWork a = per_head_attention(1, 16, seq);
    const double per_head = double(roofline_kernel(a, f, gpu, peak).duration.value);
    a.block_rows = 0;
    const double tiled = double(roofline_kernel(a, f, gpu, peak).duration.value);
    EXPECT_GT(per_head, previous) << seq;
    EXPECT_GE(per_head, tiled) << seq;
    previous = per_head;
    // Above the latency floor the time is the block's compute: within 25 % of 4 L^2 d at the
    // SM's share of the attention peak.
    if (seq >= 256) {
      const double c = a.flops / 16.0 / (f.attention_efficiency.value * peak / 108.0) * 1e9;
      EXPECT_GT(per_head, c) << seq;
      EXPECT_LT(per_head, 1.25 * c) << seq;
    }
  }
  // Doubling L from 192 to 384 quadruples a block's FLOPs: the time grows by more than 3x.
  const double t192 =
      double(roofline_kernel(per_head_attention(1, 16, 192), f, gpu, peak).duration.value);
  const double t384 =
      double(roofline_kernel(per_head_attention(1, 16, 384), f, gpu, peak).duration.value);
  EXPECT_GT(t384, 3.0 * t192);
}

TEST(CatalogAttentionGrid, AHundredKibSmRunsTheCompactPerHeadKernel) {
  // TensorRT's GA10x table (which an sm_89 device loads first) keeps only kernels under 100 KiB:
  // its fp16 S-384 kernel takes 65536 B = (384 + 128) x 64 x 2, K of every key and one 128-row
  // tile, where the sm80 one takes 114688 B (fused_multihead_attention.h, v10.7.0).
  EXPECT_DOUBLE_EQ(per_head_attention_compact_shared_memory(384, 64, 2, 128), 65536);
  const DeviceProfile& l40s = unfitted_profile("l40s-48gb");
  EXPECT_DOUBLE_EQ(per_head_attention_block_shared_memory(l40s.sm_limits, 384, 64, 2, 128), 65536);
  // Where the full footprint fits it is the one used: S 128 on the L40S, S 384 on the A100.
  EXPECT_DOUBLE_EQ(per_head_attention_block_shared_memory(l40s.sm_limits, 128, 64, 2, 128), 49152);
  EXPECT_DOUBLE_EQ(per_head_attention_block_shared_memory(a100().sm_limits, 384, 64, 2, 128),
                   114688);
  // The L40S's 99 KiB per block holds the compact S-384 block: one block per (batch, head), one
  // per SM, each computing all 384 rows, so slower than the tiled grid's 3 blocks per head.
  const KernelFamilies& f = load_kernel_families();
  const double peak = l40s.compute.fp16_tensor;
  LayerWork a = per_head_attention(1, 16, 384);
  const KernelSpec per_head = roofline_kernel(a, f, l40s, peak);
  EXPECT_EQ(per_head.blocks, 16);
  EXPECT_EQ(per_head.blocks_per_sm, 1);
  a.block_rows = 0;
  const KernelSpec tiled = roofline_kernel(a, f, l40s, peak);
  EXPECT_EQ(tiled.blocks, 48);
  EXPECT_GT(per_head.duration.value, 2 * tiled.duration.value);
  EXPECT_EQ(roofline_kernel(per_head_attention(1, 16, 128), f, l40s, peak).blocks, 16);
}

TEST(CatalogAttentionGrid, AGpuThatCannotHoldEitherBlockRunsTheTiledGrid) {
  // An SM of 64 KiB (63 KiB a block) holds neither 112 KiB nor 64 KiB at S 384: no per-head
  // kernel, the attention is timed on the tiled grid; at S 128 (48 KiB) it runs per head.
  DeviceProfile gpu = unfitted_profile("l40s-48gb");
  gpu.sm_limits.shared_memory = 64 * 1024;
  EXPECT_DOUBLE_EQ(per_head_attention_block_shared_memory(gpu.sm_limits, 384, 64, 2, 128), 0.0);
  const KernelFamilies& f = load_kernel_families();
  const double peak = gpu.compute.fp16_tensor;
  LayerWork a = per_head_attention(1, 16, 384);
  const KernelSpec per_head = roofline_kernel(a, f, gpu, peak);
  a.block_rows = 0;
  const KernelSpec tiled = roofline_kernel(a, f, gpu, peak);
  EXPECT_EQ(per_head.blocks, 48);
  EXPECT_EQ(per_head.duration.value, tiled.duration.value);
  EXPECT_EQ(roofline_kernel(per_head_attention(1, 16, 128), f, gpu, peak).blocks, 16);
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
  // row at dram_kb (340,388 kB; the L40's file has no such row, its 450,297 kB one is far beyond
  // its 96 MB L2 too); L2: every row between l2_from_kb and the first partition's end. The L40S
  // takes the L40's measurement (same AD102 die), marked as an assumption.
  struct Case {
    const char* file;
    const char* profile;
    double dram_kb, l2_from_kb, l2_to_kb;
    bool assumed;
  };
  const KernelFamilies& f = load_kernel_families();
  for (const Case& c :
       {Case{"gpu-latency__a100_80.txt", "a100-80gb", 340388, 300, 18200, false},
        Case{"gpu-latency__a100_40.txt", "a100-sxm4-40gb", 340388, 300, 18200, false},
        Case{"gpu-latency__h100_pcie.txt", "h100-pcie-80gb", 340388, 470, 15000, false},
        Case{"gpu-latency__l40.txt", "l40s-48gb", 450297, 200, 32500, true}}) {
    const MemoryLatency& lat = f.latency(c.profile);
    bool dram = false;
    int l2_rows = 0;
    for (const auto& row : bench_rows(c.file)) {
      if (row.size() < 5) continue;
      const double ns = row[4] / row[1] * 1e3;
      if (row[2] == c.dram_kb) {
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
    EXPECT_EQ(lat.dram.assumed, c.assumed) << c.profile;
  }
  // The L4 (AD104, no measurement): the L40's L2 hit in cycles at the L4's own boost clock (the
  // same Ada SM and L2), and the L40's DRAM time beyond the L2 in nanoseconds (GDDR6 on both).
  const MemoryLatency& l40 = f.latency("l40s-48gb");
  const MemoryLatency& l4 = f.latency("l4-24gb");
  const double l40_l2_cycles = 276.5, l40_clock_hz = 2490e6;
  EXPECT_NEAR(l4.l2.value, l40_l2_cycles / (load_device_profile("l4-24gb").boost_clock_mhz * 1e6),
              0.6e-9);
  EXPECT_NEAR(l40.l2.value, l40_l2_cycles / l40_clock_hz, 0.6e-9);
  EXPECT_NEAR(l4.dram.value - l4.l2.value, l40.dram.value - l40.l2.value, 1e-9);
  EXPECT_TRUE(l4.dram.assumed);
  // A profile without a measurement takes the default, which says so.
  EXPECT_TRUE(f.latency("a10g-24gb").dram.assumed);
  EXPECT_DOUBLE_EQ(f.latency("a10g-24gb").dram.value, f.latency("default").dram.value);
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
  // The libraries' reduction kernel alone (no serial split-K in the menu).
  KernelFamilies f = load_kernel_families();
  f.gemm_split_k_serial = false;
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

TEST(CatalogLatency, SerialSplitKIsOneKernelWithItsChainOfTileSteps) {
  // Serial split-K (cuBLASLt's in-place reduction, CUTLASS SplitKSerial): the s splits of an
  // output tile add into it in turn, so the GEMM's critical path grows by (s - 1) steps of two
  // L2 latencies and the m x n output tile read and written in the output type through the SM's
  // L2 share, and no reduction kernel is launched. BERT-base's FFN output GEMM at batch 1 x 128
  // tokens (128 x 768 x 3072): 24 output tiles of 64x64 on 108 SMs.
  const DeviceProfile& gpu = a100();
  const double peak = gpu.compute.fp16_tensor;
  KernelFamilies f = load_kernel_families();
  f.gemm_split_k_serial = true;
  const LayerWork ffn2 = gemm(128, 768, 3072);
  const GemmChoice c = choose_gemm(ffn2, f, gpu, peak);
  ASSERT_GT(c.split, 1);
  ASSERT_TRUE(c.serial);
  const double share = gpu.l2_bandwidth / gpu.sms;
  const double step = 2 * l2_latency() + 2.0 * c.tile.m * c.tile.n * 2 / share;
  EXPECT_NEAR(c.t_serial_chain, (c.split - 1) * step, 1e-15);
  EXPECT_EQ(c.t_reduce, 0.0);
  EXPECT_EQ(c.reduce_blocks, 0);
  EXPECT_DOUBLE_EQ(c.time(gpu), std::max(c.t_latency, c.t_memory));
  // No fp32 partials: its HBM traffic is the operands and the output once.
  EXPECT_DOUBLE_EQ(c.t_memory * std::min(bandwidth(gpu), double(c.blocks) * gpu.sm_bandwidth),
                   ffn2.bytes);
  // The critical path restated: the unsplit law's rounds at depth K / s, the epilogue storing
  // the output type, then the chain.
  double blocks = 0;
  EXPECT_NEAR(c.time(gpu) / gemm_time(ffn2, c.tile, c.split, 108, &blocks, true), 1.0, 1e-12);
  // One kernel, where the menu without the in-kernel reduction emits the GEMM and its reduction
  // and takes longer (the reduction's launch and pass).
  const LayerKernels one = layer_kernels(ffn2, f, gpu, peak);
  ASSERT_EQ(one.kernels.size(), 1u);
  EXPECT_NE(one.details[0].find(" serial"), std::string::npos);
  KernelFamilies kernel_reduction = f;
  kernel_reduction.gemm_split_k_serial = false;
  const GemmChoice r = choose_gemm(ffn2, kernel_reduction, gpu, peak);
  ASSERT_GT(r.split, 1);
  EXPECT_EQ(layer_kernels(ffn2, kernel_reduction, gpu, peak).kernels.size(), 2u);
  EXPECT_LT(c.time(gpu), r.time(gpu));
  // A wider menu never predicts slower, and a grid of at least one output tile per SM is never
  // split serially (4096^3: 1024 tiles of 128x128).
  std::uint64_t x = 4242;
  const auto next = [&](int lo, int hi) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((x >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  for (int i = 0; i < 200; ++i) {
    const LayerWork w = gemm(next(1, 2048), next(64, 8192), next(128, 16384));
    EXPECT_LE(choose_gemm(w, f, gpu, peak).time(gpu),
              choose_gemm(w, kernel_reduction, gpu, peak).time(gpu) * (1 + 1e-12))
        << w.m << "x" << w.n << "x" << w.k;
  }
  EXPECT_FALSE(choose_gemm(gemm(4096, 4096, 4096), f, gpu, peak).serial);
}

TEST(CatalogGemmLibrary, TallyCutlassIsTallysSourceValues) {
  // tally src/tally/cutlass/cutlass.cu: the tensor-op 128x128x16 tile in 4 stages (warps 64x64:
  // 4 warps), the SIMT 128x128x8 tile (warps 32x64: 8 warps), split-K below 60 output tiles into
  // ceil(K / 128) slices.
  const GemmLibrary* lib = load_kernel_families().gemm_library("tally-cutlass");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->tile.m, 128);
  EXPECT_EQ(lib->tile.n, 128);
  EXPECT_EQ(lib->tile.k, 16);
  EXPECT_EQ(lib->tile.stages, 4);
  EXPECT_EQ(lib->tile.threads, 128);
  EXPECT_EQ(lib->tile.shared_memory, 4 * (128 + 128) * 16 * 2);
  ASSERT_TRUE(lib->tile_fp32.has_value());
  EXPECT_EQ(lib->tile_fp32->k, 8);
  EXPECT_EQ(lib->tile_fp32->threads, 256);
  EXPECT_EQ(lib->tile_fp32->shared_memory, 2 * (128 + 128) * 8 * 4);
  EXPECT_DOUBLE_EQ(lib->split_below_tiles.value, 60);
  EXPECT_DOUBLE_EQ(lib->split_depth.value, 128);
  EXPECT_FALSE(lib->tile_provenance.assumed);
  EXPECT_EQ(load_kernel_families().gemm_library("cublas"), nullptr);
}

TEST(CatalogGemmLibrary, ALibraryRunsItsOneTileAndSplitsByItsRuleOnRandomShapes) {
  // catalog_model.hpp, "GEMM library": no choice, the library's tile and s = ceil(K / d) when
  // count = 1, ceil(M / m) ceil(N / n) < N_split and K >= d, timed by the same law.
  const DeviceProfile& gpu = a100();
  KernelFamilies f = load_kernel_families();
  const GemmLibrary lib = *f.gemm_library("tally-cutlass");
  f.fixed_gemm = lib;
  std::uint64_t x = 777;
  const auto next = [&](int lo, int hi) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int>((x >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
  };
  int split_seen = 0, whole_seen = 0;
  for (int i = 0; i < 300; ++i) {
    const double dt = i % 3 == 0 ? 4 : 2;
    LayerWork w = gemm(next(1, 3000), next(1, 3000), next(1, 20000), dt);
    w.element_bytes = dt;
    const GemmTile& tile = dt == 4 ? *lib.tile_fp32 : lib.tile;
    const double tiles = std::ceil(double(w.m) / tile.m) * std::ceil(double(w.n) / tile.n);
    const int split = tiles < 60 && w.k >= 128 ? static_cast<int>((w.k + 127) / 128) : 1;
    (split > 1 ? split_seen : whole_seen) += 1;
    for (const int sms : {108, 14}) {
      const GemmChoice c = choose_gemm(w, f, gpu, gpu.compute.fp16_tensor, sms);
      EXPECT_EQ(c.tile.m, tile.m);
      EXPECT_EQ(c.tile.k, tile.k);
      EXPECT_EQ(c.tile.threads, tile.threads);
      EXPECT_EQ(c.split, split) << w.m << "x" << w.n << "x" << w.k;
      EXPECT_EQ(static_cast<double>(c.blocks), tiles * split);
      // Timed by the same law: the least-time selection offered only this (tile, split) and its
      // reduction kernel (the library's one scheme).
      KernelFamilies only = load_kernel_families();
      only.gemm_tiles = {tile};
      only.gemm_split_k = {split};
      only.gemm_split_k_min_depth.value = 0;
      only.gemm_split_k_serial = false;
      const GemmChoice same = choose_gemm(w, only, gpu, gpu.compute.fp16_tensor, sms);
      EXPECT_DOUBLE_EQ(c.time(gpu), same.time(gpu)) << w.m << "x" << w.n << "x" << w.k;
      EXPECT_DOUBLE_EQ(c.t_memory, same.t_memory);
      EXPECT_DOUBLE_EQ(c.t_reduce, same.t_reduce);
      EXPECT_EQ(c.split > 1, c.t_reduce > 0);
    }
    // A batched GEMM (count > 1) never splits.
    w.count = 4;
    EXPECT_EQ(choose_gemm(w, f, gpu, gpu.compute.fp16_tensor).split, 1);
  }
  EXPECT_GT(split_seen, 20);
  EXPECT_GT(whole_seen, 20);
}

TEST(CatalogGemmLibrary, AWorkloadNamesItAndAnUnknownOneIsALocatedError) {
  const auto resolve = [](const std::string& keys) {
    return resolve_scenario(load_scenario_text(
        "name: t\nduration: 1s\ngpus: [{name: g, model: a100-sxm4-40gb}]\n"
        "tenants:\n  - name: a\n    device: g\n    workload:\n"
        "      arrivals: {process: closed, concurrency: 1}\n"
        "      model: bert-large\n      seq_len: 128\n      runtime: onnxruntime\n" +
            keys,
        "test.yaml"));
  };
  const auto reductions = [](const ResolvedScenario& r) {
    int n = 0;
    for (const KernelSpec& k : r.scenario.tenants[0].workload.kernels) {
      n += k.name.find(".splitk_reduce") != std::string::npos ? 1 : 0;
    }
    return n;
  };
  // BERT-large at batch 1 x 128 tokens: every GEMM has fewer than 60 128x128 output tiles (QKV
  // 24, attention out 8, FFN1 32, FFN2 8, the pooler 8) and K >= 128, so each of the 24 layers'
  // four GEMMs and the pooler's splits and adds a reduction kernel.
  const ResolvedScenario tally = resolve("      gemm_library: tally-cutlass\n");
  EXPECT_EQ(reductions(tally), 24 * 4 + 1);
  EXPECT_EQ(tally.scenario.tenants[0].workload.catalog->gemm_library, "tally-cutlass");
  // Without it the catalog's own choice (fewer splits) stands.
  EXPECT_LT(reductions(resolve("")), 24 * 4 + 1);
  try {
    resolve("      gemm_library: tally-cutlas\n");
    ADD_FAILURE() << "no error for an unknown GEMM library";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.yaml:12:21: tenants.0.workload.gemm_library: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("unknown GEMM library 'tally-cutlas' (did you mean 'tally-cutlass'?)"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace gpumux
