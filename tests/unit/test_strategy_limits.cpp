// Strategy::limits (models/strategies/strategy.hpp): what each registered strategy allows on a
// device, as validate's capacity check and the planner ask it. Checked against the simulation
// (a scenario at exactly the limit validates without a warning and every client attaches; one
// client more is flagged by validate, and the simulation turns it away at start) and against the
// closed forms of the MPS client limit (48, lowered in proportion to a MIG instance's compute
// slices: MIG User Guide) and the device plugin's equal shares.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "models/config/profile_loader.hpp"
#include "models/gpu/device_profile.hpp"
#include "models/plan/capacity_check.hpp"
#include "models/strategies/mps/strategy.hpp"
#include "models/strategies/mps_static_partition/strategy.hpp"
#include "models/strategies/registry.hpp"
#include "models/strategies/time_slicing/strategy.hpp"
#include "tests/support/run_yaml.hpp"

namespace gpumux {
namespace {

using testing::run_yaml;

// `clients` closed-loop tenants, 256 MiB each, on gpu0 (or its first MIG instance `mig`) of an
// H100 under `sharing` (a flow mapping's body, e.g. "mode: mps, max_clients: 3").
std::string scenario(const std::string& sharing, int clients, const std::string& mig = "") {
  std::string yaml = "name: limits\nduration: 20ms\ngpus:\n  - {name: gpu0, model: h100-sxm-80gb";
  if (!mig.empty()) yaml += ", mig: [" + mig + "]";
  yaml += ", sharing: {" + sharing + "}}\ntenants:\n";
  const std::string device = mig.empty() ? "gpu0" : "gpu0/0";
  for (int c = 0; c < clients; ++c) {
    yaml += "  - name: t" + std::to_string(c) + "\n    device: " + device +
            "\n    memory: 256MiB\n    workload:\n      arrivals: {process: closed, concurrency: "
            "1}\n      request: {kernels: [{name: k, duration: 20us, sm_fraction: 0.05, "
            "memory_bound: 0}]}\n";
  }
  return yaml;
}

// The capacity check's warnings about the client count (ResolvedScenario -> count).
int client_warnings(const ResolvedScenario& r) {
  int count = 0;
  for (const CapacityFinding& f : capacity_findings(r)) {
    if (!f.error && f.message.find("clients there") != std::string::npos) ++count;
  }
  return count;
}

// What a scenario with `clients` clients gets: flagged before the run (refused by resolution, or
// warned by validate's capacity check), and run with `rejected` clients the device turned away.
struct Outcome {
  bool refused = false;
  bool simulated = false;  ///< resolution accepted it, so it was simulated
  int rejected = 0;
};
Outcome outcome(const std::string& yaml) {
  Outcome out;
  try {
    const ResolvedScenario r = resolve_scenario(load_scenario_text(yaml, "limits.yaml"));
    out.refused = client_warnings(r) > 0;
    // Simulated whatever validate says: the device's own admission, the physics' answer.
    const RunResult run = run_yaml(yaml);
    out.simulated = true;
    for (const TenantResult& t : run.tenants) out.rejected += t.completed == 0 ? 1 : 0;
  } catch (const InputError&) {
    out.refused = true;  // resolution refuses it (exclusive, replicas)
  }
  return out;
}

// The limit Strategy::limits gives for `clients` clients of `sharing` (resolve's block).
int max_clients(const std::string& yaml) {
  const ResolvedScenario r = resolve_scenario(load_scenario_text(yaml, "limits.yaml"));
  const ResolvedDevice& d = r.devices.front();
  DeviceFit fit;
  fit.memory = d.geometry.memory;
  fit.clients = static_cast<int>(d.tenants.size());
  fit.replicas = d.sharing.replicas;
  return d.sharing.strategy().limits(d.sharing.params(), fit).max_clients;
}

TEST(StrategyLimits, MpsStaticPartitionOverTheServersClientLimitIsWarnedAndTurnedAway) {
  // 48 clients of one MPS server on a whole H100 validate and all attach; the 49th is flagged by
  // validate (the capacity check used to ask only for memory and SM caps, and passed it without a
  // word) and turned away at start by the run.
  EXPECT_EQ(client_warnings(resolve_scenario(
                load_scenario_text(scenario("mode: mps-static-partition", 48), "a.yaml"))),
            0);
  const std::string over = scenario("mode: mps-static-partition", 49);
  EXPECT_EQ(client_warnings(resolve_scenario(load_scenario_text(over, "b.yaml"))), 1);
  EXPECT_EQ(outcome(over).rejected, 1);  // what the simulation would do
  // Inside a 1g.10gb instance the limit is 48 x 1/7 -> 6 (MIG User Guide).
  EXPECT_EQ(client_warnings(resolve_scenario(
                load_scenario_text(scenario("mode: mps-static-partition", 7, "1g.10gb"), "c"))),
            1);
}

TEST(StrategyLimits, EveryStrategyAtItsLimitRunsAndOneMoreIsFlagged) {
  // Property over every registered strategy, random settings: with L = limits().max_clients
  // (set through replicas or max_clients where the strategy has no cap of its own), L clients
  // validate and every one attaches in the simulation; L + 1 are flagged before the run, and a
  // strategy whose device enforces the cap would turn exactly one away.
  std::mt19937 rng(34);
  for (const Strategy* strategy : strategies()) {
    for (int trial = 0; trial < 3; ++trial) {
      std::string sharing = "mode: " + std::string(strategy->name());
      std::string mig;
      const int k = std::uniform_int_distribution<int>(2, 7)(rng);
      if (strategy == &time_slicing_strategy()) sharing += ", replicas: " + std::to_string(k);
      if (strategy == &mps_strategy()) {
        sharing += trial == 0 ? ", max_clients: " + std::to_string(k) : "";
      }
      if (trial == 2) mig = "1g.10gb";
      // The limit the strategy states for a device holding one client.
      const int limit = max_clients(scenario(sharing, 1, mig));
      ASSERT_GT(limit, 0) << sharing << " " << mig;
      const Outcome at = outcome(scenario(sharing, limit, mig));
      EXPECT_FALSE(at.refused) << sharing << " " << mig << " at " << limit;
      EXPECT_EQ(at.rejected, 0) << sharing << " " << mig << " at " << limit;
      const Outcome above = outcome(scenario(sharing, limit + 1, mig));
      EXPECT_TRUE(above.refused) << sharing << " " << mig << " at " << limit + 1;
      // Simulated (validate only warns): the device turns exactly one client away.
      if (above.simulated) {
        EXPECT_EQ(above.rejected, 1) << sharing << " " << mig;
      }
    }
  }
}

TEST(StrategyLimits, MpsClientLimitAndEqualSharesInClosedForm) {
  // default_limits (the planner's question) on an H100: 48 clients whole; inside MIG
  // floor(48 x slices / 7) = 6, 13, 20, 27 for 1g, 2g, 3g, 4g; replicas R give each client
  // floor(100 / R) % of the SMs and floor(memory / R) in whole MiB.
  const DeviceProfile& h100 = load_device_profile("h100-sxm-80gb", "");
  EXPECT_EQ(kMpsMaxClients, 48);
  const auto whole = [&](const Strategy& strategy, int replicas, int clients) {
    DeviceFit fit;
    fit.memory = h100.memory;
    fit.gpu_compute_slices = h100.compute_slices;
    fit.clients = clients;
    fit.replicas = replicas;
    return default_limits(strategy, h100, fit);
  };
  EXPECT_EQ(whole(mps_strategy(), 0, 2).device.max_clients, 48);
  EXPECT_EQ(whole(mps_static_partition_strategy(), 0, 2).device.max_clients, 48);
  const std::pair<int, int> expected[] = {{1, 6}, {2, 13}, {3, 20}, {4, 27}, {7, 48}};
  for (const auto& [slices, limit] : expected) {
    for (const Strategy* s : {&mps_strategy(), &mps_static_partition_strategy()}) {
      DeviceFit fit;
      fit.memory = h100.memory;
      fit.compute_slices = slices;
      fit.gpu_compute_slices = 7;
      fit.clients = 1;
      EXPECT_EQ(default_limits(*s, h100, fit).device.max_clients, limit) << slices;
    }
  }
  constexpr std::int64_t kMiB = 1024 * 1024;
  const DeviceLimits three = whole(mps_strategy(), 3, 3);
  EXPECT_DOUBLE_EQ(three.device.thread_share, 0.33);
  EXPECT_EQ(three.device.client_memory_limit, h100.memory / 3 / kMiB * kMiB);
  EXPECT_EQ(three.max_clients, 3);  // replicas below the server's 48
  EXPECT_FALSE(three.clients_share_memory());
  EXPECT_TRUE(three.shared_fault_domain);
  const DeviceLimits plain = whole(mps_strategy(), 0, 3);
  EXPECT_TRUE(plain.clients_share_memory());
  EXPECT_DOUBLE_EQ(plain.device.thread_share, 1.0);
  const DeviceLimits sliced = whole(time_slicing_strategy(), 4, 4);
  EXPECT_TRUE(sliced.time_sliced);
  EXPECT_EQ(sliced.max_clients, 4);
  EXPECT_TRUE(sliced.clients_share_memory());
  EXPECT_FALSE(sliced.shared_fault_domain);
  const DeviceLimits alone = whole(default_strategy(), 0, 1);
  EXPECT_EQ(alone.max_clients, 1);
  EXPECT_FALSE(alone.clients_share_memory());
  EXPECT_FALSE(alone.time_sliced);
}

TEST(StrategyLimits, StrategyRankIsRegistrationOrder) {
  for (std::size_t i = 0; i < strategies().size(); ++i) {
    EXPECT_EQ(strategy_rank(*strategies()[i]), static_cast<int>(i));
  }
}

}  // namespace
}  // namespace gpumux
