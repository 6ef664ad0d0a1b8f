// The contention laws side by side: overlapped roofline phases (law 2) in closed forms, and a
// third law written in one file's worth of code, found by name and run on the probes.
// Residency and bandwidth under the default law: test_contention.cpp.
#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "models/config/profile_loader.hpp"
#include "models/gpu/device.hpp"
#include "models/plan/bounds.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "models/strategies/exclusive/strategy.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/time_slicing/strategy.hpp"
#include "sim/core/max_min.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/launch.hpp"
#include "tests/support/contention_scenarios.hpp"

namespace gpumux {
namespace {

using testing::closed_client;
using testing::device;
using testing::expect_same_numbers;
using testing::gpu;
using testing::mig_latency;
using testing::run_yaml;
using testing::tenant;
using testing::whole_gpu;

// ------------------------------------------------------- overlapped roofline phases (law 2)

// A 1g.10gb-like slice of an A100 (14 of 108 SMs, 1/8 of the bandwidth) without the per-SM
// ceiling, so that sigma and beta are the closed forms of the header.
DeviceGeometry plain_slice() {
  DeviceGeometry g;
  g.gpu_sms = 108;
  g.sms = 14;
  g.bandwidth = 1.0 / 8;
  g.overlapped_phases = true;
  return g;
}

TEST(OverlappedPhases, ClosedFormsOnAOneEighthSlice) {
  const DeviceGeometry g = plain_slice();
  const double f = 12.0 / 108;  // 12 SMs: fits the slice, sigma = 1; beta = 1/8
  // Compute-bound with t_memory = D / 8: the memory phase stretches to D and hides under the
  // compute phase, D; the serial reading of the same kernel (m_s = 1/9) adds them: 16/9 D.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 8, 1.0, 1.0, 12, g), 1.0);
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 9, -1, 1.0, 12, g), 16.0 / 9);
  // Balanced (t_compute = t_memory = D): the bytes need 8 D; the serial reading gives 4.5 D.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, 1.0, 1.0, 12, g), 8.0);
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 0.5, -1, 1.0, 12, g), 4.5);
  // Memory-bound with half its time computing: 8 either way of reading the SM phase.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, 0.5, 1.0, 12, g), 8.0);
  // A full-width compute-bound grid on 14 SMs: the compute phase is the longer, 108/14.
  EXPECT_DOUBLE_EQ(contention::slowdown(1.0, 1.0 / 8, 1.0, 1.0, 14, g), 108.0 / 14);
  // The L2 factor multiplies the memory phase only: phi = 2 makes it the longer, 2.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0 / 8, 1.0, 2.0, 12, g), 2.0);
  EXPECT_DOUBLE_EQ(contention::rate_bound(f, 1.0 / 8, 1.0, 2.0, 12, g), 0.5);
  // Alone on the whole GPU every roofline kernel takes its solo time.
  DeviceGeometry whole = g;
  whole.sms = 108;
  whole.bandwidth = 1.0;
  for (const double other : {0.0, 0.125, 0.5, 1.0}) {
    EXPECT_DOUBLE_EQ(contention::slowdown(f, other, 1.0, 1.0, 12, whole), 1.0);
    EXPECT_DOUBLE_EQ(contention::slowdown(f, 1.0, other, 1.0, 12, whole), 1.0);
  }
  // The co-resident bound with its full residency is the lone bound.
  EXPECT_DOUBLE_EQ(contention::co_resident_bound(f, 1.0, 1.0, 1.0, 12, 12, 12, g), 1.0 / 8);
  // The busy share: c overlapped, 1 - m serial.
  EXPECT_EQ(contention::busy_share(0.25, 0.5), 0.5);
  EXPECT_EQ(contention::busy_share(0.25, -1), 0.75);
}

