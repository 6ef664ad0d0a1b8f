// Power and clocks (models/gpu/power.hpp): the law's closed forms, and through whole runs: a
// board far below its TDP runs exactly as without a power model, a capped board's compute-bound
// kernels take exactly 1/x longer and its memory-bound kernels no longer, a lone MIG slice runs
// at boost where the whole GPU caps (its share of the whole GPU's throughput rises), and busy
// neighbours on the other slices of the board make it cap (they share the board's power).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/config/input_error.hpp"
#include "models/config/profile_loader.hpp"
#include "models/gpu/power.hpp"
#include "models/scenario/emit.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

using testing::device;
using testing::run_yaml;
using testing::tenant;

PowerParams params(double tdp, double idle, double sm, double joules_per_byte = 0) {
  PowerParams p;
  p.tdp_w = tdp;
  p.idle_w = idle;
  p.sm_dynamic_w = sm;
  p.hbm_joules_per_byte = joules_per_byte;
  p.base_clock_mhz = 1000;
  p.boost_clock_mhz = 1400;
  return p;
}

TEST(PowerLaw, BelowTheTdpTheBoardRunsAtBoost) {
  // P(1) = 50 + 100 = 150 W = TDP / 2.
  const PowerParams p = params(300, 50, 100);
  EXPECT_EQ(board_power(p, 1.0, 0.0, 1.0), 150.0);
  EXPECT_EQ(capped_clock_ratio(p, 1.0, 0.0), 1.0);
  // Exactly at the TDP: still boost.
  EXPECT_EQ(capped_clock_ratio(params(150, 50, 100), 1.0, 0.0), 1.0);
}

TEST(PowerLaw, AboveTheTdpTheClockIsTheCubeRootOfTheDynamicRoom) {
  // Boost draw 1.5 x TDP: 50 + 400 = 450 W against 300 W.
  const PowerParams p = params(300, 50, 400);
  const double x = capped_clock_ratio(p, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(x, std::cbrt((300.0 - 50.0) / 400.0));
  EXPECT_NEAR(board_power(p, 1.0, 0.0, x), 300.0, 1e-9);
  // Half the SMs busy: half the dynamic draw at boost (250 W), under the TDP.
  EXPECT_EQ(capped_clock_ratio(p, 0.5, 0.0), 1.0);
  // HBM traffic takes its share of the room first: 100 W of it at 1 TB/s and 100 pJ/B.
  const PowerParams q = params(300, 50, 400, 100e-12);
  EXPECT_DOUBLE_EQ(capped_clock_ratio(q, 1.0, 1e12), std::cbrt(150.0 / 400.0));
  // Another exponent (V constant: e = 1): x = room / P_sm.
  PowerParams linear = p;
  linear.clock_exponent = 1;
  linear.base_clock_mhz = 0;  // (no floor: 0.625 is below this test's 1000 MHz base)
  EXPECT_DOUBLE_EQ(capped_clock_ratio(linear, 1.0, 0.0), 250.0 / 400.0);
}

TEST(PowerLaw, TheClockNeverDropsBelowBase) {
  // Room 260 - 250 = 10 W of 400 W: x = 0.29, floored at 1000 / 1400.
  EXPECT_DOUBLE_EQ(capped_clock_ratio(params(260, 250, 400), 1.0, 0.0), 1000.0 / 1400.0);
  // No room at all (idle above the TDP): base.
  EXPECT_DOUBLE_EQ(capped_clock_ratio(params(200, 250, 400), 1.0, 0.0), 1000.0 / 1400.0);
  // Not modelled (no TDP): boost whatever the draw.
  EXPECT_EQ(capped_clock_ratio(params(0, 250, 400), 1.0, 0.0), 1.0);
}

TEST(PowerLaw, TheTensorTermAddsItsDrawAtBoostAndTheSolvedClockDrawsExactlyTheTdp) {
  // 50 W idle + 200 W of busy SMs = 250 W under a 300 W TDP; 100 TFLOP/s of tensor math at
  // 1 pJ/FLOP adds 100 W at boost (350 W): x = cbrt((300 - 50) / (200 + 100)).
  PowerParams p = params(300, 50, 200);
  EXPECT_EQ(capped_clock_ratio(p, 1.0, 0.0, 100e12), 1.0);  // E_t = 0: the term is off
  p.tensor_joules_per_flop = 1e-12;
  EXPECT_DOUBLE_EQ(board_power(p, 1.0, 0.0, 1.0, 100e12), 350.0);
  const double x = capped_clock_ratio(p, 1.0, 0.0, 100e12);
  EXPECT_DOUBLE_EQ(x, std::cbrt(250.0 / 300.0));
  EXPECT_NEAR(board_power(p, 1.0, 0.0, x, 100e12), 300.0, 1e-9);
  // The same SMs busy on no tensor math: boost.
  EXPECT_EQ(capped_clock_ratio(p, 1.0, 0.0, 0.0), 1.0);
  // HBM traffic still takes its share of the room first (1 TB/s at 50 pJ/B: 50 W).
  p.hbm_joules_per_byte = 50e-12;
  EXPECT_DOUBLE_EQ(capped_clock_ratio(p, 1.0, 1e12, 100e12), std::cbrt(200.0 / 300.0));
}

TEST(PowerLaw, ParsesValuesWithTheirUnit) {
  EXPECT_EQ(parse_with_unit("300W", "W"), 300.0);
  EXPECT_EQ(parse_with_unit("31.2pJ/B", "pJ/B"), 31.2);
  EXPECT_FALSE(parse_with_unit("300", "W"));
  EXPECT_FALSE(parse_with_unit("W", "W"));
  EXPECT_FALSE(parse_with_unit("3x00W", "W"));
  EXPECT_FALSE(parse_with_unit("300MHz", "W"));
}

// One tenant of back-to-back kernels of `kernel_ms` on `device` of `gpus`.
std::string scenario(const std::string& gpus, const std::string& device,
                     const std::string& kernel = "duration: 1ms, sm_fraction: 1, memory_bound: 0",
                     const std::string& extra_tenants = "") {
  return R"(
name: power
seed: 5
duration: 2s
gpus:
)" + gpus +
         R"(
tenants:
  - name: t
    device: )" +
         device + R"(
    workload:
      arrivals: {process: closed, concurrency: 1}
      request:
        kernels:
          - {name: k, )" +
         kernel + R"(}
)" + extra_tenants;
}

