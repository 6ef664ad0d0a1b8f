// The front door (models/app/application.hpp): what the CLI and the Python bindings share —
// overrides then --seed, an empty strategy list refused before loading, variants labelled and
// stopped after an interrupted one, the engine switches (the event queue) carried the same way for
// both, and the same results whatever queue it names.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "models/app/application.hpp"
#include "models/config/input_error.hpp"

namespace gpumux {
namespace {

const char* kYaml = R"(
name: app
seed: 1
duration: 200ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing}}
tenants:
  - name: a
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request: {kernels: [{name: k, duration: 1ms}]}
  - name: b
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 2ms}]}
)";

ScenarioRequest text_request() {
  ScenarioRequest request;
  request.scenario = kYaml;
  request.is_path = false;
  request.source_name = "app.yaml";
  return request;
}

TEST(Application, OverridesApplyInOrderThenTheSeed) {
  ScenarioRequest request = text_request();
  request.overrides = {"seed=5", "duration=300ms", "duration=400ms"};
  request.seed = 9;
  const Scenario s = load_request(request);
  EXPECT_EQ(s.seed, 9u);  // --seed is applied after every --set
  EXPECT_EQ(s.duration, 400 * kMillisecond);
  EXPECT_EQ(s.source_file, "app.yaml");
}

TEST(Application, MalformedOverrideIsReportedBeforeTheFileIsRead) {
  ScenarioRequest request;
  request.scenario = "does/not/exist.yaml";
  request.overrides = {"no-equals-sign"};
  try {
    load_request(request);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--set"), std::string::npos) << e.what();
  }
}

TEST(Application, EmptyStrategyListIsRefusedBeforeLoading) {
  ScenarioRequest request;
  request.scenario = "does/not/exist.yaml";
  try {
    resolve_variants(request, {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "compare: no strategies given");
  }
}

TEST(Application, VariantsAreLabelledInOrder) {
  const std::vector<std::string> strategies{"mps", "exclusive"};
  const std::vector<ResolvedScenario> variants = resolve_variants(text_request(), strategies);
  ASSERT_EQ(variants.size(), 2u);
  RunControl control;
  control.record_requests = false;
  const std::vector<RunResult> results = simulate_variants(variants, strategies, control);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].strategy, "mps");
  EXPECT_EQ(results[1].strategy, "exclusive");
  EXPECT_EQ(results[0].status, "complete");
}

TEST(Application, CompareStopsAfterTheInterruptedVariant) {
  // Enough events that the runner polls the flag (every 4096 events) during the first variant.
  ScenarioRequest request = text_request();
  request.overrides = {"tenants.0.workload.arrivals.rate=40000/s"};
  const std::vector<std::string> strategies{"mps", "exclusive", "time-slicing"};
  const std::vector<ResolvedScenario> variants = resolve_variants(request, strategies);
  std::atomic<bool> stop{true};  // set before the first variant: it stops at its first poll
  RunControl control;
  control.interrupt = &stop;
  int started = 0, finished = 0;
  control.started = [&] { ++started; };
  control.finished = [&] { ++finished; };
  const std::vector<RunResult> results = simulate_variants(variants, strategies, control);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, "interrupted");
  EXPECT_EQ(started, 1);
  EXPECT_EQ(finished, 1);
}

TEST(Application, QueueKindNamed) {
  EXPECT_FALSE(queue_kind_named("").has_value());
  EXPECT_EQ(queue_kind_named("ladder"), QueueKind::ladder);
  EXPECT_EQ(queue_kind_named("heap"), QueueKind::heap);
  EXPECT_EQ(queue_kind_named("calendar"), QueueKind::calendar);
  // Issue 27: an unknown value was ignored (the runner chose); now refused, one line.
  try {
    queue_kind_named("fifo");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "GPUMUX_QUEUE: unknown event queue 'fifo'; choose heap, calendar or ladder");
  }
}

TEST(Application, EveryQueueGivesTheSameResults) {
  const ResolvedScenario resolved = resolve_request(text_request());
  RunControl control;
  std::vector<RunResult> results;
  for (const QueueKind queue : {QueueKind::heap, QueueKind::calendar, QueueKind::ladder}) {
    control.engine.queue = queue;
    results.push_back(simulate_resolved(resolved, control));
  }
  for (const RunResult& r : results) {
    EXPECT_EQ(r.events, results[0].events);
    EXPECT_EQ(r.sim_time_ns, results[0].sim_time_ns);
    ASSERT_EQ(r.requests.size(), results[0].requests.size());
    for (std::size_t i = 0; i < r.requests.size(); ++i) {
      EXPECT_EQ(r.requests[i].finish_ns, results[0].requests[i].finish_ns);
    }
  }
}

}  // namespace
}  // namespace gpumux
