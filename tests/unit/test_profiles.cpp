// Device profiles: every embedded profile loads under the strict source rule, and its numbers
// match their primary sources (named in each profile). Loading from files, the rejection of
// unsourced, unknown or malformed values (file:line:col and the key path), MIG layouts and
// nvidia-smi aliases: test_profiles_loading.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "tests/support/profile_texts.hpp"

namespace gpumux {
namespace {

using testing::expect_rejected;
using testing::kBase;
using testing::kGiB;
using testing::kMiB;
using testing::kMig;
using testing::kProfiles;
using testing::kWithoutMig;
using testing::line_of;
using testing::read_file;
using testing::replace_line;

TEST(Profiles, EmbeddedNamesAreTheCalibratedGpus) {
  EXPECT_EQ(embedded_profile_names(), kProfiles);
}

TEST(Profiles, EveryEmbeddedProfileLoadsUnderTheStrictSourceRule) {
  for (const std::string& name : kProfiles) {
    SCOPED_TRACE(name);
    const DeviceProfile& gpu = load_device_profile(name);
    EXPECT_EQ(gpu.name, name);
    EXPECT_EQ(gpu.source_path, "embedded:" + name);
    EXPECT_TRUE(std::regex_match(gpu.content_hash, std::regex("[0-9a-f]{16}")));
    EXPECT_FALSE(gpu.display_name.empty());
    EXPECT_GT(gpu.sms, 0);
    EXPECT_GT(gpu.memory, 0);
    EXPECT_GT(gpu.hbm_bandwidth, 0);
    EXPECT_GT(gpu.l2_cache, 0);
    EXPECT_GT(gpu.launch_overhead, 0);
    // open-gpu-kernel-modules kfifoChannelGroupGetDefaultTimeslice_GV100: 1024 us default TSG
    // timeslice on every Volta+ GPU.
    EXPECT_EQ(gpu.timeslice, 1'024'000);
    EXPECT_GT(gpu.context_switch, gpu.preemption_latency);  // restore + fixed switch cost
    EXPECT_GT(gpu.cache_refill, 0);
    EXPECT_EQ(gpu.mps_max_clients,
              48);  // MPS documentation, Client-Server Connection Limits, CUDA <= 13.0
    // gpu-benches: L2 is 2.5-3.5x faster than HBM; a CUDA graph halves the per-kernel cost.
    EXPECT_GT(gpu.l2_bandwidth, 2 * gpu.hbm_bandwidth_measured);
    EXPECT_LT(gpu.graph_launch_overhead, gpu.launch_overhead);
    if (kWithoutMig.count(name)) {
      // MIG only where the hardware has it: no slices, profiles or layouts.
      EXPECT_TRUE(gpu.mig_profiles.empty());
      EXPECT_TRUE(gpu.mig_layouts.empty());
      EXPECT_EQ(gpu.memory_slices, 0);
      EXPECT_EQ(gpu.compute_slices, 0);
    } else {
      EXPECT_GE(gpu.mig_profiles.size(), 5u);
      EXPECT_TRUE(gpu.mig_layouts.count("all-balanced"));
      EXPECT_TRUE(gpu.mig_layouts.count("all-1g"));
    }
    EXPECT_FALSE(gpu.nvidia_smi_names.empty());
    if (gpu.hbm_bandwidth_measured > 0) {
      EXPECT_LT(gpu.hbm_bandwidth_measured, gpu.hbm_bandwidth);
    }
    for (const MigProfileSpec& spec : gpu.mig_profiles) {
      EXPECT_LE(spec.memory, gpu.memory) << spec.name;
      EXPECT_LE(spec.sms, gpu.sms) << spec.name;
    }
  }
}

TEST(Profiles, LoadsAreCachedAndReturnTheSameObject) {
  const DeviceProfile& a = load_device_profile("h100-sxm-80gb");
  const DeviceProfile& b = load_device_profile("h100-sxm-80gb");
  EXPECT_EQ(&a, &b);
}

TEST(Profiles, ConcurrentLoadsAgree) {
  std::vector<const DeviceProfile*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back(
        [&seen, i] { seen[i] = &load_device_profile(kProfiles[i % kProfiles.size()]); });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], &load_device_profile(kProfiles[i % kProfiles.size()]));
  }
}

