// Contention physics seen through whole runs: discrete waves on MIG slices, the planner's bounds
// against simulated runs, per-kernel launch cost, and the invariants that tie the strategies
// together (one MPS client == exclusive, one time-sliced context == exclusive, held SMs never
// above the device, max-min optimality). Residency and bandwidth: test_contention.cpp.
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

// ------------------------------------------------------------------------------ discrete waves
// Issue 23, probe 4: a kernel whose grid is known takes whole waves, ceil(G / h) on h SMs.

TEST(DiscreteWaves, AOneWaveFullGridOnA60SmSliceTakesThreeWaves) {
  // 132 blocks, one per SM: one wave alone; ceil(132 / 60) = 3 on a 3g.40gb and
  // ceil(132 / 64) = 3 on a 4g.40gb (the fluid law: 132/60 = 2.2x and 132/64 = 2.06x).
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 1.0, memory_bound: 0.0, blocks: 132}";
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, ""), 3 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("4g.40gb", kernel, ""), 3 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, "fluid"), 132.0 / 60 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("4g.40gb", kernel, "fluid"), 132.0 / 64 * 100e3, 2.0);
  // Without a grid the fluid sigma stays (docs/strategies.md: where no grid is known).
  EXPECT_NEAR(mig_latency("3g.40gb", "{name: k, duration: 100us, sm_fraction: 1.0}", ""),
              132.0 / 60 * 100e3, 2.0);
}

TEST(DiscreteWaves, TwoBlocksPerSmAndSeveralWavesAlone) {
  // 528 blocks, 2 per SM: G = 264, 2 waves alone on 132 SMs; on 60 SMs ceil(264 / 60) = 5:
  // 2.5x; on 16 SMs (1g.10gb) ceil(264 / 16) = 17: 8.5x.
  const std::string kernel =
      "{name: k, duration: 100us, sm_fraction: 1.0, blocks: 528, "
      "blocks_per_sm: 2}";
  EXPECT_NEAR(mig_latency("3g.40gb", kernel, ""), 2.5 * 100e3, 2.0);
  EXPECT_NEAR(mig_latency("1g.10gb", kernel, ""), 8.5 * 100e3, 2.0);
}

TEST(DiscreteWaves, TheComputeSpeedNeverBeatsAloneAndTheSmTimeBoundHolds) {
  DeviceGeometry g = whole_gpu("residency");
  boost::random::mt19937 rng(23);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    const double grid = std::floor(1 + u(rng) * 2000) / (1 + std::floor(u(rng) * 4));
    const double f = std::min(1.0, std::max(1.0 / g.gpu_sms, grid / g.gpu_sms));
    const double held = 0.01 + u(rng) * f * g.gpu_sms;
    const double sigma = contention::compute_speed(f, grid, held, g);
    ASSERT_GT(sigma, 0.0);
    ASSERT_LE(sigma, 1.0);
    // SM-ns per solo-ns of compute, held / sigma, never below the planner's bound.
    ASSERT_GE(held / sigma, contention::min_sms_per_compute(f, grid, g) * (1 - 1e-12))
        << grid << " " << held;
  }
}

// ------------------------------------------------------------------------------ planner bounds
// The planner's latency floor (models/plan/bounds.cpp) is the contention law's lone-kernel time:
// on random devices (whole GPU, MIG slices, MPS caps), kernels (grids known or not) and both
// laws, a request alone takes exactly the floor (no neighbour, no queue), never less.

// A kernel's phases for instance `i` and share `m`: serial (memory_bound m) in two instances of
// three, overlapped in the third (contention law 2), its memory or its SM phase the longer.
std::string phases(int i, double m) {
  if (i % 3 != 2) return fmt::format("memory_bound: {}", m);
  return (i / 3) % 2 ? fmt::format("memory_bound: 1, busy_share: {}", m)
                     : fmt::format("memory_bound: {}, busy_share: 1", m);
}