TEST(OverlappedPhases, SerialKernelsKeepTheSerialSumBitForBit) {
  // The law before overlapped phases, written out: (1 - m) / sigma + m phi / beta, and the
  // co-resident one with its m < 1 guard. A kernel without a busy share gets exactly it.
  boost::random::mt19937 rng(777);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& p = load_device_profile("a100-80gb");
  for (int i = 0; i < 2000; ++i) {
    DeviceGeometry g;
    g.gpu_sms = p.sms;
    g.sms = i % 2 ? p.sms : 14;
    g.bandwidth = i % 2 ? 1.0 : 1.0 / 8;
    set_law_terms(g, p, g.bandwidth, *find_contention_law(i % 4 < 2 ? "residency" : "fluid"));
    const double f = std::max(0.01, u(rng));
    const double m = u(rng) < 0.2 ? (u(rng) < 0.5 ? 0.0 : 1.0) : u(rng);
    const double phi = 1 + 2 * u(rng);
    const double held = std::max(0.3, u(rng) * g.sms);
    const double grid = u(rng) < 0.5 ? std::ceil(u(rng) * 400) : 0.0;
    const double sigma = contention::compute_speed(f, grid, held, g);
    const double beta = contention::memory_speed(f, held, g);
    const double serial = (1.0 - m) / sigma + m * phi / beta;
    EXPECT_EQ(contention::slowdown(f, m, -1, phi, held, g, grid), serial);
    EXPECT_EQ(contention::rate_bound(f, m, -1, phi, held, g, grid), 1.0 / serial);
    const double h_compute = held * u(rng);
    const double sigma_co = sigma * (h_compute / held);
    const double slow_co = (m < 1.0 ? (1.0 - m) / sigma_co : 0.0) + m * phi / beta;
    EXPECT_EQ(contention::co_resident_bound(f, m, -1, phi, held, h_compute, held, g, grid),
              slow_co > 0 ? 1.0 / slow_co : 0.0);
    // The fluid reading leaves a serial kernel as it is.
    double m_read = m, c_read = -1;
    contention::serial_phases(m_read, c_read);
    EXPECT_EQ(m_read, m);
    EXPECT_EQ(c_read, -1);
  }
}

// ------------------------------------------- throughput-shared rounds (law 2, discrete waves)

// A 1g.10gb-like slice with whole waves (the residency law's sigma).
DeviceGeometry waves_slice() {
  DeviceGeometry g = plain_slice();
  g.discrete_waves = true;
  return g;
}

