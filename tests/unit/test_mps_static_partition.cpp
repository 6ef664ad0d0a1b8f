// mps-static-partition (models/strategies/mps_static_partition/): the law in its header, checked
// in closed form — one client is `exclusive`; N clients of full-grid compute kernels each run at
// 1/N of the SMs concurrently (N x solo, never queued behind a neighbour's blocks); per-client
// memory is floor(M / N) MiB.
#include <gtest/gtest.h>

#include <string>

#include "models/config/profile_loader.hpp"
#include "models/plan/capacity_check.hpp"
#include "models/strategies/mps_static_partition/strategy.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/launch.hpp"

namespace gpumux {
namespace {

using testing::run_yaml;
using testing::tenant;

// `clients` closed-loop tenants on one H100, each a 1 ms full-grid compute kernel (m = 0).
std::string scenario(const std::string& mode, int clients, const std::string& memory = "1GiB") {
  std::string yaml = R"(
name: static-partition
duration: 200ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: )" +
                     mode + R"(}}
tenants:
)";
  for (int c = 0; c < clients; ++c) {
    yaml += "  - name: t";
    yaml += std::to_string(c);
    yaml += R"(
    device: gpu0
    memory: )" +
            memory + R"(
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 1ms, sm_fraction: 1.0}]}
)";
  }
  return yaml;
}

TEST(MpsStaticPartition, OneClientIsExclusive) {
  const RunResult partition = run_yaml(scenario("mps-static-partition", 1));
  const RunResult exclusive = run_yaml(scenario("exclusive", 1));
  EXPECT_DOUBLE_EQ(tenant(partition, "t0").latency.p50, tenant(exclusive, "t0").latency.p50);
  EXPECT_EQ(tenant(partition, "t0").completed, tenant(exclusive, "t0").completed);
}

TEST(MpsStaticPartition, FourClientsEachGetAQuarterOfTheSmsAtOnce) {
  // floor(100 / 4) = 25 %: 33 of 132 SMs each; a full-grid compute kernel runs 4x its solo time,
  // and the four run side by side (under plain MPS they would take turns holding every SM).
  const RunResult r = run_yaml(scenario("mps-static-partition", 4));
  for (int c = 0; c < 4; ++c) {
    std::string name = "t";
    name += std::to_string(c);
    EXPECT_NEAR(tenant(r, name).latency.p50, launch_ns() + 4e6, 2.0) << name;
    EXPECT_NEAR(tenant(r, name).latency.p99, launch_ns() + 4e6, 2.0) << name;
  }
}

TEST(MpsStaticPartition, ThreeClientsGetTheDevicePluginIntegers) {
  const ResolvedScenario r =
      resolve_scenario(load_scenario_text(scenario("mps-static-partition", 3), "p.yaml"));
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& p = params_as<MpsStaticPartitionParams>(r.devices[0].sharing.params());
  EXPECT_EQ(p.clients, 3);
  EXPECT_DOUBLE_EQ(p.thread_percentage, 33.0);
  constexpr std::int64_t kMiB = 1024 * 1024;
  EXPECT_EQ(p.memory_limit, r.devices[0].geometry.memory / 3 / kMiB * kMiB);
}

TEST(MpsStaticPartition, AClientAllocatingMoreThanItsShareIsOomKilled) {
  // 79.25 GiB / 2 = 40576 MiB each: a 41 GiB allocation does not fit in the client's share.
  const RunResult r = run_yaml(scenario("mps-static-partition", 2, "41GiB"));
  EXPECT_EQ(tenant(r, "t0").completed, 0);
  EXPECT_EQ(tenant(r, "t1").completed, 0);
  const RunResult fits = run_yaml(scenario("mps-static-partition", 2, "39GiB"));
  EXPECT_GT(tenant(fits, "t0").completed, 0);
}

TEST(MpsStaticPartition, ValidateFlagsAStartAllocationAboveTheClientsShare) {
  // The capacity check asks the strategy for its caps (Strategy::sharing_limits): 2 clients of
  // an 80 GB H100 get floor(79.25 GiB / 2) = 40576 MiB each, so 41 GiB at start is an error
  // (it used to know only `mps`, and passed this scenario), 39 GiB is not.
  const auto errors = [](const std::string& memory) {
    const ResolvedScenario r =
        resolve_scenario(load_scenario_text(scenario("mps-static-partition", 2, memory), "p.yaml"));
    int count = 0;
    for (const CapacityFinding& f : capacity_findings(r)) {
      if (f.error && f.message.find("MPS pinned memory limit") != std::string::npos) ++count;
    }
    return count;
  };
  EXPECT_EQ(errors("41GiB"), 2);
  EXPECT_EQ(errors("39GiB"), 0);
}

}  // namespace
}  // namespace gpumux