TEST(PlannerBounds, TheLatencyFloorIsTheSimulatedLoneRequestUnderEveryLaw) {
  boost::random::mt19937 rng(2323);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& profile = load_device_profile("h100-sxm-80gb");
  const char* slices[] = {"", "1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb"};
  for (int i = 0; i < 60; ++i) {
    const std::string law = i % 2 ? "fluid" : "residency";
    const std::string slice = slices[static_cast<int>(u(rng) * 5) % 5];
    const int percent = slice.empty() && u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 60) : 0;
    const double f = std::max(0.02, std::floor(u(rng) * 100) / 100);
    const double m = std::floor(u(rng) * 100) / 100;
    const int blocks = u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 600) : 0;
    const std::string kernel = fmt::format(
        "{{name: k, duration: {}us, sm_fraction: {}, {}{}}}", 20 + static_cast<int>(u(rng) * 500),
        f, phases(i, m), blocks > 0 ? fmt::format(", blocks: {}", blocks) : std::string());
    const std::string sharing =
        percent > 0 ? fmt::format(", sharing: {{mode: mps, active_thread_percentage: {}}}", percent)
                    : std::string();
    const std::string yaml = fmt::format(
        "contention_law: {}\nname: t\nduration: 400ms\ngpus:\n  - {{name: gpu0, model: "
        "h100-sxm-80gb{}{}}}\ntenants:\n  - {{name: a, device: {}, workload: {{arrivals: "
        "{{process: constant, rate: 5/s}}, request: {{kernels: [{}]}}}}}}\n",
        law, slice.empty() ? "" : ", mig: [" + slice + "]", sharing,
        slice.empty() ? "gpu0" : "gpu0/0", kernel);
    const Scenario scenario = load_scenario_text(yaml, "bounds.yaml");
    DeviceCapacity cap = capacity_of(profile, slice, find_contention_law(law));
    if (percent > 0) cap.client_sms = cap.sms * percent / 100.0;
    const double floor = latency_floor_ns(demand_of(scenario.tenants.front()), cap);
    const RunResult r = run_yaml(yaml);
    const double p50 = tenant(r, "a").latency.p50;
    EXPECT_GE(p50, floor - 1.0) << yaml;   // safe: never prunes what runs
    EXPECT_NEAR(p50, floor, 2.0) << yaml;  // and exact for a lone request
  }
}

// The same bounds on random requests whose kernel durations follow every distribution the
// scenario format has (fixed, exponential, lognormal, uniform), one to three kernels repeated one
// to three times: the planner prunes a setup when an SLO target (less headroom) is below the
// latency floor, or when the offered load reaches a load bound (models/plan/planner_prune.cpp).
// A setup the simulation finds feasible must survive both. Each tenant here is alone on its
// device, so:
//  - the floor is at most the simulated p50 (a p50 target there is met, so never pruned): the
//    floor takes each distribution's minimum; its mean would exceed the median of a lognormal;
//  - the mean service bound is at most the simulated mean latency, to 4 standard errors of the
//    sample mean (sd / mean of a sum of independent launches <= the largest part's
//    coefficient of variation);
//  - when the run sustains the load, the offered rate is below the solo capacity, and the SM and
//    HBM loads below the device's.
struct RandomDuration {
  std::string yaml;
  double cv;  ///< coefficient of variation (sd / mean)
};

// `base_us`: fixed: the value; exponential: the mean; lognormal: the median; uniform: the min.
RandomDuration random_duration(int kind, double base_us, double u1, double u2) {
  switch (kind) {
    case 0:
      return {fmt::format("{}us", base_us), 0.0};
    case 1:
      return {fmt::format("{{exponential: {}us}}", base_us), 1.0};
    case 2: {
      const double sigma = (2 + std::floor(u1 * 9)) / 10;  // 0.2 .. 1.0
      return {fmt::format("{{lognormal: {{median: {}us, sigma: {}}}}}", base_us, sigma),
              std::sqrt(std::exp(sigma * sigma) - 1)};
    }
    default: {
      const double low = base_us, high = base_us * (1.5 + std::floor(u2 * 4));
      return {fmt::format("{{uniform: {{min: {}us, max: {}us}}}}", low, high),
              (high - low) / std::sqrt(12.0) / ((low + high) / 2)};
    }
  }
}

