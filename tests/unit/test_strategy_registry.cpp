// The strategy registry (models/strategies/registry.hpp): every strategy is found by each of
// its spellings, offered by `compare`, and its parameter block round-trips through the resolved
// YAML with only its own keys (issue 11, item 1: exclusive and MPS GPUs used to list
// `timeslice`, `context_switch` and `preemption`).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/scenario/resolve.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/strategies/registry.hpp"
#include "models/scenario/strategy_variants.hpp"

namespace gpumux {
namespace {

std::string scenario_with(const std::string& mode) {
  return R"(
name: registry
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: )" +
         mode + R"(}}
tenants:
  - name: a
    device: gpu0
    memory: 1GiB
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: k, duration: 1ms}]}
)";
}

// The `sharing:` mapping of the first GPU in a resolved scenario's YAML.
YAML::Node resolved_sharing(const std::string& mode) {
  const ResolvedScenario r = resolve_scenario(load_scenario_text(scenario_with(mode), "r.yaml"));
  return YAML::Load(emit_scenario_yaml(r.scenario))["gpus"][0]["sharing"];
}

TEST(StrategyRegistry, EverySpellingFindsItsStrategyAndNamesAreUnique) {
  std::vector<std::string> seen;
  for (const Strategy* strategy : strategies()) {
    ASSERT_FALSE(strategy->spellings().empty());
    EXPECT_EQ(strategy->spellings().front(), strategy->name());
    for (const std::string& spelling : strategy->spellings()) {
      EXPECT_EQ(find_strategy(spelling), strategy) << spelling;
      EXPECT_EQ(std::count(seen.begin(), seen.end(), spelling), 0) << spelling;
      seen.push_back(spelling);
    }
  }
  EXPECT_EQ(find_strategy("fair-share"), nullptr);
  EXPECT_STREQ(default_strategy().name(), "exclusive");
}

TEST(StrategyRegistry, CompareOffersEveryStrategyWholeAndInsideMig) {
  const std::vector<std::string> names = compare_strategy_names();
  auto offered = [&names](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(offered("as-is"));
  EXPECT_TRUE(offered("mig"));
  EXPECT_TRUE(offered("dedicated"));
  for (const Strategy* strategy : strategies()) {
    EXPECT_TRUE(offered(strategy->name())) << strategy->name();
    std::string hybrid = "mig+";
    hybrid += strategy->name();
    EXPECT_TRUE(offered(hybrid)) << hybrid;
    // Each whole-GPU variant builds and resolves.
    const Scenario s = load_scenario_text(scenario_with("exclusive"), "r.yaml");
    EXPECT_NO_THROW(resolve_scenario(apply_strategy(s, strategy->name()))) << strategy->name();
  }
}

TEST(StrategyRegistry, ResolvedYamlListsOnlyTheStrategysOwnKeys) {
  for (const Strategy* strategy : strategies()) {
    const YAML::Node sharing = resolved_sharing(strategy->name());
    EXPECT_EQ(sharing["mode"].as<std::string>(), strategy->name());
    const std::vector<std::string> own = strategy->keys();
    for (auto it = sharing.begin(); it != sharing.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (key == "mode" || key == "replicas") continue;
      EXPECT_NE(std::find(own.begin(), own.end(), key), own.end())
          << strategy->name() << " lists " << key;
    }
  }
  EXPECT_FALSE(resolved_sharing("exclusive")["timeslice"]);
  EXPECT_FALSE(resolved_sharing("mps")["context_switch"]);
  EXPECT_FALSE(resolved_sharing("mps")["preemption"]);
  EXPECT_TRUE(resolved_sharing("time-slicing")["timeslice"]);
  EXPECT_TRUE(resolved_sharing("mps")["max_clients"]);
}

TEST(StrategyRegistry, ResolvedYamlReloadsToTheSameYaml) {
  for (const Strategy* strategy : strategies()) {
    const ResolvedScenario r =
        resolve_scenario(load_scenario_text(scenario_with(strategy->name()), "r.yaml"));
    const std::string once = emit_scenario_yaml(r.scenario);
    const std::string twice = emit_scenario_yaml(load_scenario_text(once, "again.yaml"));
    EXPECT_EQ(once, twice) << strategy->name();
  }
}

TEST(StrategyRegistry, OnlyAnMpsServerTakesItsClientsDownWithAFault) {
  for (const Strategy* strategy : strategies()) {
    const bool mps_server = std::string(strategy->name()).rfind("mps", 0) == 0;
    EXPECT_EQ(strategy->fault_scope() == FaultScope::device, mps_server) << strategy->name();
  }
}

}  // namespace
}  // namespace gpumux