// Spot checks against real nvidia-smi mig -lgip (4x H100 SXM5, stackhpc/ansible-slurm-appliance
// docs/mig.md), never the go-nvml mock.
TEST(Profiles, H100SmCountsAreTheRealOnesNotTheMock) {
  const DeviceProfile& gpu = load_device_profile("h100-sxm-80gb");
  EXPECT_EQ(gpu.sms, 132);
  EXPECT_EQ(gpu.find_mig_profile("1g.10gb")->sms, 16);
  EXPECT_EQ(gpu.find_mig_profile("1g.20gb")->sms, 26);  // mock: 16
  EXPECT_EQ(gpu.find_mig_profile("2g.20gb")->sms, 32);
  EXPECT_EQ(gpu.find_mig_profile("3g.40gb")->sms, 60);  // mock: 48
  EXPECT_EQ(gpu.find_mig_profile("4g.40gb")->sms, 64);
  EXPECT_EQ(gpu.find_mig_profile("7g.80gb")->sms, 132);  // mock: 112
  // Placement sizes: the mock's 3g ":3" and 7g ":7" are wrong (real -lgipp: :4 and :8).
  EXPECT_EQ(gpu.find_mig_profile("3g.40gb")->memory_slices, 4);
  EXPECT_EQ(gpu.find_mig_profile("7g.80gb")->memory_slices, 8);
  EXPECT_EQ(gpu.find_mig_profile("1g.20gb")->memory_slices, 2);
  EXPECT_EQ(gpu.find_mig_profile("1g.20gb")->placements, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(gpu.find_mig_profile("2g.20gb")->placements, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(gpu.find_mig_profile("3g.40gb")->placements, (std::vector<int>{0, 4}));
  EXPECT_EQ(gpu.find_mig_profile("4g.40gb")->placements, (std::vector<int>{0}));
  EXPECT_EQ(gpu.find_mig_profile("1g.10gb")->placements, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(gpu.find_mig_profile("1g.10gb+me")->max_count, 1);
  EXPECT_EQ(gpu.find_mig_profile("1g.10gb")->max_count, 7);
  EXPECT_DOUBLE_EQ(gpu.find_mig_profile("3g.40gb")->memory / kGiB, 39.5);
  EXPECT_DOUBLE_EQ(gpu.find_mig_profile("7g.80gb")->memory / kGiB, 79.25);
  EXPECT_EQ(gpu.memory_slices, 8);
  EXPECT_EQ(gpu.compute_slices, 7);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth, 3.35e12);
  EXPECT_EQ(gpu.hbm_bandwidth_measured, 0.0);  // gpu-benches measured the PCIe card only
  EXPECT_EQ(gpu.l2_cache, 50'000'000);
  EXPECT_EQ(gpu.find_mig_profile("3g.20gb"), nullptr);
}

TEST(Profiles, H100NvlAndH200Numbers) {
  const DeviceProfile& nvl = load_device_profile("h100-nvl-94gb");
  EXPECT_EQ(nvl.find_mig_profile("1g.24gb")->sms, 26);
  EXPECT_EQ(nvl.find_mig_profile("3g.47gb")->sms, 60);
  // nvidia-smi prints GiB with two decimals; the profile copies them as printed.
  EXPECT_NEAR(nvl.find_mig_profile("3g.47gb")->memory / kGiB, 46.38, 1e-9);
  EXPECT_NEAR(nvl.find_mig_profile("7g.94gb")->memory / kGiB, 93.12, 1e-9);

  const DeviceProfile& h200 = load_device_profile("h200-141gb");
  EXPECT_EQ(h200.sms, 132);
  EXPECT_EQ(h200.find_mig_profile("1g.18gb")->sms, 16);
  EXPECT_EQ(h200.find_mig_profile("1g.35gb")->sms, 26);  // assumption, see the profile
  EXPECT_EQ(h200.find_mig_profile("2g.35gb")->sms, 32);
  EXPECT_EQ(h200.find_mig_profile("3g.71gb")->sms, 60);
  EXPECT_EQ(h200.find_mig_profile("4g.71gb")->sms, 64);
  EXPECT_EQ(h200.find_mig_profile("3g.71gb")->memory, 72704 * kMiB);
  EXPECT_EQ(h200.find_mig_profile("7g.141gb")->memory, 144384 * kMiB);
  EXPECT_EQ(h200.find_mig_profile("1g.18gb+me")->max_count, 1);
  EXPECT_DOUBLE_EQ(h200.hbm_bandwidth, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.hbm_bandwidth_measured, 3888e9);
  EXPECT_EQ(h200.launch_overhead, 2'370);        // gpu-small-kernels__h200.txt intercept
  EXPECT_EQ(h200.graph_launch_overhead, 1'190);  // gpu-small-kernels__h200_graph.txt
}

TEST(Profiles, AmpereNumbers) {
  const DeviceProfile& a40 = load_device_profile("a100-sxm4-40gb");
  EXPECT_EQ(a40.sms, 108);
  EXPECT_EQ(a40.find_mig_profile("1g.5gb")->sms, 14);
  EXPECT_EQ(a40.find_mig_profile("2g.10gb")->sms, 28);
  EXPECT_EQ(a40.find_mig_profile("3g.20gb")->sms, 42);
  EXPECT_EQ(a40.find_mig_profile("4g.20gb")->sms, 56);
  EXPECT_EQ(a40.find_mig_profile("7g.40gb")->sms, 98);
  EXPECT_EQ(a40.find_mig_profile("1g.5gb")->memory, 4864 * kMiB);
  EXPECT_EQ(a40.find_mig_profile("7g.40gb")->memory, 40192 * kMiB);
  // The MIG User Guide table says 1/8, real -lgipp (ID15 {0,2,4,6}:2) places 1g.10gb on 2 memory
  // slices.
  EXPECT_EQ(a40.find_mig_profile("1g.10gb")->memory_slices, 2);
  EXPECT_EQ(a40.l2_cache, 41'943'040);
  EXPECT_DOUBLE_EQ(a40.hbm_bandwidth, 1555e9);
  EXPECT_DOUBLE_EQ(a40.hbm_bandwidth_measured, 1490e9);

  const DeviceProfile& a80 = load_device_profile("a100-80gb");
  EXPECT_EQ(a80.find_mig_profile("7g.80gb")->sms, 98);
  EXPECT_EQ(a80.find_mig_profile("3g.40gb")->sms, 42);
  EXPECT_DOUBLE_EQ(a80.find_mig_profile("3g.40gb")->memory / kGiB, 39.25);
  EXPECT_DOUBLE_EQ(a80.hbm_bandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(a80.hbm_bandwidth_measured, 1769e9);
  EXPECT_EQ(a80.launch_overhead, 1'860);      // gpu-small-kernels__a100_80.txt intercept
  EXPECT_EQ(a80.graph_launch_overhead, 600);  // gpu-small-kernels__a100_80_graph.txt

  const DeviceProfile& a30 = load_device_profile("a30-24gb");
  EXPECT_EQ(a30.sms, 56);
  EXPECT_EQ(a30.memory_slices, 4);
  EXPECT_EQ(a30.compute_slices, 4);
  EXPECT_EQ(a30.find_mig_profile("1g.6gb")->sms, 14);
  EXPECT_EQ(a30.find_mig_profile("1g.6gb")->max_count, 4);
  EXPECT_EQ(a30.find_mig_profile("2g.12gb")->placements, (std::vector<int>{0, 2}));
  EXPECT_EQ(a30.find_mig_profile("4g.24gb")->memory, 23344 * kMiB);
  EXPECT_DOUBLE_EQ(a30.hbm_bandwidth, 933e9);
}

// compute_throughput: dense peaks per datasheet / architecture whitepaper (cited in each profile).
TEST(Profiles, ComputeThroughputIsTheDenseDatasheetPeak) {
  const DeviceProfile& h100 = load_device_profile("h100-sxm-80gb");
  EXPECT_DOUBLE_EQ(h100.compute.fp16_tensor, 989.4e12);  // H100 whitepaper Table 3, dense
  EXPECT_DOUBLE_EQ(h100.compute.bf16_tensor, 989.4e12);
  EXPECT_DOUBLE_EQ(h100.compute.fp8_tensor, 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.compute.int8_tensor, 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.compute.tf32_tensor, 494.7e12);
  EXPECT_DOUBLE_EQ(h100.compute.fp32, 66.9e12);
  const DeviceProfile& a100 = load_device_profile("a100-80gb");
  EXPECT_DOUBLE_EQ(a100.compute.fp16_tensor, 312e12);
  EXPECT_DOUBLE_EQ(a100.compute.int8_tensor, 624e12);
  EXPECT_EQ(a100.compute.fp8_tensor, 0.0);  // Ampere has no FP8 Tensor Cores
  EXPECT_EQ(load_device_profile("a30-24gb").compute.fp8_tensor, 0.0);
  for (const std::string& name : kProfiles) {
    SCOPED_TRACE(name);
    const ComputeThroughput& c = load_device_profile(name).compute;
    // Every profile states each precision. Tensor Cores: half precision at twice TF32 and at
    // least twice the FMA pipes, fp8 (where it exists) twice fp16, int8 at least fp16; the
    // datasheets round, hence 3 %.
    EXPECT_GT(c.fp32, 0);
    EXPECT_GE(c.fp16_tensor, 2 * c.fp32);
    EXPECT_NEAR(c.fp16_tensor / c.tf32_tensor, 2.0, 0.06);
    EXPECT_DOUBLE_EQ(c.bf16_tensor, c.fp16_tensor);
    EXPECT_GE(c.int8_tensor, c.fp16_tensor);
    if (c.fp8_tensor > 0) {
      EXPECT_NEAR(c.fp8_tensor / c.fp16_tensor, 2.0, 0.06);
    }
  }
}

TEST(Profiles, ComputeThroughputUnitsAndProvenanceAreChecked) {
  const std::string good = R"(compute_throughput:
  fp16_tensor: {value: 100TFLOPS, source: "t"}
  bf16_tensor: {value: 100TFLOPS, source: "t"}
  fp8_tensor: {value: 0TFLOPS, source: "t"}
  int8_tensor: {value: 200TOPS, source: "t"}
  tf32_tensor: {value: 50TFLOPS, assumption: "t"}
  fp32: {value: 12500GFLOPS, source: "t"}
)";
  const DeviceProfile gpu = parse_device_profile(kBase + good, "t.yaml");
  EXPECT_DOUBLE_EQ(gpu.compute.fp16_tensor, 100e12);
  EXPECT_DOUBLE_EQ(gpu.compute.int8_tensor, 200e12);
  EXPECT_DOUBLE_EQ(gpu.compute.fp32, 12.5e12);
  EXPECT_EQ(gpu.compute.fp8_tensor, 0.0);
  EXPECT_NE(std::find(gpu.assumed.begin(), gpu.assumed.end(), "compute_throughput.tf32_tensor"),
            gpu.assumed.end());
  // Without the section every figure is 0 (unknown).
  EXPECT_EQ(parse_device_profile(kBase, "t.yaml").compute.fp16_tensor, 0.0);

  auto with = [&](const std::string& from, const std::string& to) {
    return kBase + std::regex_replace(good, std::regex(from), to);
  };
  // kBase has 13 lines: compute_throughput is line 14, fp16_tensor 15, int8_tensor 18.
  expect_rejected(with("200TOPS", "200TFLOPS"), {"test.yaml:18:", "compute_throughput.int8_tensor",
                                                 "unknown integer throughput unit 'TFLOPS'"});
  expect_rejected(
      with("value: 100TFLOPS, source: \"t\"\\}\n  bf16", "value: 3TB/s, source: \"t\"}\n  bf16"),
      {"test.yaml:15:", "compute_throughput.fp16_tensor",
       "unknown floating-point throughput unit 'TB/s'"});
  expect_rejected(with("12500GFLOPS", "12500"), {"compute_throughput.fp32", "missing unit"});
  expect_rejected(with("\\{value: 50TFLOPS, assumption: \"t\"\\}", "50TFLOPS"),
                  {"test.yaml:19:", "compute_throughput.tf32_tensor", "number without a source"});
  expect_rejected(with("  fp32: .*\n", ""), {"compute_throughput.fp32: missing required key"});
  expect_rejected(with("fp32:", "fp64:"), {"compute_throughput.fp64", "unknown key"});
}

TEST(Profiles, PowerTermsUnitsAndProvenanceAreChecked) {
  const std::string good = R"(boost_clock: {value: 1400MHz, source: "t"}
base_clock: {value: 1000MHz, source: "t"}
tdp: {value: 300W, source: "t"}
power:
  idle: {value: 50W, assumption: "t"}
  sm_dynamic: {value: 250W, assumption: "t"}
  hbm_energy: {value: 31.2pJ/B, source: "t"}
  clock_exponent: {value: 3, assumption: "t"}
)";
  const DeviceProfile gpu = parse_device_profile(kBase + good, "t.yaml");
  EXPECT_EQ(gpu.base_clock_mhz, 1000.0);
  EXPECT_EQ(gpu.power.tdp_w, 300.0);
  EXPECT_EQ(gpu.power.idle_w, 50.0);
  EXPECT_EQ(gpu.power.sm_dynamic_w, 250.0);
  EXPECT_DOUBLE_EQ(gpu.power.hbm_joules_per_byte, 31.2e-12);
  EXPECT_EQ(gpu.power.boost_clock_mhz, 1400.0);
  EXPECT_EQ(gpu.power.base_clock_mhz, 1000.0);
  EXPECT_TRUE(gpu.power.modelled());
  EXPECT_NE(std::find(gpu.assumed.begin(), gpu.assumed.end(), "power.sm_dynamic"),
            gpu.assumed.end());
  // Without them power is not modelled.
  EXPECT_FALSE(parse_device_profile(kBase, "t.yaml").power.modelled());
  auto with = [&](const std::string& from, const std::string& to) {
    return kBase + std::regex_replace(good, std::regex(from), to);
  };
  // kBase has 13 lines: tdp is line 16, idle 18, sm_dynamic 19, hbm_energy 20.
  expect_rejected(with("300W", "300"), {"test.yaml:16:", "tdp", "expected a value in W"});
  expect_rejected(with("31.2pJ/B", "31.2pJ"), {"test.yaml:20:", "power.hbm_energy", "pJ/B"});
  expect_rejected(with("\\{value: 250W, assumption: \"t\"\\}", "250W"),
                  {"test.yaml:19:", "power.sm_dynamic", "number without a source"});
  expect_rejected(with("value: 3,", "value: 7,"), {"power.clock_exponent", "[1, 4]"});
  expect_rejected(with("1000MHz", "1500MHz"), {"base_clock", "must not exceed boost_clock"});
  expect_rejected(with("idle:", "idel:"), {"power.idel", "unknown key"});
  // An idle draw at or above the TDP leaves the cap law no room (every kernel silently at the base
  // clock): refused at the tdp line (test_fuzz_round3.py, 2026-12-08).
  expect_rejected(with("value: 50W", "value: 300W"), {"test.yaml:16:", "tdp", "must exceed"});
  expect_rejected(with("value: 300W", "value: 40W"), {"test.yaml:16:", "(40W <= 50W)"});
}

// Power: TDP and clocks on every A100 and H100 profile; under the design-power reading of the
// SXM parts (sm_dynamic = TDP - idle - E_byte x bandwidth) a fully busy SXM board reaches its
// TDP exactly and never caps, the PCIe cards of the same dies do.
TEST(Profiles, PowerCapsThePcieCardsNotTheSxmParts) {
  for (const std::string name :
       {"a100-80gb", "a100-pcie-80gb", "a100-sxm4-40gb", "h100-sxm-80gb", "h100-pcie-80gb"}) {
    SCOPED_TRACE(name);
    const DeviceProfile& gpu = load_device_profile(name);
    ASSERT_TRUE(gpu.power.modelled());
    EXPECT_LT(gpu.base_clock_mhz, gpu.boost_clock_mhz);
    const double full = board_power(gpu.power, 1.0, achievable_hbm_bandwidth(gpu), 1.0);
    const bool pcie = name.find("pcie") != std::string::npos;
    EXPECT_EQ(capped_clock_ratio(gpu.power, 1.0, achievable_hbm_bandwidth(gpu)) < 1.0, pcie);
    // The SXM part whose whole measured bandwidth costs the most (80GB) reaches its TDP; the
    // 40GB's HBM2 moves less.
    if (!pcie) {
      EXPECT_LE(full, gpu.power.tdp_w);
    }
    if (!pcie && name != std::string("a100-sxm4-40gb")) {
      EXPECT_NEAR(full, gpu.power.tdp_w, 0.01 * gpu.power.tdp_w);
    }
  }
  const DeviceProfile& sxm = load_device_profile("a100-80gb");
  const DeviceProfile& pcie = load_device_profile("a100-pcie-80gb");
  EXPECT_EQ(pcie.power.tdp_w, 300.0);
  EXPECT_EQ(pcie.hbm_bandwidth, 1935e9);
  EXPECT_EQ(pcie.sms, sxm.sms);
  EXPECT_EQ(pcie.mig_layouts, sxm.mig_layouts);
  EXPECT_EQ(pcie.power.sm_dynamic_w, sxm.power.sm_dynamic_w);
  EXPECT_EQ(pcie.boost_clock_mhz, sxm.boost_clock_mhz);
}

// A30: a 56-SM GA100 at 1440 MHz under a 165 W TDP. Its SM power is the A100's scaled by SMs
// and clock^3 (as the H100 PCIe's from the SXM5), so a fully busy board exceeds the TDP and runs
// at the closed-form clock; one 1g.6gb slice alone (a quarter of the SMs) does not cap.
TEST(Profiles, A30PowerCapsAtFullLoadNotOneSlice) {
  const DeviceProfile& a30 = load_device_profile("a30-24gb");
  const DeviceProfile& a100 = load_device_profile("a100-sxm4-40gb");
  ASSERT_TRUE(a30.power.modelled());
  EXPECT_EQ(a30.power.tdp_w, 165.0);
  EXPECT_LT(a30.base_clock_mhz, a30.boost_clock_mhz);
  const double scaled = a100.power.sm_dynamic_w * a30.sms / a100.sms *
                        std::pow(a30.boost_clock_mhz / a100.boost_clock_mhz, 3.0);
  EXPECT_NEAR(a30.power.sm_dynamic_w, scaled, 1.0);
  const double bw = achievable_hbm_bandwidth(a30);
  EXPECT_GT(board_power(a30.power, 1.0, bw, 1.0), a30.power.tdp_w);
  const double x = capped_clock_ratio(a30.power, 1.0, bw);
  const double expected =
      std::cbrt((a30.power.tdp_w - a30.power.idle_w - a30.power.hbm_joules_per_byte * bw) /
                a30.power.sm_dynamic_w);
  EXPECT_NEAR(x, expected, 1e-12);
  EXPECT_GT(x, a30.power.min_clock_ratio());
  EXPECT_LT(x, 0.95);
  EXPECT_NEAR(board_power(a30.power, 1.0, bw, x), a30.power.tdp_w, 1e-9);
  // One of four 1g slices busy with a quarter of the bandwidth: below the TDP at boost.
  EXPECT_EQ(capped_clock_ratio(a30.power, 0.25, bw / 4), 1.0);
}

// The tensor term's E_t (calibration/data/gemm-power): He's 8192^3 FP16 matmul on a 400 W A100,
// 295 TFLOPS with zero inputs (at boost) and 257 with randn (at x = 257/295, the board at its
// TDP), solved by the law with the profile's own idle, sm_dynamic and 0.2 TB/s of HBM; the A30's
// at its boost voltage (V ~ f: E ~ f^2). Under that, every SXM A100 caps at its FP16 tensor peak.
TEST(Profiles, TensorEnergyIsTheA100MatmulSolvedByTheLaw) {
  const DeviceProfile& sxm = load_device_profile("a100-80gb");
  const PowerParams& p = sxm.power;
  const double x = 257.0 / 295.0;
  const double solved =
      ((400.0 - p.idle_w - p.hbm_joules_per_byte * 0.2e12) / (x * x * x) - p.sm_dynamic_w) / 295e12;
  EXPECT_NEAR(p.tensor_joules_per_flop, solved, 0.002 * solved);
  for (const std::string name : {"a100-sxm4-40gb", "a100-pcie-80gb"}) {
    EXPECT_EQ(load_device_profile(name).power.tensor_joules_per_flop, p.tensor_joules_per_flop);
  }
  const DeviceProfile& a30 = load_device_profile("a30-24gb");
  const double ratio = a30.boost_clock_mhz / sxm.boost_clock_mhz;
  EXPECT_NEAR(a30.power.tensor_joules_per_flop, p.tensor_joules_per_flop * ratio * ratio,
              0.005 * a30.power.tensor_joules_per_flop);
  // He's randn run: the whole board at 295 TFLOP/s and 0.2 TB/s draws exactly 400 W at x.
  EXPECT_NEAR(board_power(p, 1.0, 0.2e12, x, 295e12), 400.0, 0.5);
  const double bw = achievable_hbm_bandwidth(sxm), peak = sxm.compute.fp16_tensor;
  const double capped = capped_clock_ratio(p, 1.0, bw, peak);
  // (0.82 by the closed form, floored at the 80GB part's 1275 MHz base: 0.904.)
  EXPECT_NEAR(
      capped,
      std::max(p.min_clock_ratio(), std::cbrt((p.tdp_w - p.idle_w - p.hbm_joules_per_byte * bw) /
                                              (p.sm_dynamic_w + p.tensor_joules_per_flop * peak))),
      1e-12);
  EXPECT_LT(capped, 0.95);
}

// H100 PCIe: real nvidia-smi mig -lgip/-lgipp of the card (Scaleway docs-content, driver
// 525.125.06), whose SM counts are its own, not the SXM5's.
TEST(Profiles, H100PcieNumbersAreItsOwn) {
  const DeviceProfile& gpu = load_device_profile("h100-pcie-80gb");
  EXPECT_EQ(gpu.sms, 114);
  EXPECT_EQ(gpu.find_mig_profile("1g.10gb")->sms, 14);
  EXPECT_EQ(gpu.find_mig_profile("1g.20gb")->sms, 14);
  EXPECT_EQ(gpu.find_mig_profile("2g.20gb")->sms, 30);
  EXPECT_EQ(gpu.find_mig_profile("3g.40gb")->sms, 46);
  EXPECT_EQ(gpu.find_mig_profile("4g.40gb")->sms, 62);
  EXPECT_EQ(gpu.find_mig_profile("7g.80gb")->sms, 114);
  EXPECT_NEAR(gpu.find_mig_profile("1g.10gb")->memory / kGiB, 9.62, 1e-9);
  EXPECT_DOUBLE_EQ(gpu.find_mig_profile("3g.40gb")->memory / kGiB, 39.25);
  EXPECT_EQ(gpu.find_mig_profile("3g.40gb")->placements, (std::vector<int>{0, 4}));
  EXPECT_EQ(gpu.find_mig_profile("7g.80gb")->memory_slices, 8);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth, 2e12);
  EXPECT_DOUBLE_EQ(gpu.hbm_bandwidth_measured, 1942e9);  // gpu-stream__h100_pcie.txt read
  EXPECT_DOUBLE_EQ(gpu.l2_bandwidth, 6.9e12);            // gpu-l2-cache__h100_pcie.txt
  EXPECT_DOUBLE_EQ(gpu.compute.fp16_tensor, 756.5e12);   // H100 whitepaper Table 3, dense
  EXPECT_EQ(gpu.nvidia_smi_names, std::vector<std::string>{"NVIDIA H100 PCIe"});
  // Same MIG shape as the SXM5 (mig-parted's H100-80GB filter lists both), fewer SMs.
  const DeviceProfile& sxm = load_device_profile("h100-sxm-80gb");
  for (const MigProfileSpec& spec : sxm.mig_profiles) {
    const MigProfileSpec* pcie = gpu.find_mig_profile(spec.name);
    ASSERT_NE(pcie, nullptr) << spec.name;
    EXPECT_EQ(pcie->memory_slices, spec.memory_slices) << spec.name;
    EXPECT_EQ(pcie->placements, spec.placements) << spec.name;
    EXPECT_LT(pcie->sms, spec.sms) << spec.name;
  }
}

// GA102 (8.6) and AD10x (8.9): per-SM limits from the CUDA Programming Guide, Ada/Ampere-class
// datasheet numbers, no MIG.
TEST(Profiles, AdaAndGa102Numbers) {
  const DeviceProfile& l4 = load_device_profile("l4-24gb");
  EXPECT_EQ(l4.sms, 58);
  EXPECT_DOUBLE_EQ(l4.hbm_bandwidth, 300e9);
  EXPECT_EQ(l4.l2_cache, 48'000'000);
  EXPECT_DOUBLE_EQ(l4.compute.fp8_tensor, 242.5e12);  // 485 with sparsity
  const DeviceProfile& l40s = load_device_profile("l40s-48gb");
  EXPECT_EQ(l40s.sms, 142);
  EXPECT_DOUBLE_EQ(l40s.hbm_bandwidth, 864e9);
  EXPECT_DOUBLE_EQ(l40s.compute.fp16_tensor, 362.05e12);
  EXPECT_EQ(l40s.launch_overhead, 1'590);      // gpu-small-kernels__l40.txt intercept
  EXPECT_EQ(l40s.graph_launch_overhead, 980);  // gpu-small-kernels__l40_graph.txt
  const DeviceProfile& a10g = load_device_profile("a10g-24gb");
  EXPECT_EQ(a10g.sms, 80);
  EXPECT_DOUBLE_EQ(a10g.hbm_bandwidth, 600e9);
  EXPECT_EQ(a10g.compute.fp8_tensor, 0.0);  // Ampere: no FP8
  EXPECT_EQ(a10g.launch_overhead, 1'950);   // gpu-small-kernels__a40.txt intercept (GA102)
  for (const DeviceProfile* gpu : {&l4, &l40s}) {
    EXPECT_EQ(gpu->compute_capability, "8.9");
    EXPECT_EQ(gpu->sm_limits.max_threads, 1536);
    EXPECT_EQ(gpu->sm_limits.max_blocks, 24);
    EXPECT_EQ(gpu->sm_limits.shared_memory, 100 * 1024);
  }
  EXPECT_EQ(a10g.compute_capability, "8.6");
  EXPECT_EQ(a10g.sm_limits.max_threads, 1536);
  EXPECT_EQ(a10g.sm_limits.max_blocks, 16);
  EXPECT_EQ(a10g.sm_limits.registers, 65536);
  EXPECT_EQ(a10g.sm_limits.shared_memory, 100 * 1024);
  // Every switch-cost default is SM state over DRAM bandwidth: more state per byte/s, slower.
  for (const DeviceProfile* gpu : {&l4, &l40s, &a10g}) {
    SCOPED_TRACE(gpu->name);
    const double state = gpu->sms * 384.0 * 1024;  // 256 KiB registers + 128 KiB L1/shared
    const double bandwidth =
        gpu->hbm_bandwidth_measured > 0 ? gpu->hbm_bandwidth_measured : gpu->hbm_bandwidth;
    EXPECT_NEAR(static_cast<double>(gpu->preemption_latency), state / bandwidth * 1e9, 1'000);
    EXPECT_NEAR(static_cast<double>(gpu->context_switch - gpu->preemption_latency), 10'000, 1'000);
  }
}

}  // namespace
}  // namespace gpumux