TEST(PlannerBounds, NoBoundPrunesASimulatedFeasibleSetupUnderEveryDurationDistribution) {
  boost::random::mt19937 rng(2525);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  const DeviceProfile& profile = load_device_profile("h100-sxm-80gb");
  const char* slices[] = {"", "1g.10gb", "3g.40gb"};
  const double rate = 200;  // per s: 5 ms between requests
  int lognormal_instances = 0, sustained = 0;
  for (int i = 0; i < 48; ++i) {
    const std::string law = i % 2 ? "fluid" : "residency";
    const std::string slice = slices[static_cast<int>(u(rng) * 3) % 3];
    const int kernels = 1 + static_cast<int>(u(rng) * 3);
    std::string list;
    double cv = 0;
    for (int k = 0; k < kernels; ++k) {
      // Kernel 0 cycles through the four kinds, so each appears in a quarter of the instances.
      const int kind = k == 0 ? (i / 2) % 4 : static_cast<int>(u(rng) * 4) % 4;
      lognormal_instances += kind == 2 && k == 0;
      const RandomDuration d = random_duration(kind, 10 + std::floor(u(rng) * 60), u(rng), u(rng));
      cv = std::max(cv, d.cv);
      const double f = std::max(0.05, std::floor(u(rng) * 100) / 100);
      const double m = std::floor(u(rng) * 100) / 100;
      const int blocks = u(rng) < 0.5 ? 1 + static_cast<int>(u(rng) * 600) : 0;
      list += fmt::format(
          "{}{{name: k{}, duration: {}, sm_fraction: {}, {}, "
          "repeat: {}{}}}",
          k ? ", " : "", k, d.yaml, f, phases(i + k, m), 1 + static_cast<int>(u(rng) * 3),
          blocks > 0 ? fmt::format(", blocks: {}", blocks) : std::string());
    }
    const std::string yaml = fmt::format(
        "contention_law: {}\nname: t\nduration: 1s\nseed: {}\ngpus:\n  - {{name: gpu0, model: "
        "h100-sxm-80gb{}}}\ntenants:\n  - {{name: a, device: {}, workload: {{arrivals: "
        "{{process: constant, rate: {}/s}}, request: {{kernels: [{}]}}}}}}\n",
        law, i + 1, slice.empty() ? "" : ", mig: [" + slice + "]",
        slice.empty() ? "gpu0" : "gpu0/0", rate, list);
    const Scenario scenario = load_scenario_text(yaml, "bounds.yaml");
    const DeviceCapacity cap = capacity_of(profile, slice, find_contention_law(law));
    const TenantDemand demand = demand_of(scenario.tenants.front());
    const RunResult run = run_yaml(yaml);
    const TenantResult& a = tenant(run, "a");
    ASSERT_GT(a.completed, 150) << yaml;
    // Waiting only lengthens latencies: the floor and the mean service bound hold whatever the
    // load.
    EXPECT_LE(latency_floor_ns(demand, cap), static_cast<double>(a.latency.p50) + 1.0) << yaml;
    const double standard_error = cv / std::sqrt(static_cast<double>(a.completed));
    EXPECT_LE(service_ns(demand, cap), a.latency.mean * (1 + 4 * standard_error) + 1.0) << yaml;
    // Feasible and sustained: every request done, 99 % waited less than one arrival interval (an
    // overloaded queue grows without bound). Then no load bound may prune it.
    if (a.completed != a.requests || static_cast<double>(a.queueing.p99) >= 1e9 / rate) continue;
    ++sustained;
    EXPECT_LT(rate, solo_capacity_per_s(demand, cap)) << yaml;
    EXPECT_LT(sm_load_per_s(demand, cap), cap.sms) << yaml;
    EXPECT_LT(hbm_load_per_s(demand, cap), cap.bandwidth) << yaml;
  }
  EXPECT_GE(sustained, 36);  // most instances exercise the load bounds too
  EXPECT_EQ(lognormal_instances, 12);
}

