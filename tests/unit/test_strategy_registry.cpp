// The strategy registry (models/strategies/registry.hpp): every strategy is found by each of
// its spellings, offered by `compare`, and its parameter block round-trips through the resolved
// YAML with only its own keys (issue 11, item 1: exclusive and MPS GPUs used to list
// `timeslice`, `context_switch` and `preemption`).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "models/scenario/resolve.hpp"
#include "models/scenario/emit.hpp"
#include "models/scenario/loader.hpp"
#include "models/strategies/mps/strategy.hpp"
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

TEST(StrategyParameters, EveryKeyIsDeclaredOnceWithUnitDefaultRangeAndDoc) {
  std::vector<std::string> everywhere{"mode", "replicas"};
  for (const Strategy* strategy : strategies()) {
    std::vector<std::string> names;
    for (const ParamSpec& p : strategy->parameters()) {
      EXPECT_FALSE(p.unit.empty() || p.default_text.empty() || p.range.empty() || p.doc.empty())
          << strategy->name() << "." << p.key;
      EXPECT_TRUE(p.read != nullptr && p.emit != nullptr && p.copy != nullptr) << p.key;
      EXPECT_EQ(std::count(names.begin(), names.end(), p.key), 0) << p.key;
      EXPECT_EQ(std::count(everywhere.begin(), everywhere.end(), p.key), 0) << p.key;
      names.push_back(p.key);
    }
    EXPECT_EQ(strategy->keys(), names) << strategy->name();
    everywhere.insert(everywhere.end(), names.begin(), names.end());
  }
}

// Every key of a strategy set to a value other than its default: the table reads it, the
// resolved YAML writes it back as written, and copy_key carries exactly that key to a fresh block.
void expect_round_trip(const std::string& mode, const std::map<std::string, std::string>& set) {
  std::string sharing = "{mode: " + mode;
  for (const auto& [key, value] : set) sharing += ", " + key + ": " + value;
  sharing += "}";
  std::string text = scenario_with(mode);
  text.replace(text.find("{mode: " + mode + "}"), mode.size() + 8, sharing);
  const Scenario s = load_scenario_text(text, "r.yaml");
  const YAML::Node emitted = YAML::Load(emit_scenario_yaml(s))["gpus"][0]["sharing"];
  const Strategy& strategy = *find_strategy(mode);
  ASSERT_EQ(set.size(), strategy.parameters().size()) << mode << ": set every key";
  for (const ParamSpec& p : strategy.parameters()) {
    ASSERT_TRUE(set.count(p.key)) << p.key;
    EXPECT_EQ(emitted[p.key].as<std::string>(), set.at(p.key)) << p.key;
    const std::unique_ptr<StrategyParams> fresh = strategy.make_params();
    EXPECT_TRUE(strategy.copy_key(p.key, s.gpus[0].sharing.params(), *fresh));
    YAML::Emitter out;
    out << YAML::BeginMap;
    strategy.emit(out, *fresh);
    out << YAML::EndMap;
    const YAML::Node copied = YAML::Load(out.c_str());
    EXPECT_EQ(copied[p.key].as<std::string>(), set.at(p.key)) << p.key;
  }
  EXPECT_FALSE(
      strategy.copy_key("no_such_key", s.gpus[0].sharing.params(), *strategy.make_params()));
}

TEST(StrategyParameters, TheTableReadsEmitsAndCopiesEveryKey) {
  expect_round_trip("mps", {{"active_thread_percentage", "37"},
                            {"pinned_memory_limit", "3GiB"},
                            {"max_clients", "5"},
                            {"cuda_version", "13.1"},
                            {"client_order", "launch_order"}});
  expect_round_trip("time-slicing", {{"timeslice", "3ms"},
                                     {"context_switch", "40us"},
                                     {"preemption", "kernel-boundary"},
                                     {"preemption_latency", "7us"},
                                     {"cache_refill", "11us"}});
}

TEST(StrategyParameters, TheMpsThreadDefaultIsTheOneTheTableStatesAndTheDeviceApplies) {
  const ResolvedScenario r = resolve_scenario(load_scenario_text(scenario_with("mps"), "r.yaml"));
  const auto& params = params_as<MpsParams>(r.devices[0].sharing.params());
  EXPECT_EQ(params.active_thread_percentage, 100.0);  // (MPS: every client may use all threads)
  const ParamSpec& spec = mps_strategy().parameters().front();
  EXPECT_EQ(spec.key, "active_thread_percentage");
  EXPECT_EQ(spec.default_text.rfind("100 ", 0), 0u) << spec.default_text;
  EXPECT_EQ(mps_strategy().sharing_limits(params).thread_share, 1.0);
}

TEST(StrategyParameters, AStrategyKeyOnTheGpusEntryIsHintedUnderSharing) {
  // From the tables: a key no hand-written hint list named before (max_clients) is one line
  // saying where it belongs.
  std::string text = scenario_with("mps");
  text.replace(text.find("sharing:"), 8, "max_clients: 4, sharing:");
  try {
    load_scenario_text(text, "r.yaml");
    FAIL() << "accepted max_clients on the gpus entry";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sharing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_clients"), std::string::npos) << e.what();
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
