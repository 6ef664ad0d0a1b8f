// The power cap's pilot run (models/run/power_pilot.hpp): the offered-rate bound of a board's
// FP16/BF16 tensor FLOP rate. Properties on random A100 scenarios with open-loop FP16 catalog
// tenants at low and high rates: each tenant's replayed arrivals are exactly the run's measured
// requests (so its throughput is at most the bound), the offered bound is never below the peak
// one, the result equals the result with the pilot forced, and the pilot is skipped exactly
// where the bound says the board cannot cap. Closed form: on a stock A100 SXM the bound crosses
// the 400 W TDP between two constant rates around room / (E_t x FLOPs per request).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/gpu/device_profile.hpp"
#include "models/gpu/power.hpp"
#include "models/run/power_pilot.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

ResolvedScenario resolve(const std::string& yaml) {
  return resolve_scenario(load_scenario_text(yaml, "test.yaml"));
}

// Every number of the result but wall_s that a pilot could change, exactly.
void expect_same_result(const RunResult& a, const RunResult& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.status, b.status);
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  ASSERT_EQ(a.devices.size(), b.devices.size());
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.notes, b.notes);
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const TenantResult& x = a.tenants[i];
    const TenantResult& y = b.tenants[i];
    EXPECT_EQ(x.requests, y.requests);
    EXPECT_EQ(x.completed, y.completed);
    EXPECT_EQ(x.failed, y.failed);
    EXPECT_EQ(x.latency.mean, y.latency.mean);
    EXPECT_EQ(x.latency.p50, y.latency.p50);
    EXPECT_EQ(x.latency.p99, y.latency.p99);
    EXPECT_EQ(x.latency.max, y.latency.max);
    EXPECT_EQ(x.queueing.mean, y.queueing.mean);
    EXPECT_EQ(x.throughput_per_s, y.throughput_per_s);
    EXPECT_EQ(x.gpu_seconds, y.gpu_seconds);
  }
  for (std::size_t d = 0; d < a.devices.size(); ++d) {
    const DeviceResult& x = a.devices[d];
    const DeviceResult& y = b.devices[d];
    EXPECT_EQ(x.sm_busy, y.sm_busy);
    EXPECT_EQ(x.dram_busy, y.dram_busy);
    EXPECT_EQ(x.clock_mhz, y.clock_mhz);
    EXPECT_EQ(x.board_power_w, y.board_power_w);
  }
}

// A random A100 SXM scenario: 1-3 open-loop FP16 catalog tenants on one whole board (or its
// MIG slices), each at a low (1-40/s) or high (150-1500/s) poisson or constant rate.
std::string random_scenario(std::mt19937_64& rng, int index) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  const bool mig = pick(4) == 0;
  const bool high = pick(2) == 0;
  const char* models[] = {"{model: bert-base, batch: 1, seq_len: 128", "{model: resnet50, batch: 1",
                          "{model: minilm-l6, batch: 1"};
  std::string yaml = "name: p" + std::to_string(index) + "\nseed: " + std::to_string(rng() % 1000) +
                     "\nduration: 1500ms\nwarmup: 500ms\ngpus:\n  - {name: gpu0, model: a100-80gb" +
                     (mig ? ", mig: all-balanced" : "") + ", sharing: {mode: " +
                     (mig ? "exclusive" : (pick(2) == 0 ? "time-slicing" : "mps")) +
                     "}}\ntenants:\n";
  const int tenants = 1 + pick(3);
  for (int t = 0; t < tenants; ++t) {
    const int rate = high ? 150 + pick(1350) : 1 + pick(40);
    const std::string name = std::to_string(t);
    yaml += "  - name: t" + name + "\n    device: gpu0";
    if (mig) yaml += std::string(1, '/') + name;
    yaml += std::string("\n    workload: ") + models[pick(3)] +
            ", arrivals: {process: " + (pick(2) == 0 ? "poisson" : "constant") +
            ", rate: " + std::to_string(rate) + "/s}}\n";
  }
  return yaml;
}