// ------------------------------------------------------------------------------ launch cost

TEST(LaunchCost, EveryKernelPaysTheLaunchOverheadOfItsStream) {
  auto scenario = [](const std::string& graph) {
    return "name: t\nduration: 1s\ngpus:\n  - {name: gpu0, model: h200-141gb}\ntenants:\n"
           "  - {name: a, device: gpu0, workload: {arrivals: {process: closed, concurrency: 1}, "
           "request: {" +
           graph + "kernels: [{name: tiny, duration: 1us, repeat: 1000}]}}}\n";
  };
  const DeviceProfile& h200 = load_device_profile("h200-141gb");
  // 1000 x (launch + 1 us): 3.37 ms with a stream launch (gpu-benches: 2.4 us per tiny kernel;
  // the old model paid the overhead once per request: 1.0 ms).
  const RunResult stream = run_yaml(scenario(""));
  EXPECT_NEAR(tenant(stream, "a").latency.p50,
              1000 * (static_cast<double>(h200.launch_overhead) + 1e3), 1.0);
  const RunResult graph = run_yaml(scenario("cuda_graph: true, "));
  EXPECT_NEAR(tenant(graph, "a").latency.p50,
              1000 * (static_cast<double>(h200.graph_launch_overhead) + 1e3), 1.0);
}

TEST(LaunchCost, ATimeSlicedContextKeepsTheGpuWhileItsNextKernelLaunches) {
  // A request of 10 back-to-back 60 us kernels beside a saturating time-sliced neighbour
  // (slices of 1 ms). Between two of its kernels only the launch overhead passes, with the next
  // kernel already in its channel, so its context does not yield: once it holds the GPU the
  // burst runs through (10 x (L + 60 us) = 0.62 ms, within one slice). Yielding at every launch
  // gap would cost a neighbour's slice per kernel (> 10 ms).
  const RunResult r = run_yaml(
      gpu("{mode: time-slicing, timeslice: 1ms}") +
      closed_client("neighbour", "{name: n, duration: 5ms}") +
      "  - {name: burst, device: gpu0, workload: {arrivals: {process: constant, rate: 50/s}, "
      "request: {kernels: [{name: k, duration: 60us, repeat: 10}]}}}\n");
  // Worst case: wait for the rest of a slice plus switches, then a slice of its own.
  EXPECT_LT(tenant(r, "burst").latency.max, 2.5e6);
  EXPECT_GT(tenant(r, "burst").latency.mean, 10 * (launch_ns() + 60e3));
}

// ------------------------------------------------------------------------------ invariants

std::string mixed_tenant(const std::string& mode) {
  return gpu(mode) +
         "  - {name: a, device: gpu0, workload: {max_in_flight: 3, arrivals: {process: poisson, "
         "rate: 400/s}, request: {host_gap: 5us, kernels: [{name: g, duration: {exponential: "
         "600us}, sm_fraction: 0.7, memory_bound: 0.4, working_set: 20MB, repeat: 3, blocks: 93, "
         "block: {threads: 256, registers: 64}}, {name: s, duration: 300us, memory_bound: 0.9, "
         "blocks: 400, block: {threads: 128}}]}}}\n";
}

TEST(Invariants, OneMpsClientAtFullThreadsIsExclusive) {
  expect_same_numbers(run_yaml(mixed_tenant("{mode: exclusive}")),
                      run_yaml(mixed_tenant("{mode: mps, active_thread_percentage: 100}")));
}

TEST(Invariants, OneTimeSlicedContextIsExclusive) {
  expect_same_numbers(run_yaml(mixed_tenant("{mode: exclusive}")),
                      run_yaml(mixed_tenant("{mode: time-slicing}")));
}