TEST(ThroughputSharedRounds, ClosedFormOfTheHeadersExample) {
  const DeviceGeometry g = waves_slice();
  // 24 blocks, two resident per SM (G = 12): rounds alone say sigma = 1 on 14 SMs; the
  // per-block share counts ceil(24 / 14) = 2 blocks on the busiest SM against 1 alone.
  const double f = 24.0 / 108;
  EXPECT_DOUBLE_EQ(contention::compute_speed(f, 12, 14, g), 1.0);
  EXPECT_DOUBLE_EQ(contention::compute_speed(f, 12, 14, g, 24, 0.9), 1.0 / 1.9);
  EXPECT_DOUBLE_EQ(contention::compute_speed(f, 12, 14, g, 24, 1.0), 0.5);
  // 72 blocks (G = 36): 3 rounds of 2 on 14 SMs; all per block: 6 blocks against 1.
  EXPECT_DOUBLE_EQ(contention::compute_speed(72.0 / 108, 36, 14, g), 1.0 / 3);
  EXPECT_DOUBLE_EQ(contention::compute_speed(72.0 / 108, 36, 14, g, 72, 1.0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(contention::compute_speed(72.0 / 108, 36, 14, g, 72, 0.5), 1.0 / 4.5);
  // A compute-bound overlapped kernel: the slowdown is 1 / sigma.
  EXPECT_DOUBLE_EQ(contention::slowdown(f, 0.1, 1.0, 1.0, 14, g, 12, 24, 0.9), 1.9);
  EXPECT_DOUBLE_EQ(contention::rate_bound(f, 0.1, 1.0, 1.0, 14, g, 12, 24, 0.9), 1.0 / 1.9);
}

TEST(ThroughputSharedRounds, InvariantsOnRandomGrids) {
  boost::random::mt19937 rng(4242);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 3000; ++i) {
    DeviceGeometry g = waves_slice();
    g.gpu_sms = i % 3 == 0 ? 56 : 108;
    g.sms = g.gpu_sms;
    const double r = 1 + std::floor(u(rng) * 8);
    const double blocks = std::ceil(u(rng) * (i % 2 ? 40 : 2000));
    const double grid = blocks / r;
    const double f = std::min(1.0, blocks / g.gpu_sms);
    const double tau = u(rng) < 0.1 ? 1.0 : u(rng);
    // tau = 0 is the rounds law bit for bit.
    for (const double held : {0.5, 3.0, 14.0, 27.5}) {
      EXPECT_EQ(contention::compute_speed(f, grid, held, g, blocks, 0.0),
                contention::compute_speed(f, grid, held, g));
    }
    // Alone on the whole GPU every kernel takes its solo time, whatever its share.
    EXPECT_DOUBLE_EQ(contention::compute_speed(f, grid, g.gpu_sms, g, blocks, tau), 1.0);
    // One block per round (G = B): the share changes nothing.
    EXPECT_DOUBLE_EQ(contention::compute_speed(f, blocks, 14, g, blocks, tau),
                     contention::compute_speed(f, blocks, 14, g));
    double previous = 0;
    const double least = contention::min_sms_per_compute(f, grid, g, blocks, tau);
    for (int held = 1; held <= g.gpu_sms; ++held) {
      const double sigma = contention::compute_speed(f, grid, held, g, blocks, tau);
      // More SMs never slow a kernel; its speed lies between the rounds law's and the
      // blocks law's (a weighted harmonic mean); the SM-time bound is a lower bound.
      EXPECT_GE(sigma, previous - 1e-12) << held;
      const double by_rounds = contention::wave_speed(grid, held, g);
      const double by_blocks = contention::wave_speed(blocks, held, g);
      EXPECT_GE(sigma, std::min(by_rounds, by_blocks) * (1 - 1e-12)) << held;
      EXPECT_LE(sigma, std::max(by_rounds, by_blocks) * (1 + 1e-12)) << held;
      EXPECT_LE(least, held / sigma * (1 + 1e-12)) << held;
      previous = sigma;
    }
  }
}

TEST(OverlappedPhases, TheFluidLawReadsAnOverlappedKernelAsItsSerialPhases) {
  // m_s = m / (c + m): the catalog's m before overlapped phases, t_memory / (busy + t_memory).
  double m = 0.125, c = 1.0;
  contention::serial_phases(m, c);
  EXPECT_DOUBLE_EQ(m, 1.0 / 9);
  EXPECT_EQ(c, -1);
  contention::serial_phases(m, c);  // idempotent
  EXPECT_DOUBLE_EQ(m, 1.0 / 9);
}

std::string a100(const std::string& layout, const std::string& law) {
  return (law.empty() ? std::string() : "contention_law: " + law + "\n") +
         "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: a100-80gb" + layout +
         "}\ntenants:\n";
}

double a100_latency(const std::string& layout, const std::string& device, const std::string& kernel,
                    const std::string& law) {
  const RunResult r =
      run_yaml(a100(layout, law) + "  - {name: a, device: " + device +
               ", workload: {arrivals: {process: closed, concurrency: 1}, request: {kernels: [" +
               kernel + "]}}}\n");
  return tenant(r, "a").latency.p50 - launch_ns("a100-80gb");
}

TEST(OverlappedPhases, AComputeBoundRooflineKernelKeepsItsTimeOnAnA1gSlice) {
  // 12 blocks, one wave on the whole A100 and on the 14 SMs of a 1g.10gb (sigma = 1); its
  // memory phase, an eighth of its time, stretches at most 8x (beta >= 1/8): 100 us on both.
  // The fluid law reads it serially (m_s = 1/9, beta = 1/8): 8/9 + 8/9 = 16/9 on the slice.
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 0.125, busy_share: 1, "
      "blocks: 12}";
  const std::string slice = ", mig: \"1g.10gb:1\"";
  EXPECT_NEAR(a100_latency("", "gpu0", kernel, ""), 100e3, 2.0);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", kernel, ""), 100e3, 2.0);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", kernel, "fluid"), 16.0 / 9 * 100e3, 2.0);
  // The same phases written serially (m = 1/9, no busy share) keep the serial sum.
  const std::string serial =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 0.1111111111111111, "
      "blocks: 12}";
  const DeviceProfile& p = load_device_profile("a100-80gb");
  DeviceGeometry g;
  g.gpu_sms = p.sms;
  g.sms = 14;
  g.bandwidth = 1.0 / 8;
  set_law_terms(g, p, 1.0 / 8, default_contention_law());
  const double beta = contention::memory_speed(0.12, 0.12 * p.sms, g);
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", serial, ""),
              (8.0 / 9 + 0.1111111111111111 / beta) * 100e3, 2.0);
  // Balanced (both phases the whole solo time): the memory phase's stretch, 1 / beta.
  const std::string balanced =
      "{name: k, duration: 100us, sm_fraction: 0.12, memory_bound: 1, busy_share: 1, blocks: 12}";
  EXPECT_NEAR(a100_latency(slice, "gpu0/0", balanced, ""), 100e3 / beta, 2.0);
  EXPECT_GT(1.0 / beta, 1.0);
}