constexpr const char* kAdHoc = "idle: 50W, hbm_energy: 1pJ/B, clock_exponent: 3";

// The A100 80GB PCIe card (base clock 1065 of 1410 MHz: room to cap without the floor).
std::string whole(const std::string& power) {
  return "  - {name: gpu0, model: a100-pcie-80gb, power: " + power + "}";
}

TEST(PowerRun, ABoardAtHalfItsTdpRunsExactlyAsWithoutAPowerModel) {
  // 50 W idle + 150 W for every SM busy: at most 200 W against 400 W.
  const RunResult off = run_yaml(scenario(whole("none"), "gpu0"));
  const RunResult half = run_yaml(
      scenario(whole("{tdp: 400W, sm_dynamic: 150W, " + std::string(kAdHoc) + "}"), "gpu0"));
  EXPECT_EQ(tenant(half, "t").completed, tenant(off, "t").completed);
  EXPECT_EQ(tenant(half, "t").latency.mean, tenant(off, "t").latency.mean);
  EXPECT_EQ(half.events, off.events);
  EXPECT_EQ(device(half, "gpu0").clock_mhz, 1410.0);
  EXPECT_GT(device(half, "gpu0").board_power_w, 50.0);
  EXPECT_LT(device(half, "gpu0").board_power_w, 200.0);
  EXPECT_EQ(device(off, "gpu0").clock_mhz, 0.0);  // not modelled: not reported
  EXPECT_TRUE(half.notes.empty() || half.notes.front().find("power cap") == std::string::npos);
}

TEST(PowerRun, ACappedComputeBoundKernelTakesExactlyTheInverseOfTheClockLonger) {
  const RunResult off = run_yaml(scenario(whole("none"), "gpu0"));
  const double busy = device(off, "gpu0").sm_busy;  // the pilot's activity (the run at boost)
  ASSERT_GT(busy, 0.99);
  // Boost draw 1.5 x TDP at full activity: 50 W + 400 W against 300 W (HBM: none moved).
  const RunResult capped = run_yaml(
      scenario(whole("{tdp: 300W, sm_dynamic: 400W, " + std::string(kAdHoc) + "}"), "gpu0"));
  const double x = std::cbrt((300.0 - 50.0) / (400.0 * busy));
  EXPECT_NEAR(device(capped, "gpu0").clock_mhz, 1410.0 * x, 1e-9);
  // Latency = the kernel's 1 ms / x + the unchanged launch overhead (the kernel's remaining
  // work is advanced in whole ns, hence 2 ns).
  const double overhead = tenant(off, "t").latency.mean - 1e6;
  EXPECT_NEAR(tenant(capped, "t").latency.mean, 1e6 / x + overhead, 2.0);
  ASSERT_FALSE(capped.notes.empty());
  EXPECT_NE(capped.notes.back().find("gpu0: power cap"), std::string::npos) << capped.notes.back();
}

