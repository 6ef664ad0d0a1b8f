// RunOptions::device_statistics = false (Device::set_statistics): the devices keep no utilization
// integrals, and nothing else changes. `gpumux plan`'s unit runs use it (they read only the
// tenants' latencies, failures and OOMs), so its contract is the planner's: on random scenarios
// (tests/support/random_scenario.hpp: every registered strategy, MIG, faults, warm-up, closed
// loops, traces, ...) every tenant's numbers but its gpu_seconds (the occupancy integral's), the
// event count and each device's memory peak and context switches are equal to a run with them,
// and (checked on a time-sliced device) the utilization outputs read 0. A power-capped board,
// whose clock comes from its pilot run's utilization, runs at the same clock either way.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "models/output/result_io.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/random_scenario.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;

// The per-tenant summary without gpu_seconds (the one tenant number made from the integrals).
std::string tenants_without_gpu_seconds(const RunResult& r) {
  nlohmann::ordered_json tenants = summary_json(r).at("tenants");
  for (auto& [name, t] : tenants.items()) t.erase("gpu_seconds");
  return tenants.dump();
}

RunResult run(const ResolvedScenario& scenario, bool statistics) {
  RunOptions options;
  options.record_requests = false;
  options.device_statistics = statistics;
  return simulate(scenario, options);
}

TEST(DeviceStatistics, WithoutThemEveryTenantNumberAndEventIsTheSame) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-devstats-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = testing::write_arrival_trace(dir);
  int busy_runs = 0;
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    testing::ScenarioMaker maker(seed, trace);
    const std::string yaml = maker.make();
    ResolvedScenario resolved;
    try {
      resolved = resolve_scenario(load_scenario_text(yaml, (dir / "s.yaml").string()));
    } catch (const std::exception& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << yaml;
    }
    const RunResult with = run(resolved, true);
    const RunResult without = run(resolved, false);
    ASSERT_EQ(tenants_without_gpu_seconds(without), tenants_without_gpu_seconds(with))
        << "seed " << seed << "\n"
        << yaml;
    EXPECT_EQ(without.events, with.events) << "seed " << seed;
    ASSERT_EQ(without.devices.size(), with.devices.size());
    bool busy = false;
    for (std::size_t d = 0; d < with.devices.size(); ++d) {
      EXPECT_EQ(without.devices[d].memory_peak_bytes, with.devices[d].memory_peak_bytes);
      EXPECT_EQ(without.devices[d].context_switches, with.devices[d].context_switches);
      EXPECT_EQ(without.devices[d].switch_overhead_ns, with.devices[d].switch_overhead_ns);
      EXPECT_EQ(without.devices[d].clock_mhz, with.devices[d].clock_mhz);
      busy = busy || with.devices[d].sm_busy > 0;
    }
    busy_runs += busy;
  }
  EXPECT_GE(busy_runs, 40);  // the comparison saw devices at work
  fs::remove_all(dir);
}

// Two closed-loop tenants time-sliced on one H100 (no direct path, no lazy path: every
// recompute goes through the device's queued update): with statistics the device reads busy,
// without them it reads exactly 0, and the latencies are the same.
constexpr const char* kTimeSliced = R"(
name: devstats
seed: 3
duration: 200ms
gpus:
  - name: gpu0
    model: h100-sxm-80gb
    power: none
    sharing: {mode: time-slicing, replicas: 2}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 400/s}
      request:
        kernels:
          - {name: k, duration: 200us, sm_fraction: 0.5, memory_bound: 0.3, repeat: 4}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 300/s}
      request:
        kernels:
          - {name: k, duration: 300us, sm_fraction: 0.8, memory_bound: 0.5, repeat: 3}
)";

TEST(DeviceStatistics, ATimeSlicedDeviceWithoutThemReadsNoUtilization) {
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(kTimeSliced, "ts.yaml"));
  const RunResult with = run(resolved, true);
  const RunResult without = run(resolved, false);
  ASSERT_EQ(with.devices.size(), 1u);
  EXPECT_GT(with.devices[0].sm_busy, 0.1);
  EXPECT_GT(with.devices[0].dram_busy, 0.0);
  EXPECT_GT(with.devices[0].context_switches, 0);
  EXPECT_EQ(without.devices[0].sm_busy, 0.0);
  EXPECT_EQ(without.devices[0].useful_fraction, 0.0);
  EXPECT_EQ(without.devices[0].dram_busy, 0.0);
  EXPECT_EQ(tenants_without_gpu_seconds(without), tenants_without_gpu_seconds(with));
  EXPECT_EQ(without.events, with.events);
}

// One tenant of back-to-back compute-bound kernels on a board whose boost draw is above its TDP:
// the clock comes from the pilot run's utilization, which keeps its statistics.
constexpr const char* kCapped = R"(
name: devstats-power
seed: 5
duration: 500ms
gpus:
  - {name: gpu0, model: a100-pcie-80gb, power: {tdp: 300W, sm_dynamic: 400W, idle: 50W, hbm_energy: 1pJ/B, clock_exponent: 3}}
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: closed, concurrency: 1}
      request:
        kernels:
          - {name: k, duration: 1ms, sm_fraction: 1, memory_bound: 0}
)";

TEST(DeviceStatistics, APowerCappedBoardRunsAtTheSameClockWithoutThem) {
  const ResolvedScenario resolved = resolve_scenario(load_scenario_text(kCapped, "cap.yaml"));
  const RunResult with = run(resolved, true);
  const RunResult without = run(resolved, false);
  ASSERT_LT(with.devices[0].clock_mhz, 1410.0);  // capped
  EXPECT_EQ(without.devices[0].clock_mhz, with.devices[0].clock_mhz);
  EXPECT_EQ(tenants_without_gpu_seconds(without), tenants_without_gpu_seconds(with));
}

}  // namespace
}  // namespace gpumux