std::string overlapped_tenant(const std::string& mode) {
  return gpu(mode) +
         "  - {name: a, device: gpu0, workload: {max_in_flight: 3, arrivals: {process: poisson, "
         "rate: 400/s}, request: {host_gap: 5us, kernels: [{name: g, duration: {exponential: "
         "600us}, sm_fraction: 0.7, memory_bound: 0.4, busy_share: 1, working_set: 20MB, repeat: "
         "3, blocks: 93, block: {threads: 256, registers: 64}}, {name: s, duration: 300us, "
         "memory_bound: 1, busy_share: 0.3, blocks: 400, block: {threads: 128}}]}}}\n";
}

TEST(OverlappedPhases, OneClientOfASharingStrategyIsExclusive) {
  const RunResult exclusive = run_yaml(overlapped_tenant("{mode: exclusive}"));
  expect_same_numbers(exclusive,
                      run_yaml(overlapped_tenant("{mode: mps, active_thread_percentage: 100}")));
  expect_same_numbers(exclusive, run_yaml(overlapped_tenant("{mode: time-slicing}")));
}

// ------------------------------------------------------------ a third law, one file's worth

// "roofline-whole-sm": the residency law's terms (per-SM HBM ceiling, whole waves, overlapped
// phases, the whole GPU's L2) with whole-SM residency only: no block retirement, no
// co-residency. One class and one registration, nothing in Device or the registry's callers.
class RooflineWholeSmLaw final : public ContentionLaw {
 public:
  std::string_view name() const override { return "roofline-whole-sm"; }
  std::string_view summary() const override { return "residency's terms, whole SMs only"; }
  void set_terms(DeviceGeometry& g, const DeviceProfile& p, double slice) const override {
    static const ResidencyLaw residency;
    residency.set_terms(g, p, slice);
  }
  bool per_sm_bandwidth() const override { return true; }
};

void register_third_law() {
  static const RooflineWholeSmLaw law;
  static const bool registered = register_contention_law(law);
  ASSERT_TRUE(registered);
}

TEST(ThirdLaw, IsFoundByNameAndListedAfterTheBuiltInLaws) {
  register_third_law();
  const ContentionLaw* law = find_contention_law("roofline-whole-sm");
  ASSERT_NE(law, nullptr);
  EXPECT_EQ(contention_law_names(),
            (std::vector<std::string>{"residency", "fluid", "staggered", "roofline-whole-sm"}));
  EXPECT_EQ(&default_contention_law(), find_contention_law("residency"));
  EXPECT_FALSE(register_contention_law(*law));  // a name is registered once
  // Its scenario loads and runs; an unknown law is one line listing the three.
  EXPECT_NO_THROW(run_yaml(gpu("{mode: mps}", "roofline-whole-sm") +
                           closed_client("a", "{name: k, duration: 10us}")));
  try {
    run_yaml(gpu("{mode: mps}", "nope") + closed_client("a", "{name: k, duration: 10us}"));
    FAIL() << "accepted an unknown law";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("residency, fluid, staggered, roofline-whole-sm"),
              std::string::npos)
        << e.what();
  }
}