TEST(PowerRun, MemoryBoundKernelsAreNotSlowedByTheCap) {
  const std::string kernel = "duration: 1ms, sm_fraction: 1, memory_bound: 1";
  const RunResult off = run_yaml(scenario(whole("none"), "gpu0", kernel));
  const RunResult capped = run_yaml(scenario(
      whole("{tdp: 300W, sm_dynamic: 400W, " + std::string(kAdHoc) + "}"), "gpu0", kernel));
  EXPECT_LT(device(capped, "gpu0").clock_mhz, 1410.0);
  EXPECT_EQ(tenant(capped, "t").latency.mean, tenant(off, "t").latency.mean);
  // Half compute, half memory (serial phases): only the compute half stretches.
  const std::string half = "duration: 1ms, sm_fraction: 1, memory_bound: 0.5";
  const RunResult half_off = run_yaml(scenario(whole("none"), "gpu0", half));
  const RunResult half_capped = run_yaml(
      scenario(whole("{tdp: 300W, sm_dynamic: 400W, " + std::string(kAdHoc) + "}"), "gpu0", half));
  const double x = device(half_capped, "gpu0").clock_mhz / 1410.0;
  EXPECT_NEAR(tenant(half_capped, "t").latency.mean - tenant(half_off, "t").latency.mean,
              0.5e6 / x - 0.5e6, 2.0);
}

TEST(PowerRun, ALoneSliceRunsAtBoostWhereTheWholeGpuCapsAndBusyNeighboursCapIt) {
  // The 300 W A100 PCIe card with its shipped power terms: a full-board compute-bound kernel
  // caps it; one busy 1g.10gb (14 of 108 SMs) does not.
  const std::string pcie = "  - {name: gpu0, model: a100-pcie-80gb}";
  const std::string pcie_off = "  - {name: gpu0, model: a100-pcie-80gb, power: none}";
  const std::string mig = "  - {name: gpu0, model: a100-pcie-80gb, mig: all-1g.10gb}";
  const std::string mig_off =
      "  - {name: gpu0, model: a100-pcie-80gb, mig: all-1g.10gb, power: none}";
  const RunResult whole_on = run_yaml(scenario(pcie, "gpu0"));
  const RunResult whole_off = run_yaml(scenario(pcie_off, "gpu0"));
  const RunResult slice_on = run_yaml(scenario(mig, "gpu0/0"));
  const RunResult slice_off = run_yaml(scenario(mig_off, "gpu0/0"));
  EXPECT_LT(device(whole_on, "gpu0").clock_mhz, 1410.0);
  EXPECT_EQ(device(slice_on, "gpu0/0").clock_mhz, 1410.0);
  EXPECT_EQ(tenant(slice_on, "t").latency.mean, tenant(slice_off, "t").latency.mean);
  const auto throughput = [](const RunResult& r) { return tenant(r, "t").throughput_per_s; };
  const double ratio_on = throughput(slice_on) / throughput(whole_on);
  const double ratio_off = throughput(slice_off) / throughput(whole_off);
  EXPECT_GT(ratio_on, ratio_off * 1.03);
  // Seven busy slices: the board's 98 busy SMs cap it, and every instance reports its clock.
  std::string neighbours;
  for (int i = 1; i < 7; ++i) {
    neighbours += "  - {name: n" + std::to_string(i) + ", device: gpu0/" + std::to_string(i) +
                  ", workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: "
                  "[{name: k, duration: 1ms, sm_fraction: 1, memory_bound: 0}]}}}\n";
  }
  const RunResult full = run_yaml(scenario(mig, "gpu0/0",
                                           "duration: 1ms, sm_fraction: 1, "
                                           "memory_bound: 0",
                                           neighbours));
  const double clock = device(full, "gpu0/0").clock_mhz;
  EXPECT_LT(clock, 1410.0);
  for (int i = 1; i < 7; ++i) EXPECT_EQ(device(full, "gpu0/" + std::to_string(i)).clock_mhz, clock);
  EXPECT_GT(tenant(full, "t").latency.mean, tenant(slice_on, "t").latency.mean);
}