TEST(PowerPilot, TheOfferedBoundHoldsAndSkipsThePilotExactlyWhereTheBoardCannotCap) {
  std::mt19937_64 rng(20261207);
  int skipped = 0, piloted = 0;
  for (int c = 0; c < 16; ++c) {
    const std::string yaml = random_scenario(rng, c);
    SCOPED_TRACE(yaml);
    const ResolvedScenario r = resolve(yaml);
    const std::vector<double> peak = board_clock_bounds(r, TensorRateBound::peak);
    const std::vector<double> offered = board_clock_bounds(r, TensorRateBound::offered);
    ASSERT_EQ(offered.size(), peak.size());
    // Every tenant has FP16 tensor math: the stock A100 SXM's peak bound caps (635 W).
    EXPECT_LT(peak[0], 1.0);
    bool may_cap = false;
    for (std::size_t g = 0; g < peak.size(); ++g) {
      EXPECT_GE(offered[g], peak[g]);
      may_cap = may_cap || offered[g] < 1.0;
    }

    const RunResult result = simulate(r);
    const RunResult forced =
        simulate_with_clock_bounds(r, {}, std::vector<double>(peak.size(), 0.5));
    expect_same_result(result, forced, "pilot forced");

    // The replay is the run's arrivals: the bound's count is the measured requests, exactly.
    const double measured_s = to_seconds(r.scenario.duration - r.scenario.warmup);
    for (std::size_t i = 0; i < result.tenants.size(); ++i) {
      const std::optional<double> bound = measured_throughput_bound(r, i);
      ASSERT_TRUE(bound.has_value());
      EXPECT_EQ(std::llround(*bound * measured_s), result.tenants[i].requests);
      EXPECT_LE(result.tenants[i].throughput_per_s, *bound);
    }

    // Without device statistics a run keeps none; a pilot keeps them and is the result where
    // the board does not cap: sm_busy tells which run the result is.
    RunOptions quiet;
    quiet.device_statistics = false;
    const RunResult lean = simulate(r, quiet);
    const bool pilot_made = lean.devices.front().sm_busy > 0;
    EXPECT_EQ(pilot_made, may_cap);
    (pilot_made ? piloted : skipped) += 1;
    for (const DeviceResult& d : result.devices) EXPECT_EQ(d.clock_mhz, 1410.0);
  }
  // Both branches were exercised.
  EXPECT_GT(skipped, 0);
  EXPECT_GT(piloted, 0);
}

// One BERT-base FP16 tenant at a constant `rate` per second on a stock A100 SXM (or a closed
// loop): the measured window is 1 s and holds exactly `rate` arrivals.
std::string bert_a100(const std::string& arrivals) {
  return "name: t\nseed: 3\nduration: 2s\nwarmup: 1s\ngpus:\n  - {name: gpu0, model: a100-80gb}\n"
         "tenants:\n  - name: bert\n    device: gpu0\n    workload: {model: bert-base, batch: 1, "
         "seq_len: 128, arrivals: " +
         arrivals + "}\n";
}

TEST(PowerPilot, TheBoundCrossesTheTdpAtTheClosedFormRate) {
  const ResolvedScenario probe = resolve(bert_a100("{process: constant, rate: 1/s}"));
  const PowerParams p = probe.scenario.gpus[0].power.apply(probe.gpu_profiles[0]->power);
  ASSERT_TRUE(p.modelled());
  ASSERT_GT(p.tensor_joules_per_flop, 0.0);
  double flops = 0;
  for (const KernelSpec& k : probe.scenario.tenants[0].workload.kernels)
    flops += k.tensor_flops * k.repeat;
  ASSERT_GT(flops, 0.0);
  // P(1) = P_idle + P_sm + E_byte B + E_t F rate <= TDP  <=>  rate <= room / (E_t F).
  const double hbm = achievable_hbm_bandwidth(*probe.gpu_profiles[0]);
  const double room = p.tdp_w - p.idle_w - p.sm_dynamic_w - p.hbm_joules_per_byte * hbm;
  ASSERT_GT(room, 0.0);  // without tensor math the SXM board stays under its TDP
  const double critical = room / (p.tensor_joules_per_flop * flops);
  const int under = static_cast<int>(std::floor(critical));
  ASSERT_GT(under, 0);
  ASSERT_LT(static_cast<double>(under), critical);

  for (const int rate : {under, under + 1}) {
    SCOPED_TRACE(rate);
    const ResolvedScenario r =
        resolve(bert_a100("{process: constant, rate: " + std::to_string(rate) + "/s}"));
    ASSERT_EQ(measured_throughput_bound(r, 0), std::optional<double>(rate));
    const double x = board_clock_bounds(r).at(0);
    if (rate == under) {
      EXPECT_EQ(x, 1.0);
    } else {
      // x = (room without tensor / (P_sm + E_t F rate))^(1/3), just below 1.
      const double expected = std::cbrt((p.tdp_w - p.idle_w - p.hbm_joules_per_byte * hbm) /
                                        (p.sm_dynamic_w + p.tensor_joules_per_flop * flops * rate));
      EXPECT_NEAR(x, expected, 1e-12);
      EXPECT_LT(x, 1.0);
      EXPECT_GT(x, 0.99);
    }
    // Either way the board draws far less than its TDP at this load: 1410 MHz, as forced.
    const RunResult result = simulate(r);
    expect_same_result(result, simulate_with_clock_bounds(r, {}, {0.5}), "pilot forced");
    EXPECT_EQ(result.devices[0].clock_mhz, 1410.0);
    EXPECT_LT(result.devices[0].board_power_w, p.tdp_w);
  }

  // A closed loop has no offered rate: the peak bound, whatever its think time.
  const ResolvedScenario closed =
      resolve(bert_a100("{process: closed, concurrency: 1, think: 1s}"));
  EXPECT_EQ(measured_throughput_bound(closed, 0), std::nullopt);
  EXPECT_EQ(board_clock_bounds(closed, TensorRateBound::offered),
            board_clock_bounds(closed, TensorRateBound::peak));
  EXPECT_LT(board_clock_bounds(closed).at(0), 1.0);
}

}  // namespace
}  // namespace gpumux