TEST(ThirdLaw, RunsTheProbesWithTheClosedFormsOfItsTerms) {
  register_third_law();
  // Probe 1 (per-SM ceiling): 1 % of the threads, 1.32 SMs: a streaming kernel takes
  // D / (1.32 s), s = the H100 profile's per-SM bandwidth over its HBM bandwidth (34x solo).
  const DeviceGeometry g = whole_gpu("roofline-whole-sm");
  ASSERT_GT(g.sm_bandwidth, 0.0);
  const std::string kernel = "{name: s, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0}";
  const RunResult narrow =
      run_yaml(gpu("{mode: mps, active_thread_percentage: 1}", "roofline-whole-sm") +
               closed_client("a", kernel));
  EXPECT_NEAR(tenant(narrow, "a").latency.p50, launch_ns() + 100e3 / (1.32 * g.sm_bandwidth), 2.0);
  // Probe 4 (whole waves): 132 one-per-SM blocks on 60 SMs take 3 waves, 300 us.
  EXPECT_NEAR(mig_latency("3g.40gb",
                          "{name: k, duration: 100us, sm_fraction: 1.0, memory_bound: 0.0, "
                          "blocks: 132}",
                          "roofline-whole-sm"),
              3 * 100e3, 2.0);
  // Probe 3 (the whole GPU's L2): a lone 40 MB working set on a 1g.10gb (1/8 of 50 MB) pays its
  // misses as under residency, not as under fluid (which keeps the slice's own L2 as reference).
  // phi = c(L / 8) / c(L), c(L) = (1 - hit) + rho hit, hit = min(1, L / WS): 8 phi solo times.
  const std::string cached =
      "{name: c, duration: 100us, memory_bound: 1.0, sm_fraction: 1.0, working_set: 40MB}";
  const DeviceProfile& p = load_device_profile("h100-sxm-80gb");
  const double l2 = static_cast<double>(p.l2_cache);
  const double rho = g.l2_cost_ratio;
  const auto cost = [rho](double cache) {
    const double hit = std::min(1.0, cache / 40e6);
    return (1.0 - hit) + rho * hit;
  };
  const double third = mig_latency("1g.10gb", cached, "roofline-whole-sm");
  EXPECT_NEAR(third, 8 * cost(l2 / 8) / cost(l2) * 100e3, 2.0);
  EXPECT_GT(third, 20 * 100e3);
  EXPECT_NEAR(mig_latency("1g.10gb", cached, "fluid"), 8 * 100e3, 2.0);
}

TEST(ThirdLaw, WithoutRetirementAnUrgentKernelWaitsForTheTrainingKernelsResidual) {
  register_third_law();
  // Residency.AnUrgentKernelWaitsAtMostOneRoundBehindAMultiWaveKernel's scenario: 10 ms
  // full-grid training kernels of 100 waves back to back, an urgent (priority -5) 100 us
  // full-grid kernel at 7/s. Under residency it waits at most one 100 us round (mean about
  // L + 50 us + 100 us); this law has no block retirement, so it waits for the training
  // kernel's residual, D^2 / 2(D + L) + 100 us on average, exactly as under fluid (compute
  // kernels without a grid: the two laws' terms give the same rates).
  const auto infer = [](const std::string& law) {
    std::string yaml = gpu("{mode: mps, client_order: launch_order}", law) +
                       closed_client("train", "{name: step, duration: 10ms, waves: 100}") +
                       "  - {name: infer, device: gpu0, workload: {priority: -5, arrivals: "
                       "{process: constant, rate: 7/s}, request: {kernels: [{name: k, "
                       "duration: 100us}]}}}\n";
    yaml.replace(yaml.find("duration: 2s"), 12, "duration: 20s");
    return tenant(run_yaml(yaml), "infer").latency.mean;
  };
  const double d = 10e6, l = launch_ns();
  const double residual = l + d * d / (2 * (d + l)) + 100e3;
  const double third = infer("roofline-whole-sm");
  EXPECT_NEAR(third, residual, 0.08 * residual);
  EXPECT_EQ(third, infer("fluid"));
  EXPECT_NEAR(infer("residency"), l + 50e3 + 100e3, 12e3);
}

}  // namespace
}  // namespace gpumux