// A catalog FP16 BERT-large at batch 128 alone on a 165 W A30, `power` on its GPU, under
// `sharing`.
std::string bert_a30(const std::string& power, const std::string& sharing = "exclusive") {
  return "name: t\nseed: 1\nduration: 3s\nwarmup: 1s\ngpus:\n"
         "  - {name: gpu0, model: a30-24gb, sharing: {mode: " +
         sharing + "}" + (power.empty() ? "" : ", power: " + power) +
         "}\ntenants:\n"
         "  - name: w\n    device: gpu0\n    workload: {model: bert-large, batch: 128, seq_len: "
         "384, dtype: fp16, runtime: tensorrt, arrivals: {process: closed, concurrency: 1, think: "
         "1ms}}\n";
}

TEST(PowerRun, TensorMathLowersTheClockToWhereTheBoardDrawsItsTdp) {
  const RunResult with = run_yaml(bert_a30(""));
  const RunResult without = run_yaml(bert_a30("{tensor_energy: 0pJ/FLOP}"));
  ASSERT_EQ(with.devices.size(), 1u);
  // Both cap (the A30's busy SMs alone exceed 165 W at boost); the tensor term lowers the clock
  // further and the compute-bound request takes longer.
  EXPECT_LT(without.devices[0].clock_mhz, 1440.0);
  EXPECT_LT(with.devices[0].clock_mhz, without.devices[0].clock_mhz - 50.0);
  EXPECT_GT(tenant(with, "w").latency.mean, tenant(without, "w").latency.mean * 1.05);
  // The board's mean draw in the run is its TDP to within the quasi-static coupling (the run at
  // the lower clock keeps its SMs a little busier than the pilot at boost).
  EXPECT_NEAR(with.devices[0].board_power_w, 165.0, 165.0 * 0.02);
}

TEST(PowerRun, OneMpsClientUnderTheTensorTermIsExactlyExclusive) {
  const RunResult exclusive = run_yaml(bert_a30(""));
  const RunResult mps = run_yaml(bert_a30("", "mps"));
  EXPECT_EQ(tenant(mps, "w").latency.mean, tenant(exclusive, "w").latency.mean);
  EXPECT_EQ(mps.devices[0].clock_mhz, exclusive.devices[0].clock_mhz);
}

TEST(PowerRun, ThePowerBlockIsWrittenBackAsRead) {
  const Scenario s = load_scenario_text(
      scenario("  - {name: gpu0, model: a100-pcie-80gb, power: {tdp: 250W, hbm_energy: 31.2pJ/B, "
               "clock_exponent: 2.5, tensor_energy: 0.5pJ/FLOP}}\n  - {name: gpu1, model: "
               "a100-pcie-80gb, power: none}",
               "gpu0"),
      "test.yaml");
  const Scenario again = load_scenario_text(emit_scenario_yaml(s), "again.yaml");
  ASSERT_EQ(again.gpus.size(), 2u);
  EXPECT_EQ(again.gpus[0].power.tdp_w, 250.0);
  EXPECT_EQ(again.gpus[0].power.hbm_picojoules_per_byte, 31.2);
  EXPECT_EQ(again.gpus[0].power.clock_exponent, 2.5);
  EXPECT_EQ(again.gpus[0].power.tensor_picojoules_per_flop, 0.5);
  EXPECT_FALSE(again.gpus[0].power.idle_w);
  EXPECT_FALSE(again.gpus[0].power.off);
  EXPECT_TRUE(again.gpus[1].power.off);
}

TEST(PowerRun, ScenarioPowerValuesAreChecked) {
  const auto rejected = [](const std::string& power, const std::string& piece) {
    try {
      run_yaml(scenario(whole(power), "gpu0"));
      ADD_FAILURE() << power;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
    }
  };
  rejected("off", "expected `none` or a mapping");
  rejected("{tdp: 300}", "expected a value in W");
  rejected("{tdp: 300W, hbm_energy: 3pJ}", "pJ/B");
  rejected("{clock_exponent: 9}", "[1, 4]");
  rejected("{tpd: 300W}", "tpd");
  rejected("{tensor_energy: -1pJ/FLOP}", "pJ/FLOP");
  rejected("{tensor_energy: 1pJ}", "pJ/FLOP");
}

}  // namespace
}  // namespace gpumux
