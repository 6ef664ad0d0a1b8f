// The order of the tenant list is not physics (issue 23 item 5): what happens to tenants at the
// same instant follows their names (models/run/run.cpp), and time-slicing's round robin starts at
// a seeded position (models/gpu/time_slicing.hpp). Checked as a property on random scenarios
// (tests/support/random_scenario.hpp: every registered strategy, MIG, faults, ties from constant
// arrivals) and on the two cases that were listed-order physics.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "models/config/profile_loader.hpp"
#include "models/output/result_io.hpp"
#include "models/run/result.hpp"
#include "models/run/runner.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolve.hpp"
#include "tests/support/random_scenario.hpp"
#include "tests/support/run_yaml.hpp"
#include "tests/support/launch.hpp"

namespace gpumux {
namespace {

namespace fs = std::filesystem;
using testing::run_yaml;
using testing::tenant;

// Every number of the JSON summary, tenants and devices keyed by name (std::map order), less the
// wall time.
nlohmann::json keyed_summary(const RunResult& r) {
  nlohmann::json j = nlohmann::json::parse(summary_json(r).dump());
  j.erase("wall_s");
  return j;
}

TEST(TenantOrder, PermutingTheTenantListChangesNoSummaryNumber) {
  const fs::path dir =
      fs::temp_directory_path() / (std::string("gpumux-order-") + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = testing::write_arrival_trace(dir);
  int permuted = 0;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    const std::string listed = testing::ScenarioMaker(seed, trace).make();
    const std::string shuffled = testing::ScenarioMaker(seed, trace).make(seed * 7919U);
    permuted += listed != shuffled;
    const std::string file = (dir / "s.yaml").string();
    const RunResult a = simulate(resolve_scenario(load_scenario_text(listed, file)));
    const RunResult b = simulate(resolve_scenario(load_scenario_text(shuffled, file)));
    const nlohmann::json ja = keyed_summary(a), jb = keyed_summary(b);
    ASSERT_EQ(ja, jb) << "seed " << seed << "\n" << listed << "\npermuted:\n" << shuffled;
  }
  EXPECT_GE(permuted, 60);  // most scenarios have several tenants, really reordered
  fs::remove_all(dir);
}

// A data-parallel tenant (a 10 ms step on gpu0-0 and gpu0-1, then its collective) and a
// neighbour on gpu0-1 (a 10 ms full-grid kernel), both ready at t = L under MPS: the first to
// be submitted holds gpu0-1's SMs and the other waits for it. Which one is first is decided by
// the names (the one sorting first), never by the listing.
std::string tie_scenario(bool trainer_first, const std::string& neighbour) {
  const std::string trainer = R"(
  - name: trainer
    device: [gpu0-0, gpu0-1]
    workload:
      arrivals: {process: constant, rate: 10/s}
      request:
        kernels:
          - {name: step, duration: 10ms}
          - {name: allreduce, duration: 1ms, collective: true}
)";
  const std::string other = R"(
  - name: )" + neighbour + R"(
    device: gpu0-1
    workload:
      arrivals: {process: constant, rate: 10/s}
      request: {kernels: [{name: k, duration: 10ms}]}
)";
  return R"(
name: tie
duration: 50ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, count: 2, sharing: {mode: mps}}
tenants:)" +
         (trainer_first ? trainer + other : other + trainer);
}

TEST(TenantOrder, SimultaneousSubmissionsAreOrderedByNameNotByListing) {
  const double l = launch_ns();
  for (const bool trainer_first : {true, false}) {
    // "neighbour" sorts before "trainer": the neighbour holds gpu0-1 over [L, L + 10 ms], the
    // trainer's step runs there over [L + 10, L + 20 ms] (gpu0-0's replica waits at the
    // barrier), then the collective is issued and launched on both: ends 2 L + 21 ms.
    const RunResult before = run_yaml(tie_scenario(trainer_first, "neighbour"));
    EXPECT_NEAR(tenant(before, "trainer").latency.mean, 2 * l + 21e6, 2.0) << trainer_first;
    EXPECT_NEAR(tenant(before, "neighbour").latency.mean, l + 10e6, 2.0) << trainer_first;
    // "zz-neighbour" sorts after: the trainer's step holds gpu0-1 over [L, L + 10 ms], the
    // neighbour then over [L + 10, L + 20 ms], and the collective launched at 2 L + 10 ms waits
    // there for it: [L + 20, L + 21 ms], the end on both GPUs.
    const RunResult after = run_yaml(tie_scenario(trainer_first, "zz-neighbour"));
    EXPECT_NEAR(tenant(after, "trainer").latency.mean, l + 21e6, 2.0) << trainer_first;
    EXPECT_NEAR(tenant(after, "zz-neighbour").latency.mean, l + 20e6, 2.0) << trainer_first;
  }
}

// Two time-sliced contexts with a 5 ms kernel each, both submitted at t = L, a timeslice longer
// than both: the first served runs its kernel to the end, then the device switches to the other
// (C - P + R: nothing was preempted). Which context is served first is the round robin's seeded
// start: over seeds both orders occur, and each seed gives the same run whatever the listing.
std::string ts_tie(int seed, bool a_first) {
  const std::string a = R"(
  - {name: a, device: gpu0, workload: {arrivals: {process: constant, rate: 1/s}, request: {kernels: [{name: k, duration: 5ms}]}}}
)";
  const std::string b = R"(
  - {name: b, device: gpu0, workload: {arrivals: {process: constant, rate: 1/s}, request: {kernels: [{name: k, duration: 5ms}]}}}
)";
  return "name: ts-tie\nduration: 100ms\nseed: " + std::to_string(seed) + R"(
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing, timeslice: 50ms}}
tenants:)" +
         (a_first ? a + b : b + a);
}

TEST(TenantOrder, TimeSlicingServesSimultaneousContextsFromASeededStart) {
  const double l = launch_ns();
  int a_served_first = 0;
  for (int seed = 1; seed <= 16; ++seed) {
    const RunResult x = run_yaml(ts_tie(seed, true));
    const RunResult y = run_yaml(ts_tie(seed, false));
    EXPECT_EQ(keyed_summary(x).dump(), keyed_summary(y).dump()) << seed;
    const double a = tenant(x, "a").latency.mean, b = tenant(x, "b").latency.mean;
    // One runs at once (L + 5 ms), the other after it and the switch to it (C - P + R, nothing
    // preempted): never both at once, never with a slice in between.
    const double first = std::min(a, b), second = std::max(a, b);
    EXPECT_NEAR(first, l + 5e6, 2.0) << seed;
    EXPECT_GT(second, l + 10e6) << seed;
    EXPECT_LT(second, l + 10e6 + 200e3) << seed;
    a_served_first += a < b;
  }
  EXPECT_GT(a_served_first, 0);
  EXPECT_LT(a_served_first, 16);
}

}  // namespace
}  // namespace gpumux
