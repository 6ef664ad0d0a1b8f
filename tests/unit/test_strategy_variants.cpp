// `compare` variants keep `--set gpus.N.sharing.KEY` overrides (issue 6, item 7).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/config/input_error.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/strategy_variants.hpp"
#include "tests/support/sharing.hpp"

namespace gpumux {
namespace {

const char* kYaml = R"(
name: v
duration: 1s
gpus:
  - {name: gpu, model: h100-sxm-80gb, count: 2, mig: [3g.40gb, 3g.40gb], sharing: {mode: time-slicing, timeslice: 2ms}}
tenants:
  - name: a
    device: gpu-0/0
    workload:
      arrivals: {process: poisson, rate: 10/s}
      request: {kernels: [{name: k, duration: 1ms}]}
)";

Scenario load(const std::vector<Override>& overrides) {
  return load_scenario_text(kYaml, "v.yaml", overrides);
}

TEST(StrategyVariants, MpsKeepsSharingOverridesOnEveryExpandedGpu) {
  const Scenario s = load({{"gpus.0.sharing.active_thread_percentage", "50"},
                           {"gpus.0.sharing.pinned_memory_limit", "8GiB"}});
  const Scenario mps = apply_strategy(s, "mps");
  ASSERT_EQ(mps.gpus.size(), 2u);
  for (const GpuSpec& g : mps.gpus) {
    EXPECT_STREQ(g.sharing.mode_name(), "mps");
    ASSERT_TRUE(mps_params(g.sharing).active_thread_percentage.has_value()) << g.name;
    EXPECT_DOUBLE_EQ(*mps_params(g.sharing).active_thread_percentage, 50.0);
    ASSERT_TRUE(mps_params(g.sharing).pinned_memory_limit.has_value());
    EXPECT_EQ(*mps_params(g.sharing).pinned_memory_limit, std::int64_t{8} << 30);
    // Keys written in the file (not by --set) of another mode are not carried over.
    EXPECT_EQ(g.sharing.block_for(time_slicing_strategy()), nullptr);
  }
  // Without the override the MPS variant has no cap.
  EXPECT_FALSE(
      mps_params(apply_strategy(load({}), "mps").gpus[0].sharing).active_thread_percentage);
}

TEST(StrategyVariants, MigPlusModeKeepsOverridesAndDedicatedIgnoresThem) {
  const Scenario s = load({{"gpus.0.sharing.active_thread_percentage", "30"}});
  const Scenario hybrid = apply_strategy(s, "mig+mps");
  EXPECT_STREQ(hybrid.gpus[0].sharing.mode_name(), "mps");
  EXPECT_DOUBLE_EQ(mps_params(hybrid.gpus[0].sharing).active_thread_percentage.value_or(0), 30.0);
  const Scenario dedicated = apply_strategy(s, "exclusive");
  for (const GpuSpec& g : dedicated.gpus) EXPECT_STREQ(g.sharing.mode_name(), "exclusive");
}

TEST(StrategyVariants, TimeSlicingOverrideSurvivesTheWholeGpuVariant) {
  const Scenario s = load({{"gpus.0.sharing.preemption", "kernel-boundary"}});
  const Scenario ts = apply_strategy(s, "time-slicing");
  EXPECT_EQ(ts_params(ts.gpus[0].sharing).preemption, PreemptionMode::kernel_boundary);
  // The file's own time-slicing knobs are kept too (same mode).
  EXPECT_EQ(ts_params(ts.gpus[0].sharing).timeslice.value_or(0), 2'000'000);
}

TEST(StrategyVariants, ModeOverrideContradictingTheStrategyIsRefused) {
  const Scenario s = load({{"gpus.0.sharing.mode", "time-slicing"}});
  try {
    apply_strategy(s, "mps");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--set gpus.0.sharing.mode"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  EXPECT_NO_THROW(apply_strategy(s, "time-slicing"));
  EXPECT_NO_THROW(apply_strategy(s, "as-is"));
}

// Two names of one strategy run it twice under two names: refused as a name listed twice is;
// distinct strategies that share text ("mig", "mig+exclusive", "exclusive") pass (relia4).
TEST(StrategyVariants, ListRefusesTwoNamesOfOneStrategy) {
  for (const char* text : {"exclusive,dedicated", "mig+time-slicing,mig+time_slicing", "mps, mps",
                           "mig+timeslicing,mps,mig+time_slicing"}) {
    try {
      parse_strategy_list(text);
      FAIL() << "expected InputError for " << text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--strategies: '", 0), 0U) << what;
      EXPECT_NE(what.find("(each strategy runs once; got '"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(parse_strategy_list("mig, mig+exclusive ,exclusive,mps"),
            (std::vector<std::string>{"mig", "mig+exclusive", "exclusive", "mps"}));
}

}  // namespace
}  // namespace gpumux