TEST(Invariants, HeldSmsNeverExceedTheDeviceUnderAnyStrategy) {
  for (const std::string mode : {"{mode: exclusive}", "{mode: mps}", "{mode: time-slicing}"}) {
    std::string yaml =
        mode == "{mode: exclusive}"
            ? mixed_tenant(mode)
            : mixed_tenant(mode) +
                  "  - {name: b, device: gpu0, workload: {arrivals: {process: closed, concurrency: "
                  "2}, "
                  "request: {kernels: [{name: t, duration: 2ms, memory_bound: 0.3}]}}}\n";
    const RunResult r = run_yaml(yaml);
    const DeviceResult& d = device(r, "gpu0");
    EXPECT_LE(d.sm_busy, 1.0 + 1e-9) << mode;
    double gpu_seconds = 0;
    for (const TenantResult& t : r.tenants) gpu_seconds += t.gpu_seconds;
    // Attributed GPU time never exceeds the window the device existed for (2 s measured).
    EXPECT_LE(gpu_seconds, static_cast<double>(r.sim_time_ns) * 1e-9 + 1e-9) << mode;
  }
}

TEST(MaxMinProperty, RandomInstancesRespectEveryConstraintAndAreMaxMinFair) {
  boost::random::mt19937 rng(12345);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int instance = 0; instance < 500; ++instance) {
    MaxMinProblem p;
    const int constraints = 1 + static_cast<int>(u(rng) * 4);
    const int variables = 1 + static_cast<int>(u(rng) * 8);
    std::vector<double> capacity(static_cast<std::size_t>(constraints));
    for (double& c : capacity) c = 0.1 + 2 * u(rng);
    for (double c : capacity) p.add_constraint(c);
    std::vector<std::vector<double>> a(static_cast<std::size_t>(variables),
                                       std::vector<double>(capacity.size(), 0.0));
    std::vector<double> bound(static_cast<std::size_t>(variables));
    for (int i = 0; i < variables; ++i) {
      bound[static_cast<std::size_t>(i)] = u(rng) < 0.3 ? 0.05 + u(rng) : 1e9;
      p.add_variable(1.0, bound[static_cast<std::size_t>(i)]);
      for (int j = 0; j < constraints; ++j) {
        if (u(rng) < 0.6) {
          a[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = 0.1 + u(rng);
          p.add_consumption(i, j, a[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
        }
      }
    }
    p.solve();
    std::vector<double> load(capacity.size(), 0.0);
    for (int i = 0; i < variables; ++i) {
      for (std::size_t j = 0; j < capacity.size(); ++j) {
        load[j] += a[static_cast<std::size_t>(i)][j] * p.rate(i);
      }
    }
    for (std::size_t j = 0; j < capacity.size(); ++j) {
      EXPECT_LE(load[j], capacity[j] * (1 + 1e-9)) << "instance " << instance;
    }
    for (int i = 0; i < variables; ++i) {
      const double r = p.rate(i);
      EXPECT_LE(r, bound[static_cast<std::size_t>(i)] * (1 + 1e-9));
      // Max-min: a variable below its bound touches a saturated constraint on which it has the
      // largest rate (equal weights), so it cannot grow without lowering a smaller one.
      if (r >= bound[static_cast<std::size_t>(i)] * (1 - 1e-9)) continue;
      bool blocked = false;
      for (std::size_t j = 0; j < capacity.size(); ++j) {
        if (a[static_cast<std::size_t>(i)][j] <= 0 || load[j] < capacity[j] * (1 - 1e-9)) continue;
        bool largest = true;
        for (int k = 0; k < variables; ++k) {
          if (a[static_cast<std::size_t>(k)][j] > 0 && p.rate(k) > r * (1 + 1e-9)) largest = false;
        }
        blocked |= largest;
      }
      EXPECT_TRUE(blocked) << "instance " << instance << " variable " << i;
    }
  }
}

}  // namespace
}  // namespace gpumux
